package mockbackend

import (
	"fmt"
	"time"

	"github.com/callproof/callproof/trace"
)

// Tool request budget of a call.
const (
	// DefaultRequestsPerSecond is the sustained tool request rate a call
	// allows, with bursts of as many (one second's allowance), measured on
	// the call's clock in real time. The reference agents make a handful
	// of requests per call.
	DefaultRequestsPerSecond = 20
	// DefaultRequestsPerCall is how many tool requests a call allows in all.
	DefaultRequestsPerCall = 500
	// ReasonToolFlood is the agent_error reason for a call whose agent broke
	// its tool request budget.
	ReasonToolFlood = "tool_flood"
)

// Budget bounds one call's tool requests. Only requests that authenticate
// for the call count. A zero field takes its default; a negative one means
// no limit.
//
// The first request over the budget is refused with 429 and records one
// harness.note (source backend) starting "tool budget exceeded"; from then
// on every request of the call is refused with 429 without being read,
// recorded or added to the ledger (Call.Refused counts them), Exceeded is
// closed and Violation says why. The backend cannot end the call: the
// harness ends it as agent_error with ReasonToolFlood.
type Budget struct {
	PerSecond int // sustained rate, bursts of as many; DefaultRequestsPerSecond
	PerCall   int // DefaultRequestsPerCall
}

// meter is the call's budget state; Call.mu guards it.
type meter struct {
	rate    float64 // per second; 0: unlimited
	perCall int     // 0: unlimited
	tokens  float64
	last    time.Duration
	primed  bool
	used    int

	violation string
	refused   int64
	exceeded  chan struct{}
}

func newMeter(b Budget) meter {
	m := meter{exceeded: make(chan struct{})}
	switch {
	case b.PerSecond == 0:
		m.rate = DefaultRequestsPerSecond
	case b.PerSecond > 0:
		m.rate = float64(b.PerSecond)
	}
	switch {
	case b.PerCall == 0:
		m.perCall = DefaultRequestsPerCall
	case b.PerCall > 0:
		m.perCall = b.PerCall
	}
	m.tokens = m.rate
	return m
}

// take admits one request at now (call clock), or says why not. first is
// set for the request that broke the budget.
func (m *meter) take(now time.Duration) (ok bool, first bool) {
	if m.violation != "" {
		m.refused++
		return false, false
	}
	if m.rate > 0 {
		if m.primed {
			m.tokens = min(m.rate, m.tokens+(now-m.last).Seconds()*m.rate)
		}
		m.primed, m.last = true, now
		if m.tokens < 1 {
			m.violation = fmt.Sprintf("%s: more than %g tool requests per second", ReasonToolFlood, m.rate)
		}
	}
	if m.violation == "" && m.perCall > 0 && m.used >= m.perCall {
		m.violation = fmt.Sprintf("%s: more than %d tool requests in one call", ReasonToolFlood, m.perCall)
	}
	if m.violation != "" {
		m.refused++
		close(m.exceeded)
		return false, true
	}
	m.used++
	if m.rate > 0 {
		m.tokens--
	}
	return true, false
}

// spend takes one request of tool from the budget; over it, it returns
// the violation and false. It reads nothing from the request, so refusing
// stays cheap.
func (c *Call) spend(tool string) (violation string, ok bool) {
	now := c.rec.Since()
	c.mu.Lock()
	ok, first := c.budget.take(now)
	violation = c.budget.violation
	c.mu.Unlock()
	if ok {
		return "", true
	}
	if first {
		// Recorded outside c.mu: subscribers may call back into the call.
		c.rec.Record(trace.SourceBackend, trace.KindNote, &trace.Note{Text: fmt.Sprintf(
			"tool budget exceeded (a request to %q): %s; later requests are refused with 429 and only counted",
			clip(tool, maxLoggedPath), violation)})
		if c.onExceed != nil {
			c.onExceed(violation)
		}
	}
	return violation, false
}

// overBudgetBody is the 429 answer to a request over the budget.
func overBudgetBody(violation string) []byte {
	return errorBody("rate_limited", "tool request budget exceeded: "+violation, "")
}

// Exceeded is closed when the agent breaks the call's tool request budget;
// the harness should then end the call as agent_error, ReasonToolFlood.
func (c *Call) Exceeded() <-chan struct{} { return c.budget.exceeded }

// Violation says how the budget was broken ("" while it holds), e.g.
// "tool_flood: more than 20 tool requests per second".
func (c *Call) Violation() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.budget.violation
}

// Refused counts the requests answered 429 over the budget, the first
// included. None of them is in the ledger.
func (c *Call) Refused() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.budget.refused
}
