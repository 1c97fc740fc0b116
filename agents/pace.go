package agents

import (
	"sync"
	"time"

	"github.com/callproof/callproof/trace"
)

// DefaultKeepPaces is how many calls' timer lateness a server keeps (the
// latest of each call id): a few hundred bytes a call.
const DefaultKeepPaces = 10000

// pace is one call's clock: it schedules on the agent's Clock and records
// how late each timer fired against when it was due, and how far each
// spoken word came behind its utterance's schedule. A starved agent (its
// process short of CPU) fires its turn ends, preparations and words late,
// so the call no longer runs at the pace its scenario was written for;
// this is how the harness that runs the agent in its own process can tell
// (Server.Lateness, trace.AgentLateness).
type pace struct {
	inner Clock
	mu    sync.Mutex
	late  trace.AgentLateness
	scale float64
	// reads and sends are when the agent's loop took each caller frame
	// and sent each of its own, on the process's clock (the native text
	// wire only: another wire's frames are not the caller's one for one).
	reads, sends []time.Time
}

func newPace(inner Clock) *pace {
	if inner == nil {
		inner = SystemClock{}
	}
	return &pace{inner: inner, scale: 1}
}

// Now is the agent clock's.
func (p *pace) Now() time.Time { return p.inner.Now() }

// AfterFunc schedules f on the agent's clock; when it fires, how late it
// is against now+d is recorded first.
func (p *pace) AfterFunc(d time.Duration, f func()) func() bool {
	due := p.inner.Now().Add(d)
	return p.inner.AfterFunc(d, func() {
		p.add(&p.late.Timers, p.inner.Now().Sub(due))
		f()
	})
}

// spoke records a word said now that was due at due.
func (p *pace) spoke(due time.Time) { p.add(&p.late.Speech, p.inner.Now().Sub(due)) }

func (p *pace) add(st *trace.LatenessStat, late time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st.Add(max(late, 0))
}

// wireAt notes now as the next of the call's reads or sends.
func (p *pace) wireAt(l *[]time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(*l) < trace.MaxWireTimes {
		*l = append(*l, time.Now())
	}
}

// departed records a tool request's departure: from the call at start to
// its request written now.
func (p *pace) departed(start time.Time) { p.add(&p.late.Tools, time.Since(start)) }

func (p *pace) setScale(scale float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scale = scale
}

// snapshot is the lateness so far, settled at the call's time scale,
// with each frame of the wire the caller timed (w) matched to the agent's
// read or send of it in order: the k-th frame the caller sent is the k-th
// the agent's loop took, the k-th it sent the k-th the caller read (one
// WebSocket, in order both ways).
func (p *pace) snapshot(w trace.WireTimes) trace.AgentLateness {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.late
	for k := range min(len(p.reads), len(w.Sent)) {
		l.Reads.Add(max(p.reads[k].Sub(w.Sent[k]), 0))
	}
	for k := range min(len(p.sends), len(w.Received)) {
		l.Sends.Add(max(w.Received[k].Sub(p.sends[k]), 0))
	}
	l.Settle(p.scale)
	return l
}

// paceLog keeps the latest calls' paces by call id, at most keep of them.
type paceLog struct {
	mu    sync.Mutex
	byID  map[string]*pace
	order []keptPace
	keep  int
}

type keptPace struct {
	id string
	p  *pace
}

func newPaceLog(keep int) *paceLog {
	if keep <= 0 {
		keep = DefaultKeepPaces
	}
	return &paceLog{byID: map[string]*pace{}, keep: keep}
}

// put files call id's pace, replacing an earlier call of the same id.
func (l *paceLog) put(id string, p *pace) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byID[id] = p
	l.order = append(l.order, keptPace{id, p})
	for len(l.order) > l.keep {
		old := l.order[0]
		l.order = l.order[1:]
		if l.byID[old.id] == old.p {
			delete(l.byID, old.id)
		}
	}
}

func (l *paceLog) get(id string) (*pace, bool) {
	if l == nil {
		return nil, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.byID[id]
	return p, ok
}

// Lateness reports how late the agent's own timers, speech and tool
// requests ran in its latest call with this id, so far (the call may
// still be going), settled at the call's time scale; false when no such
// call is kept (DefaultKeepPaces). w is when the caller sent and read
// each frame of the call (callsim.Result.Wire), from which it adds how
// late the agent read the caller's frames and how late its own were read
// (on the native text wire; nothing on others). It is for a harness that
// runs this agent in its own process (harness.Runner.AgentLateness): the
// figures never cross the wire.
func (s *Server) Lateness(callID string, w trace.WireTimes) (trace.AgentLateness, bool) {
	p, ok := s.paces.get(callID)
	if !ok {
		return trace.AgentLateness{}, false
	}
	return p.snapshot(w), true
}
