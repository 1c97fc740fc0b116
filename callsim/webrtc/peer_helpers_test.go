package webrtc

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	pion "github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/callsim/audiocall"
	"github.com/callproof/callproof/internal/rtcpeer"
	"github.com/callproof/callproof/protocol/native"
)

// testPeer is a scripted agent on the far end: a pion answerer behind
// SmallWebRTC and WHIP endpoints, whose behaviour each test sets.
type testPeer struct {
	t   *testing.T
	api *pion.API
	srv *httptest.Server

	// answer, when set, rewrites the answer SDP (a broken agent).
	answer func(string) string
	// status, when non-zero, is what the offer gets instead.
	status int

	mu       sync.Mutex
	calls    []*peerCall
	patches  int
	deletes  int
	requests []map[string]any
	starts   []map[string]any // the /start requests
	newCall  chan *peerCall
}

// peerCall is one call the test peer answered.
type peerCall struct {
	pc    *pion.PeerConnection
	track *pion.TrackLocalStaticSample
	dc    chan *pion.DataChannel
	msgs  chan string            // data-channel text from the caller
	start chan map[string]string // the RTVI client-message start's data

	mu     sync.Mutex
	frames int // RTP packets from the caller
	loud   int // of them, above -40 dBFS
}

func newTestPeer(t *testing.T) *testPeer {
	api, err := rtcpeer.NewAPI(rtcpeer.Options{LoopbackOnly: true})
	require.NoError(t, err)
	p := &testPeer{t: t, api: api, newCall: make(chan *peerCall, 8)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/offer", p.smallOffer)
	// Pipecat's runner: /start opens a session, its offer follows.
	mux.HandleFunc("POST /start", func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req["transport"] != "webrtc" {
			http.Error(w, "bad start", http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.starts = append(p.starts, req)
		p.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]string{"sessionId": "s-1"})
	})
	mux.HandleFunc("POST /sessions/s-1/api/offer", p.smallOffer)
	mux.HandleFunc("PATCH /api/offer", func(w http.ResponseWriter, r *http.Request) { p.patch(w, r, false) })
	mux.HandleFunc("POST /whip", p.whipOffer)
	mux.HandleFunc("PATCH /whip/{id}", func(w http.ResponseWriter, r *http.Request) { p.patch(w, r, true) })
	mux.HandleFunc("DELETE /whip/{id}", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.deletes++
		p.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		p.srv.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.calls {
			_ = c.pc.Close()
		}
	})
	return p
}

func (p *testPeer) url(path string) string { return p.srv.URL + path }

// answerOffer answers one offer and returns the answer SDP.
func (p *testPeer) answerOffer(offer string) (string, *peerCall, error) {
	pc, err := p.api.NewPeerConnection(pion.Configuration{})
	if err != nil {
		return "", nil, err
	}
	c := &peerCall{pc: pc, dc: make(chan *pion.DataChannel, 1), msgs: make(chan string, 256), start: make(chan map[string]string, 1)}
	pc.OnDataChannel(func(d *pion.DataChannel) {
		d.OnMessage(func(m pion.DataChannelMessage) {
			var msg struct {
				Type string `json:"type"`
				Data struct {
					T string            `json:"t"`
					D map[string]string `json:"d"`
				} `json:"data"`
			}
			if json.Unmarshal(m.Data, &msg) == nil && msg.Type == "client-message" && msg.Data.T == "start" {
				c.start <- msg.Data.D
			}
			select {
			case c.msgs <- string(m.Data):
			default:
			}
		})
		d.OnOpen(func() { c.dc <- d })
	})
	pc.OnTrack(func(r *pion.TrackRemote, _ *pion.RTPReceiver) {
		for {
			pkt, _, err := r.ReadRTP()
			if err != nil {
				return
			}
			c.mu.Lock()
			c.frames++
			if audio.LevelDBFS(audio.DecodeMulaw(pkt.Payload)) > -40 {
				c.loud++
			}
			c.mu.Unlock()
		}
	})
	if err := pc.SetRemoteDescription(pion.SessionDescription{Type: pion.SDPTypeOffer, SDP: offer}); err != nil {
		return "", nil, err
	}
	track, err := pion.NewTrackLocalStaticSample(rtcpeer.PCMU, "audio", "agent")
	if err != nil {
		return "", nil, err
	}
	if _, err := pc.AddTrack(track); err != nil {
		return "", nil, err
	}
	c.track = track
	ans, err := pc.CreateAnswer(nil)
	if err != nil {
		return "", nil, err
	}
	gathered := pion.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(ans); err != nil {
		return "", nil, err
	}
	select {
	case <-gathered:
	case <-time.After(5 * time.Second):
	}
	p.mu.Lock()
	p.calls = append(p.calls, c)
	p.mu.Unlock()
	p.newCall <- c
	sdp := pc.LocalDescription().SDP
	if p.answer != nil {
		sdp = p.answer(sdp)
	}
	return sdp, c, nil
}

func (p *testPeer) smallOffer(w http.ResponseWriter, r *http.Request) {
	if p.status != 0 {
		http.Error(w, "refused", p.status)
		return
	}
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.requests = append(p.requests, req)
	p.mu.Unlock()
	sdp, _ := req["sdp"].(string)
	ans, _, err := p.answerOffer(sdp)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"sdp": ans, "type": "answer", "pc_id": "pc-1"})
}

func (p *testPeer) whipOffer(w http.ResponseWriter, r *http.Request) {
	if p.status != 0 {
		http.Error(w, "refused", p.status)
		return
	}
	b, _ := io.ReadAll(r.Body)
	if r.Header.Get("Content-Type") != "application/sdp" {
		http.Error(w, "want application/sdp", http.StatusUnsupportedMediaType)
		return
	}
	ans, _, err := p.answerOffer(string(b))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/sdp")
	w.Header().Set("Location", "/whip/1")
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, ans)
}

func (p *testPeer) patch(w http.ResponseWriter, r *http.Request, whip bool) {
	b, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.patches++
	var c *peerCall
	if len(p.calls) > 0 {
		c = p.calls[len(p.calls)-1]
	}
	p.mu.Unlock()
	if c == nil {
		http.Error(w, "no call", http.StatusNotFound)
		return
	}
	var cands []string
	if whip {
		for _, line := range splitLines(string(b)) {
			if len(line) > 12 && line[:12] == "a=candidate:" {
				cands = append(cands, line[2:])
			}
		}
	} else {
		var req struct {
			PCID       string `json:"pc_id"`
			Candidates []struct {
				Candidate string `json:"candidate"`
			} `json:"candidates"`
		}
		if json.Unmarshal(b, &req) != nil || req.PCID != "pc-1" {
			http.Error(w, "bad patch", http.StatusBadRequest)
			return
		}
		for _, c := range req.Candidates {
			cands = append(cands, c.Candidate)
		}
	}
	for _, s := range cands {
		if err := c.pc.AddICECandidate(pion.ICECandidateInit{Candidate: s}); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '\n' {
			line := s[start:i]
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			out = append(out, line)
			start = i + 1
		}
	}
	return out
}

// channel waits for the call's data channel.
func (c *peerCall) channel(t *testing.T) *pion.DataChannel {
	t.Helper()
	select {
	case d := <-c.dc:
		c.dc <- d
		return d
	case <-time.After(5 * time.Second):
		t.Fatal("no data channel")
	}
	return nil
}

// speak sends pcm in real time, 20 ms a packet.
func (c *peerCall) speak(ctx context.Context, pcm audio.PCM) {
	tick := time.NewTicker(audio.FrameDuration)
	defer tick.Stop()
	for _, f := range audio.Frames(pcm) {
		_ = c.track.WriteSample(media.Sample{Data: audio.EncodeMulaw(f), Duration: audio.FrameDuration})
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

func (c *peerCall) callerFrames() (frames, loud int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.frames, c.loud
}

func tone(hz float64, d time.Duration, dbfs float64) audio.PCM { return audio.Tone(hz, d, dbfs) }

// toneSpeech stands for the caller's synthesizer: every text is a
// 600 ms tone.
type toneSpeech struct{}

func (toneSpeech) Speech(context.Context, string) (audio.PCM, error) {
	return tone(300, 600*time.Millisecond, -20), nil
}

var _ audiocall.Speech = toneSpeech{}

func mediaSample(pcm audio.PCM) media.Sample {
	return media.Sample{Data: audio.EncodeMulaw(pcm), Duration: audio.FrameDuration}
}

// startedCall is a call to a new test peer over SmallWebRTC, started.
func startedCall(t *testing.T) (*Conn, *peerCall, *pion.DataChannel) {
	t.Helper()
	p := newTestPeer(t)
	tr := &Transport{}
	tr.Speech = toneSpeech{}
	c := dial(t, tr, p.url("/api/offer"))
	pc := <-p.newCall
	dc := pc.channel(t)
	require.NoError(t, c.Send(context.Background(), native.Message{Event: native.EventStart, Start: &native.Start{CallID: "c"}}))
	return c, pc, dc
}
