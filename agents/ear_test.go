package agents

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/protocol/native"
)

// callerPhrases are the caller phrasing of docs/ARCHITECTURE.md, plus
// variants with other values: what callproof's caller says.
var callerPhrases = []string{
	"Hi, I'd like to change the delivery date on order 5590 to December 3.",
	"Hi, please change the quantity on order 5590 to 2.",
	"Hi, please ship order 5590 today.",
	"Sorry, I meant order 5599.",
	"Sorry, make that December 5.",
	"Sorry, make that 4.",
	"No, wait, don't do that.",
	"Wait, make that December 7 instead.",
	"Wait, stop, don't change anything.",
	"Yes, that's right, go ahead.",
	"Hi, I'd like to change the delivery date on order 4471 to December 12.",
	"Hi, please change the quantity on order 4471 to 3.",
	"Hi, please ship order 4417 today.",
	"Sorry, I meant order 4471.",
	"Sorry, make that December 9.",
	"Sorry, make that 7.",
}

// callerVoice is the harness's voice in these tests.
const callerVoice = audio.DefaultVoice

var (
	fixtureOnce sync.Once
	fixtureDir  string
	fixtureErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	os.Exit(code)
}

// needFlite skips a test when flite is missing.
func needFlite(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("flite"); err != nil {
		t.Skipf("flite not installed (Debian: apt-get install flite): %v", err)
	}
}

// speechFixture is a speech cache holding every caller phrase in the
// caller's voice, synthesized once per test run. Tests that add files use
// their own copy (copyCache).
func speechFixture(t testing.TB) string {
	t.Helper()
	needFlite(t)
	fixtureOnce.Do(func() {
		fixtureDir, fixtureErr = os.MkdirTemp("", "callproof-agents-speech-")
		if fixtureErr != nil {
			return
		}
		c := callerCache(fixtureDir)
		var wg sync.WaitGroup
		var mu sync.Mutex
		sem := make(chan struct{}, 2)
		for _, p := range callerPhrases {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if _, err := c.Speech(ctx, p); err != nil {
					mu.Lock()
					fixtureErr = err
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	})
	require.NoError(t, fixtureErr)
	return fixtureDir
}

func callerCache(dir string) *audio.Cache {
	s, _ := audio.NewSynth(callerVoice)
	return &audio.Cache{Dir: dir, Synth: s}
}

// callerPCM is a phrase as the caller plays it: from the cache, padded to
// whole frames.
func callerPCM(t testing.TB, dir, text string) audio.PCM {
	t.Helper()
	p, err := callerCache(dir).Speech(context.Background(), text)
	require.NoError(t, err)
	if n := len(p) % audio.FrameSamples; n != 0 {
		p = append(p, make(audio.PCM, audio.FrameSamples-n)...)
	}
	return p
}

// stream is a scripted caller stream built frame by frame, with what it
// holds, so the ear's output can be checked against it.
type stream struct {
	pcm    audio.PCM
	said   []string // utterances, in order
	starts []int    // frame where each utterance starts
	noises int      // standalone noises (in silence)
}

func (s *stream) silence(d time.Duration) {
	n := (audio.Samples(d) + audio.FrameSamples - 1) / audio.FrameSamples * audio.FrameSamples
	s.pcm = append(s.pcm, make(audio.PCM, n)...)
}

func (s *stream) say(text string, p audio.PCM) {
	s.starts = append(s.starts, len(s.pcm)/audio.FrameSamples)
	s.said = append(s.said, text)
	s.pcm = append(s.pcm, p...)
}

// mix adds noise of kind, d long, at level dBFS over the stream from
// sample at, as the caller does (the whole clip gained to the level).
func (s *stream) mix(t testing.TB, kind string, at int, d time.Duration, level float64, seed int64) {
	t.Helper()
	n, err := audio.Noise(kind, d, seed)
	require.NoError(t, err)
	if l := audio.LevelDBFS(n); l > audio.SilenceDBFS {
		audio.Gain(n, level-l)
	}
	if end := at + len(n); end > len(s.pcm) {
		s.pcm = append(s.pcm, make(audio.PCM, end-len(s.pcm))...)
	}
	audio.Mix(s.pcm[at:], n, 0)
}

// hear pushes the stream through a fresh ear over dir, as μ-law frames.
func hear(t testing.TB, dir string, vc audio.VADConfig, s *stream) ([]native.Message, EarStats) {
	t.Helper()
	idx := newSpeechIndex(dir, 0, 0)
	idx.rescan(true)
	e := newEar(idx, vc)
	var out []native.Message
	for _, f := range audio.MulawFrames(s.pcm) {
		out = append(out, e.push(f)...)
	}
	// Trailing silence lets a last offset happen.
	for range 40 {
		out = append(out, e.push(silentFrame())...)
	}
	return out, e.snapshot()
}

func silentFrame() []byte {
	f := make([]byte, audio.FrameSamples)
	for i := range f {
		f[i] = audio.MulawSilence
	}
	return f
}

func finals(ms []native.Message) []string {
	var out []string
	for _, m := range ms {
		if m.Event == native.EventSpeech && m.Speech.Phase == native.PhaseFinal {
			out = append(out, m.Speech.Text)
		}
	}
	return out
}

func countEvents(ms []native.Message, event, phase string) int {
	n := 0
	for _, m := range ms {
		switch {
		case event == native.EventSpeech && m.Speech != nil && m.Speech.Phase == phase,
			event == native.EventSound && m.Sound != nil && m.Sound.Phase == phase:
			n++
		}
	}
	return n
}

// TestEarHearsEveryUtteranceOnce: clean speech, back to back or with
// pauses, each phrase heard exactly once with its text, onset on its first
// loud frame, final on its last.
func TestEarHearsEveryUtteranceOnce(t *testing.T) {
	dir := speechFixture(t)
	var s stream
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 2 {
		for _, p := range callerPhrases {
			if round == 1 {
				s.silence(0) // back to back
			} else {
				s.silence(time.Duration(100+rng.IntN(700)) * time.Millisecond)
			}
			s.say(p, callerPCM(t, dir, p))
		}
	}
	out, st := hear(t, dir, audio.VADConfig{}, &s)
	assert.Equal(t, s.said, finals(out))
	assert.Equal(t, len(s.said), countEvents(out, native.EventSpeech, native.PhaseOnset))
	assert.Zero(t, countEvents(out, native.EventSound, native.PhaseOnset), "clean speech is not a sound")
	assert.Equal(t, len(s.said), st.Finals())
	for _, h := range st.Heard {
		assert.Zero(t, h.OnsetLatency, h.Text)
		assert.Zero(t, h.FinalLatency, h.Text)
		assert.False(t, h.AtOffset, h.Text)
		assert.Equal(t, h.LoudFrames, h.Exact, h.Text)
	}
	// Onset and final alternate: one utterance at a time.
	open := false
	for _, m := range out {
		if m.Event != native.EventSpeech {
			continue
		}
		require.Equal(t, m.Speech.Phase == native.PhaseFinal, open, "onset/final out of order at %+v", m.Speech)
		open = !open
	}
}

// measure says whether to run the ear's extra measurements (louder noise,
// longer runs): AGENTS_EAR_MEASURE=1 go test ./agents -run TestEar -v.
func measure() bool { return os.Getenv("AGENTS_EAR_MEASURE") != "" }

// TestEarUnderNoise: noise at -30 dBFS over a third, two thirds or all of
// each utterance, and noise alone between utterances. Every utterance must
// still be heard once, with its own text; noise alone is a sound, never
// speech. Louder noise is measured and logged, not required.
func TestEarUnderNoise(t *testing.T) {
	dir := speechFixture(t)
	for _, tc := range []struct {
		cover float64 // share of the utterance under noise
		level float64
		must  bool
	}{
		{1.0 / 3, -30, true},
		{2.0 / 3, -30, true},
		{1, -30, true},
		{1.0 / 3, -20, false},
		{1, -20, false},
		{1, -15, false},
	} {
		if !tc.must && !measure() {
			continue
		}
		seeds := 1
		if measure() {
			seeds = 5
		}
		var all EarStats
		right, wrong, total, sounds, noisesAll := 0, 0, 0, 0, 0
		for seed := range seeds {
			said, got, st, noises := noisyRun(t, dir, tc.cover, tc.level, uint64(seed))
			r, w := inOrder(said, got)
			right, wrong, total = right+r, wrong+w, total+len(said)
			sounds, noisesAll = sounds+st.Sounds, noisesAll+noises
			all.Heard = append(all.Heard, st.Heard...)
			if tc.must {
				assert.Equal(t, said, got)
				assert.Equal(t, len(said), st.Onsets)
				assert.GreaterOrEqual(t, st.Sounds, noises, "each noise alone is a sound")
			}
		}
		t.Logf("noise at %v dBFS over %.0f%% of each utterance: %d/%d utterances identified, %d wrong texts; %d sounds for %d noises alone",
			tc.level, 100*tc.cover, right, total, wrong, sounds, noisesAll)
		logLatencies(t, all)
	}
}

func noisyRun(t *testing.T, dir string, cover, level float64, seed uint64) ([]string, []string, EarStats, int) {
	kinds := []string{"cough", "door", "tv", "hum"}
	var s stream
	rng := rand.New(rand.NewPCG(3+seed, 4))
	for i, p := range callerPhrases {
		s.silence(time.Duration(600+rng.IntN(400)) * time.Millisecond)
		// Noise alone, then a pause longer than the detector's hangover.
		at := len(s.pcm)
		s.silence(400 * time.Millisecond)
		s.mix(t, kinds[(i+int(seed))%len(kinds)], at, 400*time.Millisecond, level, int64(i)+int64(seed)*1000)
		s.noises++
		s.silence(800 * time.Millisecond)
		pcm := callerPCM(t, dir, p)
		start := len(s.pcm)
		s.say(p, pcm)
		// Noise over a stretch of the utterance, placed anywhere in it.
		d := time.Duration(float64(pcm.Duration()) * cover)
		off := rng.IntN(len(pcm) - audio.Samples(d) + 1)
		s.mix(t, kinds[(i+1+int(seed))%len(kinds)], start+off, d, level, int64(100+i)+int64(seed)*1000)
	}
	s.silence(time.Second)
	out, st := hear(t, dir, audio.VADConfig{}, &s)
	return s.said, finals(out), st, s.noises
}

// TestEarNoiseAloneIsNotSpeech: every noise kind at -30 dBFS, alone, a
// second of it; and seconds of the continuous kinds (more with
// AGENTS_EAR_MEASURE), so the search under noise has every chance to
// mistake them for speech.
func TestEarNoiseAloneIsNotSpeech(t *testing.T) {
	dir := speechFixture(t)
	for i, kind := range audio.NoiseKinds() {
		var s stream
		s.silence(200 * time.Millisecond)
		s.silence(time.Second)
		s.mix(t, kind, audio.Samples(200*time.Millisecond), time.Second, -30, int64(i))
		out, st := hear(t, dir, audio.VADConfig{}, &s)
		assert.Zero(t, countEvents(out, native.EventSpeech, native.PhaseOnset), kind)
		assert.Equal(t, 1, st.Sounds, "%s: one sound", kind)
		assert.Equal(t, st.Sounds, countEvents(out, native.EventSound, native.PhaseOffset), kind)
	}
	long, levels := 5*time.Second, []float64{-30}
	if measure() {
		long, levels = 20*time.Second, []float64{-30, -20, -15}
	}
	for _, kind := range []string{"tv", "hum"} {
		for _, level := range levels {
			var s stream
			s.silence(long)
			s.mix(t, kind, 0, long, level, 7)
			out, st := hear(t, dir, audio.VADConfig{}, &s)
			assert.Zero(t, countEvents(out, native.EventSpeech, native.PhaseOnset), "%s at %v dBFS", kind, level)
			t.Logf("%v of %s at %v dBFS: %d sounds, %d hypotheses searched, none confirmed", long, kind, level, st.Sounds, st.Searched)
		}
	}
}

func logLatencies(t *testing.T, st EarStats) {
	t.Helper()
	var on, fin, proc []time.Duration
	noisy, atOff := 0, 0
	for _, h := range st.Heard {
		on = append(on, h.OnsetLatency)
		fin = append(fin, h.FinalLatency)
		proc = append(proc, h.Processing)
		noisy += h.Noisy
		if h.AtOffset {
			atOff++
		}
	}
	t.Logf("onset latency (stream time) %v; final latency %v; finals at offset %d; noisy votes %d; frame processing at final %v",
		spread(on), spread(fin), atOff, noisy, spread(proc))
}

// spread is "min/median/max".
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	s := append([]time.Duration(nil), ds...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return fmt.Sprintf("%v/%v/%v", s[0], s[len(s)/2], s[len(s)-1])
}

// inOrder counts the finals that match the script in order (a final
// matches the next utterance of that text), and those that match none.
func inOrder(said, got []string) (right, wrong int) {
	next := 0
	for _, g := range got {
		found := false
		for i := next; i < len(said); i++ {
			if said[i] == g {
				right++
				next = i + 1
				found = true
				break
			}
		}
		if !found {
			wrong++
		}
	}
	return right, wrong
}

// An utterance cut short (the caller stopped playing it) still ends, at
// the detector's offset, with the text of what was being played; the
// next utterance is heard from its own start.
func TestEarCutShort(t *testing.T) {
	dir := speechFixture(t)
	var s stream
	first := callerPCM(t, dir, callerPhrases[0])
	s.silence(200 * time.Millisecond)
	s.say(callerPhrases[0], first[:len(first)/2/audio.FrameSamples*audio.FrameSamples])
	s.silence(time.Second)
	s.say(callerPhrases[3], callerPCM(t, dir, callerPhrases[3]))
	out, st := hear(t, dir, audio.VADConfig{}, &s)
	assert.Equal(t, s.said, finals(out))
	require.Len(t, st.Heard, 2)
	assert.True(t, st.Heard[0].AtOffset)
	assert.False(t, st.Heard[1].AtOffset)
}
