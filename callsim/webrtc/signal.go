package webrtc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	pion "github.com/pion/webrtc/v4"
)

// Signaler carries one call's offer and answer, and its trickled
// candidates. A Signaler serves one call.
type Signaler interface {
	// Offer sends the offer SDP and returns the answer SDP.
	Offer(ctx context.Context, offer string) (answer string, err error)
	// Trickle sends candidates gathered after the offer (only with
	// Transport.Trickle).
	Trickle(ctx context.Context, cands []pion.ICECandidateInit) error
	// Hangup ends the session at the agent, where the signaling has a
	// way to (WHIP's DELETE).
	Hangup(ctx context.Context) error
}

// Signalings (Transport.Signaling, `--signaling`).
const (
	SignalingSmallWebRTC  = "smallwebrtc"
	SignalingWHIP         = "whip"
	SignalingPipecatStart = "pipecat-start"
)

// CheckSignaling refuses a signaling this package does not speak ("" is
// the default, SmallWebRTC).
func CheckSignaling(s string) error {
	switch s {
	case "", SignalingSmallWebRTC, SignalingWHIP, SignalingPipecatStart:
		return nil
	}
	return fmt.Errorf("signaling %q: want %s, %s or %s", s, SignalingSmallWebRTC, SignalingWHIP, SignalingPipecatStart)
}

// Limits of the signaling requests.
const (
	// MaxSignalBytes bounds a signaling response body.
	MaxSignalBytes = 256 << 10
	// HangupTimeout bounds the hang-up request at the end of a call.
	HangupTimeout = 2 * time.Second
)

// ErrSignal wraps every signaling failure.
var ErrSignal = errors.New("signaling")

// signalErr says what went wrong with a signaling request.
func signalErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSignal, fmt.Sprintf(format, args...))
}

// readBody reads at most MaxSignalBytes of a response.
func readBody(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxSignalBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxSignalBytes {
		return nil, signalErr("response over %d bytes", MaxSignalBytes)
	}
	return b, nil
}

// do sends one request and checks its status is among ok.
func do(ctx context.Context, client *http.Client, method, u, ctype string, body []byte, ok ...int) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, nil, signalErr("%s %s: %v", method, u, err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, signalErr("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := readBody(resp.Body)
	if err != nil {
		return nil, nil, signalErr("%s %s: reading the answer: %v", method, u, err)
	}
	for _, s := range ok {
		if resp.StatusCode == s {
			return resp, b, nil
		}
	}
	return nil, nil, signalErr("%s %s: HTTP %d: %s", method, u, resp.StatusCode, snippet(b))
}

// snippet is the start of a body, for an error message.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// smallWebRTC is Pipecat's SmallWebRTC signaling: JSON offer and answer
// on one URL, candidates PATCHed to it under the answer's pc_id.
type smallWebRTC struct {
	client *http.Client
	url    string
	pcID   string
	// data is the call's request_data: the flat keys of Twilio's
	// customParameters.
	data map[string]string
}

type swOffer struct {
	SDP         string            `json:"sdp"`
	Type        string            `json:"type"`
	PCID        *string           `json:"pc_id"`
	RestartPC   bool              `json:"restart_pc"`
	RequestData map[string]string `json:"request_data,omitempty"`
}

type swAnswer struct {
	SDP  string `json:"sdp"`
	Type string `json:"type"`
	PCID string `json:"pc_id"`
}

type swCandidate struct {
	Candidate     string `json:"candidate"`
	SDPMid        string `json:"sdp_mid"`
	SDPMLineIndex uint16 `json:"sdp_mline_index"`
}

type swPatch struct {
	PCID       string        `json:"pc_id"`
	Candidates []swCandidate `json:"candidates"`
}

func (s *smallWebRTC) Offer(ctx context.Context, offer string) (string, error) {
	body, err := json.Marshal(swOffer{SDP: offer, Type: "offer", RequestData: s.data})
	if err != nil {
		return "", err
	}
	_, b, err := do(ctx, s.client, http.MethodPost, s.url, "application/json", body, http.StatusOK, http.StatusCreated)
	if err != nil {
		return "", err
	}
	var a swAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		return "", signalErr("POST %s: the answer is not SmallWebRTC JSON: %v", s.url, err)
	}
	if a.Type != "answer" || a.SDP == "" {
		return "", signalErr("POST %s: the answer has type %q and %d bytes of SDP", s.url, a.Type, len(a.SDP))
	}
	s.pcID = a.PCID
	return a.SDP, nil
}

func (s *smallWebRTC) Trickle(ctx context.Context, cands []pion.ICECandidateInit) error {
	p := swPatch{PCID: s.pcID}
	for _, c := range cands {
		sc := swCandidate{Candidate: c.Candidate}
		if c.SDPMid != nil {
			sc.SDPMid = *c.SDPMid
		}
		if c.SDPMLineIndex != nil {
			sc.SDPMLineIndex = *c.SDPMLineIndex
		}
		p.Candidates = append(p.Candidates, sc)
	}
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, _, err = do(ctx, s.client, http.MethodPatch, s.url, "application/json", body, http.StatusOK, http.StatusNoContent, http.StatusAccepted)
	return err
}

// Hangup: SmallWebRTC ends a call when its peer connection closes.
func (s *smallWebRTC) Hangup(context.Context) error { return nil }

// pipecatStart is the flow of Pipecat's development runner (and Pipecat
// Cloud): POST /start {"transport":"webrtc","body":DATA} opens a session,
// whose id the answer gives; the offer and its candidates then go to
// /sessions/ID/api/offer as SmallWebRTC's.
type pipecatStart struct {
	smallWebRTC
	start string // the /start URL
}

// startAnswer is the runner's answer to /start.
type startAnswer struct {
	SessionID string `json:"sessionId"`
}

func (p *pipecatStart) Offer(ctx context.Context, offer string) (string, error) {
	body, err := json.Marshal(map[string]any{"transport": "webrtc", "body": p.data})
	if err != nil {
		return "", err
	}
	_, b, err := do(ctx, p.client, http.MethodPost, p.start, "application/json", body, http.StatusOK, http.StatusCreated)
	if err != nil {
		return "", err
	}
	var a startAnswer
	if err := json.Unmarshal(b, &a); err != nil || a.SessionID == "" || strings.ContainsAny(a.SessionID, "/?#") {
		return "", signalErr("POST %s: no usable sessionId in %s", p.start, snippet(b))
	}
	u, err := sessionOfferURL(p.start, a.SessionID)
	if err != nil {
		return "", err
	}
	p.url = u
	return p.smallWebRTC.Offer(ctx, offer)
}

// sessionOfferURL is the session's offer URL beside the /start URL: its
// last path segment replaced by sessions/ID/api/offer.
func sessionOfferURL(start, id string) (string, error) {
	u, err := url.Parse(start)
	if err != nil {
		return "", signalErr("%s: %v", start, err)
	}
	dir := u.Path[:strings.LastIndex(u.Path, "/")+1]
	u.Path = dir + "sessions/" + url.PathEscape(id) + "/api/offer"
	u.RawPath = ""
	return u.String(), nil
}

// whip is WHIP (RFC 9725): SDP offer and answer, the session a resource
// at the answer's Location, candidates PATCHed to it as SDP fragments,
// DELETE to end it.
type whip struct {
	client   *http.Client
	url      string
	resource string
	ufrag    string
	pwd      string
}

func (w *whip) Offer(ctx context.Context, offer string) (string, error) {
	w.ufrag, w.pwd = iceCredentials(offer)
	resp, b, err := do(ctx, w.client, http.MethodPost, w.url, "application/sdp", []byte(offer), http.StatusCreated, http.StatusOK)
	if err != nil {
		return "", err
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		base, err := url.Parse(w.url)
		if err != nil {
			return "", signalErr("POST %s: %v", w.url, err)
		}
		ref, err := url.Parse(loc)
		if err != nil {
			return "", signalErr("POST %s: Location %q: %v", w.url, loc, err)
		}
		w.resource = base.ResolveReference(ref).String()
	}
	answer := string(b)
	if !strings.HasPrefix(strings.TrimSpace(answer), "v=0") {
		return "", signalErr("POST %s: the answer is not SDP: %s", w.url, snippet(b))
	}
	return answer, nil
}

func (w *whip) Trickle(ctx context.Context, cands []pion.ICECandidateInit) error {
	if w.resource == "" {
		return signalErr("POST %s: no Location to send candidates to", w.url)
	}
	var f strings.Builder
	fmt.Fprintf(&f, "a=ice-ufrag:%s\r\na=ice-pwd:%s\r\nm=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:0\r\n", w.ufrag, w.pwd)
	for _, c := range cands {
		fmt.Fprintf(&f, "a=%s\r\n", strings.TrimPrefix(c.Candidate, "a="))
	}
	_, _, err := do(ctx, w.client, http.MethodPatch, w.resource, "application/trickle-ice-sdpfrag", []byte(f.String()),
		http.StatusNoContent, http.StatusOK)
	return err
}

func (w *whip) Hangup(ctx context.Context) error {
	if w.resource == "" {
		return nil
	}
	_, _, err := do(ctx, w.client, http.MethodDelete, w.resource, "", nil, http.StatusOK, http.StatusNoContent, http.StatusAccepted)
	return err
}

// iceCredentials finds a=ice-ufrag and a=ice-pwd in an SDP.
func iceCredentials(sdp string) (ufrag, pwd string) {
	for _, line := range strings.Split(sdp, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "a=ice-ufrag:"); ok && ufrag == "" {
			ufrag = v
		}
		if v, ok := strings.CutPrefix(line, "a=ice-pwd:"); ok && pwd == "" {
			pwd = v
		}
	}
	return ufrag, pwd
}
