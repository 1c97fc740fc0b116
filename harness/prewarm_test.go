package harness_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/agents/loadbot"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/harness"
)

// eventLog is the order things happened in, across goroutines.
type eventLog struct {
	mu  sync.Mutex
	evs []string
}

func (l *eventLog) add(e string) {
	l.mu.Lock()
	l.evs = append(l.evs, e)
	l.mu.Unlock()
}

func (l *eventLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.evs...)
}

// slowSynth takes its time, as flite does on a loaded machine, and counts
// how many synthesize at once.
type slowSynth struct {
	log       *eventLog
	delay     time.Duration
	fail      string // a text it cannot say
	now, peak atomic.Int32
}

func (s *slowSynth) Name() string { return "test/slow" }

func (s *slowSynth) Synthesize(ctx context.Context, text string) (audio.PCM, error) {
	n := s.now.Add(1)
	defer s.now.Add(-1)
	for {
		p := s.peak.Load()
		if n <= p || s.peak.CompareAndSwap(p, n) {
			break
		}
	}
	if s.log != nil {
		s.log.add("synth " + text)
	}
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if text == s.fail {
		return nil, errors.New("no voice for that")
	}
	return audio.Tone(300, 400*time.Millisecond, -20), nil
}

// loggedListener notes each call the agent accepts.
type loggedListener struct {
	net.Listener
	log *eventLog
}

func (l loggedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.log.add("dial")
	}
	return c, err
}

// With an empty cache and a slow synthesizer, every utterance of the run
// is synthesized before the first call is dialed, and none while calls
// are up: the calls' frame clocks never share the CPU with a synthesizer.
func TestSpeechReadyBeforeFirstDial(t *testing.T) {
	log := &eventLog{}
	synth := &slowSynth{log: log, delay: 150 * time.Millisecond}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = (&loadbot.Bot{}).Serve(ctx, loggedListener{ln, log}) }()

	_, cases, err := harness.LoadSuite("core")
	require.NoError(t, err)
	cases = cases[:3]
	env := liveEnv(t)
	tr, err := harness.TwilioTransport(harness.AudioOptions{SpeechCache: t.TempDir()})
	require.NoError(t, err)
	tr.Speech.(*audio.Cache).Synth = synth
	env.Transport, env.TransportName = tr, "twilio"
	r := env.Runner()
	r.Concurrency, r.TimeScale = 3, 1
	var progress []int
	var total int
	r.Warm.Progress = func(done, n int) { progress, total = append(progress, done), n }

	texts := harness.SpeechTexts(harness.Placements(cases, 1))
	require.NotEmpty(t, texts)
	// The calls need not finish: what matters is what ran before them.
	runCtx, stop := context.WithTimeout(ctx, 3*time.Second)
	defer stop()
	_, err = r.Run(runCtx, "ws://"+ln.Addr().String()+"/", cases)
	require.NoError(t, err)

	evs := log.all()
	first := -1
	var synths []string
	for i, e := range evs {
		if e == "dial" && first < 0 {
			first = i
		}
		if s, ok := strings.CutPrefix(e, "synth "); ok {
			require.True(t, first < 0, "%q synthesized after the first dial: %v", s, evs)
			synths = append(synths, s)
		}
	}
	require.GreaterOrEqual(t, first, 0, "no call was dialed: %v", evs)
	assert.ElementsMatch(t, texts, synths, "each utterance once")
	assert.Equal(t, len(texts), total)
	require.Len(t, progress, len(texts)+1)
	assert.Equal(t, 0, progress[0])
	assert.Equal(t, len(texts), progress[len(progress)-1])
}

// At most Workers synthesize at once, and all of them do.
func TestPrepareSpeechBoundsWorkers(t *testing.T) {
	synth := &slowSynth{delay: 50 * time.Millisecond}
	cache := &audio.Cache{Dir: t.TempDir(), Synth: synth}
	var texts []string
	for i := range 12 {
		texts = append(texts, fmt.Sprintf("sentence number %d", i))
	}
	require.NoError(t, harness.PrepareSpeech(context.Background(), cache, texts, harness.Prewarm{Workers: 3}))
	assert.LessOrEqual(t, synth.peak.Load(), int32(3))
	assert.Greater(t, synth.peak.Load(), int32(1), "worked concurrently")
	for _, text := range texts {
		_, ok := cache.Lookup(text)
		assert.True(t, ok, text)
	}
}

// A synthesizer failure names the utterance; so does one past the bound.
func TestPrepareSpeechNamesTheText(t *testing.T) {
	synth := &slowSynth{delay: time.Millisecond, fail: "say this"}
	cache := &audio.Cache{Dir: t.TempDir(), Synth: synth}
	err := harness.PrepareSpeech(context.Background(), cache, []string{"fine", "say this", "also fine"}, harness.Prewarm{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"say this"`)
	assert.Contains(t, err.Error(), "no voice for that")

	synth = &slowSynth{delay: time.Hour}
	cache = &audio.Cache{Dir: t.TempDir(), Synth: synth}
	err = harness.PrepareSpeech(context.Background(), cache, []string{"forever"}, harness.Prewarm{Timeout: 50 * time.Millisecond})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"forever"`)
	assert.Contains(t, err.Error(), "not ready within 50ms")
}
