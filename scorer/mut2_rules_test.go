package scorer

// Second round of rule tests written against the live mutants of the
// mutation runs (docs/PERFORMANCE.md, "Mutation testing"): each history
// tells one rule apart from a mutation of one comparison in it. The whole
// score of each is pinned in testdata/mut2rules/<name>.txt (update with
// go test ./scorer -run TestMut2RulesGolden -update, then read the diff
// against docs/SCORING.md).

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callproof/callproof/entity"
	"github.com/callproof/callproof/trace"
)

func mut2Histories() map[string]*trace.History {
	hs := map[string]*trace.History{}
	args := []string{"order_number", "5590", "quantity", "2"}
	const done2 = "Done. Order 5590 now has quantity 2."
	toFault := []trace.Fault{{Kind: trace.FaultTimeout, Match: &trace.ToolMatch{Tool: "update_order"}, Times: 1}}
	e500 := errorBody("server_error", "boom")

	// A timed-out write; a read sent just before the retry (received at
	// the timeout's after(), the seq before the retry) is not after the
	// bad answer, so it does not verify it; the retry errs. Both bad
	// answers are followed by an unverified done-claim.
	b := newCall("timeout-read-at-after", "tool_failure", toFault, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").state(1, "update_order", args...).toolIntent("update_order", args...).
		recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultTimeout).
		recv("rd", "", 0, "get_order", "order_number", "5590").
		recv("r2", "k-1", 0, "update_order", args...).
		ok("rd").respond("r2", 500, e500, false).
		wait(5*time.Second).cancelled("r1", "client gave up").
		speak("a2", done2)
	hs["timeout_read_at_after"] = b.done()

	// A timed-out write that committed, a network duplicate of it that
	// committed again (received just before the agent's retry, so at the
	// timeout's after()), then the retry. No request carries a key. The
	// duplicate is not a retry the agent sent after the bad answer: the
	// unsafe retry, the missing key and the stale retry are the agent's
	// retry, not the network's repeat.
	b = newCall("timeout-dup-retry", "tool_failure", toFault, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").state(1, "update_order", args...).toolIntent("update_order", args...).
		recv("r1", "", 0, "update_order", args...).faultApplied("r1", trace.FaultTimeout).commit("r1").
		recv("d1", "", 0, "update_order", args...)
	b.reqs["d1"].DuplicateOf = "r1"
	b.recv("r2", "", 0, "update_order", args...).commit("d1").commit("r2").ok("r2").
		ok("d1").wait(5*time.Second).cancelled("r1", "client gave up").
		speak("a2", done2)
	hs["timeout_dup_then_retry"] = b.done()

	// A write that matched the intent when it landed; the caller then adds
	// a date to the same request and the second write carries both. The
	// first write's quantity is still wanted, so it is not an
	// uncompensated write; the agent never confirms.
	both := intent(2, "update_order", true, "order_number", "5590", "quantity", "2", "delivery_date", "2026-12-05")
	b = newCall("kept-value", "correction", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590),
		say("s2", trace.ActCorrect, "And please move the delivery to December 5 too.", both))
	b.caller("s1").state(1, "update_order", args...).toolIntent("update_order", args...).
		call("r1", "k-1", "update_order", args...).
		caller("s2").state(2, "update_order", "order_number", "5590", "quantity", "2", "delivery_date", "2026-12-05").
		toolIntent("update_order", "order_number", "5590", "quantity", "2", "delivery_date", "2026-12-05").
		call("r2", "k-2", "update_order", "order_number", "5590", "quantity", "2", "delivery_date", "2026-12-05")
	hs["kept_value_never_confirmed"] = b.done()

	// Free-text names judged on the done clause only: a question that
	// names the corrected-away pet is not part of the claim. (Pinned on
	// confirmation only: active state fails every pets done-claim, the
	// text-slot issue reported with mut_rules_test.go's axis_pets_*.)
	pets := func(name string, f func(b *builder)) {
		b := newCallIn(petTools, name, "correction", nil, petRecords(),
			say("s1", trace.ActSay, "Please update rex's food to tuna.", intent(1, "update_pet", true, "pet", "rex", "food", "tuna")),
			say("s2", trace.ActCorrect, "Sorry, I meant fido.", intent(2, "update_pet", true, "pet", "fido", "food", "tuna")))
		b.caller("s1").state(1, "update_pet", "pet", "rex", "food", "tuna").caller("s2")
		f(b)
		hs[name] = b.done()
	}
	fido := []string{"pet", "fido", "food", "tuna"}
	pets("axis_pets_old_name_in_question", func(b *builder) {
		b.state(2, "update_pet", fido...).call("r1", "k-1", "update_pet", fido...).
			speak("a2", "Done, the food is updated to tuna. Anything else for rex?")
	})
	pets("axis_pets_old_name_in_claim", func(b *builder) {
		b.state(2, "update_pet", fido...).call("r1", "k-1", "update_pet", fido...).
			speak("a2", "Done, rex's food is updated to tuna.")
	})

	// The caller asks for what the record already holds: nothing changes,
	// so the intent targets no record, and the pet it names is the record
	// its key picks.
	b = newCallIn(petTools, "pets-same", "plain", nil, petRecords(),
		say("s1", trace.ActSay, "Please make sure rex's food is beef.", intent(1, "update_pet", true, "pet", "rex", "food", "beef")))
	b.caller("s1").state(1, "update_pet", "pet", "rex", "food", "beef").
		call("r1", "k-1", "update_pet", "pet", "rex", "food", "beef").
		speak("a2", "Done, rex's food is beef.")
	hs["pets_no_change_named"] = b.done()

	// A field no tool takes (so untyped) whose stored value is not in
	// canonical form: the intended record keeps it as stored, and the
	// snapshot holds it the same way.
	recs := domain()
	recs[0].Fields["item"] = "#kettle"
	b = newCall("untyped-field", "plain", nil, recs, say("s1", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").state(1, "update_order", args...).toolIntent("update_order", args...).
		call("r1", "k-1", "update_order", args...).speak("a2", done2)
	hs["untyped_field_raw"] = b.done()

	// A damaged ledger: the backend's rows for a request with no
	// tool.received (the consistency check replays commits, not
	// receipts, so it lets these through). A request never received was
	// never sent as far as the rules are concerned.
	unreceived := func(name string, f func(b *builder)) {
		b := newCall(name, "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1")
		b.reqs["r1"] = &trace.ToolEvent{Ref: "r1", Tool: "update_order", Args: kv(args...)}
		f(b)
		hs[name] = b.done()
	}
	// An idle self-report: no call the backend received carried the intent
	// (though the commit row names its arguments).
	unreceived("axis_unreceived_write_idle_state", func(b *builder) {
		b.commit("r1")
		b.h.Events[len(b.h.Events)-1].Data.(*trace.ToolEvent).Args = kv(args...)
		b.ok("r1").state(1, "", args...)
	})
	// "Not sure" after an answer to a request never received: the agent
	// had no definite answer from a request it sent.
	unreceived("axis_unreceived_write_unsure", func(b *builder) {
		b.commit("r1").ok("r1").speak("a2", "I'm not sure whether order 5590 was updated.")
	})
	// An error answer to a request never received is not a try the agent
	// made, so the agent did not give up after transient errors.
	unreceived("axis_unreceived_error_sorry", func(b *builder) {
		b.respond("r1", 500, e500, false).speak("a2", "Sorry, I could not update order 5590; nothing was changed.")
	})
	// After an error answer the agent announces a retry whose request the
	// backend never received (its commit row alone names the arguments):
	// the notice is the agent's first act, not a late notice of that row.
	errFault := []trace.Fault{{Kind: trace.FaultStatus, Match: &trace.ToolMatch{Tool: "update_order"}, Times: 1, Status: 500}}
	b = newCall("unreceived-retry", "tool_failure", errFault, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").toolIntent("update_order", args...).recv("r1", "k-1", 0, "update_order", args...).faultApplied("r1", trace.FaultStatus).respond("r1", 500, e500, false).
		toolIntent("update_order", args...)
	b.reqs["r2"] = &trace.ToolEvent{Ref: "r2", Tool: "update_order", Args: kv(args...)}
	b.commit("r2")
	b.h.Events[len(b.h.Events)-1].Data.(*trace.ToolEvent).Args = kv(args...)
	b.ok("r2").speak("a2", done2)
	hs["axis_unreceived_retry_notice"] = b.done()

	// A record field named like another tool's key argument is read as a
	// key: the order's bin "12" is an id the confirmation may name.
	binTools := append(append([]trace.ToolSpec{}, orderTools...), trace.ToolSpec{Name: "get_bin", Effect: trace.EffectRead, Table: "bins", KeyArg: "bin",
		Args: []trace.ArgSpec{{Name: "bin", Type: "string", Required: true}}})
	recs = domain()
	recs[0].Fields["bin"] = "12"
	b = newCallIn(binTools, "bin-key", "plain", nil, recs, say("s1", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").state(1, "update_order", args...).toolIntent("update_order", args...).
		call("r1", "k-1", "update_order", args...).speak("a2", "Done. Order 5590 in bin 12 now has quantity 2.")
	hs["key_field_named"] = b.done()
	return hs
}

// TestMut2RulesGolden compares each mut2 history's whole score with its
// golden file.
func TestMut2RulesGolden(t *testing.T) {
	hs := mut2Histories()
	names := make([]string, 0, len(hs))
	for n := range hs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if strings.HasPrefix(n, "axis_") {
			continue // judged on one axis only, in TestMut2RulesFindings
		}
		got := summary(Score(hs[n]))
		p := filepath.Join("testdata", "mut2rules", n+".txt")
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
			t.Errorf("%s: %v (run go test ./scorer -run TestMut2RulesGolden -update)", n, err)
			continue
		}
		if got != string(want) {
			t.Errorf("%s: score changed\ngot:\n%s\nwant:\n%s", n, got, want)
		}
	}
}

// TestMut2RulesFindings states the point of each history in words, so a
// golden rewritten by -update cannot silently lose it.
func TestMut2RulesFindings(t *testing.T) {
	hs := mut2Histories()
	cs := Score(hs["timeout_read_at_after"])
	n := 0
	for _, h := range cs.Buckets {
		if h.Bucket == BucketUnverifiedResult {
			n = len(h.Findings)
		}
	}
	if n != 2 {
		t.Errorf("timeout_read_at_after: want the timeout and the error both unverified, got %d findings\n%s", n, summary(cs))
	}
	bucketSays(t, "timeout_read_at_after", cs, BucketUnverifiedResult, "a timeout answer to update_order was followed by a done-claim without a verifying read")

	cs = Score(hs["timeout_dup_then_retry"])
	v := viewOf(hs["timeout_dup_then_retry"])
	d1, r2 := v.byRef["d1"], v.byRef["r2"]
	if v.byRef["r1"].after() != d1.recv || r2.recv != d1.recv+1 {
		t.Fatalf("timeout_dup_then_retry: the duplicate must be received at the timeout's after(): r1 after %d, d1 %d, r2 %d",
			v.byRef["r1"].after(), d1.recv, r2.recv)
	}
	for _, c := range []struct {
		bk   Bucket
		text string
		seqs []int
	}{
		{BucketUnsafeRetry, "retry without the same idempotency key committed again", []int{r2.recv, r2.commits[0]}},
		{BucketMissingIdempotency, "committed the same effect twice", []int{v.byRef["r1"].commits[0], d1.commits[0]}},
	} {
		found := false
		for _, h := range cs.Buckets {
			for _, f := range h.Findings {
				if h.Bucket == c.bk && strings.Contains(f.Text, c.text) {
					found = true
					for _, s := range c.seqs {
						if !slices.Contains(f.Events, s) {
							t.Errorf("timeout_dup_then_retry: %s finding %q does not cite #%d", c.bk, f.Text, s)
						}
					}
				}
			}
		}
		if !found {
			t.Errorf("timeout_dup_then_retry: no %s finding %q\n%s", c.bk, c.text, summary(cs))
		}
	}
	stale := cs.Axis(StaleWritePrevented)
	if len(stale.Findings) != 1 || !slices.Contains(stale.Findings[0].Events, r2.commits[0]) {
		t.Errorf("timeout_dup_then_retry: want one stale retry finding, on the agent's retry\n%s", summary(cs))
	}

	cs = Score(hs["kept_value_never_confirmed"])
	if cs.Primary != BucketNeverConfirmed || len(cs.Secondary) != 0 {
		t.Errorf("kept_value_never_confirmed: want never_confirmed alone\n%s", summary(cs))
	}

	axisSays(t, "axis_pets_old_name_in_question", Score(hs["axis_pets_old_name_in_question"]), ConfirmationMatchesBackend, Pass, "the done confirmation matches the backend")
	axisSays(t, "axis_pets_old_name_in_claim", Score(hs["axis_pets_old_name_in_claim"]), ConfirmationMatchesBackend, Fail, `confirmation names "rex"`)
	axisSays(t, "pets_no_change_named", Score(hs["pets_no_change_named"]), ConfirmationMatchesBackend, Pass, "the done confirmation matches the backend")
	axisSays(t, "untyped_field_raw", Score(hs["untyped_field_raw"]), ConfirmationMatchesBackend, Pass, "the done confirmation matches the backend")
	axisSays(t, "key_field_named", Score(hs["key_field_named"]), ConfirmationMatchesBackend, Pass, "the done confirmation matches the backend")

	axisSays(t, "axis_unreceived_write_idle_state", Score(hs["axis_unreceived_write_idle_state"]), ActiveStateCorrect, Fail,
		"last self-report has nothing pending, but the caller still wants the action and no call carried it")
	axisSays(t, "axis_unreceived_write_unsure", Score(hs["axis_unreceived_write_unsure"]), ConfirmationMatchesBackend, Pass,
		"agent said it could not confirm the outcome, and its last answer was indeed indeterminate")
	axisSays(t, "axis_unreceived_retry_notice", Score(hs["axis_unreceived_retry_notice"]), Captured, Pass, "agent acted on the error answer to update_order")
	cs = Score(hs["axis_unreceived_error_sorry"])
	if cs.Primary == "" || slices.ContainsFunc(cs.Buckets, func(h BucketHit) bool { return h.Bucket == BucketGaveUp }) {
		t.Errorf("axis_unreceived_error_sorry: want a failed call without gave_up_on_transient_error\n%s", summary(cs))
	}
}

// TestMut2DropThousands: a comma is a thousands separator only between a
// digit and exactly three digits.
func TestMut2DropThousands(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"9,999", "9999"},
		{"$1,200", "$1200"},
		{"1,234,567", "1234567"},
		{"x,123", "x,123"},
		{",123", ",123"},
		{"1,a23", "1,a23"},
		{"1,2a3", "1,2a3"},
		{"1,23a", "1,23a"},
		{"1,2345", "1,2345"},
		{"12345,678", "12345678"},
		{"1,23", "1,23"},
		{"1,", "1,"},
		{"no commas", "no commas"},
	} {
		if got := entity.DropThousands(c.in); got != c.want {
			t.Errorf("dropThousands(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestMut2FailVerb: a catalogue whose own verb is a negation cue ("fail",
// as in failing a line over): its done form at the negation's position is
// the claim, not a denial of it.
func TestMut2FailVerb(t *testing.T) {
	lx := newLexicon([]trace.ToolSpec{{Name: "fail_over", Effect: trace.EffectUpdate, Table: "lines", KeyArg: "line", Consequential: true,
		Args: []trace.ArgSpec{{Name: "line", Type: "string", Required: true}}}})
	for _, c := range []struct {
		text string
		want claim
	}{
		{"I failed over line 7.", claimDone},
		{"I've failed line 7 back.", claimRestored},
		{"I never failed over line 7.", claimNotDone},
	} {
		if got := lx.read(c.text).claim; got != c.want {
			t.Errorf("%q: claim %v, want %v", c.text, got, c.want)
		}
	}
}

// TestMut2NotAcceptedBeforeOnset: a write answered with an error (400, 500)
// or whose answer was lost before the caller began withdrawing it was never
// accepted, so when it lands after the change it is an in-flight call the
// agent left standing; the bucket says so and cites the receipt, the onset
// and the commit.
func TestMut2NotAcceptedBeforeOnset(t *testing.T) {
	hs := mutHistories()
	for _, n := range []string{
		"axis_neg_400_before_onset_lands_after",
		"axis_neg_error_before_onset_lands_after",
		"axis_neg_dropped_before_onset_lands_after",
	} {
		bucketSays(t, n, Score(hs[n]), BucketInflightNotCanceled, "had not been accepted when the caller began the change, and committed after it")
	}
}
