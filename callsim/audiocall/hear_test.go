package audiocall

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/protocol/native"
)

// blockingHearer stands for a recognizer on a saturated machine: it holds
// every utterance until released, and counts what it was asked.
type blockingHearer struct {
	release chan struct{}
	mu      sync.Mutex
	drafts  int
	checked []bool // per draft order: was it cross-checked
	claims  func(n int) bool
	live    []bool // RealTime's calls
}

func (h *blockingHearer) RealTime(live bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.live = append(h.live, live)
}

func (h *blockingHearer) realTime() []bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]bool(nil), h.live...)
}

func (h *blockingHearer) Hear(ctx context.Context, pcm audio.PCM) (string, bool, error) {
	panic("a Checker is asked for drafts and checks, never Hear")
}

func (h *blockingHearer) Draft(ctx context.Context, pcm audio.PCM) (Draft, error) {
	select {
	case <-h.release:
	case <-ctx.Done():
		return Draft{}, ctx.Err()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.drafts++
	// The utterance's length names it: 200 ms a step.
	n := int(pcm.Duration() / (200 * time.Millisecond))
	return Draft{Text: "draft", Claims: h.claims(n), Raw: n}, nil
}

func (h *blockingHearer) Check(ctx context.Context, pcm audio.PCM, d Draft) (string, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.checked = append(h.checked, true)
	return "checked", false, nil
}

// Recognition never runs on the frame clock's path: a recognizer that
// takes seconds over each utterance leaves the call's frames on time and
// nothing of the call waits for it; its words arrive at Flush, named by
// their utterances, in order.
func TestSlowRecognitionLeavesTheClockAlone(t *testing.T) {
	h := &blockingHearer{release: make(chan struct{}), claims: func(int) bool { return false }}
	c := newTestCall(t, h)
	for range 3 {
		require.NoError(t, c.Enqueue(audio.EncodeMulaw(tone(440, 400*time.Millisecond, -20))))
		texts(t, c, phase(native.PhaseEnd))
	}
	// The recognizer would block for ever; the call has played three
	// utterances regardless and its frames kept to the clock.
	l := c.Lateness()
	assert.False(t, l.Behind(), "frames late while the recognizer blocks: %+v", l)
	h.mu.Lock()
	assert.Zero(t, h.drafts, "nothing is recognized during the script")
	h.mu.Unlock()

	flushed := make(chan error, 1)
	go func() { flushed <- c.Flush(context.Background()) }()
	time.Sleep(200 * time.Millisecond) // a recognizer that takes its time
	close(h.release)
	var ids []string
	for _, s := range pumpFlush(t, c, flushed) {
		require.Equal(t, native.PhaseText, s.Phase)
		assert.Equal(t, RecognizedMarker+" checked", s.Text, "every utterance follows the caller's last (it said nothing): cross-checked")
		ids = append(ids, s.ID)
	}
	assert.Equal(t, []string{"a1", "a2", "a3"}, ids)
}

// Decode once, cross-check where a verdict reads: an utterance before
// the caller's last one is cross-checked only when its draft may carry a
// claim or a read-back; every utterance after it is, whatever its draft.
func TestCrossCheckSelection(t *testing.T) {
	h := &blockingHearer{release: make(chan struct{}), claims: func(n int) bool { return n == 3 }}
	close(h.release)
	var c *Call
	c = New(Config{Speech: toneVoice{}, Hearing: h}, nullWire{}, func() error { <-c.Done(); return nil })
	c.StartClock()
	t.Cleanup(func() { _ = c.Shutdown(func() error { return nil }) })
	say := func(d time.Duration) {
		require.NoError(t, c.Enqueue(audio.EncodeMulaw(tone(440, d, -20))))
		texts(t, c, phase(native.PhaseEnd))
	}
	// The caller speaks first; then three agent utterances of 2, 3 and 4
	// steps; then the caller's last words; then one more of 2 steps.
	callerSays(t, c, "c1")
	say(400 * time.Millisecond)
	say(600 * time.Millisecond)
	say(800 * time.Millisecond)
	callerSays(t, c, "c2")
	say(400 * time.Millisecond)

	flushed := make(chan error, 1)
	go func() { flushed <- c.Flush(context.Background()) }()
	got := pumpFlush(t, c, flushed)
	want := map[string]string{
		"a1": RecognizedMarker + " draft",   // no claim, before the caller's last words
		"a2": RecognizedMarker + " checked", // a claim or a read-back
		"a3": RecognizedMarker + " draft",
		"a4": RecognizedMarker + " checked", // after the caller's last words
	}
	require.Len(t, got, 4)
	for _, s := range got {
		assert.Equal(t, want[s.ID], s.Text, s.ID)
	}
	h.mu.Lock()
	assert.Equal(t, 4, h.drafts, "every utterance decoded once")
	assert.Len(t, h.checked, 2)
	h.mu.Unlock()
}

// toneVoice is the caller's voice: a tone as long as the text is letters
// (60 ms each).
type toneVoice struct{}

func (toneVoice) Speech(_ context.Context, text string) (audio.PCM, error) {
	return tone(300, time.Duration(len(text))*60*time.Millisecond, -20), nil
}

// callerSays plays a caller utterance and waits for it to be over.
func callerSays(t *testing.T, c *Call, id string) {
	t.Helper()
	ctx := context.Background()
	d, err := c.PrepareSpeech(ctx, id, "hello")
	require.NoError(t, err)
	require.NoError(t, c.Play(native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: id, Phase: native.PhaseOnset}}))
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.mu.Lock()
		playing := len(c.talking) > 0
		c.mu.Unlock()
		if !playing {
			break
		}
		require.True(t, time.Now().Before(deadline), "the caller's %s of speech never finished", d)
		time.Sleep(10 * time.Millisecond)
	}
}

// pumpFlush takes the call's events, as the simulator's pump does, until
// Flush returns, and gives the agent speech taken.
func pumpFlush(t *testing.T, c *Call, flushed <-chan error) []native.AgentSpeech {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var got []native.AgentSpeech
	for {
		select {
		case err := <-flushed:
			require.NoError(t, err)
			return got
		default:
		}
		rctx, rcancel := context.WithTimeout(ctx, 20*time.Millisecond)
		f, err := c.Recv(rctx)
		rcancel()
		require.NoError(t, ctx.Err(), "Flush did not return")
		if err == nil && f.Message.AgentSpeech != nil {
			got = append(got, *f.Message.AgentSpeech)
		}
	}
}

// countWire counts the caller frames sent.
type countWire struct{ n atomic.Int64 }

func (w *countWire) SendFrame(int, time.Duration, []byte) error { w.n.Add(1); return nil }
func (w *countWire) Tick(time.Time)                             {}
func (w *countWire) Echo([]string)                              {}

// While a call's speech is recognized after its script, a wire that
// allows it (PauseToHear) sends no media: a slow recognition then costs
// no frames and leaves no late ones. Without it the stream goes on.
func TestMediaPausesWhileHearing(t *testing.T) {
	for _, pause := range []bool{true, false} {
		h := &blockingHearer{release: make(chan struct{}), claims: func(int) bool { return false }}
		w := &countWire{}
		var c *Call
		c = New(Config{Speech: toneVoice{}, Hearing: h, PauseToHear: pause}, w, func() error { <-c.Done(); return nil })
		c.StartClock()
		require.NoError(t, c.Enqueue(audio.EncodeMulaw(tone(440, 400*time.Millisecond, -20))))
		texts(t, c, phase(native.PhaseEnd))

		flushed := make(chan error, 1)
		go func() { flushed <- c.Flush(context.Background()) }()
		time.Sleep(100 * time.Millisecond) // Flush under way, the recognizer held
		before := w.n.Load()
		time.Sleep(300 * time.Millisecond) // 15 frames' time
		during := w.n.Load() - before
		close(h.release)
		pumpFlush(t, c, flushed)
		if pause {
			assert.Zero(t, during, "frames sent while the call's speech was recognized")
			assert.Equal(t, []bool{true, false}, h.realTime(), "the real-time part ends with the pause")
		} else {
			assert.Greater(t, during, int64(5), "the stream stopped without PauseToHear")
			assert.Equal(t, []bool{true}, h.realTime(), "still in real time while the stream goes on")
		}
		_ = c.Shutdown(func() error { return nil })
		assert.Equal(t, []bool{true, false}, h.realTime(), "told once each")
	}
}
