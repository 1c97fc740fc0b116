package trace

import (
	"sync"
	"testing"
	"time"
)

// stepClock advances one millisecond every time it is read.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func TestRecorderSeqAndClock(t *testing.T) {
	r := NewRecorder("c1", &stepClock{t: time.Unix(0, 0)})
	if r.Call() != "c1" {
		t.Errorf("Call() = %q", r.Call())
	}
	e1 := r.Record(SourceHarness, KindCallStart, &CallStart{})
	e2 := r.Record(SourceCaller, KindCallerHangup, &Note{})
	if e1.Seq != 1 || e2.Seq != 2 {
		t.Errorf("seqs %d, %d; want 1, 2", e1.Seq, e2.Seq)
	}
	if e1.Call != "c1" || e1.Source != SourceHarness || e1.Kind != KindCallStart {
		t.Errorf("first event %+v", e1)
	}
	// The clock started at NewRecorder (1ms), first event read 2ms.
	if e1.At != time.Millisecond || e2.At != 2*time.Millisecond {
		t.Errorf("At = %v, %v; want 1ms, 2ms", e1.At, e2.At)
	}
	if got := r.Since(); got != 3*time.Millisecond {
		t.Errorf("Since() = %v, want 3ms", got)
	}
	ev := r.Events()
	if len(ev) != 2 || ev[0] != e1 || ev[1] != e2 {
		t.Errorf("Events() = %+v", ev)
	}
	// Events returns a copy.
	ev[0].Seq = 99
	if r.Events()[0].Seq != 1 {
		t.Error("Events() shares the recorder's slice")
	}
}

func TestRecorderNilClockIsSystemClock(t *testing.T) {
	r := NewRecorder("c", nil)
	e := r.Record(SourceHarness, KindNote, &Note{})
	if e.At < 0 || e.At > time.Minute {
		t.Errorf("At = %v with the system clock", e.At)
	}
}

// Many goroutines record at once: seqs are 1..N with no gap or repeat,
// the stored order is seq order, times never go backwards, and every
// subscriber sees every event exactly once in seq order. Run with -race.
func TestRecorderConcurrentRecord(t *testing.T) {
	const workers, each = 8, 200
	r := NewRecorder("c", &stepClock{t: time.Unix(0, 0)})
	var subMu sync.Mutex
	var seen []int
	cancel := r.Subscribe(func(e Event) {
		subMu.Lock()
		seen = append(seen, e.Seq)
		subMu.Unlock()
	})
	defer cancel()
	returned := make([][]int, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			src := []Source{SourceCaller, SourceAgent, SourceBackend, SourceHarness}[w%4]
			for i := 0; i < each; i++ {
				e := r.Record(src, KindNote, &Note{})
				returned[w] = append(returned[w], e.Seq)
				if i%50 == 0 {
					r.Events() // readers race with writers too
				}
			}
		}(w)
	}
	wg.Wait()
	h := r.Close()
	const n = workers * each
	if len(h.Events) != n {
		t.Fatalf("%d events, want %d", len(h.Events), n)
	}
	for i, e := range h.Events {
		if e.Seq != i+1 {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		if i > 0 && e.At < h.Events[i-1].At {
			t.Fatalf("seq %d at %v is before seq %d at %v", e.Seq, e.At, e.Seq-1, h.Events[i-1].At)
		}
	}
	got := map[int]bool{}
	for w, seqs := range returned {
		for i, s := range seqs {
			if got[s] {
				t.Fatalf("seq %d returned twice", s)
			}
			got[s] = true
			if i > 0 && s <= seqs[i-1] {
				t.Errorf("worker %d: seq %d after %d", w, s, seqs[i-1])
			}
		}
	}
	if len(seen) != n {
		t.Fatalf("subscriber saw %d events, want %d", len(seen), n)
	}
	for i, s := range seen {
		if s != i+1 {
			t.Fatalf("subscriber saw seq %d at position %d", s, i)
		}
	}
}

func TestRecorderSubscribe(t *testing.T) {
	r := NewRecorder("c", &stepClock{})
	r.Record(SourceHarness, KindCallStart, &CallStart{})
	var a, b []Kind
	cancelA := r.Subscribe(func(e Event) { a = append(a, e.Kind) })
	cancelB := r.Subscribe(func(e Event) { b = append(b, e.Kind) })
	r.Record(SourceCaller, KindCallerSpeechStart, &CallerSpeech{})
	cancelA()
	r.Record(SourceAgent, KindAgentSpeechStart, &AgentSpeech{})
	cancelA() // cancelling twice is harmless
	cancelB()
	r.Record(SourceAgent, KindAgentSpeechEnd, &AgentSpeech{})
	// A subscriber sees only what was recorded while it was subscribed.
	if len(a) != 1 || a[0] != KindCallerSpeechStart {
		t.Errorf("a saw %v, want [caller.speech_start]", a)
	}
	if len(b) != 2 || b[0] != KindCallerSpeechStart || b[1] != KindAgentSpeechStart {
		t.Errorf("b saw %v, want [caller.speech_start agent.speech_start]", b)
	}
	if len(r.Events()) != 4 {
		t.Errorf("%d events recorded, want 4", len(r.Events()))
	}
}

func TestRecorderClose(t *testing.T) {
	r := NewRecorder("c", &stepClock{})
	r.Record(SourceHarness, KindCallStart, &CallStart{})
	r.Record(SourceHarness, KindCallEnd, &CallEnd{})
	var after []Event
	r.Subscribe(func(e Event) { after = append(after, e) })
	h := r.Close()
	if h.Call != "c" || len(h.Events) != 2 {
		t.Fatalf("Close() = %+v", h)
	}
	// Late events from a dying agent are dropped, and nobody hears them.
	if e := r.Record(SourceAgent, KindAgentSpeechStart, &AgentSpeech{}); e != (Event{}) {
		t.Errorf("Record after Close = %+v, want the zero Event", e)
	}
	if len(r.Events()) != 2 {
		t.Errorf("%d events after a late Record, want 2", len(r.Events()))
	}
	if len(after) != 0 {
		t.Errorf("subscriber heard %d events after Close", len(after))
	}
	// The returned history is the caller's: the recorder does not share it.
	h.Events[0].Seq = 42
	if r.Events()[0].Seq != 1 {
		t.Error("Close() shares the recorder's slice")
	}
	// Closing again is harmless and returns the same events.
	if h2 := r.Close(); len(h2.Events) != 2 {
		t.Errorf("second Close() has %d events", len(h2.Events))
	}
}

// Close while others record: no event is lost before Close, none is added
// after, and the race detector sees no race.
func TestRecorderCloseConcurrent(t *testing.T) {
	r := NewRecorder("c", &stepClock{})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					r.Record(SourceAgent, KindNote, &Note{})
				}
			}
		}()
	}
	time.Sleep(5 * time.Millisecond)
	h := r.Close()
	close(stop)
	wg.Wait()
	if got := len(r.Events()); got != len(h.Events) {
		t.Errorf("%d events after Close, %d at Close", got, len(h.Events))
	}
	for i, e := range h.Events {
		if e.Seq != i+1 {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
}
