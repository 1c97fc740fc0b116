package agents

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/callsim/audiocall"
	callwebrtc "github.com/callproof/callproof/callsim/webrtc"
	"github.com/callproof/callproof/internal/rtcpeer"
	"github.com/callproof/callproof/protocol/native"
)

// The WebRTC-mode tests run real pion peers on loopback, in real time: a
// small offerer written here (PCMU transceiver first, then the "chat" data
// channel, as docs/PROTOCOL.md's caller offers) against the agent.

// rtcAgentConfig is cfg in WebRTC mode over cacheDir.
func rtcAgentConfig(t *testing.T, cfg Config, cacheDir string) Config {
	cfg.Audio = &AudioConfig{Wire: WireWebRTC, SpeechCache: cacheDir, VoiceCache: filepath.Join(speechFixture(t), "agent"), Logf: t.Logf}
	cfg.Prepare = 300 * time.Millisecond // real time: keep the calls short
	return cfg
}

// rtcCaller is the test's offerer.
type rtcCaller struct {
	t     *testing.T
	base  string // the agent's http://host:port
	pc    *webrtc.PeerConnection
	track *webrtc.TrackLocalStaticSample
	dc    *webrtc.DataChannel
	open  chan struct{}
	in    chan map[string]any // the agent's data channel messages
	gone  chan struct{}       // the connection failed or closed

	mu       sync.Mutex
	got      []time.Time // arrival of each agent RTP packet
	gotBytes int
	speech   [][]byte // caller frames waiting to be sent
	location string   // WHIP resource
	pcID     string   // SmallWebRTC

	stream   chan struct{} // closes the streamer
	streamed chan struct{}
	goneOnce sync.Once
	readers  sync.WaitGroup
	closed   bool
}

func newRTCCaller(t *testing.T, base string) *rtcCaller {
	t.Helper()
	api, err := rtcpeer.NewAPI(rtcpeer.Options{LoopbackOnly: true})
	require.NoError(t, err)
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	require.NoError(t, err)
	c := &rtcCaller{t: t, base: base, pc: pc, open: make(chan struct{}), in: make(chan map[string]any, 256), gone: make(chan struct{}),
		stream: make(chan struct{}), streamed: make(chan struct{})}
	t.Cleanup(c.close)
	c.track, err = webrtc.NewTrackLocalStaticSample(rtcpeer.PCMU, "audio", "caller")
	require.NoError(t, err)
	_, err = pc.AddTransceiverFromTrack(c.track, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendrecv})
	require.NoError(t, err)
	ordered := true
	c.dc, err = pc.CreateDataChannel("chat", &webrtc.DataChannelInit{Ordered: &ordered})
	require.NoError(t, err)
	c.dc.OnOpen(func() { close(c.open) })
	c.dc.OnMessage(func(m webrtc.DataChannelMessage) {
		var v map[string]any
		if json.Unmarshal(m.Data, &v) == nil {
			select {
			case c.in <- v:
			default:
			}
		}
	})
	pc.OnConnectionStateChange(func(st webrtc.PeerConnectionState) {
		if st == webrtc.PeerConnectionStateFailed || st == webrtc.PeerConnectionStateClosed {
			c.goneOnce.Do(func() { close(c.gone) })
		}
	})
	c.dc.OnClose(func() { c.goneOnce.Do(func() { close(c.gone) }) })
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		for {
			p, _, err := tr.ReadRTP()
			if err != nil {
				return
			}
			c.mu.Lock()
			c.got = append(c.got, time.Now())
			c.gotBytes += len(p.Payload)
			c.mu.Unlock()
		}
	})
	return c
}

// offer makes the offer; with trickle, the SDP has no candidates and they
// are returned to be sent once the answer is in.
func (c *rtcCaller) offer(trickle bool) (sdp string, cands chan webrtc.ICECandidateInit) {
	c.t.Helper()
	cands = make(chan webrtc.ICECandidateInit, 16)
	if trickle {
		c.pc.OnICECandidate(func(ic *webrtc.ICECandidate) {
			if ic == nil {
				close(cands)
				return
			}
			cands <- ic.ToJSON()
		})
	}
	offer, err := c.pc.CreateOffer(nil)
	require.NoError(c.t, err)
	gathered := webrtc.GatheringCompletePromise(c.pc)
	require.NoError(c.t, c.pc.SetLocalDescription(offer))
	if trickle {
		var lines []string
		for l := range strings.Lines(offer.SDP) {
			if !strings.HasPrefix(l, "a=candidate:") && !strings.HasPrefix(l, "a=end-of-candidates") {
				lines = append(lines, l)
			}
		}
		return strings.Join(lines, ""), cands
	}
	select {
	case <-gathered:
	case <-time.After(5 * time.Second):
		c.t.Fatal("caller: gathering took too long")
	}
	return c.pc.LocalDescription().SDP, nil
}

func (c *rtcCaller) setAnswer(sdp string) {
	c.t.Helper()
	require.NoError(c.t, c.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: sdp}))
	assert.True(c.t, rtcpeer.HasPCMU(&webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: sdp}))
	assert.Contains(c.t, sdp, "a=sendrecv", "the agent sends audio on the caller's transceiver")
}

// dialSmall connects by SmallWebRTC signaling.
func (c *rtcCaller) dialSmall(trickle bool) {
	c.t.Helper()
	sdp, cands := c.offer(trickle)
	body, _ := json.Marshal(map[string]any{"sdp": sdp, "type": "offer", "pc_id": nil, "restart_pc": false,
		"requestData": map[string]any{"callproof": map[string]string{"callId": "rtc-1"}}})
	resp, err := http.Post(c.base+OfferPath, "application/json", strings.NewReader(string(body)))
	require.NoError(c.t, err)
	defer resp.Body.Close()
	require.Equal(c.t, http.StatusOK, resp.StatusCode)
	var ans struct {
		SDP  string `json:"sdp"`
		Type string `json:"type"`
		PCID string `json:"pc_id"`
	}
	require.NoError(c.t, json.NewDecoder(resp.Body).Decode(&ans))
	assert.Equal(c.t, "answer", ans.Type)
	require.NotEmpty(c.t, ans.PCID)
	assert.Contains(c.t, ans.SDP, "a=candidate:", "the answer carries the agent's candidates")
	c.pcID = ans.PCID
	c.setAnswer(ans.SDP)
	if trickle {
		var list []map[string]any
		for ic := range cands {
			list = append(list, map[string]any{"candidate": ic.Candidate, "sdp_mid": "0", "sdp_mline_index": 0})
		}
		require.NotEmpty(c.t, list)
		b, _ := json.Marshal(map[string]any{"pc_id": c.pcID, "candidates": list})
		req, _ := http.NewRequest(http.MethodPatch, c.base+OfferPath, strings.NewReader(string(b)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(c.t, err)
		resp.Body.Close()
		require.Equal(c.t, http.StatusOK, resp.StatusCode)
	}
	c.connected()
}

// dialWHIP connects by WHIP.
func (c *rtcCaller) dialWHIP(trickle bool) {
	c.t.Helper()
	sdp, cands := c.offer(trickle)
	resp, err := http.Post(c.base+WHIPPath, "application/sdp", strings.NewReader(sdp))
	require.NoError(c.t, err)
	defer resp.Body.Close()
	require.Equal(c.t, http.StatusCreated, resp.StatusCode)
	assert.Equal(c.t, "application/sdp", resp.Header.Get("Content-Type"))
	c.location = resp.Header.Get("Location")
	require.True(c.t, strings.HasPrefix(c.location, WHIPPath+"/"), "Location %q", c.location)
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	c.setAnswer(string(b))
	if trickle {
		ufrag, pwd := iceCreds(c.pc.LocalDescription().SDP)
		frag := "a=ice-ufrag:" + ufrag + "\r\na=ice-pwd:" + pwd + "\r\nm=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:0\r\n"
		n := 0
		for ic := range cands {
			frag += "a=" + ic.Candidate + "\r\n"
			n++
		}
		require.NotZero(c.t, n)
		frag += "a=end-of-candidates\r\n"
		req, _ := http.NewRequest(http.MethodPatch, c.base+c.location, strings.NewReader(frag))
		req.Header.Set("Content-Type", "application/trickle-ice-sdpfrag")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(c.t, err)
		resp.Body.Close()
		require.Equal(c.t, http.StatusNoContent, resp.StatusCode)
	}
	c.connected()
}

func iceCreds(sdp string) (ufrag, pwd string) {
	for l := range strings.Lines(sdp) {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "a=ice-ufrag:"); ok && ufrag == "" {
			ufrag = v
		}
		if v, ok := strings.CutPrefix(l, "a=ice-pwd:"); ok && pwd == "" {
			pwd = v
		}
	}
	return ufrag, pwd
}

// connected waits for the data channel and starts the caller's frame
// clock: one 20 ms packet every 20 ms, silence when it has nothing to say.
func (c *rtcCaller) connected() {
	c.t.Helper()
	select {
	case <-c.open:
	case <-time.After(10 * time.Second):
		c.t.Fatal("the data channel did not open")
	}
	silence := make([]byte, audio.FrameSamples)
	for i := range silence {
		silence[i] = audio.MulawSilence
	}
	c.readers.Add(1)
	go func() {
		defer c.readers.Done()
		defer close(c.streamed)
		tick := time.NewTicker(audio.FrameDuration)
		defer tick.Stop()
		for {
			select {
			case <-c.stream:
				return
			case <-tick.C:
			}
			c.mu.Lock()
			f := silence
			if len(c.speech) > 0 {
				f, c.speech = c.speech[0], c.speech[1:]
			}
			c.mu.Unlock()
			_ = c.track.WriteSample(media.Sample{Data: f, Duration: audio.FrameDuration})
		}
	}()
}

func (c *rtcCaller) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	require.NoError(c.t, err)
	require.NoError(c.t, c.dc.SendText(string(b)))
}

func (c *rtcCaller) start(b *fakeBackend) {
	c.t.Helper()
	c.send(native.Message{Event: native.EventStart, SequenceNumber: "1", Start: &native.Start{
		CallID: "rtc-1", TimeScale: 1,
		Tools: native.Tools{BaseURL: b.srv.URL, Token: "tok", Catalog: defaultCatalog()},
	}})
}

// say queues a cached utterance on the caller's frame clock and returns
// its length.
func (c *rtcCaller) say(dir, text string) time.Duration {
	c.t.Helper()
	frames := audio.MulawFrames(callerPCM(c.t, dir, text))
	c.mu.Lock()
	c.speech = append(c.speech, frames...)
	c.mu.Unlock()
	return time.Duration(len(frames)) * audio.FrameDuration
}

// waitFor waits for the agent's data channel message that matches.
func (c *rtcCaller) waitFor(what string, within time.Duration, match func(map[string]any) bool) map[string]any {
	c.t.Helper()
	deadline := time.After(within)
	for {
		select {
		case m := <-c.in:
			if match(m) {
				return m
			}
		case <-deadline:
			c.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func dcEvent(ev string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["event"] == ev }
}

func transcriptText(m map[string]any) string {
	t, _ := m["transcript"].(map[string]any)
	s, _ := t["text"].(string)
	return s
}

func (c *rtcCaller) packets() (n int, last time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.got) > 0 {
		last = c.got[len(c.got)-1]
	}
	return len(c.got), last
}

// settle waits until no packet has arrived for quiet (at most within) and
// returns how many have.
func (c *rtcCaller) settle(t *testing.T, quiet, within time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		n, last := c.packets()
		if time.Since(last) >= quiet {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("packets still arriving after %v (%d so far)", within, n)
		}
		time.Sleep(quiet / 4)
	}
}

func (c *rtcCaller) arrivals() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.got...)
}

// close hangs up (if not yet) and waits for the caller's goroutines.
func (c *rtcCaller) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	close(c.stream)
	_ = c.pc.GracefulClose()
	c.readers.Wait()
}

func (c *rtcCaller) hangUp() {
	c.t.Helper()
	c.send(native.Message{Event: native.EventStop, Stop: &native.Stop{Reason: "caller hung up"}})
	if c.location != "" {
		req, _ := http.NewRequest(http.MethodDelete, c.base+c.location, nil)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(c.t, err)
		resp.Body.Close()
		assert.Equal(c.t, http.StatusOK, resp.StatusCode)
	}
	c.close()
}

func baseURL(r *Running) string { return strings.TrimSuffix(r.URL, OfferPath) }

// A call over each signaling, with and without trickle: RTVI's handshake,
// the greeting as real-time audio then its transcript, nothing sent while
// the agent is quiet; without trickle (to keep the test short), the
// caller's request heard from its RTP and acted on, and the ear's counts.
func TestWebRTCCall(t *testing.T) {
	t.Parallel() // real time: let the calls overlap
	for _, tc := range []struct {
		name    string
		whip    bool
		trickle bool
	}{{"smallwebrtc", false, false}, {"smallwebrtc-trickle", false, true}, {"whip", true, false}, {"whip-trickle", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newFakeBackend(t, nil)
			dir := speechFixture(t)
			r := startAgent(t, rtcAgentConfig(t, Careful(), dir))
			require.True(t, strings.HasPrefix(r.URL, "http://127.0.0.1:") && strings.HasSuffix(r.URL, OfferPath), r.URL)
			c := newRTCCaller(t, baseURL(r))
			if tc.whip {
				c.dialWHIP(tc.trickle)
			} else {
				c.dialSmall(tc.trickle)
			}
			require.NoError(t, c.dc.SendText("ping: 1700000000000"))
			c.send(map[string]any{"label": rtviLabel, "type": "client-ready", "id": "r1", "data": map[string]any{"version": "1.0.0"}})
			ready := c.waitFor("bot-ready", 5*time.Second, func(m map[string]any) bool { return m["type"] == "bot-ready" })
			assert.Equal(t, "r1", ready["id"])
			assert.Equal(t, rtviLabel, ready["label"])
			c.start(b)

			ack := c.waitFor("ack", 5*time.Second, dcEvent(native.EventAck))
			assert.EqualValues(t, 1, ack["ack"].(map[string]any)["timeScale"])
			tr := c.waitFor("greeting transcript", 15*time.Second, dcEvent("transcript"))
			assert.Equal(t, greeting, transcriptText(tr))
			got := c.arrivals()
			require.NotEmpty(t, got, "the greeting's audio came before its transcript")
			span := got[len(got)-1].Sub(got[0])
			d := time.Duration(len(got)) * audio.FrameDuration
			t.Logf("greeting: %d packets (%v of audio) over %v", len(got), d, span)
			assert.Greater(t, d, 500*time.Millisecond)
			assert.Greater(t, span, d*8/10, "sent in real time, not at once")
			// Quiet: nothing is sent between utterances. The transcript
			// comes on the data channel and the greeting's last packets on
			// RTP, which pion reads on another goroutine: wait for those
			// to land before the quiet window starts.
			n0 := c.settle(t, 100*time.Millisecond, 5*time.Second)
			time.Sleep(300 * time.Millisecond)
			n1, _ := c.packets()
			assert.Equal(t, n0, n1, "no packets while the agent is quiet")
			if tc.trickle {
				c.hangUp()
				assert.Empty(t, earStats(t, r).Heard)
				if tc.whip {
					// The call is over: DELETE again is fine, a PATCH is not.
					for method, want := range map[string]int{http.MethodDelete: http.StatusOK, http.MethodPatch: http.StatusNotFound} {
						req, _ := http.NewRequest(method, c.base+c.location, strings.NewReader("a=end-of-candidates\r\n"))
						req.Header.Set("Content-Type", "application/trickle-ice-sdpfrag")
						resp, err := http.DefaultClient.Do(req)
						require.NoError(t, err)
						resp.Body.Close()
						assert.Equal(t, want, resp.StatusCode, method)
					}
				}
				return
			}

			c.say(dir, reqDec3)
			u := waitRequest(t, b, "update_order", 20*time.Second)
			assert.Equal(t, map[string]string{"order_number": "5590", "delivery_date": "2026-12-03"}, u.Args)
			c.waitFor("state", 5*time.Second, dcEvent(native.EventState))
			ans := c.waitFor("an answer's transcript", 20*time.Second, dcEvent("transcript"))
			t.Logf("answer: %q", transcriptText(ans))
			n2, _ := c.packets()
			assert.Greater(t, n2, n1, "the answer is audio")
			c.hangUp()

			st := earStats(t, r)
			assert.Equal(t, "rtc-1", st.CallID)
			assert.Equal(t, []string{reqDec3}, st.Texts())
			assert.Equal(t, 1, st.Onsets)
		})
	}
}

// Barge-in: the caller talks over the greeting. The agent stops sending at
// once, sends the transcript of the words that went out, then clear.
func TestWebRTCBargeIn(t *testing.T) {
	t.Parallel() // real time
	b := newFakeBackend(t, nil)
	dir := speechFixture(t)
	r := startAgent(t, rtcAgentConfig(t, Careful(), dir))
	c := newRTCCaller(t, baseURL(r))
	c.dialSmall(false)
	c.start(b)
	require.Eventually(t, func() bool { n, _ := c.packets(); return n > 0 }, 10*time.Second, 5*time.Millisecond, "the greeting starts")
	c.say(dir, "Hi, please ship order 5590 today.")
	var tr map[string]any
	clear := c.waitFor("clear", 10*time.Second, func(m map[string]any) bool {
		if m["event"] == "transcript" && tr == nil {
			tr = m
		}
		return m["event"] == native.EventClear
	})
	cleared := time.Now()
	assert.Equal(t, "a1", clear["clear"].(map[string]any)["id"])
	require.NotNil(t, tr, "a transcript of what went out came before the clear")
	said := strings.Fields(transcriptText(tr))
	assert.Less(t, len(said), len(strings.Fields(greeting)), "only the words sent: %q", said)
	assert.Equal(t, strings.Fields(greeting)[:len(said)], said)
	time.Sleep(200 * time.Millisecond)
	_, last := c.packets()
	assert.Less(t, last.Sub(cleared), 60*time.Millisecond, "no audio after the clear")
	waitRequest(t, b, "ship_order", 20*time.Second)
	c.hangUp()
	assert.Equal(t, []string{"Hi, please ship order 5590 today."}, earStats(t, r).Texts())
}

// answerByHand answers one call of an agent with cfg without its engine,
// running only the call's writer: the test drives the session as the
// engine would. Everything is torn down when the test ends.
func answerByHand(t *testing.T, cfg Config, id string) (*rtcCaller, *rtcCall, *session) {
	t.Helper()
	agent := NewServer(cfg)
	t.Cleanup(func() { _ = agent.Close() })
	c := newRTCCaller(t, "")
	offer, _ := c.offer(false)
	call, sess, answer, err := agent.answerCall(context.Background(), offer, id)
	require.NoError(t, err)
	c.setAnswer(answer)
	c.connected()
	writerDone := make(chan struct{})
	go func() { defer close(writerDone); call.write(sess) }()
	t.Cleanup(func() {
		close(sess.outbox)
		<-writerDone
		sess.cancel()
		call.close(sess)
		call.media.Wait()
	})
	return c, call, sess
}

// Hangup over WebRTC: the audio goes out first, then the hangup message;
// the agent ends the call when the caller does not, HangupWait later.
func TestWebRTCHangupAfterAudio(t *testing.T) {
	t.Parallel() // real time
	dir := speechFixture(t)
	cfg := rtcAgentConfig(t, Careful(), dir)
	cfg.Audio.HangupWait = 300 * time.Millisecond
	// Answer by hand and drive the wire as the engine would (the engine
	// never hangs up by itself).
	c, call, sess := answerByHand(t, cfg, "hangup")
	d := call.speak(sess, "a1", "Okay.")
	require.Greater(t, d, time.Duration(0))
	sess.send(native.Message{Event: native.EventState, State: &native.State{Version: 1}})
	sess.send(native.Message{Event: native.EventHangup, Hangup: &native.Hangup{Reason: "done"}})
	c.waitFor("state", 5*time.Second, dcEvent(native.EventState))
	n, _ := c.packets()
	assert.Less(t, n, int(d/audio.FrameDuration), "state does not wait for the audio")
	tr := c.waitFor("transcript", 5*time.Second, dcEvent("transcript"))
	assert.Equal(t, "Okay.", transcriptText(tr))
	hang := c.waitFor("hangup", 5*time.Second, dcEvent(native.EventHangup))
	assert.Equal(t, "done", hang["hangup"].(map[string]any)["reason"])
	n, _ = c.packets()
	assert.InDelta(t, int(d/audio.FrameDuration), n, 1, "every frame before the hangup")
	hungUp := time.Now()
	select {
	case <-call.gone:
		assert.Greater(t, time.Since(hungUp), 200*time.Millisecond, "the caller had HangupWait to close")
	case <-time.After(3 * time.Second):
		t.Fatal("the agent did not end the call after HangupWait")
	}
}

// NoSelfReports keeps state and tool intents off the data channel, as over
// Twilio; the words and the hangup still go.
func TestWebRTCNoSelfReports(t *testing.T) {
	t.Parallel() // real time
	dir := speechFixture(t)
	cfg := rtcAgentConfig(t, Careful(), dir)
	cfg.Audio.NoSelfReports = true
	cfg.Audio.HangupWait = 200 * time.Millisecond
	c, call, sess := answerByHand(t, cfg, "quiet")
	require.Greater(t, call.speak(sess, "a1", "Okay."), time.Duration(0))
	sess.send(native.Message{Event: native.EventState, State: &native.State{Version: 1}})
	sess.send(native.Message{Event: native.EventToolIntent, ToolIntent: &native.ToolIntent{Tool: "update_order"}})
	sess.send(native.Message{Event: native.EventHangup, Hangup: &native.Hangup{Reason: "done"}})
	var seen []string
	c.waitFor("hangup", 5*time.Second, func(m map[string]any) bool {
		ev, _ := m["event"].(string)
		seen = append(seen, ev)
		return ev == native.EventHangup
	})
	assert.Equal(t, []string{"transcript", native.EventHangup}, seen)
}

// Bad signaling gets a clear 4xx.
func TestWebRTCBadSignaling(t *testing.T) {
	dir := speechFixture(t)
	r := startAgent(t, rtcAgentConfig(t, Careful(), dir))
	base := baseURL(r)
	do := func(method, path, ctype, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// A real offer to mangle.
	c := newRTCCaller(t, base)
	good, _ := c.offer(false)
	noPCMU := strings.ReplaceAll(strings.ReplaceAll(good, "RTP/SAVPF 0", "RTP/SAVPF 8"), "a=rtpmap:0 PCMU/8000", "a=rtpmap:8 PCMA/8000")
	require.NotEqual(t, good, noPCMU)
	var noData []string
	for l := range strings.Lines(good) {
		if strings.HasPrefix(l, "m=application") {
			break
		}
		noData = append(noData, l)
	}
	small := func(sdp, typ string) string {
		b, _ := json.Marshal(map[string]any{"sdp": sdp, "type": typ, "pc_id": nil})
		return string(b)
	}

	for _, tc := range []struct {
		name, method, path, ctype, body string
		status                          int
		says                            string
	}{
		{"garbage", "POST", OfferPath, "application/json", "{not json", 400, "not a JSON object"},
		{"not an offer", "POST", OfferPath, "application/json", small(good, "answer"), 400, `want "offer"`},
		{"not SDP", "POST", OfferPath, "application/json", small("hello", "offer"), 400, "not an SDP offer"},
		{"no PCMU", "POST", OfferPath, "application/json", small(noPCMU, "offer"), 400, "no PCMU"},
		{"no data channel", "POST", OfferPath, "application/json", small(strings.Join(noData, ""), "offer"), 400, "no data channel"},
		{"unknown pc_id", "PATCH", OfferPath, "application/json", `{"pc_id":"nope","candidates":[]}`, 404, "no such call"},
		{"patch garbage", "PATCH", OfferPath, "application/json", `[`, 400, "not a JSON object"},
		{"too big", "POST", OfferPath, "application/json", `{"sdp":"` + strings.Repeat("x", maxSignalBytes) + `"}`, 413, "body over"},
		{"GET offer", "GET", OfferPath, "", "", 405, "POST"},
		{"WHIP no PCMU", "POST", WHIPPath, "application/sdp", noPCMU, 400, "no PCMU"},
		{"WHIP JSON", "POST", WHIPPath, "application/json", small(good, "offer"), 415, "application/sdp"},
		{"WHIP unknown PATCH", "PATCH", WHIPPath + "/nope", "application/trickle-ice-sdpfrag", "a=end-of-candidates\r\n", 404, "no such call"},
		{"WHIP unknown DELETE", "DELETE", WHIPPath + "/nope", "", "", 404, "no such call"},
		{"elsewhere", "GET", "/", "", "", 404, OfferPath},
	} {
		status, body := do(tc.method, tc.path, tc.ctype, tc.body)
		assert.Equal(t, tc.status, status, "%s: %s", tc.name, body)
		assert.Contains(t, body, tc.says, tc.name)
	}
	status, body := do("GET", EarStatsPath, "", "")
	assert.Equal(t, 200, status)
	assert.Contains(t, body, `"calls"`)
	assert.Empty(t, r.Agent().rtc.calls, "no call was left behind")
}

// Server.Close with a call in progress returns promptly and ends it; the
// calls leave no goroutine behind.
func TestWebRTCCloseAndNoLeak(t *testing.T) {
	dir := speechFixture(t)
	b := newFakeBackend(t, nil)
	cfg := rtcAgentConfig(t, Careful(), dir)
	// Warm up what starts once per process (pion's and net/http's
	// background goroutines) before counting.
	func() {
		r := startAgent(t, cfg)
		c := newRTCCaller(t, baseURL(r))
		c.dialWHIP(false)
		c.start(b)
		c.waitFor("ack", 5*time.Second, dcEvent(native.EventAck))
		c.hangUp()
		require.NoError(t, r.Close())
	}()
	http.DefaultClient.CloseIdleConnections()
	time.Sleep(100 * time.Millisecond)
	before := runtime.NumGoroutine()
	func() {
		r, err := Start(context.Background(), cfg, "127.0.0.1:0")
		require.NoError(t, err)
		c := newRTCCaller(t, baseURL(r))
		c.dialSmall(true)
		c.start(b)
		require.Eventually(t, func() bool { n, _ := c.packets(); return n > 0 }, 10*time.Second, 5*time.Millisecond, "the greeting starts")
		t0 := time.Now()
		require.NoError(t, r.Close())
		took := time.Since(t0)
		t.Logf("Close with a call in progress took %v", took)
		assert.Less(t, took, 3*time.Second)
		select {
		case <-c.gone:
		case <-time.After(5 * time.Second):
			t.Error("the caller did not see the call end")
		}
		c.close()
		// A call that never connects ends too (here: by Close).
		r2, err := Start(context.Background(), cfg, "127.0.0.1:0")
		require.NoError(t, err)
		c2 := newRTCCaller(t, baseURL(r2))
		sdp, _ := c2.offer(false)
		resp, err := http.Post(baseURL(r2)+WHIPPath, "application/sdp", strings.NewReader(sdp))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusCreated, resp.StatusCode)
		c2.close() // never set the answer: the agent's side waits
		require.NoError(t, r2.Close())
		http.DefaultClient.CloseIdleConnections()
	}()
	noLeakSlack(t, before, 2)
}

// noLeakSlack waits for the goroutine count to fall back to before+slack.
func noLeakSlack(t *testing.T, before, slack int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+slack {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<17)
			t.Fatalf("goroutines leaked: %d > %d+%d\n%s", runtime.NumGoroutine(), before, slack, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An unknown wire fails at Start; WebRTC mode answers no WebSocket.
func TestWebRTCConfig(t *testing.T) {
	cfg := Careful()
	cfg.Audio = &AudioConfig{Wire: "carrier-pigeon", SpeechCache: t.TempDir()}
	_, err := Start(context.Background(), cfg, "127.0.0.1:0")
	assert.ErrorContains(t, err, "carrier-pigeon")
	assert.Equal(t, WireTwilio, AudioConfig{}.withDefaults().Wire)
}

// The harness's own WebRTC caller (callsim/webrtc) against the agent, over
// each signaling: it hears the greeting as an utterance with the agent's
// words, talks over it (the agent clears), and its request is acted on.
func TestWebRTCWithHarnessCaller(t *testing.T) {
	t.Parallel() // real time
	for _, tc := range []struct {
		signaling string
		trickle   bool
	}{{callwebrtc.SignalingSmallWebRTC, false}, {callwebrtc.SignalingWHIP, true}} {
		t.Run(tc.signaling, func(t *testing.T) {
			t.Parallel()
			b := newFakeBackend(t, nil)
			dir := speechFixture(t)
			r := startAgent(t, rtcAgentConfig(t, Careful(), dir))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			tr := &callwebrtc.Transport{Config: audiocall.Config{Speech: callerCache(dir)}, Signaling: tc.signaling, Trickle: tc.trickle, CallID: "interop"}
			url := r.URL
			if tc.signaling == callwebrtc.SignalingWHIP {
				url = baseURL(r) + WHIPPath
			}
			conn, err := tr.Dial(ctx, url)
			require.NoError(t, err)
			defer conn.Close()
			in := make(chan native.Message, 256)
			go func() {
				defer close(in)
				for {
					f, err := conn.Recv(ctx)
					if err != nil {
						return
					}
					in <- f.Message
				}
			}()
			wait := func(what string, match func(native.Message) bool) native.Message {
				t.Helper()
				for {
					select {
					case m, ok := <-in:
						require.True(t, ok, "the call ended while waiting for %s", what)
						if match(m) {
							return m
						}
					case <-time.After(20 * time.Second):
						t.Fatalf("timed out waiting for %s", what)
					}
				}
			}
			require.NoError(t, conn.Send(ctx, native.Message{Event: native.EventStart, Start: &native.Start{
				CallID: "interop", TimeScale: 1, Tools: native.Tools{BaseURL: b.srv.URL, Token: "tok", Catalog: defaultCatalog()}}}))
			// The words come with the end, or just after it (the transcript
			// follows the last packet).
			greet := wait("the greeting's words", func(m native.Message) bool {
				return m.Event == native.EventAgentSpeech && m.AgentSpeech.Phase != native.PhaseStart && m.AgentSpeech.Text != ""
			})
			assert.Equal(t, "a1", greet.AgentSpeech.ID)
			assert.Equal(t, greeting, greet.AgentSpeech.Text, "the agent's own words")

			call := conn.(*callwebrtc.Conn)
			_, err = call.PrepareSpeech(ctx, "u1", reqDec3)
			require.NoError(t, err)
			require.NoError(t, conn.Send(ctx, native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: "u1", Phase: native.PhaseOnset}}))
			readBack := wait("the read-back", isSpeech(native.PhaseStart))
			// Talk over the read-back: the agent clears.
			_, err = call.PrepareSpeech(ctx, "u2", "Wait, stop, don't change anything.")
			require.NoError(t, err)
			require.NoError(t, conn.Send(ctx, native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: "u2", Phase: native.PhaseOnset}}))
			wait("clear", func(m native.Message) bool { return m.Event == native.EventClear })
			waitRequest(t, b, "update_order", 20*time.Second)
			// The agent answers the second utterance only once its ear has
			// heard it to its end: an ordering, where a fixed sleep here
			// was a margin a loaded machine overran.
			wait("the answer to the second utterance", func(m native.Message) bool {
				return m.Event == native.EventAgentSpeech && m.AgentSpeech.Phase == native.PhaseStart && m.AgentSpeech.ID != readBack.AgentSpeech.ID
			})
			require.NoError(t, conn.Send(ctx, native.Message{Event: native.EventStop, Stop: &native.Stop{Reason: "caller hung up"}}))
			require.NoError(t, conn.Close())
			st := earStats(t, r)
			assert.Equal(t, "interop", st.CallID)
			assert.Equal(t, []string{reqDec3, "Wait, stop, don't change anything."}, st.Texts())
		})
	}
}
