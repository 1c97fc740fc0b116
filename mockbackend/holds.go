package mockbackend

import (
	"errors"
	"fmt"
	"time"

	"github.com/callproof/callproof/trace"
)

// DefaultHoldMax bounds a hold armed with max <= 0 (before scaling).
const DefaultHoldMax = 30 * time.Second

// ErrNothingHeld is returned by Release and Fail when the named hold is
// armed but has caught no request yet; the hold is disarmed.
var ErrNothingHeld = errors.New("mockbackend: hold has caught no request")

// hold parks the next matching request before its commit until the script
// decides. A hold catches one request; arm it again to catch another.
type hold struct {
	name   string
	match  *trace.ToolMatch
	max    time.Duration
	caught bool          // a request waits on it
	passed int           // matching requests let through (ToolMatch.Skip)
	done   bool          // decided, disarmed or replaced
	decide chan decision // buffered: the decider never blocks
}

type decision struct {
	fail   bool
	status int
}

// Hold arms a hold: the next request matching m is held after tool.received
// until Release, Fail, its client leaving, the call closing, or max (scaled;
// DefaultHoldMax when max <= 0), whichever comes first. Re-arming a name
// replaces its hold unless that hold is holding a request.
func (c *Call) Hold(name string, m *trace.ToolMatch, max time.Duration) error {
	if max <= 0 {
		max = DefaultHoldMax
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	if h := c.lastHold(name); h != nil && h.caught && !h.done {
		return fmt.Errorf("mockbackend: hold %q is holding a request", name)
	}
	// Keep one hold per name (the newest) so Release after the end of a
	// hold can still tell it apart from a name never armed.
	kept := c.holds[:0]
	for _, h := range c.holds {
		if h.name == name {
			h.done = true
			continue
		}
		kept = append(kept, h)
	}
	c.holds = append(kept, &hold{name: name, match: m, max: max, decide: make(chan decision, 1)})
	return nil
}

// Release lets the request held by name proceed: it commits unless its
// client has gone. Releasing a hold that already ended is a no-op.
func (c *Call) Release(name string) error { return c.decide(name, decision{}) }

// Fail answers the request held by name with status, without committing.
func (c *Call) Fail(name string, status int) error {
	if status < 100 || status > 599 {
		return fmt.Errorf("mockbackend: fail %q: bad status %d", name, status)
	}
	return c.decide(name, decision{fail: true, status: status})
}

func (c *Call) decide(name string, d decision) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.lastHold(name)
	switch {
	case h == nil:
		return fmt.Errorf("mockbackend: no hold %q", name)
	case h.done:
		return nil
	case !h.caught:
		h.done = true
		return fmt.Errorf("hold %q: %w", name, ErrNothingHeld)
	}
	h.done = true
	h.decide <- d
	return nil
}

// lastHold is the newest hold of that name; c.mu must be held.
func (c *Call) lastHold(name string) *hold {
	for i := len(c.holds) - 1; i >= 0; i-- {
		if c.holds[i].name == name {
			return c.holds[i]
		}
	}
	return nil
}

// catch gives x to the first armed hold (in arming order) that matches.
func (c *Call) catch(x *exchange) *hold {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range c.holds {
		if !h.done && !h.caught && h.match.Matches(x.name, x.args) {
			if h.match != nil && h.passed < h.match.Skip {
				h.passed++ // let it through: the hold waits for a later one
				continue
			}
			h.caught = true
			return h
		}
	}
	return nil
}

// await parks x on h. It reports whether x may go on to its commit;
// otherwise rep is its answer.
func (c *Call) await(x *exchange, h *hold) (rep reply, proceed bool) {
	at := x.emit(trace.KindToolHeld, trace.ToolEvent{Hold: h.name})
	x.amend(func(r *LedgerRow) { r.Held, r.Hold = ptr(at), h.name })

	t := time.NewTimer(c.scaled(h.max))
	defer t.Stop()
	var d decision
	reason := "released"
	select {
	case d = <-h.decide:
	case due := <-t.C:
		c.fired(due)
		reason = "auto-release after max"
	case <-x.ctx.Done():
		c.endHold(h)
		return x.abandon(), false
	case <-c.ctx.Done():
		c.endHold(h)
		return x.abandon(), false
	}
	c.endHold(h)
	if d.fail {
		at := x.emit(trace.KindToolCancelled, trace.ToolEvent{Hold: h.name, Reason: "failed by hold", Status: d.status})
		x.amend(func(r *LedgerRow) { r.Cancelled = ptr(at) })
		rep := errorReply(d.status, errorType(d.status), "the request failed", "")
		rep.cancelled = true
		return rep, false
	}
	// A client whose close is already in its socket has withdrawn the
	// request before the release: net/http may not have said so yet.
	if x.clientGone() {
		return x.abandon(), false
	}
	at = x.emit(trace.KindToolReleased, trace.ToolEvent{Hold: h.name, Reason: reason})
	x.amend(func(r *LedgerRow) { r.Released = ptr(at) })
	// A client that left while held cancels, even if released since.
	if x.ctx.Err() != nil || c.ctx.Err() != nil {
		return x.abandon(), false
	}
	return reply{}, true
}

func (c *Call) endHold(h *hold) {
	c.mu.Lock()
	h.done = true
	c.mu.Unlock()
}

// fired notes how late a timer of the call's ran: from due (the time its
// channel was stamped with, when the runtime fired it) to now, when its
// request's goroutine got round to it.
func (c *Call) fired(due time.Time) {
	late := max(time.Since(due), 0)
	c.mu.Lock()
	c.late.Add(late)
	c.mu.Unlock()
}

// Lateness is how late the call's own timers fired so far: holds released
// after their max, injected latencies. A measure of the harness's machine.
func (c *Call) Lateness() trace.LatenessStat {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.late
}
