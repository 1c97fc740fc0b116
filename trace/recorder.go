package trace

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"
)

// Clock is the harness clock. Inject it; never call time.Now in logic that
// a test needs to control.
type Clock interface {
	Now() time.Time
}

// SystemClock reads the machine's monotonic clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// Recorder numbers and timestamps the events of one call. Every party of
// the call records into the same Recorder, so one sequence counter and one
// clock order them all. It is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	call   string
	clock  Clock
	start  time.Time
	events []Event
	subs   map[int]func(Event)
	nextID int
	closed bool
	// bytes is the history's size as JSONL so far (Size); atomic so a
	// subscriber, running under mu, can read it.
	bytes atomic.Int64
	count atomic.Int64
}

// NewRecorder starts a call's clock now.
func NewRecorder(call string, clock Clock) *Recorder {
	if clock == nil {
		clock = SystemClock{}
	}
	return &Recorder{call: call, clock: clock, start: clock.Now(), subs: map[int]func(Event){}}
}

// Call returns the call id.
func (r *Recorder) Call() string { return r.call }

// Since is the time on the call's clock.
func (r *Recorder) Since() time.Duration { return r.clock.Now().Sub(r.start) }

// Record appends an event and hands it to every subscriber, in seq order.
// After Close it records nothing and returns a zero Event.
func (r *Recorder) Record(src Source, kind Kind, data any) Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return Event{}
	}
	e := Event{Call: r.call, Seq: len(r.events) + 1, At: r.clock.Now().Sub(r.start), Source: src, Kind: kind, Data: data}
	r.events = append(r.events, e)
	n := int64(1) // the newline
	if b, err := json.Marshal(&e); err == nil {
		n += int64(len(b))
	}
	r.bytes.Add(n)
	r.count.Add(1)
	for _, fn := range r.subs {
		fn(e)
	}
	return e
}

// Size is the history so far: its bytes as JSONL (each event as
// json.Marshal encodes it, and a newline) and its events. Every party's
// budget reads it, so each event is measured once. Safe to call from a
// subscriber.
func (r *Recorder) Size() (bytes int64, events int) {
	return r.bytes.Load(), int(r.count.Load())
}

// Subscribe calls fn with every event recorded from now on, under the
// recorder's lock and in seq order: fn must not block or record. The
// returned function unsubscribes.
func (r *Recorder) Subscribe(fn func(Event)) (cancel func()) {
	r.mu.Lock()
	id := r.nextID
	r.nextID++
	r.subs[id] = fn
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.subs, id)
		r.mu.Unlock()
	}
}

// Event returns the event with this seq, if it has been recorded.
func (r *Recorder) Event(seq int) (Event, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if seq < 1 || seq > len(r.events) {
		return Event{}, false
	}
	return r.events[seq-1], true
}

// Events returns a copy of the events so far.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Event, len(r.events))
	copy(out, r.events)
	return out
}

// Close stops recording (late events from a dying agent are dropped) and
// returns the history.
func (r *Recorder) Close() *History {
	r.mu.Lock()
	r.closed = true
	r.subs = map[int]func(Event){}
	r.mu.Unlock()
	return &History{Call: r.call, Events: r.Events()}
}
