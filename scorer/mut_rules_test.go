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
	fmt.Fprintf(&b, "%s %s %q %v\n", vector(cs), cs.Outcome, cs.Primary, cs.Secondary)
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
	return hs
}
