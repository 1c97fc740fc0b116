package agents

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/callproof/callproof/internal/rtcpeer"
)

// The paths a Server in WebRTC mode answers on (docs/PROTOCOL.md, "WebRTC
// dialect"), besides EarStatsPath.
const (
	// OfferPath takes Pipecat SmallWebRTC signaling: POST an offer (JSON),
	// PATCH trickled candidates.
	OfferPath = "/api/offer"
	// WHIPPath takes WHIP (RFC 9725): POST an offer (application/sdp);
	// the call is then the resource WHIPPath/{id}, PATCHed with trickled
	// candidates and DELETEd to hang up.
	WHIPPath = "/whip"
)

// Signaling bounds.
const (
	// maxSignalBytes bounds a signaling request's body, as the caller
	// bounds the agent's answers.
	maxSignalBytes = 256 << 10
	// rtcGatherWait bounds the wait for our ICE candidates (host
	// candidates only: normally a few milliseconds) before answering.
	rtcGatherWait = 5 * time.Second
	// rtcDeleteWait bounds how long a DELETE waits for the call to end.
	rtcDeleteWait = 5 * time.Second
)

// rtcSide is what a Server in WebRTC mode shares between its calls.
type rtcSide struct {
	api *webrtc.API

	mu    sync.Mutex
	calls map[string]*rtcCall // by id, until the session is over
	// ended holds the latest keepEnded ids of calls that are over, so a
	// DELETE that comes after the call ended (the caller sent stop first)
	// still succeeds; endedOrder is their ring.
	ended      map[string]bool
	endedOrder []string
	endedNext  int
}

// keepEnded bounds the ended call ids remembered (16 hex digits each).
const keepEnded = 1024

func newRTCSide() (*rtcSide, error) {
	// Loopback candidates only: the reference agents are for a harness on
	// the same machine, and a test must never send to another host.
	api, err := rtcpeer.NewAPI(rtcpeer.Options{LoopbackOnly: true})
	if err != nil {
		return nil, fmt.Errorf("agents: webrtc: %w", err)
	}
	return &rtcSide{api: api, calls: map[string]*rtcCall{}, ended: map[string]bool{}}, nil
}

func (r *rtcSide) call(id string) *rtcCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[id]
}

// lookup finds a call in progress, or says whether id is a call that has
// ended.
func (r *rtcSide) lookup(id string) (c *rtcCall, ended bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[id], r.ended[id]
}

// over files a call that has ended.
func (r *rtcSide) over(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.calls, id)
	if len(r.endedOrder) < keepEnded {
		r.endedOrder = append(r.endedOrder, id)
	} else {
		delete(r.ended, r.endedOrder[r.endedNext])
		r.endedOrder[r.endedNext] = id
		r.endedNext = (r.endedNext + 1) % keepEnded
	}
	r.ended[id] = true
}

// signalError is a signaling request's failure: the status and what to say.
type signalError struct {
	status int
	msg    string
}

func (e *signalError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &signalError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

func writeSignalError(w http.ResponseWriter, err error) {
	var se *signalError
	if errors.As(err, &se) {
		http.Error(w, se.msg, se.status)
		return
	}
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

// serveRTC routes a request in WebRTC mode.
func (s *Server) serveRTC(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == OfferPath:
		switch r.Method {
		case http.MethodPost:
			s.postOffer(w, r)
		case http.MethodPatch:
			s.patchOffer(w, r)
		default:
			w.Header().Set("Allow", "POST, PATCH")
			http.Error(w, "POST an offer or PATCH candidates", http.StatusMethodNotAllowed)
		}
	case p == WHIPPath:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "POST an offer (application/sdp)", http.StatusMethodNotAllowed)
			return
		}
		s.postWHIP(w, r)
	case strings.HasPrefix(p, WHIPPath+"/"):
		id := strings.TrimPrefix(p, WHIPPath+"/")
		c, ended := s.rtc.lookup(id)
		if c == nil {
			if ended && r.Method == http.MethodDelete {
				w.WriteHeader(http.StatusOK) // already over: DELETE is idempotent
				return
			}
			msg := "no such call"
			if ended {
				msg = "the call has ended"
			}
			http.Error(w, msg, http.StatusNotFound)
			return
		}
		switch r.Method {
		case http.MethodPatch:
			s.patchWHIP(w, r, c)
		case http.MethodDelete:
			c.end("the caller deleted it")
			timer := time.NewTimer(rtcDeleteWait)
			defer timer.Stop()
			select {
			case <-c.done:
			case <-timer.C:
			case <-r.Context().Done():
			}
			w.WriteHeader(http.StatusOK)
		default:
			w.Header().Set("Allow", "PATCH, DELETE")
			http.Error(w, "PATCH candidates or DELETE the call", http.StatusMethodNotAllowed)
		}
	default:
		http.Error(w, "not found: offers go to "+OfferPath+" (SmallWebRTC) or "+WHIPPath+" (WHIP)", http.StatusNotFound)
	}
}

// readSignal reads a signaling body of at most maxSignalBytes, of media
// type want (any when empty).
func readSignal(w http.ResponseWriter, r *http.Request, want string) ([]byte, error) {
	if want != "" {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != want {
			return nil, &signalError{http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q: want %s", r.Header.Get("Content-Type"), want)}
		}
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSignalBytes))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, &signalError{http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", maxSignalBytes)}
		}
		return nil, badRequest("reading the body: %v", err)
	}
	return b, nil
}

// smallOffer is SmallWebRTC's offer request; smallAnswer its answer.
type (
	smallOffer struct {
		SDP         string          `json:"sdp"`
		Type        string          `json:"type"`
		PCID        *string         `json:"pc_id"`
		RestartPC   bool            `json:"restart_pc"`
		RequestData json.RawMessage `json:"request_data"`
		// LegacyData is what callers before request_data sent:
		// {"callproof":{"callId":…}}.
		LegacyData json.RawMessage `json:"requestData"`
	}
	smallAnswer struct {
		SDP  string `json:"sdp"`
		Type string `json:"type"`
		PCID string `json:"pc_id"`
	}
	smallPatch struct {
		PCID       string `json:"pc_id"`
		Candidates []struct {
			Candidate     string  `json:"candidate"`
			SDPMid        *string `json:"sdp_mid"`
			SDPMLineIndex *uint16 `json:"sdp_mline_index"`
		} `json:"candidates"`
	}
)

func (s *Server) postOffer(w http.ResponseWriter, r *http.Request) {
	body, err := readSignal(w, r, "")
	if err != nil {
		writeSignalError(w, err)
		return
	}
	var req smallOffer
	if err := json.Unmarshal(body, &req); err != nil {
		writeSignalError(w, badRequest("offer: not a JSON object {sdp, type, pc_id}: %v", err))
		return
	}
	if req.Type != "offer" {
		writeSignalError(w, badRequest("offer: type %q, want \"offer\"", req.Type))
		return
	}
	if req.PCID != nil && *req.PCID != "" {
		if old := s.rtc.call(*req.PCID); old != nil {
			if !req.RestartPC {
				http.Error(w, "pc_id "+*req.PCID+": renegotiation is not supported (set restart_pc to replace the call)", http.StatusConflict)
				return
			}
			old.end("replaced by a restart")
		}
	}
	var label string
	var rd map[string]string
	if json.Unmarshal(req.RequestData, &rd) == nil {
		label = rd[ParamCallID]
	}
	if len(req.LegacyData) > 0 && label == "" {
		var legacy struct {
			Callproof struct {
				CallID string `json:"callId"`
			} `json:"callproof"`
		}
		if json.Unmarshal(req.LegacyData, &legacy) == nil {
			label = legacy.Callproof.CallID
		}
	}
	c, answer, err := s.answer(r.Context(), req.SDP, label)
	if err != nil {
		writeSignalError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(smallAnswer{SDP: answer, Type: "answer", PCID: c.id})
}

func (s *Server) patchOffer(w http.ResponseWriter, r *http.Request) {
	body, err := readSignal(w, r, "")
	if err != nil {
		writeSignalError(w, err)
		return
	}
	var req smallPatch
	if err := json.Unmarshal(body, &req); err != nil {
		writeSignalError(w, badRequest("candidates: not a JSON object {pc_id, candidates}: %v", err))
		return
	}
	c, ended := s.rtc.lookup(req.PCID)
	if c == nil {
		msg := ": no such call"
		if ended {
			msg = ": the call has ended"
		}
		http.Error(w, "pc_id "+req.PCID+msg, http.StatusNotFound)
		return
	}
	for _, cand := range req.Candidates {
		if err := c.pc.AddICECandidate(webrtc.ICECandidateInit{Candidate: cand.Candidate, SDPMid: cand.SDPMid, SDPMLineIndex: cand.SDPMLineIndex}); err != nil {
			writeSignalError(w, badRequest("candidate %q: %v", cand.Candidate, err))
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"status":"success"}`+"\n")
}

func (s *Server) postWHIP(w http.ResponseWriter, r *http.Request) {
	body, err := readSignal(w, r, "application/sdp")
	if err != nil {
		writeSignalError(w, err)
		return
	}
	c, answer, err := s.answer(r.Context(), string(body), "")
	if err != nil {
		writeSignalError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/sdp")
	w.Header().Set("Location", WHIPPath+"/"+c.id)
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, answer)
}

// patchWHIP adds the candidates of a trickle-ice-sdpfrag (RFC 8840): its
// a=candidate lines, and a=end-of-candidates. pion has one ICE transport
// for the bundle, so the fragment's m= and mid lines do not matter.
func (s *Server) patchWHIP(w http.ResponseWriter, r *http.Request, c *rtcCall) {
	body, err := readSignal(w, r, "application/trickle-ice-sdpfrag")
	if err != nil {
		writeSignalError(w, err)
		return
	}
	for line := range strings.Lines(string(body)) {
		line = strings.TrimRight(line, "\r\n")
		var cand string
		switch {
		case strings.HasPrefix(line, "a=candidate:"):
			cand = strings.TrimPrefix(line, "a=")
		case line == "a=end-of-candidates":
			cand = ""
		default:
			continue
		}
		if err := c.pc.AddICECandidate(webrtc.ICECandidateInit{Candidate: cand}); err != nil {
			writeSignalError(w, badRequest("candidate %q: %v", cand, err))
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// answer answers an offer with a new call and runs it; it returns the
// call and the answer SDP, which holds every candidate of ours (or those
// gathered within rtcGatherWait), so an offerer that does not trickle can
// connect.
func (s *Server) answer(ctx context.Context, sdp, label string) (*rtcCall, string, error) {
	c, sess, answer, err := s.answerCall(ctx, sdp, label)
	if err != nil {
		return nil, "", err
	}
	s.runCall(c, sess)
	return c, answer, nil
}

// answerCall makes a call that answers the offer, with its session; nothing
// runs yet but pion's own work.
func (s *Server) answerCall(ctx context.Context, sdp, label string) (*rtcCall, *session, string, error) {
	offer := webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: sdp}
	parsed, err := offer.Unmarshal()
	if err != nil || len(parsed.MediaDescriptions) == 0 {
		if err == nil {
			err = errors.New("no media")
		}
		return nil, nil, "", badRequest("offer: not an SDP offer: %v", err)
	}
	if !rtcpeer.HasPCMU(&offer) {
		return nil, nil, "", badRequest("offer: no PCMU audio (an m=audio section offering payload type 0, PCMU/8000)")
	}
	hasData := false
	for _, md := range parsed.MediaDescriptions {
		if md.MediaName.Media == "application" {
			hasData = true
		}
	}
	if !hasData {
		return nil, nil, "", badRequest("offer: no data channel (m=application): start and the agent's messages go over one labelled \"chat\"")
	}

	pc, err := s.rtc.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, nil, "", err
	}
	track, err := webrtc.NewTrackLocalStaticSample(rtcpeer.PCMU, "audio", "callproof-"+s.cfg.Name)
	if err != nil {
		_ = pc.Close()
		return nil, nil, "", err
	}
	c := newRTCCall(s.audio, newCallID(), pc, track)
	c.callID = label
	sess := newSession(s.base, s.cfg, s.client, nil, c)
	fail := func(err error) (*rtcCall, *session, string, error) {
		sess.cancel()
		_ = pc.Close()
		return nil, nil, "", err
	}
	c.attach(sess)
	if err := pc.SetRemoteDescription(offer); err != nil {
		return fail(badRequest("offer: %v", err))
	}
	sender, err := pc.AddTrack(track)
	if err != nil {
		return fail(err)
	}
	c.readRTCP(sender)
	ans, err := pc.CreateAnswer(nil)
	if err != nil {
		return fail(badRequest("offer: cannot answer it: %v", err))
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(ans); err != nil {
		return fail(err)
	}
	timer := time.NewTimer(rtcGatherWait)
	defer timer.Stop()
	select {
	case <-gathered:
	case <-timer.C: // answer with the candidates we have
	case <-ctx.Done():
		return fail(ctx.Err())
	case <-s.base.Done():
		return fail(&signalError{http.StatusServiceUnavailable, "agent closed"})
	}
	local := pc.LocalDescription()
	if local == nil {
		return fail(errors.New("no local description"))
	}
	return c, sess, local.SDP, nil
}

// runCall runs an answered call until it ends (Close waits for it).
func (s *Server) runCall(c *rtcCall, sess *session) {
	s.rtc.mu.Lock()
	s.rtc.calls[c.id] = c
	s.rtc.mu.Unlock()
	s.calls.Add(1) // the request holds one already: Close waits for both
	go func() {
		defer s.calls.Done()
		sess.run()
		s.rtc.over(c.id)
		close(c.done)
	}()
}

// newCallID names a call (pc_id, WHIP resource): 16 random hex digits.
func newCallID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
