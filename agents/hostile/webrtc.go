package hostile

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"

	"github.com/callproof/callproof/internal/rtcpeer"
)

// The WebRTC bounds WebRTCJunk stays under until its last message
// (callsim/webrtc's defaults, restated).
const (
	// webrtcRounds of every data-channel message kind by default: one
	// shows each at its limit; more would only lengthen the call (DTLS
	// and SCTP under the race detector read about a MiB a second).
	webrtcRounds = 1
	// aheadFrames of audio sent at once: 5 s, half the bound on audio
	// waiting to be played.
	aheadFrames = 250
	// offerPath is where WebRTCJunk answers a SmallWebRTC offer.
	offerPath = "/api/offer"
)

// serveOffer answers a SmallWebRTC offer (POST {"sdp","type"}) with a
// peer that sends WebRTCJunk's messages once the caller's start comes.
func (a *Agent) serveOffer(w http.ResponseWriter, r *http.Request) {
	var req struct {
		SDP string `json:"sdp"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req) != nil {
		http.Error(w, "want a POSTed offer", http.StatusBadRequest)
		return
	}
	api, err := rtcpeer.NewAPI(rtcpeer.Options{LoopbackOnly: true})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if !a.holdPeer(pc) {
		_ = pc.Close()
		http.Error(w, "closing", http.StatusServiceUnavailable)
		return
	}
	track, err := webrtc.NewTrackLocalStaticSample(rtcpeer.PCMU, "audio", "hostile")
	if err == nil {
		_, err = pc.AddTrack(track)
	}
	if err == nil {
		err = pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: req.SDP})
	}
	var ans webrtc.SessionDescription
	if err == nil {
		ans, err = pc.CreateAnswer(nil)
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err == nil {
		err = pc.SetLocalDescription(ans)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	pc.OnDataChannel(func(d *webrtc.DataChannel) {
		started := make(chan struct{}, 1)
		d.OnMessage(func(webrtc.DataChannelMessage) {
			select {
			case started <- struct{}{}:
			default:
			}
		})
		d.OnOpen(func() {
			if !a.track() {
				return
			}
			go func() {
				defer a.wg.Done()
				select {
				case <-started: // the caller's start (or any message)
				case <-a.ctx.Done():
					return
				case <-time.After(10 * time.Second):
					return
				}
				silence := bytes.Repeat([]byte{0xff}, 160) // 20 ms of μ-law silence
				for range aheadFrames {
					_ = track.WriteSample(media.Sample{Data: silence, Duration: 20 * time.Millisecond})
				}
				for _, m := range WebRTCMessages(a.opts.Rounds) {
					// As a sender that minds its buffer: the point is
					// what the caller reads, not what this side queues.
					for d.BufferedAmount() > maxFrameBytes && d.ReadyState() == webrtc.DataChannelStateOpen {
						select {
						case <-a.ctx.Done():
							return
						case <-time.After(5 * time.Millisecond):
						}
					}
					if d.SendText(m) != nil {
						return
					}
				}
			}()
		})
	})
	select {
	case <-gathered:
	case <-time.After(5 * time.Second):
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"sdp": pc.LocalDescription().SDP, "type": "answer", "pc_id": "hostile"})
}

// track counts a goroutine Close waits for; false once it is closing.
func (a *Agent) track() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ctx.Err() != nil {
		return false
	}
	a.wg.Add(1)
	return true
}

// holdPeer keeps pc to close with the agent; false once it is closing.
func (a *Agent) holdPeer(pc *webrtc.PeerConnection) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ctx.Err() != nil {
		return false
	}
	a.peers = append(a.peers, pc)
	return true
}

// WebRTCMessages is WebRTCJunk's data-channel messages: rounds of every kind just under the frame limit (native events, an RTVI
// server message carrying one, other RTVI messages, agent_speech claims,
// an unknown event, a known event of the wrong shape) or at its own
// limit (the longest transcript, a clear, keepalives), then one message
// over the frame limit.
func WebRTCMessages(rounds int) []string {
	pad := func(head, tail string) string {
		return head + strings.Repeat("p", maxFrameBytes-len(head)-len(tail)-16) + tail
	}
	kinds := []string{
		pad(`{"event":"state","state":{"version":1,"pending":"`, `"}}`),
		pad(`{"event":"tool_intent","tool_intent":{"tool":"update_order","args":{"x":"`, `"}}}`),
		pad(`{"event":"ack","ack":{"timeScale":1,"agent":"`, `"}}`),
		pad(`{"label":"rtvi-ai","type":"server-message","data":{"event":"state","state":{"version":2,"pending":"`, `"}}}`),
		pad(`{"label":"rtvi-ai","type":"bot-llm-text","data":{"text":"`, `"}}`),
		pad(`{"event":"agent_speech","agent_speech":{"id":"a1","phase":"text","text":"`, `"}}`),
		pad(`{"event":"mystery","pad":"`, `"}`),
		pad(`{"event":"state","state":"`, `"}`),
		`{"event":"transcript","transcript":{"text":"` + strings.Repeat("word ", eventTextBytes/5) + `"}}`,
		`{"event":"clear","clear":{"id":"a1"}}`,
		"ping: " + strings.Repeat("1", 1000),
		"pong",
	}
	var out []string
	for range rounds {
		out = append(out, kinds...)
	}
	over, _ := json.Marshal(map[string]any{"event": "mystery", "pad": strings.Repeat("x", maxFrameBytes)})
	return append(out, string(over))
}
