package scorer

import (
	"time"

	"github.com/callproof/callproof/trace"
)

// Caller and agent phrasing from docs/ARCHITECTURE.md.
const (
	reqDate5590 = "Hi, I'd like to change the delivery date on order 5590 to December 3."
	reqQty5590  = "Hi, please change the quantity on order 5590 to 2."
	reqShip5590 = "Hi, please ship order 5590 today."
	negateText  = "No, wait, don't do that."
	stopText    = "Wait, stop, don't change anything."
	nothing5590 = "Okay, I won't make any change. Nothing was changed on order 5590."
)

func domain() []trace.Record {
	return []trace.Record{
		order("5590", "2026-12-01", "3"),
		order("5599", "2026-12-09", "7"),
		order("5509", "2026-11-20", "1"),
	}
}

var (
	date5590 = intent(1, "update_order", true, "order_number", "5590", "delivery_date", "2026-12-03")
	qty5590  = intent(1, "update_order", true, "order_number", "5590", "quantity", "2")
	ship5590 = intent(1, "ship_order", true, "order_number", "5590")
)

// expect is a fixture's full verdict: six axes as a string of p/f/u in
// Axes() order, the outcome, the primary bucket and the inferred challenge.
type expect struct {
	axes      string
	outcome   trace.Outcome
	primary   Bucket
	secondary []Bucket
	challenge ChallengeKind
}

type fixture struct {
	dir, name string
	build     func() *trace.History
	want      expect
}

// fixtures are the corpus. testdata/histories/README.md says what each one
// encodes; TestCorpusInSync keeps the committed JSONL equal to these.
var fixtures = []fixture{
	// Seed 001's successful trace: 4821 (state version 4) corrected to 4281
	// (version 5) before any tool call; call built from version 5, verified
	// by a read, confirmed.
	{"ok", "seed_early_correction", func() *trace.History {
		recs := []trace.Record{order("4821", "2026-12-01", "3"), order("4281", "2026-12-01", "5")}
		v4 := intent(4, "update_order", true, "order_number", "4821", "delivery_date", "2026-12-03")
		v5 := intent(5, "update_order", true, "order_number", "4281", "delivery_date", "2026-12-03")
		b := newCall("corr-seed-success", "correction", nil, recs,
			say("s1", trace.ActSay, "Hi, I'd like to change the delivery date on order 4821 to December 3.", v4),
			say("s2", trace.ActCorrect, "Sorry, I meant order 4281.", v5))
		b.caller("s1").state(4, "update_order", "order_number", "4821", "delivery_date", "2026-12-03").
			fired("s2").caller("s2").state(5, "update_order", "order_number", "4281", "delivery_date", "2026-12-03").
			speak("a1", "Okay, updating order 4281: delivery date December 3.").
			toolIntent("update_order", "order_number", "4281", "delivery_date", "2026-12-03").
			recv("r1", "k-1", 5, "update_order", "order_number", "4281", "delivery_date", "2026-12-03").commit("r1").ok("r1").
			toolIntent("get_order", "order_number", "4281").call("r2", "", "get_order", "order_number", "4281").
			speak("a2", "Done. Order 4281 now has delivery date December 3.")
		return b.done()
	}, expect{"pppppp", trace.OutcomeScored, "", nil, ChallengeCorrection}},

	{"ok", "plain_quantity", func() *trace.History {
		b := newCall("plain-qty", "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			speak("a1", "Okay, updating order 5590: quantity 2.").
			toolIntent("update_order", "order_number", "5590", "quantity", "2").
			call("r1", "k-1", "update_order", "order_number", "5590", "quantity", "2").
			speak("a2", "Done. Order 5590 now has quantity 2.")
		return b.done()
	}, expect{"pppppp", trace.OutcomeScored, "", nil, ChallengePlain}},

	{"ok", "negation_ship", func() *trace.History {
		b := newCall("neg-ship", "correction", nil, domain(),
			say("s1", trace.ActSay, reqShip5590, ship5590),
			say("s2", trace.ActNegate, negateText, intent(2, "ship_order", false, "order_number", "5590")))
		b.caller("s1").state(1, "ship_order", "order_number", "5590").
			speak("a1", "Okay, shipping order 5590.").
			caller("s2").state(2, "", "order_number", "5590").
			speak("a2", nothing5590)
		return b.done()
	}, expect{"pppppp", trace.OutcomeScored, "", nil, ChallengeNegation}},

	// The passing twin of seed call 2: the held call is cancelled.
	{"ok", "interrupt_stop_cancelled", func() *trace.History {
		b := newCall("int-stop", "interruption", nil, domain(),
			say("s1", trace.ActSay, reqDate5590, date5590),
			trace.Step{ID: "h1", Do: trace.StepHold, Hold: "h1", Match: &trace.ToolMatch{Tool: "update_order"}},
			trace.Step{ID: "s2", Do: trace.StepSay, Act: trace.ActInterrupt, Text: stopText, Invalidates: true,
				Intent: intent(2, "update_order", false), On: trace.Trigger{Event: trace.KindToolHeld}})
		b.caller("s1").state(1, "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			speakStart("a1", "Okay, updating order 5590: delivery date December 3. This will").
			toolIntent("update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			recv("r1", "k-1", 1, "update_order", "order_number", "5590", "delivery_date", "2026-12-03").held("r1", "h1").
			fired("s2").callerStart("s2").clear("a1", "Okay, updating order 5590: delivery date December 3.").
			callerFinal("s2").state(2, "").cancelled("r1", "client cancelled").
			speak("a2", nothing5590)
		return b.done()
	}, expect{"pppppp", trace.OutcomeScored, "", nil, ChallengeNegation}},

	{"ok", "interrupt_new_value", func() *trace.History {
		v2 := intent(2, "update_order", true, "order_number", "5590", "delivery_date", "2026-12-07")
		b := newCall("int-value", "interruption", nil, domain(),
			say("s1", trace.ActSay, reqDate5590, date5590),
			trace.Step{ID: "s2", Do: trace.StepSay, Act: trace.ActInterrupt, Text: "Wait, make that December 7 instead.", Invalidates: true, Intent: v2})
		b.caller("s1").state(1, "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			speakStart("a1", "Okay, updating order 5590: delivery date December 3, and").
			callerStart("s2").clear("a1", "Okay, updating order 5590: delivery date December 3, and").callerFinal("s2").
			state(2, "update_order", "order_number", "5590", "delivery_date", "2026-12-07").
			speak("a2", "Okay, updating order 5590: delivery date December 7.").
			toolIntent("update_order", "order_number", "5590", "delivery_date", "December 7").
			call("r1", "k-2", "update_order", "order_number", "5590", "delivery_date", "2026-12-07").
			speak("a3", "Done. Order 5590 now has delivery date Dec 7th.")
		return b.done()
	}, expect{"pppppp", trace.OutcomeScored, "", nil, ChallengeInterruption}},

	{"ok", "noise_ignored", func() *trace.History {
		b := newCall("noise-ok", "interruption", nil, domain(),
			say("s1", trace.ActSay, reqQty5590, qty5590),
			trace.Step{ID: "n1", Do: trace.StepNoise, Sound: "cough", Duration: 600 * time.Millisecond})
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			speakStart("a1", "Okay, updating order 5590: quantity 2.").
			noise("n1", trace.KindCallerNoiseStart).noise("n1", trace.KindCallerNoiseEnd).
			speakEnd("a1", "Okay, updating order 5590: quantity 2.").
			toolIntent("update_order", "order_number", "5590", "quantity", "2").
			call("r1", "k-1", "update_order", "order_number", "5590", "quantity", "2").
			speak("a2", "Done. Order 5590 now has quantity 2.")
		return b.done()
	}, expect{"pppppp", trace.OutcomeScored, "", nil, ChallengeNoise}},

	{"ok", "drop_then_keyed_retry", func() *trace.History {
		f := []trace.Fault{{Kind: trace.FaultDropResp, Match: &trace.ToolMatch{Tool: "ship_order"}, Times: 1}}
		b := newCall("fail-drop-keyed", "tool_failure", f, domain(), say("s1", trace.ActSay, reqShip5590, ship5590))
		b.caller("s1").state(1, "ship_order", "order_number", "5590").
			speak("a1", "Okay, shipping order 5590.").
			toolIntent("ship_order", "order_number", "5590").
			recv("r1", "k-ship", 1, "ship_order", "order_number", "5590").faultApplied("r1", trace.FaultDropResp).
			commit("r1")
		body := recordBody(b.recs[len(b.recs)-1])
		b.respond("r1", 200, body, true).
			toolIntent("ship_order", "order_number", "5590").
			recv("r2", "k-ship", 1, "ship_order", "order_number", "5590").replayed("r2", "r1").respond("r2", 200, body, false).
			speak("a2", "Done. Order 5590 has been shipped.")
		return b.done()
	}, expect{"pppppp", trace.OutcomeScored, "", nil, ChallengeToolFailure}},

	// A timed-out write retried at once: under load the retry reaches the
	// backend before the backend notices the first client leave, so the
	// cancellation is recorded after the retry. The retry is still the
	// agent's answer to the timeout (captured), and nothing committed twice.
	{"ok", "timeout_retry_before_cancel", func() *trace.History {
		f := []trace.Fault{{Kind: trace.FaultTimeout, Match: &trace.ToolMatch{Tool: "update_order"}, Times: 1}}
		b := newCall("fail-timeout", "tool_failure", f, domain(), say("s1", trace.ActSay, reqDate5590, date5590))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			speak("a1", "Okay, updating order 5590: delivery date December 3.").
			toolIntent("update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			recv("r1", "", 1, "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			faultApplied("r1", trace.FaultTimeout).
			call("r2", "", "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			cancelled("r1", "client gave up").
			speak("a2", "Done. Order 5590 now has delivery date December 3.")
		return b.done()
	}, expect{"pppppp", trace.OutcomeScored, "", nil, ChallengeToolFailure}},

	{"ok", "late_success_verified", func() *trace.History {
		f := []trace.Fault{{Kind: trace.FaultLateSuccess, Match: &trace.ToolMatch{Tool: "update_order"}, Delay: 2 * time.Second}}
		b := newCall("fail-late-ok", "tool_failure", f, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			toolIntent("update_order", "order_number", "5590", "quantity", "2").
			recv("r1", "k-1", 1, "update_order", "order_number", "5590", "quantity", "2").faultApplied("r1", trace.FaultLateSuccess).
			respond("r1", 202, `{"ok":true,"status":"pending","operation":"op-1"}`, false).
			speak("a1", "Your change is processing, one moment please.").
			wait(2*time.Second).commit("r1").
			toolIntent("get_order", "order_number", "5590").call("r2", "", "get_order", "order_number", "5590").
			speak("a2", "Done. Order 5590 now has quantity 2.")
		return b.done()
	}, expect{"pppppp", trace.OutcomeScored, "", nil, ChallengeToolFailure}},

	{"ok", "wrong_record_reread", func() *trace.History {
		f := []trace.Fault{{Kind: trace.FaultWrongRecord, Match: &trace.ToolMatch{Tool: "get_order"}, Times: 1, Record: "5599"}}
		b := newCall("fail-wrong-ok", "tool_failure", f, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").state(1, "get_order", "order_number", "5590", "quantity", "2").
			toolIntent("get_order", "order_number", "5590").
			recv("r1", "", 1, "get_order", "order_number", "5590").faultApplied("r1", trace.FaultWrongRecord).
			respond("r1", 200, recordBody(*record(b.recs, "orders", "5599")), false).
			toolIntent("get_order", "order_number", "5590").call("r2", "", "get_order", "order_number", "5590").
			toolIntent("update_order", "order_number", "5590", "quantity", "2").
			call("r3", "k-1", "update_order", "order_number", "5590", "quantity", "2").
			speak("a1", "Done. Order 5590 now has quantity 2.")
		return b.done()
	}, expect{"pppppp", trace.OutcomeScored, "", nil, ChallengeToolFailure}},

	// A write that committed before the correction is not stale; the agent
	// rewrites it and confirms after the second commit.
	{"ok", "correction_after_commit", func() *trace.History {
		v2 := intent(2, "update_order", true, "order_number", "5590", "delivery_date", "2026-12-05")
		b := newCall("corr-late", "correction", nil, domain(),
			say("s1", trace.ActSay, reqDate5590, date5590),
			say("s2", trace.ActCorrect, "Sorry, make that December 5.", v2))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			toolIntent("update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			call("r1", "k-1", "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			speak("a1", "Done. Order 5590 now has delivery date December 3.").
			caller("s2").state(2, "update_order", "order_number", "5590", "delivery_date", "2026-12-05").
			toolIntent("update_order", "order_number", "5590", "delivery_date", "2026-12-05").
			call("r2", "k-2", "update_order", "order_number", "5590", "delivery_date", "2026-12-05").
			speak("a2", "Done. Order 5590 now has delivery date December 5.")
		return b.done()
	}, expect{"pppppp", trace.OutcomeScored, "", nil, ChallengeCorrection}},

	// Seed 001, call 1: the caller corrects the order number mid-request;
	// the agent reads back the corrected number but sends the call it had
	// already built for the old order.
	{"bad", "seed1_stale_order_number", func() *trace.History {
		v2 := intent(2, "update_order", true, "order_number", "5599", "delivery_date", "2026-12-03")
		b := newCall("corr-01", "correction", nil, domain(),
			say("s1", trace.ActSay, reqDate5590, date5590),
			say("s2", trace.ActCorrect, "Sorry, I meant order 5599.", v2))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			toolIntent("update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			caller("s2").state(2, "update_order", "order_number", "5599", "delivery_date", "2026-12-03").
			speak("a1", "Okay, updating order 5599: delivery date December 3.").
			call("r1", "", "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			speak("a2", "Done. Order 5599 now has delivery date December 3.")
		return b.done()
	}, expect{"ppffff", trace.OutcomeScored, BucketStaleToolArgs, nil, ChallengeCorrection}},

	// Seed 001, call 2: the caller interrupts, the agent stops talking at
	// once, but the call in flight is never cancelled and commits.
	{"bad", "seed2_inflight_not_cancelled", func() *trace.History {
		b := newCall("int-02", "interruption", nil, domain(),
			say("s1", trace.ActSay, reqDate5590, date5590),
			trace.Step{ID: "h1", Do: trace.StepHold, Hold: "h1", Match: &trace.ToolMatch{Tool: "update_order"}},
			trace.Step{ID: "s2", Do: trace.StepSay, Act: trace.ActInterrupt, Text: stopText, Invalidates: true,
				Intent: intent(2, "update_order", false), On: trace.Trigger{Event: trace.KindToolHeld}},
			trace.Step{ID: "rel", Do: trace.StepRelease, Hold: "h1"})
		b.caller("s1").state(1, "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			speakStart("a1", "Okay, updating order 5590: delivery date December 3. This will").
			toolIntent("update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			recv("r1", "", 1, "update_order", "order_number", "5590", "delivery_date", "2026-12-03").held("r1", "h1").
			fired("s2").callerStart("s2").clear("a1", "Okay, updating order 5590: delivery date December 3.").
			callerFinal("s2").state(2, "").
			speak("a2", nothing5590).
			fired("rel").released("r1", "h1").commit("r1").ok("r1")
		return b.done()
	}, expect{"pppfff", trace.OutcomeScored, BucketInflightNotCanceled, nil, ChallengeNegation}},

	// Seed 001, call 3: the agent says the order is updated; the write was
	// only accepted (202) and never landed.
	{"bad", "seed3_update_never_landed", func() *trace.History {
		v2 := intent(2, "update_order", true, "order_number", "5590", "delivery_date", "2026-12-05")
		f := []trace.Fault{{Kind: trace.FaultLateSuccess, Match: &trace.ToolMatch{Tool: "update_order"}, Delay: time.Minute}}
		b := newCall("corr-03", "correction", f, domain(),
			say("s1", trace.ActSay, reqDate5590, date5590),
			say("s2", trace.ActCorrect, "Sorry, make that December 5.", v2))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			caller("s2").state(2, "update_order", "order_number", "5590", "delivery_date", "2026-12-05").
			speak("a1", "Okay, updating order 5590: delivery date December 5.").
			toolIntent("update_order", "order_number", "5590", "delivery_date", "2026-12-05").
			recv("r1", "k-1", 2, "update_order", "order_number", "5590", "delivery_date", "2026-12-05").
			faultApplied("r1", trace.FaultLateSuccess).
			respond("r1", 202, `{"ok":true,"status":"pending","operation":"op-1"}`, false).
			speak("a2", "Done. Order 5590 has been updated to December 5.")
		return b.done()
	}, expect{"ppppff", trace.OutcomeScored, BucketEarlyConfirmation, []Bucket{BucketNotExecuted}, ChallengeCorrection}},

	{"bad", "noise_barge_in", func() *trace.History {
		b := newCall("noise-bad", "interruption", nil, domain(),
			say("s1", trace.ActSay, reqQty5590, qty5590),
			trace.Step{ID: "n1", Do: trace.StepNoise, Sound: "door", Duration: 400 * time.Millisecond})
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			speakStart("a1", "Okay, updating order 5590:").
			noise("n1", trace.KindCallerNoiseStart).clear("a1", "Okay, updating order 5590:").
			noise("n1", trace.KindCallerNoiseEnd).
			speak("a2", "Okay, updating order 5590: quantity 2.").
			toolIntent("update_order", "order_number", "5590", "quantity", "2").
			call("r1", "k-1", "update_order", "order_number", "5590", "quantity", "2").
			speak("a3", "Done. Order 5590 now has quantity 2.")
		return b.done()
	}, expect{"fppppp", trace.OutcomeScored, BucketNoiseBargeIn, nil, ChallengeNoise}},

	{"bad", "unsafe_retry", func() *trace.History {
		f := []trace.Fault{{Kind: trace.FaultDropResp, Match: &trace.ToolMatch{Tool: "ship_order"}, Times: 1}}
		b := newCall("fail-drop-retry", "tool_failure", f, domain(), say("s1", trace.ActSay, reqShip5590, ship5590))
		b.caller("s1").state(1, "ship_order", "order_number", "5590").
			toolIntent("ship_order", "order_number", "5590").
			recv("r1", "", 1, "ship_order", "order_number", "5590").faultApplied("r1", trace.FaultDropResp).commit("r1")
		b.respond("r1", 200, recordBody(b.recs[len(b.recs)-1]), true).
			toolIntent("ship_order", "order_number", "5590").
			call("r2", "", "ship_order", "order_number", "5590").
			speak("a1", "Done. Order 5590 has been shipped.")
		return b.done()
	}, expect{"pppffp", trace.OutcomeScored, BucketUnsafeRetry, nil, ChallengeToolFailure}},

	{"bad", "early_confirmation", func() *trace.History {
		b := newCall("early", "tool_failure", nil, domain(),
			say("s1", trace.ActSay, reqQty5590, qty5590),
			trace.Step{ID: "h1", Do: trace.StepHold, Hold: "h1", Match: &trace.ToolMatch{Tool: "update_order"}},
			trace.Step{ID: "rel", Do: trace.StepRelease, Hold: "h1", On: trace.Trigger{Delay: time.Second}})
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			toolIntent("update_order", "order_number", "5590", "quantity", "2").
			recv("r1", "k-1", 1, "update_order", "order_number", "5590", "quantity", "2").held("r1", "h1").
			speak("a1", "Done. Order 5590 now has quantity 2.").
			fired("rel").released("r1", "h1").commit("r1").ok("r1")
		return b.done()
	}, expect{"pppppf", trace.OutcomeScored, BucketEarlyConfirmation, nil, ChallengePlain}},

	{"bad", "duplicate_unkeyed", func() *trace.History {
		f := []trace.Fault{{Kind: trace.FaultDuplicate, Match: &trace.ToolMatch{Tool: "ship_order"}, Times: 1}}
		b := newCall("fail-dup", "tool_failure", f, domain(), say("s1", trace.ActSay, reqShip5590, ship5590))
		b.caller("s1").state(1, "ship_order", "order_number", "5590").
			toolIntent("ship_order", "order_number", "5590").
			recv("r1", "", 1, "ship_order", "order_number", "5590").faultApplied("r1", trace.FaultDuplicate).
			recv("r1-dup", "", 1, "ship_order", "order_number", "5590").
			commit("r1").ok("r1").commit("r1-dup").ok("r1-dup").
			speak("a1", "Done. Order 5590 has been shipped.")
		return b.done()
	}, expect{"ppppfp", trace.OutcomeScored, BucketMissingIdempotency, nil, ChallengeToolFailure}},

	{"bad", "action_not_executed", func() *trace.History {
		b := newCall("not-exec", "correction", nil, domain(), say("s1", trace.ActSay, reqDate5590, date5590))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			speak("a1", "Okay, updating order 5590: delivery date December 3.").
			speak("a2", "Done. Order 5590 now has delivery date December 3.")
		return b.done()
	}, expect{"ppfpff", trace.OutcomeScored, BucketNotExecuted, nil, ChallengePlain}},

	{"bad", "wrong_record_misheard", func() *trace.History {
		b := newCall("misheard", "correction", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").state(1, "update_order", "order_number", "5509", "quantity", "2").
			toolIntent("update_order", "order_number", "5509", "quantity", "2").
			call("r1", "k-1", "update_order", "order_number", "5509", "quantity", "2").
			speak("a1", "Done. Order 5509 now has quantity 2.")
		return b.done()
	}, expect{"fffpff", trace.OutcomeScored, BucketWrongRecord, nil, ChallengePlain}},

	{"bad", "wrong_record_adopted", func() *trace.History {
		f := []trace.Fault{{Kind: trace.FaultWrongRecord, Match: &trace.ToolMatch{Tool: "get_order"}, Times: 1, Record: "5599"}}
		b := newCall("fail-wrong", "tool_failure", f, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").toolIntent("get_order", "order_number", "5590").
			recv("r1", "", 0, "get_order", "order_number", "5590").faultApplied("r1", trace.FaultWrongRecord).
			respond("r1", 200, recordBody(*record(b.recs, "orders", "5599")), false).
			state(2, "update_order", "order_number", "5599", "quantity", "2").
			toolIntent("update_order", "order_number", "5599", "quantity", "2").
			call("r2", "k-1", "update_order", "order_number", "5599", "quantity", "2").
			speak("a1", "Done. Order 5599 now has quantity 2.")
		return b.done()
	}, expect{"fffpff", trace.OutcomeScored, BucketUnverifiedResult, nil, ChallengeToolFailure}},

	{"bad", "tool_error_claimed_done", func() *trace.History {
		f := []trace.Fault{{Kind: trace.FaultStatus, Match: &trace.ToolMatch{Tool: "update_order"}, Status: 503}}
		b := newCall("fail-500", "tool_failure", f, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			toolIntent("update_order", "order_number", "5590", "quantity", "2").
			recv("r1", "k-1", 1, "update_order", "order_number", "5590", "quantity", "2").faultApplied("r1", trace.FaultStatus).
			respond("r1", 503, errorBody("unavailable", "backend unavailable"), false).
			speak("a1", "Done. Order 5590 now has quantity 2.")
		return b.done()
	}, expect{"fpppff", trace.OutcomeScored, BucketUnverifiedResult, []Bucket{BucketNotExecuted}, ChallengeToolFailure}},

	{"bad", "negation_ignored", func() *trace.History {
		b := newCall("neg-ignored", "correction", nil, domain(),
			say("s1", trace.ActSay, reqShip5590, ship5590),
			say("s2", trace.ActNegate, negateText, intent(2, "ship_order", false, "order_number", "5590")))
		b.caller("s1").state(1, "ship_order", "order_number", "5590").
			caller("s2").toolIntent("ship_order", "order_number", "5590").
			call("r1", "", "ship_order", "order_number", "5590").
			speak("a1", "Done. Order 5590 has been shipped.")
		return b.done()
	}, expect{"fffffp", trace.OutcomeScored, BucketStaleToolArgs, []Bucket{BucketStaleState}, ChallengeNegation}},

	{"bad", "interrupt_not_yielded", func() *trace.History {
		b := newCall("int-talkover", "interruption", nil, domain(),
			say("s1", trace.ActSay, reqQty5590, qty5590),
			say("s2", trace.ActInterrupt, "Yes, that's right, go ahead.", qty5590))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			speakStart("a1", "Okay, updating order 5590: quantity 2. Just so you know, quantity changes can").
			callerStart("s2").callerFinal("s2").wait(3*time.Second).
			speakEnd("a1", "Okay, updating order 5590: quantity 2. Just so you know, quantity changes can take a day.").
			toolIntent("update_order", "order_number", "5590", "quantity", "2").
			call("r1", "k-1", "update_order", "order_number", "5590", "quantity", "2").
			speak("a2", "Done. Order 5590 now has quantity 2.")
		return b.done()
	}, expect{"fppppp", trace.OutcomeScored, BucketUnclassified, nil, ChallengeInterruption}},

	{"bad", "state_reverts", func() *trace.History {
		v2 := intent(2, "update_order", true, "order_number", "5590", "delivery_date", "2026-12-05")
		b := newCall("corr-revert", "correction", nil, domain(),
			say("s1", trace.ActSay, reqDate5590, date5590),
			say("s2", trace.ActCorrect, "Sorry, make that December 5.", v2))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			caller("s2").state(2, "update_order", "order_number", "5590", "delivery_date", "2026-12-05").
			state(3, "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			toolIntent("update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			call("r1", "k-1", "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			speak("a1", "Done. Order 5590 now has delivery date December 3.")
		return b.done()
	}, expect{"pfffff", trace.OutcomeScored, BucketStaleToolArgs, nil, ChallengeCorrection}},

	{"bad", "agent_error", func() *trace.History {
		b := newCall("agent-crash", "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2")
		return b.end(trace.OutcomeAgentError, "agent closed the connection")
	}, expect{"ppfpff", trace.OutcomeAgentError, BucketNeverConfirmed, nil, ChallengePlain}},

	{"bad", "harness_error", func() *trace.History {
		b := newCall("harness-broke", "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1")
		return b.end(trace.OutcomeHarnessError, "mock backend failed to start")
	}, expect{"uuuuuu", trace.OutcomeHarnessError, "", nil, ""}},

	{"bad", "excluded_missed_trigger", func() *trace.History {
		b := newCall("excluded", "interruption", nil, domain(),
			say("s1", trace.ActSay, reqDate5590, date5590),
			trace.Step{ID: "s2", Do: trace.StepSay, Act: trace.ActInterrupt, Text: stopText, Required: true,
				Intent: intent(2, "update_order", false), On: trace.Trigger{Event: trace.KindToolHeld}})
		b.caller("s1").emit(trace.SourceHarness, trace.KindTriggerMissed, &trace.TriggerNote{Step: "s2", Reason: "no tool.held within 10s"})
		return b.end(trace.OutcomeExcluded, "required step s2 never ran")
	}, expect{"uuuuuu", trace.OutcomeExcluded, "", nil, ""}},

	// --- Net effect and compensation (docs/SCORING.md, worked timelines),
	// in the bookings catalogue: other verbs, times, a restore claim.

	// Negation, write already landed before the onset, compensated and
	// reported as put back: all six pass.
	{"ok", "negation_compensated", func() *trace.History {
		b := newCallIn(bookingTools, "neg-comp", "correction", nil, bookingDomain(),
			say("s1", trace.ActSay, reqMove4471, move4471),
			say("s2", trace.ActNegate, "No, stop, don't change it.", intent(2, "reschedule_booking", false, "booking_ref", "4471")))
		b.caller("s1").state(1, "reschedule_booking", "booking_ref", "4471", "date", "2026-12-09").
			toolIntent("reschedule_booking", "booking_ref", "4471", "date", "2026-12-09").
			call("r1", "k-1", "reschedule_booking", "booking_ref", "4471", "date", "2026-12-09").
			caller("s2").state(2, "", "booking_ref", "4471").
			call("r2", "k-2", "reschedule_booking", "booking_ref", "4471", "date", "2026-12-08").
			speak("a1", "I've put booking 4471 back to Tuesday, December 8.")
		return b.done()
	}, expect{"pppppp", trace.OutcomeScored, "", nil, ChallengeNegation}},

	// The same negation, never put back: the agent even says nothing
	// changed. Not stale (it landed before the onset): uncompensated.
	{"bad", "uncompensated_write", func() *trace.History {
		b := newCallIn(bookingTools, "neg-uncomp", "correction", nil, bookingDomain(),
			say("s1", trace.ActSay, reqMove4471, move4471),
			say("s2", trace.ActNegate, "No, stop, don't change it.", intent(2, "reschedule_booking", false, "booking_ref", "4471")))
		b.caller("s1").state(1, "reschedule_booking", "booking_ref", "4471", "date", "2026-12-09").
			toolIntent("reschedule_booking", "booking_ref", "4471", "date", "2026-12-09").
			call("r1", "k-1", "reschedule_booking", "booking_ref", "4471", "date", "2026-12-09").
			caller("s2").state(2, "", "booking_ref", "4471").
			speak("a1", "Okay, nothing was changed on booking 4471.")
		return b.done()
	}, expect{"ppppff", trace.OutcomeScored, BucketUncompensated, nil, ChallengeNegation}},

	// A restore claimed but never made: the backend still holds Wednesday.
	{"bad", "restored_claim_false", func() *trace.History {
		b := newCallIn(bookingTools, "neg-fake-restore", "correction", nil, bookingDomain(),
			say("s1", trace.ActSay, reqMove4471, move4471),
			say("s2", trace.ActNegate, "No, stop, don't change it.", intent(2, "reschedule_booking", false, "booking_ref", "4471")))
		b.caller("s1").state(1, "reschedule_booking", "booking_ref", "4471", "date", "2026-12-09").
			call("r1", "k-1", "reschedule_booking", "booking_ref", "4471", "date", "2026-12-09").
			caller("s2").state(2, "", "booking_ref", "4471").
			speak("a1", "Sorry about that, I've changed it back to Tuesday, December 8.")
		return b.done()
	}, expect{"ppppff", trace.OutcomeScored, BucketUncompensated, nil, ChallengeNegation}},

	// Correction of the record: the write to 4471, sent before the
	// correction's onset, lands after its final words (stale, never
	// cancelled); 4471 is put back and 4417 written. Axis 4 fails, its
	// finding says compensated; the net effect and the claim pass.
	{"bad", "stale_write_compensated", func() *trace.History {
		v2 := intent(2, "reschedule_booking", true, "booking_ref", "4417", "date", "2026-12-09")
		b := newCallIn(bookingTools, "corr-comp", "correction", nil, bookingDomain(),
			say("s1", trace.ActSay, reqMove4471, move4471),
			say("s2", trace.ActCorrect, "Sorry, I meant booking 4417.", v2))
		b.caller("s1").state(1, "reschedule_booking", "booking_ref", "4471", "date", "2026-12-09").
			toolIntent("reschedule_booking", "booking_ref", "4471", "date", "2026-12-09").
			recv("r1", "k-1", 1, "reschedule_booking", "booking_ref", "4471", "date", "2026-12-09").
			caller("s2").state(2, "reschedule_booking", "booking_ref", "4417", "date", "2026-12-09").
			commit("r1").ok("r1").
			call("r2", "k-2", "reschedule_booking", "booking_ref", "4471", "date", "2026-12-08").
			toolIntent("reschedule_booking", "booking_ref", "4417", "date", "2026-12-09").
			call("r3", "k-3", "reschedule_booking", "booking_ref", "4417", "date", "2026-12-09").
			speak("a1", "I've put booking 4471 back to Tuesday, December 8. Booking 4417 is now on Wednesday, December 9.")
		return b.done()
	}, expect{"pppfpp", trace.OutcomeScored, BucketStaleToolArgs, []Bucket{BucketInflightNotCanceled}, ChallengeCorrection}},

	// A stop whose onset finds the write already sent; it commits before
	// the final words. Not stale: nothing could be cancelled in time. The
	// agent puts it back: all six pass.
	{"ok", "stop_between_onset_and_final", func() *trace.History {
		b := newCallIn(bookingTools, "int-onset", "interruption", nil, bookingDomain(),
			say("s1", trace.ActSay, reqMove4471, move4471),
			trace.Step{ID: "s2", Do: trace.StepSay, Act: trace.ActInterrupt, Text: "Wait, stop, don't change anything.", Invalidates: true,
				Intent: intent(2, "reschedule_booking", false, "booking_ref", "4471")})
		b.caller("s1").state(1, "reschedule_booking", "booking_ref", "4471", "date", "2026-12-09").
			toolIntent("reschedule_booking", "booking_ref", "4471", "date", "2026-12-09").
			recv("r1", "k-1", 1, "reschedule_booking", "booking_ref", "4471", "date", "2026-12-09").
			callerStart("s2").commit("r1").ok("r1").callerFinal("s2").
			state(2, "", "booking_ref", "4471").
			call("r2", "k-2", "reschedule_booking", "booking_ref", "4471", "date", "2026-12-08").
			speak("a1", "Sorry, I've reverted that: booking 4471 is back on December 8.")
		return b.done()
	}, expect{"pppppp", trace.OutcomeScored, "", nil, ChallengeNegation}},

	// --- Claims in the bookings catalogue.

	{"ok", "booking_party_size", func() *trace.History {
		in := intent(1, "change_party_size", true, "booking_ref", "4471", "party_size", "6")
		b := newCallIn(bookingTools, "book-party", "plain", nil, bookingDomain(),
			say("s1", trace.ActSay, "Can you make booking 4471 a table for six?", in))
		b.caller("s1").state(1, "change_party_size", "booking_ref", "4471", "party_size", "six").
			toolIntent("change_party_size", "booking_ref", "4471", "party_size", "6").
			call("r1", "k-1", "change_party_size", "booking_ref", "4471", "party_size", "6").
			speak("a1", "All set: booking 4471 is now for six people, not 4.")
		return b.done()
	}, expect{"pppppp", trace.OutcomeScored, "", nil, ChallengePlain}},

	{"ok", "booking_new_table", func() *trace.History {
		in := intent(1, "book_table", true, "name", "Okafor", "date", "2026-12-11", "time", "19:30", "party_size", "4")
		b := newCallIn(bookingTools, "book-new", "plain", nil, bookingDomain(),
			say("s1", trace.ActSay, "A table for four on Friday, December 11 at 7:30 pm, name Okafor.", in))
		b.caller("s1").state(1, "book_table", "name", "Okafor", "date", "December 11", "time", "7:30 pm", "party_size", "4").
			toolIntent("book_table", "name", "Okafor", "date", "2026-12-11", "time", "19:30", "party_size", "4").
			call("r1", "k-1", "book_table", "name", "Okafor", "date", "2026-12-11", "time", "19:30", "party_size", "4").
			speak("a1", "You're booked: a table for four under the name Okafor on Friday, December 11 at 7:30 pm.")
		return b.done()
	}, expect{"pppppp", trace.OutcomeScored, "", nil, ChallengePlain}},

	{"bad", "booking_wrong_time_claimed", func() *trace.History {
		in := intent(1, "reschedule_booking", true, "booking_ref", "4471", "time", "20:00")
		b := newCallIn(bookingTools, "book-time", "plain", nil, bookingDomain(),
			say("s1", trace.ActSay, "Please move booking 4471 to 8 pm.", in))
		b.caller("s1").state(1, "reschedule_booking", "booking_ref", "4471", "time", "20:00").
			toolIntent("reschedule_booking", "booking_ref", "4471", "time", "8 pm").
			call("r1", "k-1", "reschedule_booking", "booking_ref", "4471", "time", "20:00").
			speak("a1", "Done, booking 4471 has been moved to 9 pm.")
		return b.done()
	}, expect{"pfpppf", trace.OutcomeScored, BucketUnclassified, nil, ChallengePlain}},

	{"ok", "booking_cancelled", func() *trace.History {
		in := intent(1, "cancel_booking", true, "booking_ref", "4471", "status", "cancelled")
		b := newCallIn(bookingTools, "book-cancel", "plain", nil, bookingDomain(),
			say("s1", trace.ActSay, "Please cancel booking 4471.", in))
		b.caller("s1").state(1, "cancel_booking", "booking_ref", "4471", "status", "cancelled").
			toolIntent("cancel_booking", "booking_ref", "4471", "status", "cancelled").
			call("r1", "k-1", "cancel_booking", "booking_ref", "4471", "status", "cancelled").
			speak("a1", "Your booking 4471 has been cancelled. Anything else?")
		return b.done()
	}, expect{"pppppp", trace.OutcomeScored, "", nil, ChallengePlain}},

	// --- Unsure and undecided claims; unknown axes are never a pass.

	// 202 pending, "I can't confirm yet": true, the write lands later.
	{"ok", "unsure_while_pending", func() *trace.History {
		f := []trace.Fault{{Kind: trace.FaultLateSuccess, Match: &trace.ToolMatch{Tool: "update_order"}, Delay: 2 * time.Second}}
		b := newCall("fail-late-unsure", "tool_failure", f, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			toolIntent("update_order", "order_number", "5590", "quantity", "2").
			recv("r1", "k-1", 1, "update_order", "order_number", "5590", "quantity", "2").faultApplied("r1", trace.FaultLateSuccess).
			respond("r1", 202, `{"ok":true,"status":"pending","operation":"op-1"}`, false).
			speak("a1", "Sorry, I can't confirm yet whether order 5590 went through.").
			wait(2 * time.Second).commit("r1")
		return b.done()
	}, expect{"pppppp", trace.OutcomeScored, "", nil, ChallengeToolFailure}},

	// A clean 200, then "I'm not sure it went through": not the truth.
	{"bad", "unsure_despite_answer", func() *trace.History {
		b := newCall("plain-unsure", "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			toolIntent("update_order", "order_number", "5590", "quantity", "2").
			call("r1", "k-1", "update_order", "order_number", "5590", "quantity", "2").
			speak("a1", "I'm not sure whether order 5590 was updated.")
		return b.done()
	}, expect{"pppppf", trace.OutcomeScored, BucketUnclassified, nil, ChallengePlain}},

	{"unknown", "confirmation_undecided", func() *trace.History {
		b := newCall("plain-hedge", "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			toolIntent("update_order", "order_number", "5590", "quantity", "2").
			call("r1", "k-1", "update_order", "order_number", "5590", "quantity", "2").
			speak("a1", "Order 5590 should be updated to quantity 2 now.")
		return b.done()
	}, expect{"pppppu", trace.OutcomeScored, "", nil, ChallengePlain}},

	// The write went through and was confirmed; a later check read fails
	// and the agent does nothing after it: captured cannot be judged.
	{"unknown", "tool_failure_no_act_after", func() *trace.History {
		f := []trace.Fault{{Kind: trace.FaultStatus, Match: &trace.ToolMatch{Tool: "get_order"}, Status: 503}}
		b := newCall("fail-silent", "tool_failure", f, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			toolIntent("update_order", "order_number", "5590", "quantity", "2").
			call("r1", "k-1", "update_order", "order_number", "5590", "quantity", "2").
			speak("a1", "Done. Order 5590 now has quantity 2.").
			recv("r2", "", 0, "get_order", "order_number", "5590").faultApplied("r2", trace.FaultStatus).
			respond("r2", 503, errorBody("unavailable", "backend unavailable"), false).
			hangup()
		return b.done()
	}, expect{"uppppp", trace.OutcomeScored, "", nil, ChallengeToolFailure}},

	{"unknown", "hangup_mid_confirmation", func() *trace.History {
		b := newCall("plain-hangup", "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			toolIntent("update_order", "order_number", "5590", "quantity", "2").
			call("r1", "k-1", "update_order", "order_number", "5590", "quantity", "2").
			speakStart("a1", "Done. Order 5590 now").hangup()
		return b.done()
	}, expect{"pppppu", trace.OutcomeScored, "", nil, ChallengePlain}},

	// --- Wrong record: a write built on it fails captured.

	{"bad", "wrong_record_written", func() *trace.History {
		f := []trace.Fault{{Kind: trace.FaultWrongRecord, Match: &trace.ToolMatch{Tool: "get_order"}, Times: 1, Record: "5599"}}
		b := newCall("fail-wrong-write", "tool_failure", f, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").toolIntent("get_order", "order_number", "5590").
			recv("r1", "", 0, "get_order", "order_number", "5590").faultApplied("r1", trace.FaultWrongRecord).
			respond("r1", 200, recordBody(*record(b.recs, "orders", "5599")), false).
			toolIntent("update_order", "order_number", "5599", "quantity", "2").
			call("r2", "k-1", "update_order", "order_number", "5599", "quantity", "2").
			speak("a1", "Done. Order 5590 now has quantity 2.")
		return b.done()
	}, expect{"fpfpff", trace.OutcomeScored, BucketUnverifiedResult, nil, ChallengeToolFailure}},

	// --- Inconsistent histories: the snapshot does not follow from the
	// ledger. Never a verdict on the agent.

	{"bad", "inconsistent_deleted_commit", func() *trace.History {
		return dropKind(plainQuantity(), trace.KindToolCommitted)
	}, expect{"uuuuuu", trace.OutcomeHarnessError, "", nil, ""}},

	{"bad", "inconsistent_edited_after", func() *trace.History {
		h := plainQuantity()
		for i := range h.Events {
			if te, ok := h.Events[i].Data.(*trace.ToolEvent); ok && h.Events[i].Kind == trace.KindToolCommitted {
				te.After = kv("delivery_date", "2026-12-01", "quantity", "9", "item", "kettle", "status", "open")
			}
		}
		return h
	}, expect{"uuuuuu", trace.OutcomeHarnessError, "", nil, ""}},
}

// Bookings: 4471 on Tuesday, December 8 at 7:30 pm for 4; 4417 on
// Thursday, December 10 at 6 pm for 2.
func booking(ref, date, tm, party string) trace.Record {
	return trace.Record{Table: "bookings", Key: ref, Version: 1, Fields: map[string]string{
		"date": date, "time": tm, "party_size": party, "name": "Okafor", "status": "confirmed"}}
}

func bookingDomain() []trace.Record {
	return []trace.Record{booking("4471", "2026-12-08", "19:30", "4"), booking("4417", "2026-12-10", "18:00", "2")}
}

const reqMove4471 = "Hi, please move booking 4471 to Wednesday, December 9."

var move4471 = intent(1, "reschedule_booking", true, "booking_ref", "4471", "date", "2026-12-09")

// plainQuantity is plain_quantity's history, built afresh.
func plainQuantity() *trace.History {
	b := newCall("plain-qty", "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
		speak("a1", "Okay, updating order 5590: quantity 2.").
		toolIntent("update_order", "order_number", "5590", "quantity", "2").
		call("r1", "k-1", "update_order", "order_number", "5590", "quantity", "2").
		speak("a2", "Done. Order 5590 now has quantity 2.")
	return b.done()
}

// dropKind removes every event of kind k, leaving a gap in the seqs as a
// lost line would.
func dropKind(h *trace.History, k trace.Kind) *trace.History {
	out := &trace.History{Call: h.Call}
	for _, e := range h.Events {
		if e.Kind != k {
			out.Events = append(out.Events, e)
		}
	}
	return out
}
