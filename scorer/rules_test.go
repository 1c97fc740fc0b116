package scorer

import (
	"strings"
	"testing"

	"github.com/callproof/callproof/trace"
)

// TestUnknownIsNeverAPass: across the corpus, an unknown axis always
// breaks integrity, never counts as a failure (no bucket unless another
// axis failed), and an unknown that the evidence could not decide says
// insufficient_evidence.
func TestUnknownIsNeverAPass(t *testing.T) {
	seen := 0
	for _, f := range fixtures {
		cs := Score(load(t, f))
		unknown, failed := false, false
		for _, a := range cs.Axes {
			unknown = unknown || a.Verdict == Unknown
			failed = failed || a.Verdict == Fail
		}
		if !unknown {
			continue
		}
		seen++
		if cs.Integrity {
			t.Errorf("%s: an unknown axis with integrity", f.name)
		}
		if !failed && (cs.Primary != "" || len(cs.Buckets) > 0) {
			t.Errorf("%s: no axis failed but primary %q", f.name, cs.Primary)
		}
		if f.dir == "unknown" && (failed || cs.Outcome != trace.OutcomeScored) {
			t.Errorf("%s: in unknown/ but %s %s", f.name, vector(cs), cs.Outcome)
		}
	}
	if seen < 5 {
		t.Errorf("only %d corpus calls have an unknown axis", seen)
	}
	for name, axis := range map[string]Axis{"confirmation_undecided": ConfirmationMatchesBackend,
		"tool_failure_no_act_after": Captured, "hangup_mid_confirmation": ConfirmationMatchesBackend} {
		cs := Score(load(t, fixtureNamed(t, name)))
		a := cs.Axis(axis)
		if a.Verdict != Unknown || len(a.Findings) == 0 || !strings.HasPrefix(a.Findings[0].Text, InsufficientEvidence) {
			t.Errorf("%s: %s %s %v, want unknown with %s", name, axis, a.Verdict, a.Findings, InsufficientEvidence)
		}
	}
}

// TestFindingsSay pins the words of findings the docs promise.
func TestFindingsSay(t *testing.T) {
	cases := []struct {
		fixture string
		axis    Axis
		bucket  Bucket
		text    string
	}{
		{"stale_write_compensated", StaleWritePrevented, "", "committed with values the caller had already replaced (compensated: put back by #"},
		{"stale_write_compensated", "", BucketInflightNotCanceled, "(compensated: put back by #"},
		{"uncompensated_write", "", BucketUncompensated, "was never put back"},
		{"uncompensated_write", ConfirmationMatchesBackend, "", "but the backend changed"},
		{"restored_claim_false", ConfirmationMatchesBackend, "", "but the backend changed"},
		{"negation_compensated", ConfirmationMatchesBackend, "", "the restored confirmation matches the backend"},
		{"stop_between_onset_and_final", StaleWritePrevented, "", "no write was built on withdrawn values"},
		{"unsure_while_pending", ConfirmationMatchesBackend, "", "its last answer was indeed indeterminate"},
		{"unsure_despite_answer", ConfirmationMatchesBackend, "", "although it had a definite answer"},
		{"booking_wrong_time_claimed", ConfirmationMatchesBackend, "", "confirmation names 21:00"},
		{"wrong_record_written", Captured, "", "agent built on the wrong_record answer to get_order"},
		{"wrong_record_reread", Captured, "", "agent acted on the wrong_record answer to get_order"},
		{"tool_error_claimed_done", Captured, "", "agent built on the error answer to update_order"},
	}
	for _, c := range cases {
		cs := Score(load(t, fixtureNamed(t, c.fixture)))
		var fs []Finding
		if c.axis != "" {
			fs = cs.Axis(c.axis).Findings
		}
		for _, b := range cs.Buckets {
			if b.Bucket == c.bucket {
				fs = b.Findings
			}
		}
		found := false
		for _, f := range fs {
			found = found || strings.Contains(f.Text, c.text)
		}
		if !found {
			t.Errorf("%s %s%s: no finding says %q\n%s", c.fixture, c.axis, c.bucket, c.text, dump(cs))
		}
	}
}

// TestInconsistentHistories: each kind of damage to the ledger or the
// snapshot is a harness_error naming it, never a verdict.
func TestInconsistentHistories(t *testing.T) {
	commitOf := func(h *trace.History) *trace.ToolEvent {
		for i := range h.Events {
			if te, ok := h.Events[i].Data.(*trace.ToolEvent); ok && h.Events[i].Kind == trace.KindToolCommitted {
				return te
			}
		}
		t.Fatal("no commit")
		return nil
	}
	snapOf := func(h *trace.History) *trace.Snapshot {
		for i := range h.Events {
			if s, ok := h.Events[i].Data.(*trace.Snapshot); ok {
				return s
			}
		}
		t.Fatal("no snapshot")
		return nil
	}
	cases := []struct {
		name   string
		damage func(h *trace.History) *trace.History
		reason string // "" = consistent
	}{
		{"intact", func(h *trace.History) *trace.History { return h }, ""},
		{"deleted commit", func(h *trace.History) *trace.History { return dropKind(h, trace.KindToolCommitted) },
			"the snapshot does not follow from the starting records and the committed ledger rows: orders/5590.quantity"},
		{"edited after", func(h *trace.History) *trace.History {
			te := commitOf(h)
			te.After = kv("delivery_date", "2026-12-01", "quantity", "9", "item", "kettle", "status", "open")
			return h
		},
			"the snapshot does not follow"},
		{"edited before", func(h *trace.History) *trace.History { commitOf(h).Before["quantity"] = "4"; return h },
			`commit #10 says orders/5590.quantity was "4", the replay holds "3"`},
		{"version before", func(h *trace.History) *trace.History { commitOf(h).VersionBefore = 2; return h },
			"commit #10 says orders/5590 was at version 2, the replay holds version 1"},
		{"unknown record", func(h *trace.History) *trace.History { commitOf(h).Key = "9999"; return h },
			"commit #10 updates orders/9999, which neither the starting records nor an earlier commit hold"},
		{"snapshot version", func(h *trace.History) *trace.History {
			s := snapOf(h)
			s.Records = append([]trace.Record(nil), s.Records...)
			s.Records[0].Version = 7
			return h
		}, "the snapshot holds orders/5590 at version 7, the replayed ledger at version 2"},
		{"no snapshot", func(h *trace.History) *trace.History { return dropKind(h, trace.KindSnapshot) }, ""},
	}
	for _, c := range cases {
		h := c.damage(plainQuantity())
		got := inconsistency(h, h.Start())
		if c.reason == "" && got != "" || c.reason != "" && !strings.Contains(got, c.reason) {
			t.Errorf("%s: inconsistency %q, want %q", c.name, got, c.reason)
		}
		cs := Score(h)
		if c.reason != "" && (cs.Outcome != trace.OutcomeHarnessError || !strings.HasPrefix(cs.Reason, "inconsistent history: ") || vector(cs) != "uuuuuu" || cs.Integrity) {
			t.Errorf("%s: %s %q %s", c.name, cs.Outcome, cs.Reason, vector(cs))
		}
	}
	// A create adds a record no start holds: consistent.
	h := load(t, fixtureNamed(t, "booking_new_table"))
	if why := inconsistency(h, h.Start()); why != "" {
		t.Errorf("a create: %s", why)
	}
}
