package agents

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/callsim/twilio"
	"github.com/callproof/callproof/protocol/native"
)

// The audio-mode tests run in real time (audio cannot be scaled) with
// real flite speech over a loopback WebSocket, the harness's own Twilio
// caller (callsim/twilio) on the other side.

// The custom parameter names are the caller's.
func TestTwilioParamNames(t *testing.T) {
	assert.Equal(t, twilio.ParamCallID, ParamCallID)
	assert.Equal(t, twilio.ParamToolsBaseURL, ParamToolsBaseURL)
	assert.Equal(t, twilio.ParamToolsMCPURL, ParamToolsMCPURL)
	assert.Equal(t, twilio.ParamToolsToken, ParamToolsToken)
	assert.Equal(t, twilio.ParamToolsCatalog, ParamToolsCatalog)
	assert.Equal(t, twilio.ParamCallDate, ParamCallDate)
	assert.Equal(t, twilio.ParamTimeZone, ParamTimeZone)
}

// The call's calendar comes out of customParameters into start.
func TestTwilioStartCallDate(t *testing.T) {
	tc := &twilioCall{}
	st, ok := tc.start("MZ1", "MZ1", "CA1", map[string]string{ParamCallID: "c1", ParamCallDate: "2026-12-07",
		ParamTimeZone: "America/New_York", "lang": "en"})
	require.True(t, ok)
	assert.Equal(t, "2026-12-07", st.CallDate)
	assert.Equal(t, "America/New_York", st.TimeZone)
	assert.Equal(t, map[string]string{"lang": "en"}, st.CustomParameters)
}

// copyCache copies the speech fixture into a fresh directory, for a test
// that adds to it.
func copyCache(t *testing.T) string {
	t.Helper()
	src := speechFixture(t)
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644))
	}
	return dst
}

// audioAgent serves cfg in audio mode over cacheDir. The agent's own
// speech is cached beside the fixture, once per run.
func audioAgent(t *testing.T, cfg Config, cacheDir string) *Running {
	t.Helper()
	cfg.Audio = &AudioConfig{SpeechCache: cacheDir, VoiceCache: filepath.Join(speechFixture(t), "agent"), Logf: t.Logf}
	cfg.Prepare = 300 * time.Millisecond // real time: keep the calls short
	return startAgent(t, cfg)
}

// audioCaller is the harness's Twilio caller driven by hand.
type audioCaller struct {
	t     *testing.T
	conn  callsim.Conn
	tc    *twilio.Conn
	in    chan native.Message
	dir   string
	n     int
	ctx   context.Context
	stop  context.CancelFunc
	recvd chan struct{}
}

func dialAudio(t *testing.T, url, cacheDir string, b *fakeBackend) *audioCaller {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	tr := &twilio.Transport{Speech: callerCache(cacheDir)}
	conn, err := tr.Dial(ctx, url)
	require.NoError(t, err)
	c := &audioCaller{t: t, conn: conn, tc: conn.(*twilio.Conn), in: make(chan native.Message, 256), dir: cacheDir, ctx: ctx, stop: cancel, recvd: make(chan struct{})}
	go func() {
		defer close(c.recvd)
		defer close(c.in)
		for {
			f, err := conn.Recv(ctx)
			if err != nil {
				return
			}
			c.in <- f.Message
		}
	}()
	t.Cleanup(c.close)
	require.NoError(t, conn.Send(ctx, native.Message{Event: native.EventStart, Start: &native.Start{
		CallID: "audio-1", TimeScale: 1,
		Tools: native.Tools{BaseURL: b.srv.URL, Token: "tok", Catalog: defaultCatalog()},
	}}))
	return c
}

func (c *audioCaller) close() {
	_ = c.conn.Close()
	c.stop()
	<-c.recvd
}

// say plays text (from the caller's cache, synthesized if new).
func (c *audioCaller) say(text string) time.Duration {
	c.t.Helper()
	c.n++
	id := "c" + itoa(c.n)
	d, err := c.tc.PrepareSpeech(c.ctx, id, text)
	require.NoError(c.t, err)
	require.NoError(c.t, c.conn.Send(c.ctx, native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: id, Phase: native.PhaseOnset}}))
	return d
}

func (c *audioCaller) noise(kind string, d time.Duration) {
	c.t.Helper()
	c.n++
	id := "n" + itoa(c.n)
	require.NoError(c.t, c.tc.PrepareSound(c.ctx, id, kind, d))
	require.NoError(c.t, c.conn.Send(c.ctx, native.Message{Event: native.EventSound, Sound: &native.Sound{ID: id, Phase: native.PhaseOnset, Kind: kind}}))
}

func (c *audioCaller) waitFor(what string, within time.Duration, match func(native.Message) bool) native.Message {
	c.t.Helper()
	deadline := time.After(within)
	for {
		select {
		case m, ok := <-c.in:
			if !ok {
				c.t.Fatalf("connection closed while waiting for %s", what)
			}
			if match(m) {
				return m
			}
		case <-deadline:
			c.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// greeted waits for the greeting to be played out.
func (c *audioCaller) greeted() {
	c.t.Helper()
	c.waitFor("greeting start", 10*time.Second, isSpeech(native.PhaseStart))
	c.waitFor("greeting end", 10*time.Second, isSpeech(native.PhaseEnd))
}

// quiet waits until the agent has finished an utterance and started no
// other for d.
func (c *audioCaller) quiet(d, within time.Duration) {
	c.t.Helper()
	deadline := time.After(within)
	speaking := true
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case m, ok := <-c.in:
			if !ok {
				c.t.Fatal("connection closed while waiting for quiet")
			}
			switch {
			case isSpeech(native.PhaseStart)(m):
				speaking = true
				timer.Stop()
			case isSpeech(native.PhaseEnd)(m) || m.Event == native.EventClear:
				speaking = false
				timer.Reset(d)
			}
		case <-timer.C:
			if !speaking {
				return
			}
		case <-deadline:
			c.t.Fatal("timed out waiting for quiet")
		}
	}
}

func (c *audioCaller) hangUp() {
	c.t.Helper()
	require.NoError(c.t, c.conn.Send(c.ctx, native.Message{Event: native.EventStop, Stop: &native.Stop{Reason: "caller hung up"}}))
	c.close()
}

// waitRequest waits (real time) for the next request to tool.
func waitRequest(t *testing.T, b *fakeBackend, tool string, within time.Duration) fakeReq {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case r := <-b.got:
			if r.Tool == tool {
				return r
			}
		case <-deadline:
			t.Fatalf("no %s request", tool)
		}
	}
}

// earStats waits for the call to end on the agent's side and returns
// what its ear heard.
func earStats(t *testing.T, r *Running) EarStats {
	t.Helper()
	var st []EarStats
	// A bound on a condition, not a margin: it returns once the call is over.
	require.Eventually(t, func() bool { st = r.Agent().EarStats(); return len(st) > 0 }, 30*time.Second, 10*time.Millisecond)
	return st[len(st)-1]
}

// A whole call by audio: the greeting is played, the caller's request is
// heard as exactly its text, the agent acts on it (its tool calls reach
// the backend), a correction is heard and acted on, and every scripted
// utterance is heard as exactly one utterance (the agent's own counts).
func TestAudioCallHearsEveryUtteranceOnce(t *testing.T) {
	t.Parallel() // real time: let the calls overlap
	b := newFakeBackend(t, nil)
	dir := speechFixture(t)
	r := audioAgent(t, Careful(), dir)
	c := dialAudio(t, r.URL, dir, b)
	c.greeted()

	script := []string{reqDec3, "Sorry, make that December 5.", "Yes, that's right, go ahead."}
	c.say(script[0])
	u1 := waitRequest(t, b, "update_order", 20*time.Second)
	assert.Equal(t, map[string]string{"order_number": "5590", "delivery_date": "2026-12-03"}, u1.Args)
	c.quiet(time.Second, 20*time.Second)
	c.say(script[1])
	u2 := waitRequest(t, b, "update_order", 20*time.Second)
	assert.Equal(t, map[string]string{"order_number": "5590", "delivery_date": "2026-12-05"}, u2.Args)
	c.quiet(time.Second, 20*time.Second)
	d := c.say(script[2])
	time.Sleep(d + 600*time.Millisecond)
	c.hangUp()

	st := earStats(t, r)
	assert.Equal(t, "audio-1", st.CallID)
	assert.Equal(t, script, st.Texts(), "each utterance heard once, as its text")
	assert.Equal(t, len(script), st.Onsets)
	assert.Zero(t, st.Sounds)
	for _, h := range st.Heard {
		t.Logf("heard %s %q: onset +%v, final +%v, %d/%d frames exact", h.ID, h.Text, h.OnsetLatency, h.FinalLatency, h.Exact, h.LoudFrames)
		assert.Zero(t, h.OnsetLatency)
		assert.Zero(t, h.FinalLatency)
	}
	assert.Equal(t, "2026-12-05", b.field("5590", "delivery_date"))
}

// Barge-in: the caller talks over the greeting; the agent stops with a
// Twilio clear, which the caller reports as the utterance cleared.
func TestAudioBargeInClears(t *testing.T) {
	t.Parallel() // real time: let the calls overlap
	b := newFakeBackend(t, nil)
	dir := speechFixture(t)
	r := audioAgent(t, Careful(), dir)
	c := dialAudio(t, r.URL, dir, b)
	c.waitFor("greeting start", 10*time.Second, isSpeech(native.PhaseStart))
	c.say("Hi, please ship order 5590 today.")
	m := c.waitFor("clear or end", 10*time.Second, func(m native.Message) bool {
		return m.Event == native.EventClear || isSpeech(native.PhaseEnd)(m)
	})
	assert.Equal(t, native.EventClear, m.Event, "the greeting is cut off")
	waitRequest(t, b, "ship_order", 20*time.Second)
	c.hangUp()
	assert.Equal(t, []string{"Hi, please ship order 5590 today."}, earStats(t, r).Texts())
}

// Noise at -30 dBFS during the greeting is not speech: careful keeps
// talking; naive (AnySoundBargesIn) stops for it.
func TestAudioNoiseIsNotSpeech(t *testing.T) {
	t.Parallel() // real time: let the calls overlap
	for _, tc := range []struct {
		cfg   Config
		clear bool
	}{{Careful(), false}, {Naive(), true}} {
		t.Run(tc.cfg.Name, func(t *testing.T) {
			b := newFakeBackend(t, nil)
			dir := speechFixture(t)
			r := audioAgent(t, tc.cfg, dir)
			c := dialAudio(t, r.URL, dir, b)
			c.waitFor("greeting start", 10*time.Second, isSpeech(native.PhaseStart))
			c.noise("door", 400*time.Millisecond)
			m := c.waitFor("clear or end", 10*time.Second, func(m native.Message) bool {
				return m.Event == native.EventClear || isSpeech(native.PhaseEnd)(m)
			})
			assert.Equal(t, tc.clear, m.Event == native.EventClear)
			time.Sleep(700 * time.Millisecond) // past the detector's hangover
			c.hangUp()
			st := earStats(t, r)
			assert.Equal(t, 1, st.Sounds)
			assert.Zero(t, st.Onsets)
			assert.Empty(t, st.Heard)
			assert.Empty(t, b.requests(""))
		})
	}
}

// DTMF: the caller keys the order number the agent asks for. The request
// is a phrase new to the cache, so the ear also finds it by rescanning.
func TestAudioDTMFAndNewPhrase(t *testing.T) {
	t.Parallel() // real time: let the calls overlap
	b := newFakeBackend(t, nil)
	dir := copyCache(t)
	r := audioAgent(t, Careful(), dir)
	c := dialAudio(t, r.URL, dir, b)
	c.greeted()
	req := "Hi, I'd like to change the delivery date on my order to December 3."
	c.say(req)
	c.waitFor("which order", 20*time.Second, isSpeech(native.PhaseStart))
	c.waitFor("which order end", 20*time.Second, isSpeech(native.PhaseEnd))
	require.NoError(t, c.conn.Send(c.ctx, native.Message{Event: native.EventDTMF, DTMF: &native.DTMF{Digits: "5590#"}}))
	u := waitRequest(t, b, "update_order", 20*time.Second)
	assert.Equal(t, "5590", u.Args["order_number"])
	assert.Equal(t, "2026-12-03", u.Args["delivery_date"])
	c.hangUp()
	assert.Equal(t, []string{req}, earStats(t, r).Texts())
}

// The wire, frame by frame, with a minimal scripted Twilio client: the
// greeting comes as media (μ-law, whole utterance, sent at once) and a
// mark named after it; nothing native (ack, agent_speech) is sent.
func TestAudioWireFrames(t *testing.T) {
	t.Parallel() // real time: let the calls overlap
	b := newFakeBackend(t, nil)
	dir := speechFixture(t)
	r := audioAgent(t, Careful(), dir)
	ws, _, err := websocket.DefaultDialer.Dial(r.URL, nil)
	require.NoError(t, err)
	defer ws.Close()
	cat, _ := json.Marshal(defaultCatalog())
	require.NoError(t, ws.WriteJSON(map[string]any{"event": "connected", "protocol": "Call", "version": "1.0.0"}))
	require.NoError(t, ws.WriteJSON(map[string]any{"event": "start", "sequenceNumber": "1", "streamSid": "MZ1",
		"start": map[string]any{"streamSid": "MZ1", "callSid": "CA1", "accountSid": "AC1", "tracks": []string{"inbound"},
			"customParameters": map[string]string{ParamCallID: "wire", ParamToolsBaseURL: b.srv.URL, ParamToolsToken: "tok", ParamToolsCatalog: string(cat)},
			"mediaFormat":      map[string]any{"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}}}))
	var media []byte
	chunks := 0
	t0 := time.Now()
	for {
		require.NoError(t, ws.SetReadDeadline(time.Now().Add(10*time.Second)))
		var m struct {
			Event     string `json:"event"`
			StreamSid string `json:"streamSid"`
			Media     *struct {
				Payload string `json:"payload"`
			} `json:"media"`
			Mark *struct {
				Name string `json:"name"`
			} `json:"mark"`
		}
		require.NoError(t, ws.ReadJSON(&m))
		assert.Equal(t, "MZ1", m.StreamSid)
		if m.Event == "mark" {
			assert.Equal(t, "a1", m.Mark.Name)
			break
		}
		if m.Event == "transcript" {
			// callproof's extension: the greeting's own words, after its
			// audio and before its mark.
			assert.NotEmpty(t, media, "the transcript follows the audio")
			continue
		}
		require.Equal(t, "media", m.Event, "only media, the transcript and the mark")
		p, err := base64.StdEncoding.DecodeString(m.Media.Payload)
		require.NoError(t, err)
		media = append(media, p...)
		chunks++
	}
	sent := time.Since(t0)
	d := audio.PCM(make([]int16, len(media))).Duration()
	t.Logf("greeting: %v of μ-law in %d chunks, sent within %v", d, chunks, sent)
	assert.Greater(t, d, 500*time.Millisecond)
	assert.Less(t, sent, d, "sent faster than real time")
	level := audio.LevelDBFS(audio.DecodeMulaw(media))
	assert.Greater(t, level, -40.0, "the greeting is audible")
	// Echo the mark, key a number, hang up.
	require.NoError(t, ws.WriteJSON(map[string]any{"event": "mark", "streamSid": "MZ1", "mark": map[string]string{"name": "a1"}}))
	for _, dg := range "12" {
		require.NoError(t, ws.WriteJSON(map[string]any{"event": "dtmf", "streamSid": "MZ1", "dtmf": map[string]string{"track": "inbound_track", "digit": string(dg)}}))
	}
	require.NoError(t, ws.WriteJSON(map[string]any{"event": "stop", "streamSid": "MZ1", "stop": map[string]string{}}))
	for {
		require.NoError(t, ws.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, _, err := ws.ReadMessage()
		if err != nil {
			assert.True(t, websocket.IsCloseError(err, websocket.CloseNormalClosure) || strings.Contains(err.Error(), "EOF"), "closed: %v", err)
			break
		}
	}
}

// Hangup in audio mode waits for the caller to have played the last
// utterance (its mark echoed), then closes the WebSocket.
func TestAudioHangupWaitsForLastMark(t *testing.T) {
	t.Parallel() // real time: let the calls overlap
	dir := speechFixture(t)
	side, err := newAudioSide(AudioConfig{SpeechCache: dir, VoiceCache: filepath.Join(dir, "agent")})
	require.NoError(t, err)
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		tc := newTwilioCall(side, SystemClock{})
		s := &session{ctx: ctx, cancel: cancel, ws: ws, inbox: make(chan any, 64), outbox: make(chan any, 256), tw: tc}
		readerDone := make(chan struct{})
		go func() { defer close(readerDone); tc.read(s) }()
		writerDone := make(chan struct{})
		go func() { defer close(writerDone); tc.write(s) }()
		for ev := range s.inbox { // wait for start
			if f, ok := ev.(frameEvent); ok && f.msg.Event == native.EventStart {
				break
			}
		}
		tc.speak(s, "a1", "Okay.")
		s.send(native.Message{Event: native.EventState, State: &native.State{Version: 1}}) // no Twilio form
		s.send(native.Message{Event: native.EventHangup, Hangup: &native.Hangup{Reason: "done"}})
		close(s.outbox)
		<-writerDone
		<-readerDone
		_ = ws.Close()
	}))
	defer srv.Close()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	require.NoError(t, err)
	defer ws.Close()
	require.NoError(t, ws.WriteJSON(map[string]any{"event": "start", "streamSid": "MZ9", "start": map[string]any{"streamSid": "MZ9"}}))
	var events []string
	for {
		var m struct {
			Event string `json:"event"`
		}
		require.NoError(t, ws.SetReadDeadline(time.Now().Add(5*time.Second)))
		require.NoError(t, ws.ReadJSON(&m))
		events = append(events, m.Event)
		if m.Event == "mark" {
			break
		}
	}
	assert.Equal(t, "media", events[0])
	// Not closed before the echo.
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
	_, _, err = ws.ReadMessage()
	require.Error(t, err)
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "still open: %v", err)
	// gorilla/websocket cannot read again after a timeout: echo on a
	// fresh write and watch the server side end instead.
	echoed := time.Now()
	require.NoError(t, ws.WriteJSON(map[string]any{"event": "mark", "streamSid": "MZ9", "mark": map[string]string{"name": "a1"}}))
	select {
	case <-done:
		assert.Less(t, time.Since(echoed), time.Second, "closed on the echo, not at the bound")
	case <-time.After(5 * time.Second):
		t.Fatal("the agent did not close after the last mark")
	}
}

// Odd input in audio mode is ignored; an abrupt close ends the call; no
// goroutine is left behind.
func TestAudioOddInputAndAbruptClose(t *testing.T) {
	dir := speechFixture(t)
	before := runtime.NumGoroutine()
	func() {
		b := newFakeBackend(t, nil)
		defer b.srv.Close()
		cfg := Careful()
		cfg.Audio = &AudioConfig{SpeechCache: dir, VoiceCache: filepath.Join(dir, "agent")}
		agent := NewServer(cfg)
		srv := httptest.NewServer(agent)
		defer srv.Close()
		defer func() { assert.NoError(t, agent.Close()); assert.NoError(t, agent.Close()) }()
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/media", nil)
		require.NoError(t, err)
		for _, raw := range []string{
			`not json`, `[1]`, `{"event":"media","media":{"payload":"AAAA"}}`, // media before start
			`{"event":"start"}`, `{"event":"weird"}`, `{"event":"mark"}`, `{"event":"dtmf"}`,
		} {
			require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(raw)))
		}
		require.NoError(t, ws.WriteMessage(websocket.BinaryMessage, []byte{0, 1, 2}))
		require.NoError(t, ws.WriteJSON(map[string]any{"event": "start", "streamSid": "MZ2", "start": map[string]any{
			"streamSid": "MZ2", "customParameters": map[string]string{ParamToolsBaseURL: b.srv.URL, ParamToolsCatalog: "{broken"}}}))
		for _, raw := range []string{
			`{"event":"media","media":{"payload":"%%%not base64"}}`,
			`{"event":"media","media":{"track":"outbound","payload":"AAAA"}}`,
			`{"event":"media","media":{"payload":"` + base64.StdEncoding.EncodeToString(make([]byte, 250)) + `"}}`, // not whole frames
			`{"event":"dtmf","dtmf":{"digit":"7"}}`,
		} {
			require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(raw)))
		}
		var m struct {
			Event     string `json:"event"`
			StreamSid string `json:"streamSid"`
		}
		require.NoError(t, ws.SetReadDeadline(time.Now().Add(10*time.Second)))
		require.NoError(t, ws.ReadJSON(&m))
		assert.Equal(t, "media", m.Event, "the greeting")
		assert.Equal(t, "MZ2", m.StreamSid)
		require.NoError(t, ws.Close()) // hang up without stop, mid-greeting
	}()
	noLeak(t, before)
}

// Audio mode needs its speech cache; a bad voice fails at Start.
func TestAudioConfigErrors(t *testing.T) {
	cfg := Careful()
	cfg.Audio = &AudioConfig{}
	_, err := Start(context.Background(), cfg, "127.0.0.1:0")
	assert.ErrorContains(t, err, "speech cache")
	needFlite(t)
	cfg.Audio = &AudioConfig{SpeechCache: t.TempDir(), Voice: "flite/nosuchvoice"}
	_, err = Start(context.Background(), cfg, "127.0.0.1:0")
	assert.ErrorContains(t, err, "nosuchvoice")
	// A server made without Start refuses calls instead.
	srv := httptest.NewServer(NewServer(Config{Audio: &AudioConfig{}}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
}

// Two utterances spoken back to back (the read-back, then the answer once
// the write lands during it) are heard by the caller as two, as text mode
// sends two agent_speech start/end pairs: the agent leaves a gap longer
// than a listener's end-of-speech hangover between them.
func TestAudioUtterancesApart(t *testing.T) {
	t.Parallel() // real time
	b := newFakeBackend(t, nil)
	dir := speechFixture(t)
	r := audioAgent(t, Careful(), dir)
	c := dialAudio(t, r.URL, dir, b)
	c.greeted()
	c.say("Hi, please ship order 5590 today.")
	c.waitFor("read-back start", 20*time.Second, isSpeech(native.PhaseStart))
	c.waitFor("read-back end", 20*time.Second, isSpeech(native.PhaseEnd))
	c.waitFor("answer start", 20*time.Second, isSpeech(native.PhaseStart))
	c.waitFor("answer end", 20*time.Second, isSpeech(native.PhaseEnd))
	require.Len(t, b.requests("ship_order"), 1)
	c.hangUp()
}

// gapPad's silence is whole 20 ms frames, at least what the gap asks
// for, whatever the wall clock: the same reply, padded at any moment,
// is the same samples after a whole number of silent frames, so it
// falls the same way within the listener's frames and a recognizer
// hears the same input.
func TestGapPadWholeFrames(t *testing.T) {
	reply := make(audio.PCM, 7*audio.FrameSamples)
	for i := range reply {
		reply[i] = int16(1000 + i%97)
	}
	const gap = 700 * time.Millisecond
	prevEnd := time.Unix(1000, 0)
	prevTrail, lead := 20*time.Millisecond, 20*time.Millisecond
	padded := 0
	for us := -3000; us < int(gap/time.Microsecond)+3000; us += 137 {
		now := prevEnd.Add(time.Duration(us) * time.Microsecond)
		got := gapPad(reply, gap, prevEnd, prevTrail, lead, now)
		pad := len(got) - len(reply)
		require.Zero(t, pad%audio.FrameSamples, "now %v: %d samples of silence is not whole frames", now.Sub(prevEnd), pad)
		assert.Equal(t, reply, got[pad:], "now %v: the reply itself changed", now.Sub(prevEnd))
		assert.Equal(t, make(audio.PCM, pad), got[:pad])
		want := gap - prevTrail - lead - max(now.Sub(prevEnd), 0)
		if want <= 0 {
			assert.Zero(t, pad, "now %v", now.Sub(prevEnd))
			continue
		}
		padded++
		assert.GreaterOrEqual(t, pad, audio.Samples(want), "now %v: less silence than the gap", now.Sub(prevEnd))
		assert.Less(t, pad, audio.Samples(want)+audio.FrameSamples, "now %v: more than a frame over", now.Sub(prevEnd))
	}
	assert.Greater(t, padded, 100)
	assert.Equal(t, reply, gapPad(reply, gap, prevEnd, prevTrail, lead, prevEnd.Add(gap)), "a gap already kept")
	assert.Equal(t, reply, gapPad(reply, 0, prevEnd, prevTrail, lead, prevEnd), "no gap asked for")
}

// trimQuiet leaves whole frames, one quiet frame either side of the
// audible ones, whatever the synthesizer's length; it does not write
// into the synthesizer's (cached) samples.
func TestTrimQuietWholeFrames(t *testing.T) {
	for _, n := range []int{0, 1, 159, 160, 161, 5*audio.FrameSamples + 37} {
		p := make(audio.PCM, 3*audio.FrameSamples+n+4*audio.FrameSamples+53)
		loud := p[3*audio.FrameSamples : 3*audio.FrameSamples+n+audio.FrameSamples]
		for i := range loud {
			loud[i] = int16(8000 - 16000*(i%2))
		}
		orig := append(audio.PCM(nil), p...)
		got := trimQuiet(p)
		require.Zero(t, len(got)%audio.FrameSamples, "loud %d: %d samples", n, len(got))
		assert.Equal(t, orig, p, "loud %d: input changed", n)
		lead, trail := quietEdges(got)
		assert.Equal(t, audio.FrameDuration, lead, "loud %d", n)
		assert.Equal(t, audio.FrameDuration, trail, "loud %d", n)
		assert.Equal(t, p[2*audio.FrameSamples:2*audio.FrameSamples+len(got)], got, "loud %d", n)
	}
}
