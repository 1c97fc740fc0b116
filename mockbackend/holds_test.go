package mockbackend

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/callproof/callproof/trace"
	"github.com/stretchr/testify/require"
)

var matchUpdate = &trace.ToolMatch{Tool: "update_order", Args: map[string]string{"order_number": "5590"}}

func TestHoldRelease(t *testing.T) {
	f := newFixture(t, nil)
	require.NoError(t, f.call.Hold("h", matchUpdate, time.Hour))
	ch := f.async(context.Background(), "update_order", update("5590", "2026-12-03"))
	held := waitFor(t, f.rec, kindOf(trace.KindToolHeld, "r1"))
	require.Equal(t, "h", tev(held).Hold)

	// Held before commit: other requests pass, state is untouched.
	require.Equal(t, http.StatusOK, f.post("update_order", update("5599", "2026-12-12")).status, "no match, not held")
	require.Equal(t, 1, f.record("orders", "5590").Version)

	require.NoError(t, f.call.Release("h"))
	r := recv(t, ch)
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Equal(t, []trace.Kind{trace.KindToolReceived, trace.KindToolHeld, trace.KindToolReleased,
		trace.KindToolCommitted, trace.KindToolResponded}, kinds(f.rec, "r1"))
	require.Equal(t, 2, f.record("orders", "5590").Version)
	row := ledgerRow(t, f.call, "r1")
	require.Equal(t, "h", row.Hold)
	require.Equal(t, held.At, *row.Held)
	require.NotNil(t, row.Released)

	require.NoError(t, f.call.Release("h"), "releasing a finished hold is a no-op")
	// A hold catches one request.
	require.Equal(t, http.StatusOK, f.post("update_order", update("5590", "2026-12-04")).status)
}

func TestHoldFail(t *testing.T) {
	f := newFixture(t, nil)
	require.NoError(t, f.call.Hold("h", matchUpdate, time.Hour))
	ch := f.async(context.Background(), "update_order", update("5590", "2026-12-03"))
	waitFor(t, f.rec, kindOf(trace.KindToolHeld, "r1"))
	require.NoError(t, f.call.Fail("h", http.StatusBadGateway))
	r := recv(t, ch)
	require.Equal(t, http.StatusBadGateway, r.status)
	require.Equal(t, []trace.Kind{trace.KindToolReceived, trace.KindToolHeld, trace.KindToolCancelled,
		trace.KindToolResponded}, kinds(f.rec, "r1"))
	require.Equal(t, http.StatusBadGateway, tev(one(t, f.rec, kindOf(trace.KindToolCancelled, "r1"))).Status)
	require.Equal(t, 1, f.record("orders", "5590").Version)
}

func TestHoldClientLeaves(t *testing.T) {
	f := newFixture(t, nil)
	require.NoError(t, f.call.Hold("h", matchUpdate, time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	ch := f.async(ctx, "update_order", update("5590", "2026-12-03"))
	waitFor(t, f.rec, kindOf(trace.KindToolHeld, "r1"))
	cancel()
	require.Error(t, recv(t, ch).err)
	e := tev(waitFor(t, f.rec, kindOf(trace.KindToolCancelled, "r1")))
	require.Equal(t, "client gave up", e.Reason)
	require.NoError(t, f.call.Release("h"), "released later: still nothing commits")
	f.call.Close()
	require.Empty(t, find(f.rec, kindOf(trace.KindToolCommitted, "")))
	require.Equal(t, 1, f.record("orders", "5590").Version)
}

func TestHoldAutoRelease(t *testing.T) {
	f := newFixture(t, func(c *CallConfig) { c.TimeScale = 1e-6 })
	// An hour at scale 1e-6 is 3.6 ms: without the scaled bound it would hang.
	require.NoError(t, f.call.Hold("h", matchUpdate, time.Hour))
	r := f.post("update_order", update("5590", "2026-12-03"))
	require.Equal(t, http.StatusOK, r.status, r.body)
	rel := tev(one(t, f.rec, kindOf(trace.KindToolReleased, "r1")))
	require.Equal(t, "auto-release after max", rel.Reason)
	require.Equal(t, 2, f.record("orders", "5590").Version)
}

func TestHoldBeforeCatch(t *testing.T) {
	f := newFixture(t, nil)
	require.Error(t, f.call.Release("nope"))
	require.NoError(t, f.call.Hold("h", matchUpdate, time.Hour))
	err := f.call.Release("h")
	require.True(t, errors.Is(err, ErrNothingHeld), "%v", err)
	// Disarmed: the request goes straight through.
	require.Equal(t, http.StatusOK, f.post("update_order", update("5590", "2026-12-03")).status)
	require.Empty(t, find(f.rec, kindOf(trace.KindToolHeld, "")))
}

func TestHoldRearmWhileHolding(t *testing.T) {
	f := newFixture(t, nil)
	require.NoError(t, f.call.Hold("h", matchUpdate, time.Hour))
	ch := f.async(context.Background(), "update_order", update("5590", "2026-12-03"))
	waitFor(t, f.rec, kindOf(trace.KindToolHeld, "r1"))
	require.Error(t, f.call.Hold("h", nil, 0))
	require.NoError(t, f.call.Hold("h2", nil, 0), "another name is fine")
	require.NoError(t, f.call.Release("h"))
	require.Equal(t, http.StatusOK, recv(t, ch).status)
}

func TestCloseFailsHeldAndLaterRequests(t *testing.T) {
	f := newFixture(t, nil)
	require.NoError(t, f.call.Hold("h", nil, time.Hour))
	ch := f.async(context.Background(), "update_order", update("5590", "2026-12-03"))
	waitFor(t, f.rec, kindOf(trace.KindToolHeld, "r1"))
	f.call.Close()
	r := recv(t, ch)
	require.Equal(t, http.StatusServiceUnavailable, r.status, r.body)
	require.Equal(t, "call closed", tev(one(t, f.rec, kindOf(trace.KindToolCancelled, "r1"))).Reason)
	require.Equal(t, 1, f.record("orders", "5590").Version)

	require.Equal(t, http.StatusGone, f.post("update_order", update("5590", "2026-12-03")).status)
	require.ErrorIs(t, f.call.Hold("x", nil, 0), ErrClosed)
	require.ErrorIs(t, f.call.Inject(trace.Fault{Kind: trace.FaultEmpty}), ErrClosed)
}

func TestServerCloseClosesCalls(t *testing.T) {
	s := New(Options{})
	require.NoError(t, s.Start())
	f := openCall(t, s, "c", nil)
	require.NoError(t, f.call.Hold("h", nil, time.Hour))
	ch := f.async(context.Background(), "get_order", map[string]any{"order_number": "5590"})
	waitFor(t, f.rec, kindOf(trace.KindToolHeld, "r1"))
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "safe twice")
	r := recv(t, ch)
	require.Equal(t, http.StatusServiceUnavailable, r.status, r.body)
	_, err := s.Open(CallConfig{ID: "late"})
	require.Error(t, err)
}

func TestHoldSkipCatchesTheRetry(t *testing.T) {
	// Skip 1: the first matching request goes through untouched, the
	// second (the agent's retry) is held — an ordering, not a race.
	f := newFixture(t, nil)
	m := &trace.ToolMatch{Tool: "update_order", Skip: 1}
	require.NoError(t, f.call.Hold("h", m, time.Hour))
	require.Equal(t, http.StatusOK, f.post("update_order", update("5590", "2026-12-03")).status, "first try passes")
	require.Empty(t, find(f.rec, kindOf(trace.KindToolHeld, "r1")))
	ch := f.async(context.Background(), "update_order", update("5590", "2026-12-05"))
	waitFor(t, f.rec, kindOf(trace.KindToolHeld, "r2"))
	require.Equal(t, "2026-12-03", f.record("orders", "5590").Fields["delivery_date"], "the retry waits before commit")
	require.NoError(t, f.call.Release("h"))
	require.Equal(t, http.StatusOK, recv(t, ch).status)
	require.Equal(t, "2026-12-05", f.record("orders", "5590").Fields["delivery_date"])
}
