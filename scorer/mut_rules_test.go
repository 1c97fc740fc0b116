package scorer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callproof/callproof/trace"
)

// Tests that pin the rule files' edge cases (found by mutation testing):
// each history isolates one rule and asserts the verdict, finding or
// bucket a mutant of that rule would change.

// summary is a call's vector, primary and secondary buckets and every
// finding, one per line, for whole-score comparisons.
func summary(cs CallScore) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %q %v %s\n", vector(cs), cs.Outcome, cs.Primary, cs.Secondary, cs.Challenge)
	b.WriteString(dump(cs))
	return b.String()
}

func axisSays(t *testing.T, name string, cs CallScore, a Axis, v Verdict, text string) {
	t.Helper()
	r := cs.Axis(a)
	if r.Verdict != v {
		t.Errorf("%s: %s %s, want %s\n%s", name, a, r.Verdict, v, summary(cs))
		return
	}
	for _, f := range r.Findings {
		if strings.Contains(f.Text, text) {
			return
		}
	}
	t.Errorf("%s: %s has no finding saying %q\n%s", name, a, text, summary(cs))
}

func bucketSays(t *testing.T, name string, cs CallScore, bk Bucket, text string) {
	t.Helper()
	for _, h := range cs.Buckets {
		if h.Bucket != bk {
			continue
		}
		for _, f := range h.Findings {
			if strings.Contains(f.Text, text) {
				return
			}
		}
	}
	t.Errorf("%s: no %s bucket finding saying %q\n%s", name, bk, text, summary(cs))
}

// TestMutRulesGolden scores each history of mutHistories and compares the
// whole score (vector, outcome, buckets, every finding with its citations)
// with testdata/mutrules/<name>.txt; -update rewrites the files. Each
// golden file was read against docs/SCORING.md before it was committed.
func TestMutRulesGolden(t *testing.T) {
	hs := mutHistories()
	names := make([]string, 0, len(hs))
	for n := range hs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if strings.HasPrefix(n, "axis_") {
			continue // judged on one axis only, in TestMutRulesAxes
		}
		got := summary(Score(hs[n]))
		p := filepath.Join("testdata", "mutrules", n+".txt")
		if *update {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%s: %v (run go test ./scorer -run TestMutRulesGolden -update)", n, err)
			continue
		}
		if got != string(want) {
			t.Errorf("%s: score changed\ngot:\n%s\nwant:\n%s", n, got, want)
		}
	}
}

// TestMutRulesAxes: histories whose bucket is open to question (see the
// report in docs/SCORING.md's live mutants) are pinned on one axis only.
func TestMutRulesAxes(t *testing.T) {
	hs := mutHistories()
	for _, c := range []struct {
		name string
		axis Axis
		v    Verdict
		text string
	}{
		// Answered 202 after the negation's onset: an open request the agent
		// could have cancelled, so its later landing is a stale write.
		{"axis_neg_pending_during_onset_lands_after", StaleWritePrevented, Fail, "committed while the caller had withdrawn the action"},
		// An error or a lost answer is not an acceptance.
		{"axis_neg_error_before_onset_lands_after", StaleWritePrevented, Fail, "committed while the caller had withdrawn the action"},
		{"axis_neg_dropped_before_onset_lands_after", StaleWritePrevented, Fail, "committed while the caller had withdrawn the action"},
		// The new name heard: captured on the changed slot (the pet) passes.
		// (Active state fails on the unchanged text slot: reported as a bug.)
		{"axis_pets_speech_new_name", Captured, Pass, "first act after the correction reflects the new intent"},
		{"axis_pets_speech_both_names", Captured, Pass, "first act after the correction reflects the new intent"},
		{"axis_pets_confirms_old_name", BackendCorrect, Pass, "snapshot equals the intended state"},
		{"axis_pets_confirms_both_names", ConfirmationMatchesBackend, Pass, "the done confirmation matches the backend"},
		// Another count than the new one: not heard. (Its stale_working_state
		// bucket says "the old values" although 7 never was one: reported.)
		{"axis_corr_speech_other_count", Captured, Fail, "first act after the correction does not reflect the new intent"},
		// Answered 400 before the onset: an error is not an acceptance.
		{"axis_neg_400_before_onset_lands_after", StaleWritePrevented, Fail, "committed while the caller had withdrawn the action"},
		// S* cannot be computed (unknown tool, missing record): only the
		// tool-args verdict is pinned (backend_correct passing is reported).
		{"axis_intent_unknown_tool", ToolArgsCorrect, Fail, "no call ever carried the final intent frobnicate"},
		{"axis_intent_missing_record", ToolArgsCorrect, Fail, "no call ever carried the final intent update_order(order_number=1234"},
	} {
		axisSays(t, c.name, Score(hs[c.name]), c.axis, c.v, c.text)
	}
}

func mutHistories() map[string]*trace.History {
	hs := map[string]*trace.History{}
	// The caller says nothing actionable.
	b := newCall("no-intent", "plain", nil, domain(), say("s1", trace.ActSay, "Hello there.", nil))
	b.caller("s1").speak("a1", "Hello, how can I help?")
	hs["no_intent"] = b.done()

	// A write before the caller asked for anything.
	b = newCall("early-write", "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.call("r1", "k-1", "update_order", "order_number", "5590", "quantity", "2").
		caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
		speak("a2", "Done. Order 5590 now has quantity 2.")
	hs["write_before_ask"] = b.done()

	// A late tool-intent notice: the request arrives before its notice.
	b = newCall("late-notice", "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
		call("r1", "k-1", "update_order", "order_number", "5590", "quantity", "2").
		toolIntent("update_order", "order_number", "5590", "quantity", "2").
		speak("a2", "Done. Order 5590 now has quantity 2.")
	hs["late_notice"] = b.done()

	// The caller hangs up right after the tool answer.
	b = newCall("hang-answer", "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
		toolIntent("update_order", "order_number", "5590", "quantity", "2").
		call("r1", "k-1", "update_order", "order_number", "5590", "quantity", "2").hangup()
	hs["hangup_on_answer"] = b.done()

	// Same, but the caller waited past the yield bound.
	b = newCall("hang-late", "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
		toolIntent("update_order", "order_number", "5590", "quantity", "2").
		call("r1", "k-1", "update_order", "order_number", "5590", "quantity", "2").wait(3 * time.Second).hangup()
	hs["hangup_after_yield"] = b.done()

	// Withdrawn before any write; the agent claims it was done.
	withdraw := intent(2, "update_order", false, "order_number", "5590", "quantity", "2")
	b = newCall("withdraw-done", "negation", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590),
		say("s2", trace.ActNegate, negateText, withdraw))
	b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
		speak("a1", "Sure, one moment.").caller("s2").
		speak("a2", "Done. Order 5590 now has quantity 2.")
	hs["withdrawn_claimed_done"] = b.done()

	// The agent's last words name the value but say neither done nor not.
	b = newCall("unread", "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
		toolIntent("update_order", "order_number", "5590", "quantity", "2").
		call("r1", "k-1", "update_order", "order_number", "5590", "quantity", "2").
		speak("a2", "Order 5590, quantity 2.")
	hs["unread_statement"] = b.done()

	// A DTMF keypress carries the intent.
	b = newCall("dtmf", "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.emit(trace.SourceCaller, trace.KindCallerDTMF, &trace.CallerDTMF{Step: "s1", Digits: "5590", Intent: qty5590.Clone()})
	b.state(1, "update_order", "order_number", "5590", "quantity", "2").
		toolIntent("update_order", "order_number", "5590", "quantity", "2").
		call("r1", "k-1", "update_order", "order_number", "5590", "quantity", "2").
		speak("a2", "Done. Order 5590 now has quantity 2.")
	hs["dtmf_intent"] = b.done()

	// A rejected request never reaches the tool.
	b = newCall("rejected", "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
		toolIntent("update_order", "order_number", "5590", "quantity", "2").
		recv("r1", "", 0, "update_order", "order_number", "5590", "quantity", "2")
	b.emit(trace.SourceBackend, trace.KindToolRejected, b.tev("r1"))
	b.speak("a2", "Done. Order 5590 now has quantity 2.")
	hs["rejected_claimed"] = b.done()

	// Retries and transient failures.
	qtyCall := func(name string, f func(b *builder)) {
		b := newCall(name, "tool_failure", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			toolIntent("update_order", "order_number", "5590", "quantity", "2")
		f(b)
		hs[name] = b.done()
	}
	const sorry = "Sorry, I could not update order 5590; nothing was changed."
	const done2 = "Done. Order 5590 now has quantity 2."
	args := []string{"order_number", "5590", "quantity", "2"}
	for _, st := range []int{500, 429, 400, 503} {
		st := st
		qtyCall(fmt.Sprintf("gave_up_%d", st), func(b *builder) {
			b.recv("r1", "k-1", 0, "update_order", args...).respond("r1", st, errorBody("server_error", "boom"), false).
				recv("r2", "k-1", 0, "update_order", args...).respond("r2", st, errorBody("server_error", "boom"), false).
				speak("a2", sorry)
		})
	}
	qtyCall("gave_up_abandoned", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).wait(5*time.Second).cancelled("r1", "client gave up").
			speak("a2", sorry)
	})
	qtyCall("gave_up_timeout", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultTimeout).wait(5*time.Second).cancelled("r1", "client gave up").
			speak("a2", sorry)
	})
	qtyCall("gave_up_answered_then_cancelled", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).respond("r1", 200, "", false).cancelled("r1", "late").
			speak("a2", sorry)
	})
	for _, idem := range []string{"", "k-1", "k-2"} {
		idem := idem
		qtyCall("retry_after_error_idem_"+idem, func(b *builder) {
			b.recv("r1", "k-1", 0, "update_order", args...).commit("r1").respond("r1", 500, errorBody("server_error", "boom"), false).
				recv("r2", idem, 0, "update_order", args...).commit("r2").ok("r2").speak("a2", done2)
		})
	}
	qtyCall("retry_after_empty", func(b *builder) {
		b.recv("r1", "", 0, "update_order", args...).commit("r1").respond("r1", 200, " ", false).
			recv("r2", "", 0, "update_order", args...).commit("r2").ok("r2").speak("a2", done2)
	})
	qtyCall("retry_after_dropped", func(b *builder) {
		b.recv("r1", "", 0, "update_order", args...).commit("r1").respond("r1", 200, "", true).
			recv("r2", "", 0, "update_order", args...).commit("r2").ok("r2").speak("a2", done2)
	})
	qtyCall("twice_unkeyed", func(b *builder) {
		b.call("r1", "", "update_order", args...).call("r2", "", "update_order", args...).speak("a2", done2)
	})
	qtyCall("error_then_read_then_done", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).respond("r1", 500, errorBody("server_error", "boom"), false).
			call("r2", "", "get_order", "order_number", "5590").speak("a2", done2)
	})
	qtyCall("error_then_done", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).respond("r1", 500, errorBody("server_error", "boom"), false).
			speak("a2", done2)
	})
	qtyCall("error_then_retry_ok_done", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).respond("r1", 500, errorBody("server_error", "boom"), false).
			call("r2", "k-1", "update_order", args...).speak("a2", done2)
	})
	qtyCall("done_before_commit", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).speak("a2", done2).commit("r1").ok("r1")
	})
	qtyCall("pending_never_landed", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultLateSuccess).
			respond("r1", 202, `{"ok":true,"status":"pending","operation":"op-1"}`, false).speak("a2", done2)
	})
	qtyCall("pending_landed_after_claim", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultLateSuccess).
			respond("r1", 202, `{"ok":true,"status":"pending","operation":"op-1"}`, false).speak("a2", done2).commit("r1")
	})
	qtyCall("pending_landed_before_claim", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultLateSuccess).
			respond("r1", 202, `{"ok":true,"status":"pending","operation":"op-1"}`, false).commit("r1").speak("a2", done2)
	})
	qtyCall("never_answered_done", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).speak("a2", done2)
	})
	qtyCall("unsure_after_ok", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).speak("a2", "I'm not sure whether order 5590 was updated.")
	})
	qtyCall("unsure_after_500", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).respond("r1", 500, errorBody("server_error", "boom"), false).
			speak("a2", "I'm not sure whether order 5590 was updated.")
	})
	qtyCall("wrong_quantity_named", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).speak("a2", "Done. Order 5590 now has quantity 3.")
	})
	qtyCall("not_done_but_changed", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).speak("a2", sorry)
	})

	// Tool failures (a fault applied): what the first act after the bad
	// answer shows.
	errFault := []trace.Fault{{Kind: trace.FaultStatus, Match: &trace.ToolMatch{Tool: "update_order"}, Times: 1, Status: 500}}
	faulted := func(name string, f func(b *builder)) {
		b := newCall(name, "tool_failure", errFault, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			toolIntent("update_order", "order_number", "5590", "quantity", "2").
			recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultStatus)
		f(b)
		hs[name] = b.done()
	}
	e500 := errorBody("server_error", "boom")
	faulted("fault_then_done", func(b *builder) { b.respond("r1", 500, e500, false).speak("a2", done2) })
	faulted("fault_then_question", func(b *builder) {
		b.respond("r1", 500, e500, false).speak("a2", "Could you tell me the order number again?")
	})
	faulted("fault_then_unsure", func(b *builder) {
		b.respond("r1", 500, e500, false).speak("a2", "I'm not sure whether order 5590 was updated.")
	})
	faulted("fault_then_sorry", func(b *builder) { b.respond("r1", 500, e500, false).speak("a2", sorry) })
	faulted("fault_then_nothing", func(b *builder) { b.respond("r1", 500, e500, false) })
	faulted("fault_claim_spanning", func(b *builder) {
		b.speakStart("a1", done2).respond("r1", 500, e500, false).speakEnd("a1", done2)
	})
	faulted("fault_claim_spanning_cleared", func(b *builder) {
		b.speakStart("a1", done2).respond("r1", 500, e500, false).clear("a1", "Done.")
	})
	faulted("fault_then_read_same", func(b *builder) {
		b.respond("r1", 500, e500, false).toolIntent("get_order", "order_number", "5590").
			call("r2", "", "get_order", "order_number", "5590").speak("a2", sorry)
	})
	faulted("fault_then_read_other", func(b *builder) {
		b.respond("r1", 500, e500, false).toolIntent("get_order", "order_number", "5509").
			call("r2", "", "get_order", "order_number", "5509").speak("a2", sorry)
	})
	faulted("fault_then_retry", func(b *builder) {
		b.respond("r1", 500, e500, false).toolIntent("update_order", args...).
			call("r2", "k-1", "update_order", args...).speak("a2", done2)
	})
	faulted("fault_then_ship", func(b *builder) {
		b.respond("r1", 500, e500, false).toolIntent("ship_order", "order_number", "5590").
			call("r2", "", "ship_order", "order_number", "5590").speak("a2", sorry)
	})
	faulted("fault_late_notice", func(b *builder) {
		b.respond("r1", 500, e500, false).toolIntent("update_order", args...).speak("a2", sorry)
	})
	faulted("fault_dup_received", func(b *builder) {
		b.respond("r1", 500, e500, false).recv("r2", "k-1", 0, "update_order", args...).replayed("r2", "r1").
			respond("r2", 500, e500, false).speak("a2", sorry)
	})
	wrongFault := []trace.Fault{{Kind: trace.FaultWrongRecord, Match: &trace.ToolMatch{Tool: "get_order"}, Times: 1, Record: "5599"}}
	wrongRead := func(name string, f func(b *builder)) {
		b := newCall(name, "tool_failure", wrongFault, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").state(1, "get_order", "order_number", "5590", "quantity", "2").
			toolIntent("get_order", "order_number", "5590").
			recv("r1", "", 0, "get_order", "order_number", "5590").faultApplied("r1", trace.FaultWrongRecord).
			respond("r1", 200, recordBody(*record(b.recs, "orders", "5599")), false)
		f(b)
		hs[name] = b.done()
	}
	wrongRead("wrong_record_then_read_it", func(b *builder) {
		b.toolIntent("get_order", "order_number", "5599").call("r2", "", "get_order", "order_number", "5599").
			toolIntent("update_order", "order_number", "5599", "quantity", "2").
			call("r3", "k-1", "update_order", "order_number", "5599", "quantity", "2").
			speak("a1", "Done. Order 5599 now has quantity 2.")
	})
	wrongRead("wrong_record_then_ship_other", func(b *builder) {
		b.toolIntent("ship_order", "order_number", "5509").call("r2", "", "ship_order", "order_number", "5509").
			speak("a1", "Order 5590 was not changed.")
	})
	wrongRead("wrong_record_then_speaks_it", func(b *builder) {
		b.speak("a1", "Order 5599 is due on December 9; shall I change it?")
	})
	// The same words recognized from audio: naming the wrong record's
	// values is no proof of having adopted them (trace.RecognizedText).
	wrongRead("wrong_record_then_speaks_it_recognized", func(b *builder) {
		b.speak("a1", trace.RecognizedText+" Order 5599 is due on December 9; shall I change it?")
	})

	// Negation: the caller withdraws the action.
	neg := func(name string, f func(b *builder)) {
		b := newCall(name, "negation", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590),
			say("s2", trace.ActNegate, negateText, withdraw))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			toolIntent("update_order", "order_number", "5590", "quantity", "2")
		f(b)
		hs[name] = b.done()
	}
	back := []string{"order_number", "5590", "quantity", "3"}
	neg("neg_inflight_cancelled", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).caller("s2").cancelled("r1", "client cancelled").speak("a2", nothing5590)
	})
	neg("neg_inflight_never_closed", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).caller("s2").state(2, "").speak("a2", nothing5590)
	})
	neg("neg_inflight_committed_never_answered", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).caller("s2").state(2, "").commit("r1").speak("a2", nothing5590)
	})
	neg("neg_inflight_committed_compensated", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).caller("s2").state(2, "").commit("r1").ok("r1").
			toolIntent("update_order", back...).call("r2", "k-2", "update_order", back...).
			speak("a2", "I've put it back: order 5590 has quantity 3 again.")
	})
	neg("neg_after_commit_compensated", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).caller("s2").
			toolIntent("update_order", back...).call("r2", "k-2", "update_order", back...).state(2, "").
			speak("a2", "I've put it back: order 5590 has quantity 3 again.")
	})
	neg("neg_after_commit_uncompensated", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).caller("s2").state(2, "").speak("a2", nothing5590)
	})
	neg("neg_after_commit_already", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).caller("s2").state(2, "").
			speak("a2", "That had already gone through: order 5590 has quantity 2 now.")
	})
	neg("neg_then_write_sent", func(b *builder) {
		b.caller("s2").call("r1", "k-1", "update_order", args...).speak("a2", nothing5590)
	})
	neg("neg_then_pending_state", func(b *builder) {
		b.caller("s2").state(2, "update_order", "order_number", "5590", "quantity", "2").speak("a2", nothing5590)
	})
	neg("neg_during_send", func(b *builder) {
		b.callerStart("s2").call("r1", "k-1", "update_order", args...).callerFinal("s2").state(2, "").speak("a2", nothing5590)
	})
	neg("neg_then_cancel_call_read", func(b *builder) {
		b.caller("s2").toolIntent("get_order", "order_number", "5590").call("r1", "", "get_order", "order_number", "5590").
			state(2, "").speak("a2", nothing5590)
	})
	neg("neg_accepted_before_onset", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).commit("r1").ok("r1").callerStart("s2").callerFinal("s2").
			state(2, "").speak("a2", nothing5590)
	})
	neg("neg_answered_during_onset", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).commit("r1").callerStart("s2").ok("r1").callerFinal("s2").
			state(2, "").speak("a2", nothing5590)
	})

	// Correction: quantity 2, then 4.
	qty4 := intent(2, "update_order", true, "order_number", "5590", "quantity", "4")
	args4 := []string{"order_number", "5590", "quantity", "4"}
	corr := func(name string, f func(b *builder)) {
		b := newCall(name, "correction", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590),
			say("s2", trace.ActCorrect, "Sorry, make that quantity 4.", qty4))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			toolIntent("update_order", "order_number", "5590", "quantity", "2")
		f(b)
		hs[name] = b.done()
	}
	const done4 = "Done. Order 5590 now has quantity 4."
	corr("corr_inflight_commits_stale", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).caller("s2").commit("r1").ok("r1").
			state(2, "update_order", args4...).toolIntent("update_order", args4...).call("r2", "k-2", "update_order", args4...).speak("a2", done4)
	})
	corr("corr_stale_sent_after", func(b *builder) {
		b.caller("s2").state(2, "update_order", args4...).call("r1", "k-1", "update_order", args...).speak("a2", done2)
	})
	corr("corr_stale_sent_during_onset", func(b *builder) {
		b.callerStart("s2").call("r1", "k-1", "update_order", args...).callerFinal("s2").
			state(2, "update_order", args4...).toolIntent("update_order", args4...).call("r2", "k-2", "update_order", args4...).speak("a2", done4)
	})
	corr("corr_heard", func(b *builder) {
		b.caller("s2").state(2, "update_order", args4...).toolIntent("update_order", args4...).
			call("r1", "k-1", "update_order", args4...).speak("a2", done4)
	})
	corr("corr_first_act_speech", func(b *builder) {
		b.caller("s2").speak("a1", "Okay, quantity 4 for order 5590.").toolIntent("update_order", args4...).
			call("r1", "k-1", "update_order", args4...).speak("a2", done4)
	})
	corr("corr_first_act_old_speech", func(b *builder) {
		b.caller("s2").speak("a1", "Okay, quantity 2 for order 5590.").toolIntent("update_order", args4...).
			call("r1", "k-1", "update_order", args4...).speak("a2", done4)
	})
	corr("corr_no_act", func(b *builder) { b.caller("s2") })
	corr("corr_accepted_before", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).caller("s2").state(2, "update_order", args4...).
			speak("a2", done2)
	})
	corr("corr_accepted_before_then_fixed", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).caller("s2").state(2, "update_order", args4...).
			toolIntent("update_order", args4...).call("r2", "k-2", "update_order", args4...).speak("a2", done4)
	})
	corr("corr_stale_state_kept", func(b *builder) {
		b.caller("s2").state(2, "update_order", args...).toolIntent("update_order", args4...).
			call("r1", "k-1", "update_order", args4...).speak("a2", done4)
	})
	corr("corr_dropped_task", func(b *builder) {
		b.caller("s2").state(2, "").speak("a2", "Okay.")
	})
	corr("corr_dropped_task_claims", func(b *builder) {
		b.caller("s2").state(2, "").speak("a2", done4)
	})

	// Noise while the agent speaks.
	noisy := func(name string, f func(b *builder)) {
		b := newCall(name, "interruption", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590),
			trace.Step{ID: "n1", Do: trace.StepNoise, Sound: "door", Duration: 400 * time.Millisecond})
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2")
		f(b)
		b.toolIntent("update_order", args...).call("r1", "k-1", "update_order", args...).speak("a2", done2)
		hs[name] = b.done()
	}
	noisy("noise_clear_inside", func(b *builder) {
		b.speakStart("a1", "Okay, updating").noise("n1", trace.KindCallerNoiseStart).clear("a1", "Okay, updating").
			noise("n1", trace.KindCallerNoiseEnd)
	})
	noisy("noise_clear_within_yield", func(b *builder) {
		b.speakStart("a1", "Okay, updating").noise("n1", trace.KindCallerNoiseStart).noise("n1", trace.KindCallerNoiseEnd).
			wait(time.Second).clear("a1", "Okay, updating")
	})
	noisy("noise_clear_after_yield", func(b *builder) {
		b.speakStart("a1", "Okay, updating").noise("n1", trace.KindCallerNoiseStart).noise("n1", trace.KindCallerNoiseEnd).
			wait(2*time.Second).clear("a1", "Okay, updating")
	})
	noisy("noise_clear_before", func(b *builder) {
		b.speakStart("a1", "Okay, updating").clear("a1", "Okay, updating").noise("n1", trace.KindCallerNoiseStart).
			noise("n1", trace.KindCallerNoiseEnd)
	})
	noisy("noise_never_ends", func(b *builder) {
		b.speakStart("a1", "Okay, updating").noise("n1", trace.KindCallerNoiseStart).wait(5*time.Second).clear("a1", "Okay, updating")
	})

	// Interruption: a stop while the agent speaks.
	interrupt := func(name string, f func(b *builder)) {
		b := newCall(name, "interruption", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590),
			trace.Step{ID: "s2", Do: trace.StepSay, Act: trace.ActInterrupt, Text: "Hang on a second."})
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2")
		f(b)
		hs[name] = b.done()
	}
	rest := func(b *builder) {
		b.toolIntent("update_order", args...).call("r1", "k-1", "update_order", args...).speak("a2", done2)
	}
	interrupt("interrupt_cleared_at_once", func(b *builder) {
		b.speakStart("a1", "Okay, updating order").callerStart("s2").clear("a1", "Okay").callerFinal("s2")
		rest(b)
	})
	interrupt("interrupt_ended_late", func(b *builder) {
		b.speakStart("a1", "Okay, updating order").callerStart("s2").callerFinal("s2").wait(2*time.Second).speakEnd("a1", "Okay, updating order")
		rest(b)
	})
	interrupt("interrupt_ended_at_bound", func(b *builder) {
		b.speakStart("a1", "Okay, updating order").callerStart("s2").wait(1300*time.Millisecond).speakEnd("a1", "Okay, updating order").callerFinal("s2")
		rest(b)
	})
	interrupt("interrupt_never_stopped", func(b *builder) {
		b.speakStart("a1", "Okay, updating order").callerStart("s2").callerFinal("s2")
		rest(b)
	})
	interrupt("interrupt_not_speaking", func(b *builder) {
		b.speak("a1", "Okay, updating order").callerStart("s2").callerFinal("s2")
		rest(b)
	})
	interrupt("interrupt_cleared_before_onset", func(b *builder) {
		b.speakStart("a1", "Okay, updating order").clear("a1", "Okay").callerStart("s2").callerFinal("s2")
		rest(b)
	})
	interrupt("interrupt_starts_at_onset", func(b *builder) {
		b.callerStart("s2").speakStart("a1", "Okay, updating order").callerFinal("s2").speakEnd("a1", "Okay, updating order")
		rest(b)
	})

	// A write answered before the change's onset lands after its final
	// words: judged as of its answer, unless the answer was an error or lost.
	pend := `{"ok":true,"status":"pending","operation":"op-1"}`
	neg("neg_pending_before_onset_lands_after", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).respond("r1", 202, pend, false).caller("s2").state(2, "").
			commit("r1").speak("a2", nothing5590)
	})
	neg("axis_neg_pending_during_onset_lands_after", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).callerStart("s2").respond("r1", 202, pend, false).callerFinal("s2").
			state(2, "").commit("r1").speak("a2", nothing5590)
	})
	neg("axis_neg_error_before_onset_lands_after", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).respond("r1", 500, e500, false).caller("s2").state(2, "").
			commit("r1").speak("a2", nothing5590)
	})
	neg("axis_neg_400_before_onset_lands_after", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).respond("r1", 400, errorBody("bad_request", "no"), false).caller("s2").state(2, "").
			commit("r1").speak("a2", nothing5590)
	})
	neg("axis_neg_dropped_before_onset_lands_after", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).respond("r1", 200, "", true).caller("s2").state(2, "").
			commit("r1").speak("a2", nothing5590)
	})
	corr("corr_pending_before_onset_lands_after", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).respond("r1", 202, pend, false).caller("s2").commit("r1").
			state(2, "update_order", args4...).toolIntent("update_order", args4...).call("r2", "k-2", "update_order", args4...).speak("a2", done4)
	})
	corr("corr_pending_during_onset_lands_after", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).callerStart("s2").respond("r1", 202, pend, false).callerFinal("s2").commit("r1").
			state(2, "update_order", args4...).toolIntent("update_order", args4...).call("r2", "k-2", "update_order", args4...).speak("a2", done4)
	})
	corr("corr_pending_before_onset_never_fixed", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).respond("r1", 202, pend, false).caller("s2").commit("r1").
			state(2, "update_order", args4...).speak("a2", done2)
	})
	noisy("noise_clear_at_bound", func(b *builder) {
		b.speakStart("a1", "Okay, updating").noise("n1", trace.KindCallerNoiseStart).noise("n1", trace.KindCallerNoiseEnd).
			wait(1300*time.Millisecond).clear("a1", "Okay, updating")
	})
	noisy("noise_clear_just_after_bound", func(b *builder) {
		b.speakStart("a1", "Okay, updating").noise("n1", trace.KindCallerNoiseStart).noise("n1", trace.KindCallerNoiseEnd).
			wait(1301*time.Millisecond).clear("a1", "Okay, updating")
	})
	interrupt("interrupt_ended_just_after_bound", func(b *builder) {
		b.speakStart("a1", "Okay, updating order").callerStart("s2").wait(1301*time.Millisecond).speakEnd("a1", "Okay, updating order").callerFinal("s2")
		rest(b)
	})
	qtyCall("hangup_at_yield_bound", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).wait(1300 * time.Millisecond).hangup()
	})
	qtyCall("hangup_just_after_yield_bound", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).wait(1301 * time.Millisecond).hangup()
	})
	qtyCall("hangup_mid_claim", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).speakStart("a2", done2).hangup()
	})
	qtyCall("hangup_after_claim", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).speak("a2", done2).hangup()
	})
	qtyCall("hangup_mid_claim_cleared", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).speakStart("a2", done2).clear("a2", "Done.").hangup()
	})

	// Text keys (pets named rex and fido): a name is a text value.
	pets := func(name string, f func(b *builder)) {
		b := newCallIn(petTools, name, "correction", nil, petRecords(),
			say("s1", trace.ActSay, "Please update rex's food to tuna.", intent(1, "update_pet", true, "pet", "rex", "food", "tuna")),
			say("s2", trace.ActCorrect, "Sorry, I meant fido.", intent(2, "update_pet", true, "pet", "fido", "food", "tuna")))
		b.caller("s1").state(1, "update_pet", "pet", "rex", "food", "tuna").caller("s2")
		f(b)
		hs[name] = b.done()
	}
	fido := []string{"pet", "fido", "food", "tuna"}
	pets("pets_speech_old_name", func(b *builder) {
		b.speak("a1", "Okay, updating rex now.").call("r1", "k-1", "update_pet", fido...).speak("a2", "Done, fido's food is updated to tuna.")
	})
	pets("axis_pets_speech_new_name", func(b *builder) {
		b.speak("a1", "Okay, updating fido now.").call("r1", "k-1", "update_pet", fido...).speak("a2", "Done, fido's food is updated to tuna.")
	})
	pets("axis_pets_speech_both_names", func(b *builder) {
		b.speak("a1", "Okay, fido, not rex.").call("r1", "k-1", "update_pet", fido...).speak("a2", "Done, fido's food is updated to tuna.")
	})
	pets("axis_pets_confirms_old_name", func(b *builder) {
		b.call("r1", "k-1", "update_pet", fido...).speak("a2", "Done, rex's food is updated to tuna.")
	})
	pets("axis_pets_confirms_both_names", func(b *builder) {
		b.call("r1", "k-1", "update_pet", fido...).speak("a2", "Done, fido's food is updated to tuna, not rex's.")
	})
	pets("pets_wrong_pet_written", func(b *builder) {
		b.call("r1", "k-1", "update_pet", "pet", "rex", "food", "tuna").speak("a2", "Done, rex's food is updated to tuna.")
	})

	// Creates: a stale create lands first and takes the predicted key.
	ship99 := intent(2, "ship_order", true, "order_number", "5599")
	ships := func(name string, f func(b *builder)) {
		b := newCall(name, "correction", nil, domain(), say("s1", trace.ActSay, reqShip5590, ship5590),
			say("s2", trace.ActCorrect, "Sorry, I meant order 5599.", ship99))
		b.caller("s1").state(1, "ship_order", "order_number", "5590")
		f(b)
		hs[name] = b.done()
	}
	const shipped99 = "Done. Order 5599 is shipped."
	ships("ship_stale_first", func(b *builder) {
		b.toolIntent("ship_order", "order_number", "5590").recv("r1", "k-1", 0, "ship_order", "order_number", "5590").
			caller("s2").commit("r1").ok("r1").state(2, "ship_order", "order_number", "5599").
			toolIntent("ship_order", "order_number", "5599").call("r2", "k-2", "ship_order", "order_number", "5599").speak("a2", shipped99)
	})
	ships("ship_right_only", func(b *builder) {
		b.caller("s2").state(2, "ship_order", "order_number", "5599").
			toolIntent("ship_order", "order_number", "5599").call("r1", "k-2", "ship_order", "order_number", "5599").speak("a2", shipped99)
	})
	ships("ship_stale_only", func(b *builder) {
		b.caller("s2").state(2, "ship_order", "order_number", "5599").
			toolIntent("ship_order", "order_number", "5590").call("r1", "k-2", "ship_order", "order_number", "5590").speak("a2", shipped99)
	})
	ships("ship_right_twice", func(b *builder) {
		b.caller("s2").state(2, "ship_order", "order_number", "5599").
			call("r1", "", "ship_order", "order_number", "5599").call("r2", "", "ship_order", "order_number", "5599").speak("a2", shipped99)
	})

	// Odd answers and intents.
	faultsCall := func(name string, f func(b *builder)) {
		b := newCall(name, "tool_failure", errFault, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			toolIntent("update_order", "order_number", "5590", "quantity", "2")
		f(b)
		hs[name] = b.done()
	}
	faultsCall("fault_answer_not_json", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultStatus).commit("r1").respond("r1", 200, "<html>oops</html>", false).speak("a2", done2)
	})
	faultsCall("fault_answer_not_ok", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultStatus).commit("r1").respond("r1", 200, `{"ok":false}`, false).speak("a2", done2)
	})
	faultsCall("fault_answer_other_values", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultStatus).commit("r1").
			respond("r1", 200, recordBody(order("5590", "2026-12-01", "7")), false).speak("a2", done2)
	})
	faultsCall("fault_answer_ok", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultStatus).commit("r1").ok("r1").speak("a2", done2)
	})
	faultsCall("fault_answer_202_plain", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultStatus).commit("r1").respond("r1", 202, `{"ok":true}`, false).speak("a2", done2)
	})
	faultsCall("fault_answer_400", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultStatus).respond("r1", 400, errorBody("bad_request", "no"), false).speak("a2", sorry)
	})
	faultsCall("fault_answer_399", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultStatus).commit("r1").respond("r1", 399, recordBody(order("5590", "2026-12-01", "2")), false).speak("a2", done2)
	})
	faultsCall("fault_timeout_cancelled", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultTimeout).wait(5*time.Second).cancelled("r1", "client gave up").
			toolIntent("update_order", args...).call("r2", "k-1", "update_order", args...).speak("a2", done2)
	})
	faultsCall("fault_cancelled_no_timeout", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultStatus).cancelled("r1", "client gave up").
			toolIntent("update_order", args...).call("r2", "k-1", "update_order", args...).speak("a2", done2)
	})
	qtyCall("answer_not_json", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).commit("r1").respond("r1", 200, "<html>oops</html>", false).speak("a2", done2)
	})
	qtyCall("answer_not_ok", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).commit("r1").respond("r1", 200, `{"ok":false}`, false).speak("a2", done2)
	})
	qtyCall("answer_other_values", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).commit("r1").
			respond("r1", 200, recordBody(order("5590", "2026-12-01", "7")), false).speak("a2", done2)
	})
	b = newCall("unknown-tool", "plain", nil, domain(), say("s1", trace.ActSay, "Please frobnicate order 5590.",
		intent(1, "frobnicate", true, "order_number", "5590")))
	b.caller("s1").speak("a1", "Sorry, I cannot do that; nothing was changed.")
	hs["axis_intent_unknown_tool"] = b.done()
	b = newCall("missing-record", "plain", nil, domain(), say("s1", trace.ActSay, "Please change the quantity on order 1234 to 2.",
		intent(1, "update_order", true, "order_number", "1234", "quantity", "2")))
	b.caller("s1").speak("a1", "Sorry, there is no order 1234; nothing was changed.")
	hs["axis_intent_missing_record"] = b.done()
	b = newCall("final-only", "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.callerFinal("s1").state(1, "update_order", args...).toolIntent("update_order", args...).
		call("r1", "k-1", "update_order", args...).speak("a2", done2)
	hs["caller_final_without_start"] = b.done()
	b = newCall("missed-trigger", "correction", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590),
		say("s2", trace.ActCorrect, "Sorry, make that quantity 4.", qty4))
	b.caller("s1").state(1, "update_order", args...).toolIntent("update_order", args...).
		call("r1", "k-1", "update_order", args...).speak("a2", done2)
	hs["correction_never_spoken"] = b.done()
	b = newCall("fault-step", "tool_failure", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590),
		trace.Step{ID: "f1", Do: trace.StepFault})
	b.caller("s1").state(1, "update_order", args...).toolIntent("update_order", args...).
		call("r1", "k-1", "update_order", args...).speak("a2", done2)
	hs["fault_step_not_applied"] = b.done()
	b = newCall("interrupt-no-intent", "interruption", nil, domain(),
		trace.Step{ID: "s1", Do: trace.StepSay, Act: trace.ActInterrupt, Text: "Wait!", Invalidates: true})
	b.speakStart("a1", "Hello, how can").caller("s1").clear("a1", "Hello").speak("a2", "Yes?")
	hs["interrupt_without_intent"] = b.done()
	for sc, wait := range map[float64]time.Duration{0: time.Second, 2: 2 * time.Second} {
		sc := sc
		b = newCall(fmt.Sprintf("scale-%v", sc), "interruption", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590),
			trace.Step{ID: "n1", Do: trace.StepNoise, Sound: "door", Duration: 400 * time.Millisecond})
		b.start.TimeScale = sc
		b.caller("s1").state(1, "update_order", args...).speakStart("a1", "Okay, updating").
			noise("n1", trace.KindCallerNoiseStart).noise("n1", trace.KindCallerNoiseEnd).wait(wait).clear("a1", "Okay, updating").
			toolIntent("update_order", args...).call("r1", "k-1", "update_order", args...).speak("a2", done2)
		hs[fmt.Sprintf("noise_time_scale_%v", sc)] = b.done()
	}

	// A plain false confirmation: a later write overwrote the wanted value.
	args5 := []string{"order_number", "5590", "quantity", "5"}
	qtyCall("false_confirmation_overwritten", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).toolIntent("update_order", args5...).
			call("r2", "k-2", "update_order", args5...).speak("a2", "Done, order 5590 is updated.")
	})
	qtyCall("false_confirmation_in_flight", func(b *builder) {
		b.call("r1", "k-1", "update_order", args5...).toolIntent("update_order", args...).
			recv("r2", "k-2", 0, "update_order", args...).speak("a2", "Done, order 5590 is updated.")
	})
	qtyCall("false_confirmation_read_in_flight", func(b *builder) {
		b.call("r1", "k-1", "update_order", args5...).
			recv("r2", "", 0, "get_order", "order_number", "5590").speak("a2", "Done, order 5590 is updated.")
	})
	qtyCall("false_confirmation_no_snapshot", func(b *builder) {
		b.call("r1", "k-1", "update_order", args5...).speak("a2", "Done, order 5590 is updated.")
	})
	hs["false_confirmation_no_snapshot"] = dropKind(hs["false_confirmation_no_snapshot"], trace.KindSnapshot)
	qtyCall("gave_up_one_unanswered", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).respond("r1", 500, e500, false).
			recv("r2", "k-1", 0, "update_order", args...).speak("a2", sorry)
	})
	// Never confirmed is not bucketed when axis 6 excuses the silence; a
	// wrong first write makes the call fail on another axis.
	qtyCall("silent_hangup_in_flight", func(b *builder) {
		b.call("r1", "k-1", "update_order", args5...).recv("r2", "k-2", 0, "update_order", args...).hangup()
	})
	qtyCall("silent_hangup_mid_speech", func(b *builder) {
		b.call("r1", "k-1", "update_order", args5...).call("r2", "k-2", "update_order", args...).speakStart("a2", done2).hangup()
	})
	qtyCall("silent_hangup_on_answer", func(b *builder) {
		b.call("r1", "k-1", "update_order", args5...).call("r2", "k-2", "update_order", args...).hangup()
	})
	qtyCall("silent_unread_statement", func(b *builder) {
		b.call("r1", "k-1", "update_order", args5...).call("r2", "k-2", "update_order", args...).speak("a2", "Order 5590, quantity 2.")
	})
	qtyCall("silent_stays_on", func(b *builder) {
		b.call("r1", "k-1", "update_order", args5...).call("r2", "k-2", "update_order", args...).speak("a2", "Anything else?")
	})

	// What the first act after a negation or correction shows when it is
	// a put-back, a cancel, or an "already" report.
	neg("neg_compensating_intent_first", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).caller("s2").
			toolIntent("update_order", back...).call("r2", "k-2", "update_order", back...).state(2, "").
			speak("a2", "I've put it back: order 5590 has quantity 3 again.")
	})
	neg("neg_compensation_request_first", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).caller("s2").
			call("r2", "k-2", "update_order", back...).state(2, "").
			speak("a2", "I've put it back: order 5590 has quantity 3 again.")
	})
	neg("neg_already_first", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).caller("s2").
			speak("a2", "That had already gone through: order 5590 has quantity 2 now.").state(2, "")
	})
	neg("neg_done_first", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).caller("s2").speak("a2", done2).state(2, "")
	})
	neg("neg_read_cancelled_first", func(b *builder) {
		b.recv("r1", "", 0, "get_order", "order_number", "5590").caller("s2").cancelled("r1", "client cancelled").
			state(2, "").speak("a2", nothing5590)
	})
	neg("neg_write_cancelled_first", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).caller("s2").cancelled("r1", "client cancelled").
			speak("a2", nothing5590)
	})
	neg("neg_unknown_ref_first", func(b *builder) {
		b.caller("s2")
		b.emit(trace.SourceBackend, trace.KindToolResponded, &trace.ToolEvent{Ref: "zz", Tool: "get_order", Status: 200, Body: "{}"})
		b.speak("a2", nothing5590)
	})
	neg("neg_wait_first", func(b *builder) {
		b.caller("s2").speak("a1", "One moment please.").speak("a2", nothing5590)
	})
	neg("neg_other_write_first", func(b *builder) {
		b.caller("s2").toolIntent("ship_order", "order_number", "5590").speak("a2", nothing5590)
	})
	neg("neg_read_intent_first", func(b *builder) {
		b.caller("s2").toolIntent("get_order", "order_number", "5590").speak("a2", nothing5590)
	})
	corr("corr_compensating_intent_first", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).caller("s2").
			toolIntent("update_order", back...).state(2, "update_order", args4...).
			toolIntent("update_order", args4...).call("r2", "k-2", "update_order", args4...).speak("a2", done4)
	})
	corr("corr_compensation_request_first", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).caller("s2").
			call("r2", "k-2", "update_order", back...).state(2, "update_order", args4...).
			toolIntent("update_order", args4...).call("r3", "k-3", "update_order", args4...).speak("a2", done4)
	})
	corr("corr_other_tool_first", func(b *builder) {
		b.caller("s2").toolIntent("ship_order", "order_number", "5590").state(2, "update_order", args4...).
			toolIntent("update_order", args4...).call("r1", "k-1", "update_order", args4...).speak("a2", done4)
	})
	corr("corr_read_first", func(b *builder) {
		b.caller("s2").toolIntent("get_order", "order_number", "5590").call("r0", "", "get_order", "order_number", "5590").
			state(2, "update_order", args4...).
			toolIntent("update_order", args4...).call("r1", "k-1", "update_order", args4...).speak("a2", done4)
	})
	corr("axis_corr_speech_other_count", func(b *builder) {
		b.caller("s2").speak("a1", "Okay, quantity 7 then.").state(2, "update_order", args4...).
			toolIntent("update_order", args4...).call("r1", "k-1", "update_order", args4...).speak("a2", done4)
	})
	corr("corr_speech_no_count", func(b *builder) {
		b.caller("s2").speak("a1", "Okay, order 5590.").state(2, "update_order", args4...).
			toolIntent("update_order", args4...).call("r1", "k-1", "update_order", args4...).speak("a2", done4)
	})

	// A timed-out write retried while the agent had begun a done-claim:
	// the retry's receipt (after() = the seq before it) is the claim's own
	// start, so the claim does not come after the bad answer.
	toFault := []trace.Fault{{Kind: trace.FaultTimeout, Match: &trace.ToolMatch{Tool: "update_order"}, Times: 1}}
	b = newCall("timeout-claim", "tool_failure", toFault, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").state(1, "update_order", args...).toolIntent("update_order", args...).
		recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultTimeout)
	b.emit(trace.SourceAgent, trace.KindAgentSpeechStart, &trace.AgentSpeech{Utterance: "a2"})
	b.recv("r2", "k-1", 0, "update_order", args...).commit("r2").ok("r2").cancelled("r1", "client gave up").speakEnd("a2", done2)
	hs["timeout_retry_at_claim_start"] = b.done()

	// Confirmation claims after a negation, and statements the reader
	// finds no claim in.
	neg("neg_restored_unchanged", func(b *builder) {
		b.caller("s2").state(2, "").speak("a2", "I've put it back: order 5590 has quantity 3 again.")
	})
	neg("neg_restored_wrong_value", func(b *builder) {
		b.caller("s2").state(2, "").speak("a2", "I've put it back: order 5590 has quantity 7 again.")
	})
	neg("neg_already_wrong_value", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).caller("s2").state(2, "").
			speak("a2", "That had already gone through: order 5590 has quantity 9 now.")
	})
	neg("neg_done_unchanged_no_values", func(b *builder) {
		b.caller("s2").state(2, "").speak("a2", "Done, order 5590 is updated.")
	})
	qtyCall("unread_plan", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).speak("a2", "I will update order 5590 to quantity 2.")
	})
	qtyCall("unread_question", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).speak("a2", "Order 5590, quantity 2, is that right?")
	})
	qtyCall("unread_wait", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).speak("a2", "One moment, order 5590, quantity 2.")
	})
	qtyCall("unread_cleared", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).speakStart("a2", "Order 5590, quantity 2.").clear("a2", "Order 5590")
	})
	qtyCall("unread_other_values", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...).speak("a2", "Order 5509, quantity 7.")
	})
	qtyCall("unread_before_final", func(b *builder) {
		b.call("r1", "k-1", "update_order", args...)
	})
	hs["unread_before_final"] = func() *trace.History {
		b := newCall("unread-before", "plain", nil, domain(), say("s0", trace.ActSay, "Hello.", nil), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s0").speak("a0", "Order 5590, quantity 2.").caller("s1").state(1, "update_order", args...).
			toolIntent("update_order", args...).call("r1", "k-1", "update_order", args...).speak("a1", "Anything else?")
		return b.done()
	}()

	// Active state: a self-report with nothing pending.
	plainCall := func(name string, f func(b *builder)) {
		b := newCall(name, "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1")
		f(b)
		hs[name] = b.done()
	}
	plainCall("idle_state_after_send", func(b *builder) {
		b.toolIntent("update_order", args...).call("r1", "k-1", "update_order", args...).state(1, "", args...).speak("a2", done2)
	})
	plainCall("idle_state_rejected_send", func(b *builder) {
		b.toolIntent("update_order", args...).recv("r1", "k-1", 0, "update_order", args...)
		b.emit(trace.SourceBackend, trace.KindToolRejected, b.tev("r1"))
		b.state(1, "", args...).speak("a2", sorry)
	})
	plainCall("idle_state_claim_cleared", func(b *builder) {
		b.state(1, "", args...).speakStart("a2", done2).clear("a2", "Done.")
	})
	plainCall("idle_state_claim_before", func(b *builder) {
		b.speak("a2", done2).state(1, "", args...)
	})
	plainCall("idle_state_claim_after", func(b *builder) {
		b.state(1, "", args...).speak("a2", done2)
	})
	plainCall("idle_state_other_write_sent", func(b *builder) {
		b.toolIntent("update_order", args5...).call("r1", "k-1", "update_order", args5...).state(1, "", args...).speak("a2", sorry)
	})
	plainCall("state_other_values", func(b *builder) {
		b.state(1, "update_order", args5...).toolIntent("update_order", args...).call("r1", "k-1", "update_order", args...).speak("a2", done2)
	})
	plainCall("state_then_other_notice", func(b *builder) {
		b.state(1, "update_order", args...).toolIntent("update_order", args5...).toolIntent("update_order", args...).
			call("r1", "k-1", "update_order", args...).speak("a2", done2)
	})
	plainCall("state_then_other_claim", func(b *builder) {
		b.state(1, "update_order", args...).toolIntent("update_order", args...).
			call("r1", "k-1", "update_order", args...).speak("a2", "Done. Order 5590 now has quantity 5.")
	})
	plainCall("state_then_already_claim", func(b *builder) {
		b.state(1, "update_order", args...).toolIntent("update_order", args...).
			call("r1", "k-1", "update_order", args...).speak("a2", "That had already gone through: order 5590 has quantity 5 now.")
	})
	wrongRead("wrong_record_state_adopted", func(b *builder) {
		b.state(1, "update_order", "order_number", "5599", "quantity", "2").speak("a1", "Sorry, nothing was changed on order 5590.")
	})
	wrongRead("wrong_record_not_adopted", func(b *builder) {
		b.state(1, "update_order", "order_number", "5590", "quantity", "2").speak("a1", "Sorry, nothing was changed on order 5590.")
	})

	// A timeout retried twice before the backend noticed the client leave:
	// the first retry answers it.
	b = newCall("timeout-two-retries", "tool_failure", toFault, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").state(1, "update_order", args...).toolIntent("update_order", args...).
		recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultTimeout).
		recv("r2", "k-1", 0, "update_order", args...).respond("r2", 500, e500, false).
		speak("a1", "Sorry, that did not work yet; nothing was changed.").
		recv("r3", "k-1", 0, "update_order", args...).commit("r3").ok("r3").
		cancelled("r1", "client gave up").speak("a2", done2)
	hs["timeout_two_retries"] = b.done()
	b = newCall("timeout-open", "tool_failure", toFault, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").state(1, "update_order", args...).toolIntent("update_order", args...).
		recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultTimeout).
		speak("a2", "One moment please.")
	hs["timeout_never_closed"] = b.done()

	// A late notice of the request that got the bad answer reveals nothing.
	b = newCall("late-notice-bad", "tool_failure", errFault, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").state(1, "update_order", args...).
		recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultStatus).respond("r1", 500, e500, false).
		toolIntent("update_order", args...).speak("a2", sorry)
	hs["fault_late_notice_of_bad_request"] = b.done()
	// A timeout retried (notice, then request) before the cancel: the
	// notice is the first act after it.
	b = newCall("timeout-notice", "tool_failure", toFault, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").state(1, "update_order", args...).toolIntent("update_order", args...).
		recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultTimeout).
		toolIntent("update_order", args...).recv("r2", "k-1", 0, "update_order", args...).commit("r2").ok("r2").
		cancelled("r1", "client gave up").speak("a2", done2)
	hs["timeout_retry_notice_before_cancel"] = b.done()
	// Values the wrong record shares with the requested one (the item) or
	// with the caller's intent (quantity 7) are not the wrong record's.
	wrongRead("wrong_record_shared_item_spoken", func(b *builder) {
		b.speak("a1", "Sorry, I could not find the kettle order 5590; nothing was changed.")
	})
	qty7 := intent(1, "update_order", true, "order_number", "5590", "quantity", "7")
	b = newCall("wrong-shared-intent", "tool_failure", wrongFault, domain(), say("s1", trace.ActSay, "Please change the quantity on order 5590 to 7.", qty7))
	b.caller("s1").toolIntent("get_order", "order_number", "5590").
		recv("r1", "", 0, "get_order", "order_number", "5590").faultApplied("r1", trace.FaultWrongRecord).
		respond("r1", 200, recordBody(*record(b.recs, "orders", "5599")), false).
		state(1, "update_order", "order_number", "5590", "quantity", "7").speak("a1", "Sorry, nothing was changed on order 5590.")
	hs["wrong_record_shares_intent_value"] = b.done()
	// A held request answered 400 is a tool failure; 399 would not be.
	for _, st := range []int{400, 399} {
		st := st
		b = newCall(fmt.Sprintf("held-%d", st), "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590),
			trace.Step{ID: "h1", Do: trace.StepHold, Hold: "h1", Match: &trace.ToolMatch{Tool: "update_order"}})
		b.caller("s1").state(1, "update_order", args...).toolIntent("update_order", args...).
			recv("r1", "k-1", 0, "update_order", args...).held("r1", "h1").released("r1", "h1").
			respond("r1", st, errorBody("bad_request", "no"), false).speak("a2", sorry)
		hs[fmt.Sprintf("held_answered_%d", st)] = b.done()
	}
	// A put-back that never landed repairs nothing.
	neg("neg_putback_failed", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).caller("s2").state(2, "").commit("r1").ok("r1").
			toolIntent("update_order", back...).recv("r2", "k-2", 0, "update_order", back...).respond("r2", 500, e500, false).
			speak("a2", "Sorry, I could not put order 5590 back.")
	})
	// A non-canonical integer written: the snapshot holds it as sent.
	qtyCall("quantity_leading_zero", func(b *builder) {
		b.call("r1", "k-1", "update_order", "order_number", "5590", "quantity", "02").speak("a2", done2)
	})

	faulted("fault_then_wait", func(b *builder) {
		b.respond("r1", 500, e500, false).speak("a1", "One moment please.").speak("a2", sorry)
	})
	faultsCall("fault_answer_400_empty", func(b *builder) {
		b.recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultStatus).respond("r1", 400, "", false).speak("a2", done2)
	})
	ships("ship_never_sent", func(b *builder) {
		b.caller("s2").state(2, "ship_order", "order_number", "5599").speak("a2", shipped99)
	})
	// Putting back a write the caller still wants is no compensation.
	plainCall("undo_wanted_write", func(b *builder) {
		b.toolIntent("update_order", args...).call("r1", "k-1", "update_order", args...).
			toolIntent("update_order", back...).call("r2", "k-2", "update_order", back...).speak("a2", "Order 5590 has quantity 3.")
	})
	plainCall("idle_state_after_send_and_claim", func(b *builder) {
		b.toolIntent("update_order", args...).call("r1", "k-1", "update_order", args...).speak("a2", done2).state(1, "", args...)
	})

	// A date sent in words is held as sent: the confirmation compares it
	// by meaning.
	b = newCall("date-words", "plain", nil, domain(), say("s1", trace.ActSay, reqDate5590, date5590))
	b.caller("s1").state(1, "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
		toolIntent("update_order", "order_number", "5590", "delivery_date", "December 3").
		call("r1", "k-1", "update_order", "order_number", "5590", "delivery_date", "December 3").
		speak("a2", "Done. Order 5590 now has delivery date December 3.")
	hs["date_sent_in_words"] = b.done()
	return hs
}

var petTools = []trace.ToolSpec{
	{Name: "get_pet", Effect: trace.EffectRead, Table: "pets", KeyArg: "pet",
		Args: []trace.ArgSpec{{Name: "pet", Type: "string", Required: true}}},
	{Name: "update_pet", Effect: trace.EffectUpdate, Table: "pets", KeyArg: "pet", Consequential: true,
		Args: []trace.ArgSpec{{Name: "pet", Type: "string", Required: true}, {Name: "food", Type: "string"}}},
}

func petRecords() []trace.Record {
	return []trace.Record{
		{Table: "pets", Key: "rex", Version: 1, Fields: map[string]string{"food": "beef"}},
		{Table: "pets", Key: "fido", Version: 1, Fields: map[string]string{"food": "beef"}},
	}
}

// TestMutListsAndLookups pins the exported lists and lookups.
func TestMutListsAndLookups(t *testing.T) {
	if got := ChallengeKinds(); !slices.Equal(got, []ChallengeKind{ChallengeCorrection, ChallengeNegation, ChallengeInterruption,
		ChallengeNoise, ChallengeToolFailure, ChallengePlain}) {
		t.Errorf("ChallengeKinds = %v", got)
	}
	if got := Buckets(); len(got) != 14 || got[0] != BucketStaleToolArgs || got[len(got)-1] != BucketUnclassified ||
		!slices.Contains(got, BucketStaleState) || !slices.Contains(got, BucketNeverConfirmed) ||
		slices.Index(got, BucketWrongRecord) != 12 || slices.Index(got, BucketNotExecuted) != 7 {
		t.Errorf("Buckets = %v", got)
	}
	var cs CallScore
	if r := cs.Axis(Captured); r.Axis != Captured || r.Verdict != Unknown || len(r.Findings) != 0 {
		t.Errorf("missing axis: %+v", r)
	}
	for k, want := range map[ChallengeKind]bool{ChallengeCorrection: true, ChallengeNegation: true, ChallengeInterruption: true,
		ChallengeNoise: false, ChallengeToolFailure: false, ChallengePlain: false} {
		if got := (challenge{kind: k}).speech(); got != want {
			t.Errorf("%s.speech() = %v", k, got)
		}
	}
}

// viewOf indexes a history the way Score does.
func viewOf(h *trace.History) *view { return index(h, h.Start(), h.End()) }

// TestMutViewHelpers: citations, marks and request timelines on real
// histories.
func TestMutViewHelpers(t *testing.T) {
	hs := mutHistories()
	v := viewOf(hs["corr_heard"])
	if got := v.cite(1); got != "#1 call.start" {
		t.Errorf("cite(1) = %q", got)
	}
	if got := v.cite(999); got != "#999" {
		t.Errorf("cite(999) = %q", got)
	}
	f := v.find("x", 0, -1, 2, 2, 3)
	if !slices.Equal(f.Events, []int{2, 3}) || !strings.HasPrefix(f.Text, "x [#2 ") || strings.Count(f.Text, "#") != 2 {
		t.Errorf("find = %+v", f)
	}
	if g := v.find("y", 0); g.Text != "y" || len(g.Events) != 0 {
		t.Errorf("find without events = %+v", g)
	}
	// Two marks: version 1 at its final, version 2 (changed) with an onset.
	if len(v.marks) != 2 || !v.marks[1].changed || v.marks[1].onset == 0 || v.marks[1].onset >= v.marks[1].seq {
		t.Fatalf("marks %+v", v.marks)
	}
	m1, m2 := &v.marks[0], &v.marks[1]
	for _, c := range []struct {
		name string
		got  *mark
		want *mark
	}{
		{"markBefore(m1)", v.markBefore(m1.seq), nil},
		{"markBefore(m1+1)", v.markBefore(m1.seq + 1), m1},
		{"markBefore(m2)", v.markBefore(m2.seq), m1},
		{"markBefore(m2+1)", v.markBefore(m2.seq + 1), m2},
		{"markSpoken(m1)", v.markSpoken(m1.seq), m1}, // the first intent counts from its onset too
		{"markSpoken(m1 onset)", v.markSpoken(m1.onset), nil},
		{"markSpoken(m1 onset+1)", v.markSpoken(m1.onset + 1), m1},
		{"markSpoken(onset)", v.markSpoken(m2.onset), m1},
		{"markSpoken(onset+1)", v.markSpoken(m2.onset + 1), m2},
		{"markSpoken(m2)", v.markSpoken(m2.seq), m2},
		{"markAt(m2)", v.markAt(m2.seq), m2},
		{"markAt(onset)", v.markAt(m2.onset), nil},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// superseded: quantity 2 belongs to version 1 and differs from 4.
	if !v.superseded(m2, "quantity", "2") || v.superseded(m2, "quantity", "4") || v.superseded(m2, "quantity", "") ||
		v.superseded(m2, "quantity", "9") || v.superseded(m1, "quantity", "4") {
		t.Error("superseded")
	}
	if v.intentAt(1) != nil {
		t.Error("intentAt(call.start)")
	}
}

// TestMutRequestTimeline: closed, after and openAt at their boundaries.
func TestMutRequestTimeline(t *testing.T) {
	for _, c := range []struct {
		r           request
		closed, aft int
	}{
		{request{recv: 5, responded: 9, cancelled: 9}, 9, 9},
		{request{recv: 5, responded: 9}, 9, 9},
		{request{recv: 5, cancelled: 9}, 9, 9},
		{request{recv: 5, responded: 9, retryAt: 9}, 9, 9},   // a retry at the answer changes nothing
		{request{recv: 5, responded: 10, retryAt: 9}, 10, 8}, // a retry before it does
		{request{recv: 5, retryAt: 7}, 0, 6},
		{request{recv: 5}, 0, 0},
	} {
		if got := c.r.closed(); got != c.closed {
			t.Errorf("%+v closed = %d, want %d", c.r, got, c.closed)
		}
		if got := c.r.after(); got != c.aft {
			t.Errorf("%+v after = %d, want %d", c.r, got, c.aft)
		}
	}
	committed := &request{recv: 5, commits: []int{8}}
	if !committed.openAt(7) || committed.openAt(8) {
		t.Error("openAt: open up to its commit, not at it")
	}
	cancelled := &request{recv: 5, cancelled: 8}
	if !cancelled.openAt(8) || cancelled.openAt(9) || cancelled.openAt(5) {
		t.Error("openAt at the cancel")
	}
	if !(&request{recv: 5, rejected: 0}).openAt(6) {
		t.Error("openAt: an unanswered request is open")
	}
}

// TestMutMarkSpokenRepeat: a repeated intent (same version, unchanged)
// counts from its final words, not its onset.
func TestMutMarkSpokenRepeat(t *testing.T) {
	b := newCall("repeat", "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590), say("s2", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").caller("s2").speak("a1", "Okay.")
	v := viewOf(b.done())
	if len(v.marks) != 2 || v.marks[1].changed {
		t.Fatalf("marks %+v", v.marks)
	}
	m1, m2 := &v.marks[0], &v.marks[1]
	if v.markSpoken(m2.seq) != m1 || v.markSpoken(m2.seq+1) != m2 || v.markSpoken(m2.onset+1) != m1 {
		t.Error("markSpoken: an unchanged repeat takes force at its final words")
	}
}
