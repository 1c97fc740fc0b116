package harness

import (
	"encoding/json"
	"sync"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/trace"
)

// historyMeter keeps a call's history size as trace.WriteJSONL writes it
// (every party's events, from the subscription on) and closes over once
// it passes the call's MaxHistoryBytes or MaxHistoryEvents.
type historyMeter struct {
	lim    callsim.Limits
	over   chan struct{}
	unsub  func()
	mu     sync.Mutex
	bytes  int64
	events int
	closed bool
}

// newHistoryMeter counts rec's events so far and every later one.
func newHistoryMeter(lim callsim.Limits, rec *trace.Recorder) *historyMeter {
	m := &historyMeter{lim: lim, over: make(chan struct{})}
	m.unsub = rec.Subscribe(m.add)
	for _, e := range rec.Events() {
		m.add(e)
	}
	return m
}

// add runs under the recorder's lock: it only counts.
func (m *historyMeter) add(e trace.Event) {
	n := int64(1) // the newline
	if b, err := json.Marshal(&e); err == nil {
		n += int64(len(b))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bytes += n
	m.events++
	if !m.closed && (m.bytes > m.lim.MaxHistoryBytes || m.events > m.lim.MaxHistoryEvents) {
		m.closed = true
		close(m.over)
	}
}

func (m *historyMeter) stop() { m.unsub() }
