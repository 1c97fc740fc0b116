package mockbackend

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/callproof/callproof/trace"
	"github.com/stretchr/testify/require"
)

func withFaults(fs ...trace.Fault) func(*CallConfig) {
	return func(c *CallConfig) { c.Faults = fs }
}

func seqOf(t *testing.T, f *fixture, kind trace.Kind, ref string) int {
	t.Helper()
	return one(t, f.rec, kindOf(kind, ref)).Seq
}

func TestFaultLatency(t *testing.T) {
	f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultLatency, Delay: 30 * time.Millisecond}))
	start := time.Now()
	r := f.post("update_order", update("5590", "2026-12-03"))
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond, "a timer never fires early")
	require.Less(t, seqOf(t, f, trace.KindFaultApplied, "r1"), seqOf(t, f, trace.KindToolCommitted, "r1"))
	require.Equal(t, string(trace.FaultLatency), tev(one(t, f.rec, kindOf(trace.KindFaultApplied, "r1"))).Fault)
	require.Equal(t, []trace.FaultKind{trace.FaultLatency}, ledgerRow(t, f.call, "r1").Faults)
}

func TestFaultLatencyScales(t *testing.T) {
	// An hour at scale 1e-7 is 0.36 ms; unscaled the test would hang.
	f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultLatency, Delay: time.Hour}))
	f.call.SetTimeScale(1e-7)
	require.Equal(t, http.StatusOK, f.post("update_order", update("5590", "2026-12-03")).status)
}

func TestFaultLatencyClientLeaves(t *testing.T) {
	f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultLatency, Delay: time.Hour}))
	ctx, cancel := context.WithCancel(context.Background())
	ch := f.async(ctx, "update_order", update("5590", "2026-12-03"))
	waitFor(t, f.rec, kindOf(trace.KindFaultApplied, "r1"))
	cancel()
	require.Error(t, recv(t, ch).err)
	e := tev(waitFor(t, f.rec, kindOf(trace.KindToolCancelled, "r1")))
	require.Equal(t, "client gave up", e.Reason)
	f.call.Close() // waits for the handler to finish
	require.Empty(t, find(f.rec, kindOf(trace.KindToolCommitted, "")))
	require.Empty(t, find(f.rec, kindOf(trace.KindToolResponded, "")))
	require.Equal(t, 1, f.record("orders", "5590").Version)
}

func TestFaultTimeout(t *testing.T) {
	f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultTimeout, Times: 1}))
	ctx, cancel := context.WithCancel(context.Background())
	ch := f.async(ctx, "update_order", update("5590", "2026-12-03"))
	waitFor(t, f.rec, kindOf(trace.KindFaultApplied, "r1"))
	cancel() // the client gives up
	require.Error(t, recv(t, ch).err)
	e := tev(waitFor(t, f.rec, kindOf(trace.KindToolCancelled, "r1")))
	require.Equal(t, "client gave up", e.Reason)
	require.Equal(t, 1, f.record("orders", "5590").Version)

	// Times: 1 — the retry goes through.
	require.Equal(t, http.StatusOK, f.post("update_order", update("5590", "2026-12-03")).status)
	require.Equal(t, 2, f.record("orders", "5590").Version)
	f.call.Close() // the ledger is final once every request has finished
	require.NotNil(t, ledgerRow(t, f.call, "r1").Cancelled)
}

func TestFaultTimeoutEndsWhenCallCloses(t *testing.T) {
	f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultTimeout}))
	ch := f.async(context.Background(), "update_order", update("5590", "2026-12-03"))
	waitFor(t, f.rec, kindOf(trace.KindFaultApplied, "r1"))
	f.call.Close()
	r := recv(t, ch)
	require.Equal(t, http.StatusServiceUnavailable, r.status, r.body)
	require.Equal(t, "call closed", tev(one(t, f.rec, kindOf(trace.KindToolCancelled, "r1"))).Reason)
	require.Equal(t, 1, f.record("orders", "5590").Version)
}

func TestFaultStatus(t *testing.T) {
	f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultStatus, Status: 503, Times: 1,
		Match: &trace.ToolMatch{Tool: "update_order"}}))
	require.Equal(t, http.StatusOK, f.post("get_order", map[string]any{"order_number": "5590"}).status, "match limits the fault")
	r := f.post("update_order", update("5590", "2026-12-03"))
	require.Equal(t, http.StatusServiceUnavailable, r.status)
	require.Equal(t, "server_error", r.errType(t))
	fa := tev(one(t, f.rec, kindOf(trace.KindFaultApplied, "r2")))
	require.Equal(t, string(trace.FaultStatus), fa.Fault)
	require.Equal(t, 503, fa.Status)
	require.Empty(t, find(f.rec, kindOf(trace.KindToolCommitted, "")))
	require.Equal(t, http.StatusOK, f.post("update_order", update("5590", "2026-12-03")).status)
}

func TestFaultStatusDelayed(t *testing.T) {
	// A slow failure: the answer waits for the delay; a client that leaves
	// meanwhile ends the request as cancelled, and nothing commits.
	f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultStatus, Status: 500, Delay: time.Hour}))
	ctx, cancel := context.WithCancel(context.Background())
	ch := f.async(ctx, "update_order", update("5590", "2026-12-03"))
	waitFor(t, f.rec, kindOf(trace.KindFaultApplied, "r1"))
	require.Empty(t, find(f.rec, kindOf(trace.KindToolResponded, "r1")), "no answer before the delay")
	cancel()
	<-ch
	waitFor(t, f.rec, kindOf(trace.KindToolCancelled, "r1"))
	require.Empty(t, find(f.rec, kindOf(trace.KindToolCommitted, "")))
}

func TestFaultStatusAfterCommit(t *testing.T) {
	f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultStatusAfter, Status: 500}))
	r := f.post("update_order", update("5590", "2026-12-03"))
	require.Equal(t, http.StatusInternalServerError, r.status)
	require.Equal(t, "2026-12-03", f.record("orders", "5590").Fields["delivery_date"])
	require.Less(t, seqOf(t, f, trace.KindToolCommitted, "r1"), seqOf(t, f, trace.KindFaultApplied, "r1"))
	require.Equal(t, 500, tev(one(t, f.rec, kindOf(trace.KindToolResponded, "r1"))).Status)
}

func TestFaultEmpty(t *testing.T) {
	f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultEmpty}))
	r := f.post("update_order", update("5590", "2026-12-03"))
	require.Equal(t, http.StatusOK, r.status)
	require.Empty(t, r.body)
	require.Equal(t, "2026-12-03", f.record("orders", "5590").Fields["delivery_date"])
	res := tev(one(t, f.rec, kindOf(trace.KindToolResponded, "r1")))
	require.Empty(t, res.Body)
	require.Equal(t, 200, res.Status)
}

func TestFaultWrongRecord(t *testing.T) {
	f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultWrongRecord, Record: "5599"}))
	got := decodeRecord(t, f.post("update_order", update("5590", "2026-12-03")))
	require.Equal(t, "5599", got.Key)
	require.Equal(t, "2026-12-10", got.Fields["delivery_date"])
	require.Equal(t, "2026-12-03", f.record("orders", "5590").Fields["delivery_date"], "the real change landed")
	require.Equal(t, "2026-12-10", f.record("orders", "5599").Fields["delivery_date"])
}

func TestFaultLateSuccess(t *testing.T) {
	f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultLateSuccess, Delay: 10 * time.Millisecond}))
	r := f.post("update_order", update("5590", "2026-12-03"))
	require.Equal(t, http.StatusAccepted, r.status)
	require.JSONEq(t, `{"ok":true,"status":"pending","operation":"op-1"}`, r.body)
	com := waitFor(t, f.rec, kindOf(trace.KindToolCommitted, "r1"))
	require.Less(t, seqOf(t, f, trace.KindToolResponded, "r1"), com.Seq, "the 202 goes out before the commit")
	require.Equal(t, "2026-12-03", f.record("orders", "5590").Fields["delivery_date"])
	row := ledgerRow(t, f.call, "r1")
	require.Equal(t, "op-1", row.Operation)
	require.Equal(t, 202, row.Status)
	require.Greater(t, *row.Committed, *row.Responded)
}

// The late commit waits, past its delay, for the agent's first act after
// the 202, so an agent that claims the write on the 202 is always heard
// before it lands, however late its claim is read.
func TestFaultLateSuccessWaitsForTheAgentsAct(t *testing.T) {
	f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultLateSuccess, Delay: 10 * time.Millisecond}))
	require.Equal(t, http.StatusAccepted, f.post("update_order", update("5590", "2026-12-03")).status)
	time.Sleep(100 * time.Millisecond) // ten times the delay: nothing lands without an act
	require.Empty(t, find(f.rec, kindOf(trace.KindToolCommitted, "r1")), "committed before the agent acted")
	// Speech already under way before the 202 is not an act; a new one is.
	f.rec.Record(trace.SourceAgent, trace.KindAgentSpeechText, &trace.AgentSpeech{Utterance: "a1", Text: "Okay,"})
	time.Sleep(20 * time.Millisecond)
	require.Empty(t, find(f.rec, kindOf(trace.KindToolCommitted, "r1")))
	claim := f.rec.Record(trace.SourceAgent, trace.KindAgentSpeechStart, &trace.AgentSpeech{Utterance: "a2"})
	com := waitFor(t, f.rec, kindOf(trace.KindToolCommitted, "r1"))
	require.Greater(t, com.Seq, claim.Seq)
	require.Equal(t, "2026-12-03", f.record("orders", "5590").Fields["delivery_date"])
}

// A request that comes once the delay has passed finds the write landed:
// the commit is recorded before the request, never raced by it.
func TestFaultLateSuccessLandsBeforeALaterRequest(t *testing.T) {
	f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultLateSuccess, Match: &trace.ToolMatch{Tool: "update_order"}, Delay: 10 * time.Millisecond}))
	require.Equal(t, http.StatusAccepted, f.post("update_order", update("5590", "2026-12-03")).status)
	time.Sleep(50 * time.Millisecond)
	got := decodeRecord(t, f.post("get_order", map[string]any{"order_number": "5590"}))
	require.Equal(t, "2026-12-03", got.Fields["delivery_date"], "the read found the write pending")
	require.Less(t, seqOf(t, f, trace.KindToolCommitted, "r1"), seqOf(t, f, trace.KindToolReceived, "r2"))

	// Before the delay a request is the agent's act, and the write still
	// lands at its delay.
	g := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultLateSuccess, Match: &trace.ToolMatch{Tool: "update_order"}, Delay: time.Hour}))
	require.Equal(t, http.StatusAccepted, g.post("update_order", update("5590", "2026-12-03")).status)
	got = decodeRecord(t, g.post("get_order", map[string]any{"order_number": "5590"}))
	require.NotEqual(t, "2026-12-03", got.Fields["delivery_date"])
}

// An agent that never acts after the 202 still sees the write land,
// LateSuccessActWait (scaled) after the delay.
func TestFaultLateSuccessSilentAgent(t *testing.T) {
	f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultLateSuccess, Delay: 10 * time.Millisecond}))
	f.call.SetTimeScale(0.05)
	require.Equal(t, http.StatusAccepted, f.post("update_order", update("5590", "2026-12-03")).status)
	resp := one(t, f.rec, kindOf(trace.KindToolResponded, "r1"))
	com := waitFor(t, f.rec, kindOf(trace.KindToolCommitted, "r1"))
	require.GreaterOrEqual(t, com.At-resp.At, time.Duration(float64(LateSuccessActWait)*0.05))
}

// A call that closes once the delay has passed (the agent hung up on
// the 202, say) still gets the write: it lands before the close.
func TestFaultLateSuccessLandsAtClose(t *testing.T) {
	f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultLateSuccess, Delay: 10 * time.Millisecond}))
	require.Equal(t, http.StatusAccepted, f.post("update_order", update("5590", "2026-12-03")).status)
	time.Sleep(50 * time.Millisecond)
	f.call.Close()
	one(t, f.rec, kindOf(trace.KindToolCommitted, "r1"))
	require.Empty(t, find(f.rec, kindOf(trace.KindToolCancelled, "r1")))
	require.Equal(t, "2026-12-03", f.record("orders", "5590").Fields["delivery_date"])
}

func TestFaultLateSuccessCallClosesFirst(t *testing.T) {
	f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultLateSuccess, Delay: time.Hour}))
	require.Equal(t, http.StatusAccepted, f.post("update_order", update("5590", "2026-12-03")).status)
	f.call.Close()
	e := tev(one(t, f.rec, kindOf(trace.KindToolCancelled, "r1")))
	require.Equal(t, "call closed before the late commit", e.Reason)
	require.Equal(t, 1, f.record("orders", "5590").Version)
}

func TestFaultDuplicate(t *testing.T) {
	t.Run("unkeyed commits twice", func(t *testing.T) {
		f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultDuplicate, Times: 1}))
		got := decodeRecord(t, f.post("ship_order", map[string]any{"order_number": "5590"}))
		require.Equal(t, "shipments-1", got.Key, "the client hears the first delivery")
		require.Len(t, f.call.Snapshot(), 4, "two shipments")
		recv := tev(one(t, f.rec, kindOf(trace.KindToolReceived, "r2")))
		require.Equal(t, reasonDuplicate, recv.Reason)
		require.Equal(t, "shipments-2", tev(one(t, f.rec, kindOf(trace.KindToolCommitted, "r2"))).Key)
		require.True(t, tev(one(t, f.rec, kindOf(trace.KindToolResponded, "r2"))).Dropped)
		require.False(t, tev(one(t, f.rec, kindOf(trace.KindToolResponded, "r1"))).Dropped)
		require.Equal(t, "r1", ledgerRow(t, f.call, "r2").DuplicateOf)
		// The duplicate lands before the client's answer is recorded.
		require.Less(t, seqOf(t, f, trace.KindToolCommitted, "r2"), seqOf(t, f, trace.KindToolResponded, "r1"))
	})
	t.Run("keyed replays", func(t *testing.T) {
		f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultDuplicate}))
		require.Equal(t, http.StatusOK, f.post("ship_order", map[string]any{"order_number": "5590"}, withKey("k")).status)
		require.Len(t, f.call.Snapshot(), 3, "one shipment")
		require.Equal(t, []trace.Kind{trace.KindToolReceived, trace.KindToolReplayed, trace.KindToolResponded}, kinds(f.rec, "r2"))
		require.Equal(t, "r1", tev(one(t, f.rec, kindOf(trace.KindToolReplayed, "r2"))).ReplayOf)
	})
}

func TestFaultDropResponse(t *testing.T) {
	f := newFixture(t, withFaults(trace.Fault{Kind: trace.FaultDropResp}))
	r := f.post("update_order", update("5590", "2026-12-03"))
	require.Error(t, r.err, "no answer: %+v", r)
	require.Equal(t, "2026-12-03", f.record("orders", "5590").Fields["delivery_date"], "committed before the drop")
	res := tev(one(t, f.rec, kindOf(trace.KindToolResponded, "r1")))
	require.True(t, res.Dropped)
	require.Equal(t, 200, res.Status)
	var body recordAnswer
	require.NoError(t, json.Unmarshal([]byte(res.Body), &body), "the answer that would have gone out")
	require.Equal(t, 2, body.Record.Version)
	require.True(t, ledgerRow(t, f.call, "r1").Dropped)
}

func TestFaultsCompose(t *testing.T) {
	f := newFixture(t, withFaults(
		trace.Fault{Kind: trace.FaultLatency, Delay: time.Millisecond},
		trace.Fault{Kind: trace.FaultStatusAfter, Status: 502},
	))
	r := f.post("update_order", update("5590", "2026-12-03"))
	require.Equal(t, http.StatusBadGateway, r.status)
	require.Equal(t, []trace.FaultKind{trace.FaultLatency, trace.FaultStatusAfter}, ledgerRow(t, f.call, "r1").Faults)
	require.Equal(t, 2, f.record("orders", "5590").Version)
}

func TestInjectAddsFaultNow(t *testing.T) {
	f := newFixture(t, nil)
	require.Equal(t, http.StatusOK, f.post("get_order", map[string]any{"order_number": "5590"}).status)
	require.NoError(t, f.call.Inject(trace.Fault{Kind: trace.FaultStatus, Status: 500}))
	require.Error(t, f.call.Inject(trace.Fault{Kind: "meteor"}))
	require.Equal(t, http.StatusInternalServerError, f.post("get_order", map[string]any{"order_number": "5590"}).status)
}

// pattern runs n requests and says which ones the fault hit.
func pattern(t *testing.T, s *Server, id string, seed int64, n int) []bool {
	f := openCall(t, s, id, func(c *CallConfig) {
		c.Seed = seed
		c.Budget = Budget{PerSecond: -1, PerCall: -1}
		c.Faults = []trace.Fault{{Kind: trace.FaultStatus, Status: 500, Probability: 0.5}}
	})
	out := make([]bool, n)
	for i := range out {
		out[i] = f.post("get_order", map[string]any{"order_number": "5590"}).status == 500
	}
	return out
}

func TestFaultProbabilityReproducible(t *testing.T) {
	s := testServer(t, Options{})
	a := pattern(t, s, "a", 42, 40)
	b := pattern(t, s, "b", 42, 40)
	require.Equal(t, a, b, "same seed, same draws")
	require.Contains(t, a, true)
	require.Contains(t, a, false)
	c := pattern(t, s, "c", 7, 40)
	require.NotEqual(t, a, c, "the seed drives the draws")
}
