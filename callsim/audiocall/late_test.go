package audiocall

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/protocol/native"
)

// nullWire sends nothing anywhere: the tests drive the agent's side.
type nullWire struct{}

func (nullWire) SendFrame(int, time.Duration, []byte) error { return nil }
func (nullWire) Tick(time.Time)                             {}
func (nullWire) Echo([]string)                              {}

// slowHearer stands for the recognizer and takes its time.
type slowHearer struct {
	mu    sync.Mutex
	calls int
}

func (h *slowHearer) Hear(ctx context.Context, _ audio.PCM) (string, bool, error) {
	h.mu.Lock()
	h.calls++
	h.mu.Unlock()
	select {
	case <-time.After(300 * time.Millisecond):
	case <-ctx.Done():
	}
	return "what the recognizer made of it", false, nil
}

func newTestCall(t *testing.T, h Hearer) *Call {
	t.Helper()
	var c *Call
	c = New(Config{Speech: nil, Hearing: h}, nullWire{}, func() error { <-c.Done(); return nil })
	c.StartClock()
	t.Cleanup(func() { _ = c.Shutdown(func() error { return nil }) })
	return c
}

func texts(t *testing.T, c *Call, until func(native.AgentSpeech) bool) []native.AgentSpeech {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var got []native.AgentSpeech
	for {
		f, err := c.Recv(ctx)
		require.NoError(t, err, "after %v", got)
		if s := f.Message.AgentSpeech; s != nil {
			got = append(got, *s)
			if until(*s) {
				return got
			}
		}
	}
}

func phase(p string) func(native.AgentSpeech) bool {
	return func(s native.AgentSpeech) bool { return s.Phase == p }
}

// The agent's own words that arrive after its utterance ended (a WebRTC
// agent sends them after its last packet) are that utterance's, and the
// recognizer already at work on it is not heard from.
func TestLateTranscriptReplacesRecognizer(t *testing.T) {
	h := &slowHearer{}
	c := newTestCall(t, h)
	require.NoError(t, c.Enqueue(audio.EncodeMulaw(tone(440, 400*time.Millisecond, -20))))
	texts(t, c, phase(native.PhaseEnd))
	c.Transcript("  ")
	c.Transcript("your order is updated")
	got := texts(t, c, phase(native.PhaseText))
	assert.Equal(t, "your order is updated", got[len(got)-1].Text)
	// Recognition waits for the script's end (Flush); by then the
	// agent's words are in, and the recognizer is never asked.
	h.mu.Lock()
	assert.Equal(t, 0, h.calls, "the recognizer ran on the call's real-time part")
	h.mu.Unlock()

	// From now on the agent's words are expected: the next utterance
	// waits for them and the recognizer is not asked.
	require.NoError(t, c.Enqueue(audio.EncodeMulaw(tone(440, 400*time.Millisecond, -20))))
	c.Transcript("anything else?")
	got = texts(t, c, phase(native.PhaseText))
	assert.Equal(t, "anything else?", got[len(got)-1].Text)
	flushed := make(chan error, 1)
	go func() { flushed <- c.Flush(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if f, err := c.Recv(ctx); err == nil && f.Message.AgentSpeech != nil {
				t.Errorf("after the agent's words: %+v", *f.Message.AgentSpeech)
			}
		}
	}()
	select {
	case err := <-flushed:
		require.NoError(t, err)
	case <-ctx.Done():
		t.Fatal("Flush did not return")
	}
	h.mu.Lock()
	assert.Equal(t, 0, h.calls)
	h.mu.Unlock()
}

// A transcript without words takes no utterance's place.
func TestEmptyTranscriptIsIgnored(t *testing.T) {
	c := newTestCall(t, nil)
	c.Transcript("")
	require.NoError(t, c.Enqueue(audio.EncodeMulaw(tone(440, 400*time.Millisecond, -20))))
	c.Transcript("hello there")
	got := texts(t, c, phase(native.PhaseText))
	assert.Equal(t, "hello there", got[len(got)-1].Text)
}

// A transcript is agent text: it is cut to MaxTranscriptBytes, and more
// than MaxPendingTranscripts waiting for their utterance is a flood.
func TestTranscriptsAreBudgeted(t *testing.T) {
	c := newTestCall(t, nil)
	require.NoError(t, c.Enqueue(audio.EncodeMulaw(tone(440, 400*time.Millisecond, -20))))
	require.NoError(t, c.Transcript(strings.Repeat("word ", 1<<18)))
	got := texts(t, c, phase(native.PhaseText))
	text := got[len(got)-1].Text
	assert.LessOrEqual(t, len(text), MaxTranscriptBytes+len(" "+callsim.TruncationMarker))
	assert.True(t, strings.HasSuffix(text, callsim.TruncationMarker), "cut text is marked")

	for range MaxPendingTranscripts {
		require.NoError(t, c.Transcript("again"))
	}
	assert.ErrorIs(t, c.Transcript("one too many"), ErrFlood)
}
