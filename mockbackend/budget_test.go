package mockbackend

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callproof/callproof/trace"
	"github.com/stretchr/testify/require"
)

// manualClock is a clock a test moves by hand.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func notes(rec *trace.Recorder) []string {
	var out []string
	for _, e := range rec.Events() {
		if n, ok := e.Data.(*trace.Note); ok && e.Kind == trace.KindNote {
			out = append(out, n.Text)
		}
	}
	return out
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestBudgetPerCall(t *testing.T) {
	var told []string // OnExceeded, once, with the violation
	var toldMu sync.Mutex
	f := newFixture(t, func(c *CallConfig) {
		c.Budget = Budget{PerSecond: -1, PerCall: 3}
		c.OnExceeded = func(v string) { toldMu.Lock(); told = append(told, v); toldMu.Unlock() }
	})
	defer func() {
		toldMu.Lock()
		defer toldMu.Unlock()
		require.Equal(t, []string{"tool_flood: more than 3 tool requests in one call"}, told)
	}()
	for range 3 {
		require.Equal(t, http.StatusOK, f.post("get_order", map[string]any{"order_number": "5590"}).status)
	}
	require.False(t, closed(f.call.Exceeded()))
	require.Empty(t, f.call.Violation())

	r := f.post("update_order", update("5590", "2026-12-03"))
	require.Equal(t, http.StatusTooManyRequests, r.status, r.body)
	require.Equal(t, "rate_limited", r.errType(t))
	require.True(t, closed(f.call.Exceeded()))
	require.Equal(t, "tool_flood: more than 3 tool requests in one call", f.call.Violation())
	require.True(t, strings.HasPrefix(f.call.Violation(), ReasonToolFlood))

	events := len(f.rec.Events())
	// The flood goes on: every request is refused, none is kept.
	for range 300 {
		require.Equal(t, http.StatusTooManyRequests, f.post("get_order", map[string]any{"order_number": "5590"}).status)
	}
	require.Len(t, f.call.Ledger(), 3)
	require.Len(t, f.rec.Events(), events, "refused requests record nothing")
	require.Equal(t, int64(301), f.call.Refused())
	require.Equal(t, 1, f.record("orders", "5590").Version, "the write over the budget never ran")

	ns := notes(f.rec)
	require.Len(t, ns, 1)
	require.Contains(t, ns[0], "tool budget exceeded")
	require.Contains(t, ns[0], "update_order")
	f.call.Close()
	ns = notes(f.rec)
	require.Len(t, ns, 2)
	require.Contains(t, ns[1], "301 tool request(s) refused")
}

func TestBudgetPerSecond(t *testing.T) {
	clock := &manualClock{now: time.Unix(1000, 0)}
	f := newFixture(t, func(c *CallConfig) {
		c.Recorder = trace.NewRecorder(c.ID, clock)
		c.Budget = Budget{PerSecond: 5, PerCall: -1}
	})
	get := func() int { return f.post("get_order", map[string]any{"order_number": "5590"}).status }
	for i := range 5 {
		require.Equal(t, http.StatusOK, get(), "burst request %d", i)
	}
	clock.advance(400 * time.Millisecond) // two more allowed
	require.Equal(t, http.StatusOK, get())
	require.Equal(t, http.StatusOK, get())
	require.False(t, closed(f.call.Exceeded()))
	require.Equal(t, http.StatusTooManyRequests, get())
	require.True(t, closed(f.call.Exceeded()))
	require.Equal(t, "tool_flood: more than 5 tool requests per second", f.call.Violation())
	clock.advance(time.Hour)
	require.Equal(t, http.StatusTooManyRequests, get(), "once broken, the budget stays broken")
	require.Len(t, f.call.Ledger(), 7)
}

func TestBudgetDefaults(t *testing.T) {
	m := newMeter(Budget{})
	require.Equal(t, float64(DefaultRequestsPerSecond), m.rate)
	require.Equal(t, DefaultRequestsPerCall, m.perCall)
	m = newMeter(Budget{PerSecond: -1, PerCall: -1})
	for i := range 10 * DefaultRequestsPerCall {
		ok, _ := m.take(0)
		require.True(t, ok, "request %d", i)
	}
	// The default rate takes a burst of DefaultRequestsPerSecond at once.
	m = newMeter(Budget{})
	for range DefaultRequestsPerSecond {
		ok, _ := m.take(0)
		require.True(t, ok)
	}
	ok, first := m.take(0)
	require.False(t, ok)
	require.True(t, first)
	ok, first = m.take(time.Hour)
	require.False(t, ok)
	require.False(t, first)
}

func TestRefusalsDoNotCountAgainstTheBudget(t *testing.T) {
	s := testServer(t, Options{})
	f := openCall(t, s, "c1", func(c *CallConfig) { c.Budget = Budget{PerSecond: -1, PerCall: 2} })
	for range 10 {
		require.Equal(t, http.StatusForbidden, f.post("get_order", map[string]any{"order_number": "5590"}, withToken("nope")).status)
	}
	require.Equal(t, http.StatusOK, f.post("get_order", map[string]any{"order_number": "5590"}).status)
	require.Empty(t, f.call.Violation(), "another party's refused requests never spend this call's budget")
}
