package scorer

import "testing"

// TestRuleFixes pins the rules mutation testing found wrong, on the
// histories that showed them (mutHistories, mut_rules_test.go).
func TestRuleFixes(t *testing.T) {
	hs := mutHistories()
	for _, c := range []struct {
		name string
		axis Axis
		v    Verdict
		text string
	}{
		// Free text is judged per field: the new pet's name is not "another
		// value" of the food slot.
		{"axis_pets_speech_new_name", ActiveStateCorrect, Pass, ""},
		// The old pet's name in a done-claim is wrong even though the food is right.
		{"axis_pets_confirms_old_name", ConfirmationMatchesBackend, Fail, `confirmation names "rex"`},
		// S* cannot be computed: backend_correct cannot be judged.
		{"axis_intent_unknown_tool", BackendCorrect, Unknown, InsufficientEvidence},
		{"axis_intent_missing_record", BackendCorrect, Unknown, InsufficientEvidence},
	} {
		axisSays(t, c.name, Score(hs[c.name]), c.axis, c.v, c.text)
	}
	for name, want := range map[string]Bucket{
		// Answered after the withdrawal began and landed after it: the agent
		// let a running request go on.
		"axis_neg_pending_during_onset_lands_after": BucketInflightNotCanceled,
		"axis_neg_error_before_onset_lands_after":   BucketInflightNotCanceled,
	} {
		if s := Score(hs[name]); s.Primary != want {
			t.Errorf("%s: primary %q, want %q", name, s.Primary, want)
		}
	}
}
