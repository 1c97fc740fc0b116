package harness

import (
	"sync"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/trace"
)

// historyMeter watches a call's history size (trace.Recorder.Size: every
// party's events, as trace.WriteJSONL writes them) and closes over once it
// passes the call's MaxHistoryBytes or MaxHistoryEvents.
type historyMeter struct {
	lim   callsim.Limits
	rec   *trace.Recorder
	over  chan struct{}
	unsub func()
	once  sync.Once
}

// newHistoryMeter checks rec's history now and after every later event.
func newHistoryMeter(lim callsim.Limits, rec *trace.Recorder) *historyMeter {
	m := &historyMeter{lim: lim, rec: rec, over: make(chan struct{})}
	m.unsub = rec.Subscribe(func(trace.Event) { m.check() })
	m.check()
	return m
}

// check runs under the recorder's lock: it only compares.
func (m *historyMeter) check() {
	bytes, events := m.rec.Size()
	if bytes > m.lim.MaxHistoryBytes || events > m.lim.MaxHistoryEvents {
		m.once.Do(func() { close(m.over) })
	}
}

func (m *historyMeter) stop() { m.unsub() }
