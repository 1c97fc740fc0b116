package harness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audiocall"
	"github.com/callproof/callproof/callsim/twilio"
	"github.com/callproof/callproof/callsim/webrtc"
	"github.com/callproof/callproof/trace"
)

// Speech is synthesized before the first dial: a synthesizer is a process
// per utterance, and thirty of them started in the middle of thirty live
// calls take the CPU the calls' frame clocks need. The scripts are known
// in advance, so every utterance the planned calls will say is made ready
// (synthesized into the speech cache, or found there) first.
const (
	// PrewarmWorkers bounds the utterances synthesized at once.
	PrewarmWorkers = 4
	// PrewarmTimeout bounds the whole preparation; a synthesizer that
	// hangs fails the run before any call, naming the utterance.
	PrewarmTimeout = 5 * time.Minute
)

// Prewarm tunes PrepareSpeech; the zero value takes the defaults.
type Prewarm struct {
	Workers int           // default PrewarmWorkers
	Timeout time.Duration // default PrewarmTimeout
	// Progress, when set, is called after each utterance is ready (from
	// one goroutine at a time), and once with done 0 before the first.
	Progress func(done, total int)
}

// SpeechTexts is every utterance the calls ps will synthesize, each once,
// in the order first said: say steps without a recording of their own.
func SpeechTexts(ps []Placement) []string {
	seen := make(map[string]bool)
	var out []string
	for _, p := range ps {
		if p.Case == nil {
			continue
		}
		for _, st := range p.Case.Script.Steps {
			if st.Do != trace.StepSay || st.Audio != "" || seen[st.Text] {
				continue
			}
			seen[st.Text] = true
			out = append(out, st.Text)
		}
	}
	return out
}

// TransportSpeech is the caller's voice of an audio transport (nil for one
// that sends text).
func TransportSpeech(tr callsim.Transport) audiocall.Speech {
	switch t := tr.(type) {
	case *twilio.Transport:
		return t.Speech
	case *webrtc.Transport:
		return t.Speech
	}
	return nil
}

// PrepareSpeech makes every text ready in speech, at most o.Workers at
// once, within o.Timeout. The first failure stops the rest and names its
// text.
func PrepareSpeech(ctx context.Context, speech audiocall.Speech, texts []string, o Prewarm) error {
	if speech == nil || len(texts) == 0 {
		return nil
	}
	workers := o.Workers
	if workers <= 0 {
		workers = PrewarmWorkers
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = PrewarmTimeout
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("caller speech not ready within %s", timeout))
	defer cancel()
	ctx, stop := context.WithCancel(ctx)
	defer stop()

	var mu sync.Mutex
	done := 0
	var first error
	if o.Progress != nil {
		o.Progress(0, len(texts))
	}
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range min(workers, len(texts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for text := range jobs {
				_, err := speech.Speech(ctx, text)
				mu.Lock()
				if err != nil {
					if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
						err = c // the bound, not the synthesizer's view of it
					}
					if first == nil && !errors.Is(err, context.Canceled) {
						first = fmt.Errorf("caller speech %q: %w", text, err)
					}
					mu.Unlock()
					stop()
					continue
				}
				done++
				if o.Progress != nil {
					o.Progress(done, len(texts))
				}
				mu.Unlock()
			}
		}()
	}
	for _, text := range texts {
		if ctx.Err() != nil {
			break
		}
		select {
		case jobs <- text:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
	if first != nil {
		return first
	}
	return context.Cause(ctx)
}
