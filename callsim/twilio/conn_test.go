package twilio

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// toneSpeech stands for a speech synthesizer: every text is a 300 Hz tone,
// 60 ms per character, so tests of the wire format need no TTS binary.
type toneSpeech struct{}

func (toneSpeech) Speech(_ context.Context, text string) (audio.PCM, error) {
	return tone(300, time.Duration(len(text))*60*time.Millisecond, -20), nil
}

func tone(hz float64, d time.Duration, dbfs float64) audio.PCM { return audio.Tone(hz, d, dbfs) }

// scriptedHearer stands for the recognizer: it names what it was given by
// its length, so a test can tell which audio reached it.
type scriptedHearer struct {
	mu    sync.Mutex
	heard []time.Duration
	delay time.Duration // how long recognition takes
}

func (h *scriptedHearer) Hear(_ context.Context, pcm audio.PCM) (string, bool, error) {
	time.Sleep(h.delay)
	h.mu.Lock()
	h.heard = append(h.heard, pcm.Duration())
	h.mu.Unlock()
	return "order 4471 is updated", false, nil
}

// bot is a Twilio Media Streams bot on loopback that records every frame
// the caller sends, with its arrival time, and sends what a test asks.
type bot struct {
	srv    *httptest.Server
	mu     sync.Mutex
	frames []got
	conn   chan *websocket.Conn
}

type got struct {
	at  time.Time
	raw map[string]any
}

func newBot(t *testing.T) *bot {
	b := &bot{conn: make(chan *websocket.Conn, 1)}
	up := websocket.Upgrader{}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		b.conn <- ws
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			var m map[string]any
			if json.Unmarshal(data, &m) == nil {
				b.mu.Lock()
				b.frames = append(b.frames, got{at: time.Now(), raw: m})
				b.mu.Unlock()
			}
		}
	}))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *bot) url() string { return "ws" + strings.TrimPrefix(b.srv.URL, "http") }

func (b *bot) ws(t *testing.T) *websocket.Conn {
	select {
	case ws := <-b.conn:
		return ws
	case <-time.After(5 * time.Second):
		t.Fatal("the caller never connected")
		return nil
	}
}

func (b *bot) all(event string) []got {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []got
	for _, f := range b.frames {
		if event == "" || f.raw["event"] == event {
			out = append(out, f)
		}
	}
	return out
}

func (b *bot) waitFor(t *testing.T, event string, n int) []got {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if fs := b.all(event); len(fs) >= n {
			return fs
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("fewer than %d %q frames within 5s", n, event)
	return nil
}

func sendJSON(t *testing.T, ws *websocket.Conn, v any) {
	require.NoError(t, ws.WriteJSON(v))
}

func media(p audio.PCM) map[string]any {
	return map[string]any{"event": "media", "streamSid": testStream, "media": map[string]any{"payload": base64.StdEncoding.EncodeToString(audio.EncodeMulaw(p))}}
}

// testStream is the stream id start gives call-1.
var testStream = sid(StreamPrefix, "call-1")

func markFrame(name string) map[string]any {
	return map[string]any{"event": "mark", "streamSid": testStream, "mark": map[string]any{"name": name}}
}

func dial(t *testing.T, tr *Transport, b *bot) *Conn {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := tr.Dial(ctx, b.url())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c.(*Conn)
}

func start(t *testing.T, c *Conn) {
	err := c.Send(context.Background(), native.Message{Event: native.EventStart, Start: &native.Start{
		CallID: "call-1", TimeScale: 1, CustomParameters: map[string]string{"lang": "en"}, CallDate: "2026-12-07", TimeZone: "America/New_York",
		Tools: native.Tools{BaseURL: "http://127.0.0.1:9/tools/call-1", Token: "tok", MCPURL: "http://127.0.0.1:9/tools/call-1/mcp",
			Catalog: []trace.ToolSpec{{Name: "get_order", Effect: trace.EffectRead}}},
	}})
	require.NoError(t, err)
}

// recv collects the derived agent events until n have arrived.
func recv(t *testing.T, c *Conn, n int) []native.Message {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out []native.Message
	for len(out) < n {
		f, err := c.Recv(ctx)
		require.NoError(t, err, "after %d events: %v", len(out), out)
		out = append(out, f.Message)
	}
	return out
}

func TestStartAndMediaFramesAreTwilios(t *testing.T) {
	b := newBot(t)
	c := dial(t, &Transport{Speech: toneSpeech{}}, b)
	_ = b.ws(t)
	start(t, c)
	// 11 chars: 660 ms of tone, padded to whole frames; its words end
	// when its last frame goes out, 20 ms before the audio does.
	d, err := c.PrepareSpeech(context.Background(), "u1", "hello there")
	require.NoError(t, err)
	assert.Equal(t, 640*time.Millisecond, d)
	require.NoError(t, c.Send(context.Background(), native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: "u1", Phase: native.PhaseOnset}}))
	time.Sleep(d + 200*time.Millisecond)
	require.NoError(t, c.Send(context.Background(), native.Message{Event: native.EventStop, Stop: &native.Stop{}}))
	b.waitFor(t, "stop", 1)

	fs := b.all("")
	require.GreaterOrEqual(t, len(fs), 4)
	assert.Equal(t, map[string]any{"event": "connected", "protocol": "Call", "version": "1.0.0"}, fs[0].raw)
	st := fs[1].raw
	assert.Equal(t, "start", st["event"])
	assert.Equal(t, "1", st["sequenceNumber"])
	body := st["start"].(map[string]any)
	stream := st["streamSid"].(string)
	assert.Regexp(t, `^MZ[0-9a-f]{32}$`, stream)
	assert.Equal(t, stream, body["streamSid"])
	assert.Regexp(t, `^CA[0-9a-f]{32}$`, body["callSid"])
	assert.Regexp(t, `^AC[0-9a-f]{32}$`, body["accountSid"])
	assert.Equal(t, []any{"inbound"}, body["tracks"])
	assert.Equal(t, map[string]any{"encoding": "audio/x-mulaw", "sampleRate": float64(8000), "channels": float64(1)}, body["mediaFormat"])
	params := body["customParameters"].(map[string]any)
	assert.Equal(t, "en", params["lang"])
	assert.Equal(t, "call-1", params[ParamCallID])
	assert.Equal(t, "http://127.0.0.1:9/tools/call-1", params[ParamToolsBaseURL])
	assert.Equal(t, "tok", params[ParamToolsToken])
	assert.Equal(t, "2026-12-07", params[ParamCallDate])
	assert.Equal(t, "America/New_York", params[ParamTimeZone])
	assert.Equal(t, "http://127.0.0.1:9/tools/call-1/mcp", params[ParamToolsMCPURL])
	assert.JSONEq(t, `[{"name":"get_order","effect":"read","table":"","args":null}]`, params[ParamToolsCatalog].(string))

	ms := b.all("media")
	require.GreaterOrEqual(t, len(ms), 40, "about 860 ms of stream")
	loud := 0
	for i, m := range ms {
		assert.Equal(t, strconv.Itoa(i+2), m.raw["sequenceNumber"], "sequence numbers count every frame after connected")
		md := m.raw["media"].(map[string]any)
		assert.Equal(t, "inbound", md["track"])
		assert.Equal(t, strconv.Itoa(i+1), md["chunk"])
		assert.Equal(t, strconv.Itoa(20*i), md["timestamp"])
		raw, err := base64.StdEncoding.DecodeString(md["payload"].(string))
		require.NoError(t, err)
		require.Len(t, raw, audio.FrameSamples)
		if audio.LevelDBFS(audio.DecodeMulaw(raw)) > -30 {
			loud++
		}
	}
	assert.Equal(t, 33, loud, "the 660 ms utterance is 33 loud frames; the rest is silence")
	// Real time: the frames span their timestamps.
	span := ms[len(ms)-1].at.Sub(ms[0].at)
	want := time.Duration(len(ms)-1) * audio.FrameDuration
	assert.InDelta(t, float64(want), float64(span), float64(100*time.Millisecond))
	stop := fs[len(fs)-1].raw
	assert.Equal(t, "stop", stop["event"])
	assert.Equal(t, body["callSid"], stop["stop"].(map[string]any)["callSid"])
	assert.Equal(t, strconv.Itoa(len(ms)+2), stop["sequenceNumber"])

	l := c.Lateness()
	assert.Equal(t, len(ms), l.Frames)
	assert.Equal(t, audio.FrameDuration, l.Frame)
	assert.LessOrEqual(t, l.P50, l.P99)
	assert.LessOrEqual(t, l.P99, l.Max)
}

func TestDTMFIsOneFramePerDigit(t *testing.T) {
	b := newBot(t)
	c := dial(t, &Transport{Speech: toneSpeech{}}, b)
	_ = b.ws(t)
	start(t, c)
	require.NoError(t, c.Send(context.Background(), native.Message{Event: native.EventDTMF, DTMF: &native.DTMF{Digits: "12#"}}))
	ds := b.waitFor(t, "dtmf", 3)
	for i, want := range []string{"1", "2", "#"} {
		assert.Equal(t, map[string]any{"track": "inbound_track", "digit": want}, ds[i].raw["dtmf"])
	}
}

func TestPlayoutMarksUtterancesAndClear(t *testing.T) {
	b := newBot(t)
	h := &scriptedHearer{}
	c := dial(t, &Transport{Speech: toneSpeech{}, Hearing: h}, b)
	ws := b.ws(t)
	start(t, c)
	b.waitFor(t, "media", 1)

	// One utterance: 1 s of audio, mark m1, 400 ms more, mark m2, sent at
	// once as bots do; the caller plays it out in real time.
	sent := time.Now()
	sendJSON(t, ws, media(tone(440, time.Second, -20)))
	sendJSON(t, ws, markFrame("m1"))
	sendJSON(t, ws, media(tone(440, 400*time.Millisecond, -20)))
	sendJSON(t, ws, markFrame("m2"))
	evs := recv(t, c, 2)
	assert.Equal(t, native.PhaseStart, evs[0].AgentSpeech.Phase)
	assert.Equal(t, "a1", evs[0].AgentSpeech.ID)
	assert.Equal(t, native.PhaseEnd, evs[1].AgentSpeech.Phase)
	marks := b.waitFor(t, "mark", 2)
	assert.Equal(t, "m1", marks[0].raw["mark"].(map[string]any)["name"])
	assert.Equal(t, "m2", marks[1].raw["mark"].(map[string]any)["name"])
	assert.GreaterOrEqual(t, marks[0].at.Sub(sent), 950*time.Millisecond, "m1 is echoed when playout reaches it, not on receipt")
	assert.GreaterOrEqual(t, marks[1].at.Sub(sent), 1350*time.Millisecond)
	h.mu.Lock()
	assert.Empty(t, h.heard, "nothing is recognized while the script plays")
	h.mu.Unlock()

	// A mark with nothing queued is reached at once.
	sendJSON(t, ws, markFrame("idle"))
	marks = b.waitFor(t, "mark", 3)
	assert.Equal(t, "idle", marks[2].raw["mark"].(map[string]any)["name"])

	// Barge-in: 3 s queued, cleared after ~400 ms: the queue is dropped,
	// the pending mark echoed at once, the utterance stopped by clear.
	sendJSON(t, ws, media(tone(440, 3*time.Second, -20)))
	sendJSON(t, ws, markFrame("m3"))
	evs = recv(t, c, 1)
	assert.Equal(t, native.PhaseStart, evs[0].AgentSpeech.Phase)
	assert.Equal(t, "a2", evs[0].AgentSpeech.ID)
	time.Sleep(300 * time.Millisecond)
	cleared := time.Now()
	sendJSON(t, ws, map[string]any{"event": "clear", "streamSid": testStream})
	evs = recv(t, c, 1)
	assert.Equal(t, native.EventClear, evs[0].Event, "after the clear: %+v", evs)
	assert.Equal(t, "a2", evs[0].Clear.ID)
	marks = b.waitFor(t, "mark", 4)
	assert.Equal(t, "m3", marks[3].raw["mark"].(map[string]any)["name"])
	assert.Less(t, marks[3].at.Sub(cleared), 200*time.Millisecond, "pending marks are echoed at once on clear")

	// Nothing more is played after the clear.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := c.Recv(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	// Echoes records each echo where its mark sat and where playout was:
	// m1 at 1 s, m2 at 1.4 s, idle at once, m3 flushed by the clear with
	// only part of its 3 s heard.
	es := c.Echoes()
	require.Len(t, es, 4)
	const ms = 8 // μ-law bytes per ms
	for i, want := range []struct {
		name    string
		offset  int64
		cleared bool
	}{{"m1", 1000 * ms, false}, {"m2", 1400 * ms, false}, {"idle", 1400 * ms, false}, {"m3", 4400 * ms, true}} {
		assert.Equal(t, want.name, es[i].Name)
		assert.Equal(t, want.offset, es[i].Offset, want.name)
		assert.Equal(t, want.cleared, es[i].Cleared, want.name)
		if !want.cleared {
			assert.Equal(t, es[i].Offset, es[i].Played, "%s: echoed when playout reached it", want.name)
		}
	}
	heard := es[3].Played - 1400*ms
	assert.Greater(t, heard, int64(200*ms), "m3: some of the 3 s was played before the clear")
	assert.Less(t, heard, int64(1500*ms), "m3: the clear dropped the rest")
	assert.Greater(t, es[3].Tick, es[1].Tick)

	// The script is over: each utterance's text, in order, named by its
	// utterance, after its end; the recognizer heard all of the first.
	evs = flushed(t, c)
	require.Len(t, evs, 2)
	for i, id := range []string{"a1", "a2"} {
		assert.Equal(t, native.PhaseText, evs[i].AgentSpeech.Phase)
		assert.Equal(t, id, evs[i].AgentSpeech.ID)
		assert.Equal(t, RecognizedMarker+" order 4471 is updated", evs[i].AgentSpeech.Text, "recognized, and marked so: its values are no proof of a mismatch")
	}
	h.mu.Lock()
	require.Len(t, h.heard, 2)
	// Heard at once, in either order: the first is the longer.
	assert.InDelta(t, float64(1400*time.Millisecond), float64(max(h.heard[0], h.heard[1])), float64(200*time.Millisecond), "the recognizer hears the whole utterance")
	h.mu.Unlock()
}

// flushed runs Flush while taking what it delivers, as the simulator's
// pump does.
func flushed(t *testing.T, c *Conn) []native.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out := make(chan native.Message, 64)
	pctx, pcancel := context.WithCancel(ctx)
	pumped := make(chan struct{})
	go func() {
		defer close(pumped)
		for {
			f, err := c.Recv(pctx)
			if err != nil {
				return
			}
			out <- f.Message
		}
	}()
	require.NoError(t, c.Flush(ctx))
	pcancel()
	<-pumped
	close(out)
	var got []native.Message
	for m := range out {
		got = append(got, m)
	}
	return got
}

func TestFlushDeliversTheLastTranscript(t *testing.T) {
	b := newBot(t)
	// Recognition runs in Flush (the script is over) and takes its time:
	// Flush waits for it and for the pump to take the text.
	h := &scriptedHearer{delay: 500 * time.Millisecond}
	c := dial(t, &Transport{Speech: toneSpeech{}, Hearing: h}, b)
	ws := b.ws(t)
	start(t, c)
	sendJSON(t, ws, media(tone(440, 400*time.Millisecond, -20)))
	var got []native.Message
	var mu sync.Mutex
	done := make(chan struct{})
	go func() { // the simulator's pump
		defer close(done)
		for {
			f, err := c.Recv(context.Background())
			if err != nil {
				return
			}
			// The simulator's pump records each event after Recv returns
			// it: Flush must wait for that, not just for the inbox to empty.
			time.Sleep(20 * time.Millisecond)
			mu.Lock()
			got = append(got, f.Message)
			mu.Unlock()
		}
	}()
	time.Sleep(700 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, c.Flush(ctx))
	mu.Lock()
	require.Len(t, got, 3)
	assert.Equal(t, native.PhaseText, got[2].AgentSpeech.Phase)
	mu.Unlock()
	require.NoError(t, c.Close())
	<-done
}

// recvUntilError takes events until Recv fails (within 5 s) and gives the
// error.
func recvUntilError(t *testing.T, c *Conn) error {
	t.Helper()
	return recvUntilErrorWithin(t, c, 5*time.Second)
}

// recvUntilErrorWithin is recvUntilError with a bound of d: a guard
// against a hang, never the expected outcome.
func recvUntilErrorWithin(t *testing.T, c *Conn, d time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		if _, err := c.Recv(ctx); err != nil {
			return err
		}
	}
}

func TestAgentAudioFloodEndsTheCall(t *testing.T) {
	b := newBot(t)
	c := dial(t, &Transport{Speech: toneSpeech{}, MaxQueuedAudio: time.Second}, b)
	ws := b.ws(t)
	start(t, c)
	sendJSON(t, ws, media(tone(440, 1500*time.Millisecond, -20)))
	assert.ErrorIs(t, recvUntilError(t, c), ErrFlood)
}

func TestGarbageFrame(t *testing.T) {
	for _, frame := range []string{
		"not json",
		// A media payload that is not base64 (docs/PROTOCOL.md, garbage frame).
		`{"event":"media","streamSid":"` + testStream + `","media":{"payload":"%%%not base64"}}`,
	} {
		b := newBot(t)
		c := dial(t, &Transport{Speech: toneSpeech{}}, b)
		ws := b.ws(t)
		start(t, c)
		require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(frame)))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := c.Recv(ctx)
		cancel()
		assert.ErrorIs(t, err, callsim.ErrGarbageFrame, frame)
	}
}

func TestUnknownEventsAreKeptVerbatim(t *testing.T) {
	b := newBot(t)
	c := dial(t, &Transport{Speech: toneSpeech{}}, b)
	ws := b.ws(t)
	start(t, c)
	sendJSON(t, ws, map[string]any{"event": "playAudio", "streamSid": testStream, "x": 1})
	evs := recv(t, c, 1)
	assert.Equal(t, "twilio.playAudio", evs[0].Event)
}

func TestRecordingIsStereoCallerLeftAgentRight(t *testing.T) {
	b := newBot(t)
	path := filepath.Join(t.TempDir(), "call.wav")
	c := dial(t, &Transport{Speech: toneSpeech{}, RecordTo: path}, b)
	ws := b.ws(t)
	start(t, c)
	_, err := c.PrepareSpeech(context.Background(), "u1", "0123456789") // 600 ms
	require.NoError(t, err)
	require.NoError(t, c.Send(context.Background(), native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: "u1", Phase: native.PhaseOnset}}))
	go func() { // the simulator's pump
		for {
			if _, err := c.Recv(context.Background()); err != nil {
				return
			}
		}
	}()
	time.Sleep(800 * time.Millisecond)
	sendJSON(t, ws, media(tone(440, 400*time.Millisecond, -20)))
	time.Sleep(600 * time.Millisecond)
	require.NoError(t, c.Close())

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	samples, info, err := audio.DecodeWAV(f)
	require.NoError(t, err)
	require.Equal(t, 2, info.Channels)
	var left, right audio.PCM
	for i := 0; i+1 < len(samples); i += 2 {
		left, right = append(left, samples[i]), append(right, samples[i+1])
	}
	// The caller spoke first, the agent answered after.
	assert.Greater(t, audio.LevelDBFS(left[:audio.Samples(600*time.Millisecond)]), -30.0)
	assert.Less(t, audio.LevelDBFS(right[:audio.Samples(600*time.Millisecond)]), -60.0)
	assert.Greater(t, audio.LevelDBFS(right[audio.Samples(900*time.Millisecond):audio.Samples(1200*time.Millisecond)]), -30.0)
}

// The hand-written media frame is byte for byte what encoding/json makes
// of the message type, for any counters.
func TestAppendMediaMatchesJSON(t *testing.T) {
	ulaw := audio.EncodeMulaw(tone(440, 20*time.Millisecond, -20))
	for _, c := range []struct{ seq, chunk, ms int }{{2, 1, 0}, {3, 2, 20}, {50001, 50000, 999980}} {
		want, err := json.Marshal(mediaMsg{Event: EventMedia, SequenceNumber: strconv.Itoa(c.seq), StreamSid: "MZabc", Media: mediaBody{
			Track: TrackInbound, Chunk: strconv.Itoa(c.chunk), Timestamp: strconv.Itoa(c.ms), Payload: base64.StdEncoding.EncodeToString(ulaw)}})
		require.NoError(t, err)
		assert.Equal(t, string(want), string(appendMedia(nil, strconv.Itoa(c.seq), "MZabc", c.chunk, c.ms, ulaw)))
	}
}

// An agent that sends its own words is taken at its word: no recognizer
// runs; a cleared utterance keeps the share of its words that was played.
func TestAgentTranscriptReplacesRecognition(t *testing.T) {
	b := newBot(t)
	h := &scriptedHearer{}
	c := dial(t, &Transport{Speech: toneSpeech{}, Hearing: h}, b)
	ws := b.ws(t)
	start(t, c)
	words := "Done. Order 5590 now has quantity 2 as you asked."
	sendJSON(t, ws, media(tone(440, time.Second, -20)))
	sendJSON(t, ws, map[string]any{"event": "transcript", "streamSid": testStream, "transcript": map[string]any{"text": words}})
	sendJSON(t, ws, markFrame("a1"))
	evs := recv(t, c, 3)
	assert.Equal(t, native.PhaseEnd, evs[1].AgentSpeech.Phase)
	assert.Equal(t, native.PhaseText, evs[2].AgentSpeech.Phase)
	assert.Equal(t, words, evs[2].AgentSpeech.Text)

	// Two seconds of audio for ten words, cleared after about one second:
	// about half the words were said.
	sendJSON(t, ws, media(tone(440, 2*time.Second, -20)))
	sendJSON(t, ws, map[string]any{"event": "transcript", "streamSid": testStream, "transcript": map[string]any{"text": "one two three four five six seven eight nine ten"}})
	evs = recv(t, c, 1)
	require.Equal(t, native.PhaseStart, evs[0].AgentSpeech.Phase)
	time.Sleep(900 * time.Millisecond)
	sendJSON(t, ws, map[string]any{"event": "clear", "streamSid": testStream})
	evs = recv(t, c, 2)
	assert.Equal(t, native.EventClear, evs[0].Event, "after the clear: %+v", evs)
	said := strings.Fields(evs[1].AgentSpeech.Text)
	assert.GreaterOrEqual(t, len(said), 3, evs[1].AgentSpeech.Text)
	assert.LessOrEqual(t, len(said), 7, evs[1].AgentSpeech.Text)
	assert.Equal(t, []string{"one", "two", "three"}, said[:3])
	h.mu.Lock()
	assert.Empty(t, h.heard, "no recognizer for an agent that gives its words")
	h.mu.Unlock()
}

// A recorded utterance (here 16 kHz stereo) is played as the caller's
// speech, resampled to 8 kHz μ-law; a file that is not a WAV is refused.
func TestRecordedSpeechIsPlayed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ask.wav")
	mono := audio.Resample(tone(300, 500*time.Millisecond, -20), audio.SampleRate, 16000)
	stereo := make([]int16, 0, 2*len(mono))
	for _, v := range mono {
		stereo = append(stereo, v, v)
	}
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, audio.WriteWAVRate(f, stereo, 16000, 2))
	require.NoError(t, f.Close())

	b := newBot(t)
	c := dial(t, &Transport{Speech: toneSpeech{}}, b)
	_ = b.ws(t)
	start(t, c)
	d, err := c.PrepareRecording(context.Background(), "u1", path, false)
	require.NoError(t, err)
	assert.Equal(t, 500*time.Millisecond, d)
	require.NoError(t, c.Send(context.Background(), native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: "u1", Phase: native.PhaseOnset}}))
	time.Sleep(d + 200*time.Millisecond)
	loud := 0
	for _, m := range b.all("media") {
		raw, err := base64.StdEncoding.DecodeString(m.raw["media"].(map[string]any)["payload"].(string))
		require.NoError(t, err)
		if audio.LevelDBFS(audio.DecodeMulaw(raw)) > -30 {
			loud++
		}
	}
	assert.InDelta(t, 25, loud, 1, "500 ms of recording is 25 loud frames")

	bad := filepath.Join(dir, "bad.wav")
	require.NoError(t, os.WriteFile(bad, []byte("not audio"), 0o644))
	_, err = c.PrepareRecording(context.Background(), "u2", bad, true)
	assert.ErrorIs(t, err, audio.ErrNotWAV)
}

func TestFramesOfAnotherStreamAreIgnoredAndCounted(t *testing.T) {
	b := newBot(t)
	c := dial(t, &Transport{Speech: toneSpeech{}}, b)
	ws := b.ws(t)
	start(t, c)
	wrong := media(tone(440, 500*time.Millisecond, -20))
	wrong["streamSid"] = "MZ" + strings.Repeat("\x1b[2J", 100)
	sendJSON(t, ws, wrong)
	none := markFrame("m0")
	delete(none, "streamSid")
	sendJSON(t, ws, none)
	sendJSON(t, ws, map[string]any{"event": "playAudio", "streamSid": testStream})
	evs := recv(t, c, 3)
	assert.Equal(t, EventForeignStream, evs[0].Event)
	assert.Equal(t, EventForeignStream, evs[1].Event)
	assert.Equal(t, "twilio.playAudio", evs[2].Event, "the ignored media queued no audio: no utterance came first")
	assert.EqualValues(t, 2, c.ForeignFrames())
	assert.Empty(t, b.all(EventMark), "a mark of another stream is never echoed")
}

func TestForeignStreamEventKeepsLittle(t *testing.T) {
	b := newBot(t)
	c := dial(t, &Transport{Speech: toneSpeech{}}, b)
	ws := b.ws(t)
	start(t, c)
	sendJSON(t, ws, map[string]any{"event": strings.Repeat("é", 1000), "streamSid": strings.Repeat("x", 100000)})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f, err := c.Recv(ctx)
	require.NoError(t, err)
	var ff foreignFrame
	require.NoError(t, json.Unmarshal(f.Raw, &ff))
	assert.LessOrEqual(t, len(ff.Event), MaxForeignFieldBytes)
	assert.LessOrEqual(t, len(ff.StreamSid), MaxForeignFieldBytes)
	assert.True(t, strings.HasPrefix(ff.Event, "é"))
}

func TestLongMarkNameIsAnOversizedFrame(t *testing.T) {
	b := newBot(t)
	c := dial(t, &Transport{Speech: toneSpeech{}}, b)
	ws := b.ws(t)
	start(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() { _, err := c.Recv(ctx); errc <- err }() // Recv starts the reader
	sendJSON(t, ws, markFrame(strings.Repeat("n", DefaultMaxMarkNameBytes)))
	b.waitFor(t, EventMark, 1)
	sendJSON(t, ws, markFrame(strings.Repeat("n", DefaultMaxMarkNameBytes+1)))
	assert.ErrorIs(t, <-errc, callsim.ErrOversizedFrame)
	assert.Len(t, b.all(EventMark), 1, "the long name was never echoed")
}

func TestTooManyPendingMarksIsAFlood(t *testing.T) {
	b := newBot(t)
	c := dial(t, &Transport{Speech: toneSpeech{}, MaxMarks: 3}, b)
	ws := b.ws(t)
	start(t, c)
	sendJSON(t, ws, media(tone(440, 2*time.Second, -20)))
	for i := range 4 {
		sendJSON(t, ws, markFrame("m"+strconv.Itoa(i)))
	}
	assert.ErrorIs(t, recvUntilError(t, c), ErrFlood)
}

// TestOneHostileCallsWorkIsBounded: one call's agent sends every message
// kind at its limits (1 MiB frames of media, unknown events and frames of
// another stream, marks with the longest name, clears, transcripts, then
// a 1 MB mark name) while 20 calls stream. The hostile call ends as an
// oversized frame; what it made the caller write back is bounded (no
// echoed name over DefaultMaxMarkNameBytes); the 20 keep streaming.
//
// Their lateness is logged, not asserted: under -race, with 21 bots in
// this process on a shared 2-core machine, the 20 run 20-40 ms late at
// their start without any hostile call; the harness's overload check
// (harness tests) is what judges lateness.
func TestOneHostileCallsWorkIsBounded(t *testing.T) {
	const calls = 20
	bots := make([]*bot, calls)
	conns := make([]*Conn, calls)
	for i := range conns {
		bots[i] = newBot(t)
		conns[i] = dial(t, &Transport{Speech: toneSpeech{}}, bots[i])
		_ = bots[i].ws(t)
		start(t, conns[i])
	}
	hb := newBot(t)
	hostile := dial(t, &Transport{Speech: toneSpeech{}}, hb)
	ws := hb.ws(t)
	start(t, hostile)
	errc := make(chan error, 1)
	// Megabytes of frames decoded under -race on a busy machine: the
	// bound only guards against a hang.
	go func() { errc <- recvUntilErrorWithin(t, hostile, time.Minute) }()

	frame := func(event string, body map[string]any) []byte {
		m := map[string]any{"event": event, "streamSid": testStream}
		for k, v := range body {
			m[k] = v
		}
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return b
	}
	name := strings.Repeat("n", DefaultMaxMarkNameBytes)
	frames := [][]byte{
		frame("media", map[string]any{"media": map[string]any{"payload": base64.StdEncoding.EncodeToString(make([]byte, 8000))}}),
		frame("playAudio", map[string]any{"pad": strings.Repeat("p", DefaultMaxFrameBytes-200)}),
		[]byte(`{"event":"media","streamSid":"MZother","media":{"payload":"` + strings.Repeat("A", DefaultMaxFrameBytes-100) + `"}}`),
		frame("transcript", map[string]any{"transcript": map[string]any{"text": strings.Repeat("word ", 800)}}),
	}
	for range 50 {
		frames = append(frames, frame("mark", map[string]any{"mark": map[string]any{"name": name}}))
	}
	frames = append(frames, frame("clear", nil))
	before := make([]int, calls)
	for i, b := range bots {
		before[i] = len(b.all(EventMedia))
	}
	const rounds = 5
	for range rounds {
		for _, f := range frames {
			require.NoError(t, ws.WriteMessage(websocket.TextMessage, f))
		}
	}
	require.NoError(t, ws.WriteMessage(websocket.TextMessage, frame("mark", map[string]any{"mark": map[string]any{"name": strings.Repeat("n", 1<<20-200)}})))
	assert.ErrorIs(t, <-errc, callsim.ErrOversizedFrame)
	assert.EqualValues(t, rounds, hostile.ForeignFrames())
	for _, m := range hb.all(EventMark) {
		n, _ := m.raw["mark"].(map[string]any)["name"].(string)
		assert.LessOrEqual(t, len(n), DefaultMaxMarkNameBytes)
	}
	for i, b := range bots {
		b.waitFor(t, EventMedia, before[i]+5) // still streaming
		l := conns[i].Lateness()
		t.Logf("call %d: worst frame %s late, p99 %s", i, l.Max, l.P99)
	}
}

// streaming is a call whose stream is under way, and the bot's socket.
func streaming(t *testing.T) (*Conn, *websocket.Conn) {
	b := newBot(t)
	c := dial(t, &Transport{Speech: toneSpeech{}, Hearing: &scriptedHearer{}}, b)
	ws := b.ws(t)
	start(t, c)
	b.waitFor(t, "media", 1)
	return c, ws
}

func TestCleanCloseAfterAudioIsTheAgentsHangup(t *testing.T) {
	c, ws := streaming(t)
	// A bot that says goodbye, paced in real time, and closes.
	sendJSON(t, ws, media(tone(440, 600*time.Millisecond, -20)))
	require.Equal(t, native.PhaseStart, recv(t, c, 1)[0].AgentSpeech.Phase)
	require.NoError(t, ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")))
	var evs []native.Message
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		f, err := c.Recv(ctx)
		if err != nil {
			assert.True(t, websocket.IsCloseError(err, websocket.CloseNormalClosure), "then the close itself: %v (%T)", err, err)
			break
		}
		evs = append(evs, f.Message)
	}
	require.Len(t, evs, 3, "%v", evs)
	assert.Equal(t, native.PhaseEnd, evs[0].AgentSpeech.Phase, "the goodbye ends, at the latest at the close")
	assert.Equal(t, native.PhaseText, evs[1].AgentSpeech.Phase, "and its words are heard before the hang-up ends the call")
	assert.Equal(t, native.EventHangup, evs[2].Event)
	assert.Equal(t, ReasonClosedCleanly, evs[2].Hangup.Reason)
}

func TestAbnormalCloseIsNoHangup(t *testing.T) {
	c, ws := streaming(t)
	require.NoError(t, ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseInternalServerErr, "")))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f, err := c.Recv(ctx)
	assert.Error(t, err, "no event, the error: %v", f.Message)
}
