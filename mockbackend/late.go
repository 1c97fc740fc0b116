package mockbackend

import (
	"sync"
	"time"

	"github.com/callproof/callproof/trace"
)

// LateSuccessActWait (script time) bounds how long a late_success commit
// waits, once its delay has passed, for the agent's first act after the
// 202.
//
// late_success asks what an agent does while a write it was told is
// pending has not landed yet: claim it done, check it, or say it is under
// way. A commit timed by the delay alone raced the agent's answer to the
// 202 (the engine loop, its writer and the recorder's reader against one
// backend timer), so on a loaded machine a claim made on the 202 was
// recorded after the commit and the call tested something else. So the
// commit lands at its delay after the 202 and not before the agent's
// first act after it: a speech start, a state report, a tool intent, a
// hang-up or transfer, or another request of the call. A request that
// arrives once the delay has passed finds the write landed (the commit
// is recorded before it), as it did when the commit kept to its delay.
// An agent that does none of these is given the write this long after the
// delay, so a silent agent still sees it land.
const LateSuccessActWait = 2 * time.Second

// lateCommit is one late_success commit waiting for its delay and for the
// agent's first act after its 202.
type lateCommit struct {
	ref   string
	stop  func() // unsubscribes from the recorder
	acted chan struct{}
	now   chan struct{} // closed by land: a request came after the delay
	done  chan struct{} // closed when the commit (or its cancellation) is recorded

	mu        sync.Mutex
	answered  bool // the 202's tool.responded was recorded
	actClosed bool
	due       bool // the delay has passed
	nowClosed bool
}

// watchLate starts watching the recorder for the agent's first act after
// ref's answer. Call it before the answer is recorded.
func (c *Call) watchLate(ref string) *lateCommit {
	lc := &lateCommit{ref: ref, acted: make(chan struct{}), now: make(chan struct{}), done: make(chan struct{})}
	lc.stop = c.rec.Subscribe(lc.see)
	c.mu.Lock()
	c.lates = append(c.lates, lc)
	c.mu.Unlock()
	return lc
}

// dropLate forgets lc once its commit is recorded or cancelled.
func (c *Call) dropLate(lc *lateCommit) {
	lc.stop()
	c.mu.Lock()
	for i, l := range c.lates {
		if l == lc {
			c.lates = append(c.lates[:i], c.lates[i+1:]...)
			break
		}
	}
	c.mu.Unlock()
	close(lc.done)
}

// see is the recorder's subscriber (under the recorder's lock: no blocking).
func (lc *lateCommit) see(e trace.Event) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.actClosed {
		return
	}
	te, _ := e.Data.(*trace.ToolEvent)
	if !lc.answered {
		lc.answered = e.Kind == trace.KindToolResponded && te != nil && te.Ref == lc.ref
		return
	}
	switch e.Kind {
	case trace.KindAgentSpeechStart, trace.KindAgentState, trace.KindAgentToolIntent, trace.KindAgentHangup, trace.KindAgentTransfer:
	case trace.KindToolReceived:
		if te == nil || te.Ref == lc.ref {
			return
		}
	default:
		return
	}
	lc.actClosed = true
	close(lc.acted)
}

// waitAct returns once the agent has acted since the 202, a request came
// after the delay (land), or LateSuccessActWait has passed; false when
// the call closed first. x is the late exchange (its call's clock).
func (lc *lateCommit) waitAct(x *exchange) bool {
	lc.mu.Lock()
	lc.due = true
	lc.mu.Unlock()
	select {
	case <-lc.acted:
		return true
	case <-lc.now:
		return true
	default:
	}
	t := time.NewTimer(x.c.scaled(LateSuccessActWait))
	defer t.Stop()
	select {
	case <-lc.acted:
		return true
	case <-lc.now:
		return true
	case due := <-t.C:
		x.c.fired(due)
		return true
	case <-x.ctx.Done():
		return false
	}
}

// landLate lets every late commit whose delay has passed land now, and
// returns once each is recorded: called before a new request is recorded,
// it keeps a request that comes after the delay from finding the write
// still pending (or racing its commit).
func (c *Call) landLate() {
	c.mu.Lock()
	var due []*lateCommit
	for _, lc := range c.lates {
		lc.mu.Lock()
		if lc.due && !lc.nowClosed {
			lc.nowClosed = true
			close(lc.now)
			due = append(due, lc)
		}
		lc.mu.Unlock()
	}
	c.mu.Unlock()
	if len(due) == 0 {
		return
	}
	// Bounded: a late commit caught by a hold waits for the script.
	t := time.NewTimer(c.scaled(LateSuccessActWait))
	defer t.Stop()
	for _, lc := range due {
		select {
		case <-lc.done:
		case <-c.ctx.Done():
			return
		case <-t.C:
			return
		}
	}
}
