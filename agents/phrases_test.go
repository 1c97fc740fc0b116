package agents

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/internal/doccheck"
)

// countingSynth notes what it was asked to say.
type countingSynth struct {
	mu    sync.Mutex
	said  []string
	fails string
}

func (s *countingSynth) Name() string { return "test/counting" }

func (s *countingSynth) Synthesize(_ context.Context, text string) (audio.PCM, error) {
	s.mu.Lock()
	s.said = append(s.said, text)
	s.mu.Unlock()
	if text == s.fails {
		return nil, errors.New("cannot")
	}
	return make(audio.PCM, audio.FrameSamples*10), nil
}

// Start returns with every fixed phrase synthesized: the first call finds
// them in the cache.
func TestStartWarmsFixedPhrases(t *testing.T) {
	synth := &countingSynth{}
	var logged []string
	var mu sync.Mutex
	cfg := Careful()
	cfg.Audio = &AudioConfig{SpeechCache: t.TempDir(), Synth: synth, Logf: func(f string, a ...any) {
		mu.Lock()
		logged = append(logged, f)
		mu.Unlock()
	}}
	running, err := Start(context.Background(), cfg, "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = running.Close() })
	synth.mu.Lock()
	said := slices.Clone(synth.said)
	synth.mu.Unlock()
	for _, p := range fixedPhrases() {
		assert.Contains(t, said, p)
	}
	mu.Lock()
	assert.Contains(t, logged, "voice %s: %d phrases ready in %s")
	mu.Unlock()
}

func TestWarmPhrasesNamesTheFailure(t *testing.T) {
	synth := &countingSynth{fails: askOrder}
	err := warmPhrases(context.Background(), &audio.Cache{Dir: t.TempDir(), Synth: synth}, fixedPhrases())
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"Which order number is that?"`)
}

// agents/AUDIO.md states the warm-up's bounds; they are the code's.
func TestPhraseWarmDocs(t *testing.T) {
	doc, err := os.ReadFile("AUDIO.md")
	require.NoError(t, err)
	refs := doccheck.Refs(string(doc), "agents")
	for name, want := range map[string]any{
		"agents.PhraseWarmers":     int64(PhraseWarmers),
		"agents.PhraseWarmTimeout": PhraseWarmTimeout,
	} {
		require.NotEmpty(t, refs[name], name)
		for _, s := range refs[name] {
			got, err := doccheck.Value(want, s)
			require.NoError(t, err, name)
			assert.Equal(t, want, got, name)
		}
	}
}
