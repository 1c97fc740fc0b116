package perturb_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/calibrate"
	"github.com/callproof/callproof/calibrate/perturb"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// The calibration sets whose correct calls are perturbed, from here.
var sets = []string{"../../testdata/calibration", "../../agents/payments/calibration"}

// correctCalls are the histories whose every axis is labelled pass.
func correctCalls(t *testing.T) []*trace.History {
	t.Helper()
	var out []*trace.History
	for _, dir := range sets {
		labels, err := calibrate.Load(filepath.Join(dir, "labels.yaml"))
		require.NoError(t, err)
		good := map[string]bool{}
		for _, c := range labels.Calls {
			ok := len(c.Axes) == 6
			for _, l := range c.Axes {
				ok = ok && l == calibrate.LabelPass
			}
			good[c.ID] = ok
		}
		hs, err := harness.ReadRun(filepath.Join(dir, "run", harness.RunFile))
		require.NoError(t, err)
		for _, h := range hs {
			if good[h.Call] {
				out = append(out, h)
			}
		}
	}
	return out
}

func confirmationVerdict(cs scorer.CallScore) scorer.Verdict {
	for _, a := range cs.Axes {
		if a.Axis == scorer.ConfirmationMatchesBackend {
			return a.Verdict
		}
	}
	return scorer.Unknown
}

type tally struct{ total, wrong int }

// TestPerturbations scores every variant of every correct calibration
// call's confirmation and counts, per dimension and kind, the variants the
// scorer gets wrong: a re-spelling not scored pass, a perturbation not
// scored fail. Every dimension must have none.
func TestPerturbations(t *testing.T) {
	f, err := os.Open("../../testdata/spoken.txt")
	require.NoError(t, err)
	corpus, err := perturb.ReadCorpus(f)
	f.Close()
	require.NoError(t, err)
	today, _ := time.Parse(time.DateOnly, perturb.DefaultCallDate)

	counts := map[string]*tally{}
	examples := map[string][]string{}
	calls, total := 0, 0
	for _, h := range correctCalls(t) {
		c, ok := perturb.Find(h, today)
		if !ok {
			continue
		}
		calls++
		for _, v := range perturb.Generate(h.Call, c, today, corpus) {
			got := confirmationVerdict(scorer.Score(perturb.Apply(h, v)))
			want := scorer.Pass
			if v.Kind == perturb.Perturb {
				want = scorer.Fail
			}
			k := string(v.Dimension) + " " + string(v.Kind)
			if counts[k] == nil {
				counts[k] = &tally{}
			}
			counts[k].total++
			total++
			if got != want {
				counts[k].wrong++
				if len(examples[k]) < 3 {
					examples[k] = append(examples[k], fmt.Sprintf("%s: %q -> %q scored %s", v.Call, v.Was, v.Now, got))
				}
			}
		}
	}
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%d confirmations, %d variants\n%-18s %8s %8s\n", calls, total, "dimension kind", "variants", "wrong")
	for _, k := range keys {
		fmt.Fprintf(&b, "%-18s %8d %8d\n", k, counts[k].total, counts[k].wrong)
		for _, e := range examples[k] {
			fmt.Fprintf(&b, "    e.g. %s\n", e)
		}
	}
	t.Log("\n" + b.String())
	require.GreaterOrEqual(t, calls, 25, "correct calls with a confirmation")
	require.GreaterOrEqual(t, total, 2000, "variants")

	for _, k := range keys {
		if counts[k].wrong != 0 {
			t.Errorf("%s: %d of %d variants scored wrong", k, counts[k].wrong, counts[k].total)
		}
	}
}

// TestFindConfirmation: the confirmation is the done-claim after the
// commit, not the read-back before it, with each committed value found as
// it was said.
func TestFindConfirmation(t *testing.T) {
	h, c, today := paymentsConfirmation(t, "pay-01-plain-schedule--careful")
	require.True(t, strings.HasPrefix(c.Text, "All set:"), c.Text)
	spans := map[string]string{}
	for _, s := range c.Values {
		spans[s.Arg] = s.Span
	}
	require.Equal(t, map[string]string{
		"amount": "two hundred and fifteen dollars", "date": "Tuesday the 8th", "reference": "Romeo four Mike nine",
		"payee": "landlord", "from_account": "everyday",
	}, spans)
	vs := perturb.Generate(h.Call, c, today, nil)
	var respell, perturbed int
	for _, v := range vs {
		require.NotEqual(t, c.Text, v.Text)
		if v.Kind == perturb.Respell {
			respell++
		} else {
			perturbed++
		}
	}
	require.Greater(t, respell, 20)
	require.Greater(t, perturbed, 50)
}

// TestPerturbNeverNamesHeldValue: a perturbation never substitutes a value
// the committed record holds in another field (payment 4182's id replaced
// by its own reference K7Q2 still names that record), and the variants it
// drops are exactly those.
func TestPerturbNeverNamesHeldValue(t *testing.T) {
	h, c, today := paymentsConfirmation(t, "pay-10-update-amount-503--careful")
	require.Contains(t, c.Held, "K7Q2")
	require.Contains(t, c.Held, "4182")
	corpus := []perturb.CorpusEntry{
		{Dimension: perturb.Code, Value: "K7Q2", Form: "Kilo seven Quebec two"},
		{Dimension: perturb.Code, Value: "4183", Form: "four one eight three"},
	}
	var perturbed []string
	for _, v := range perturb.Generate(h.Call, c, today, corpus) {
		if v.Kind != perturb.Perturb {
			continue
		}
		for _, held := range c.Held {
			require.NotEqual(t, strings.ToLower(held), strings.ToLower(v.Value), "%q -> %q", v.Was, v.Now)
		}
		if v.Corpus {
			perturbed = append(perturbed, v.Now)
		}
	}
	require.Contains(t, perturbed, "four one eight three")
	require.NotContains(t, perturbed, "Kilo seven Quebec two")
}

// paymentsConfirmation is the confirmation of one recorded payments call.
func paymentsConfirmation(t *testing.T, call string) (*trace.History, perturb.Confirmation, time.Time) {
	t.Helper()
	hs, err := harness.ReadRun("../../agents/payments/calibration/run/" + harness.RunFile)
	require.NoError(t, err)
	today, _ := time.Parse(time.DateOnly, perturb.DefaultCallDate)
	for _, h := range hs {
		if h.Call == call {
			c, ok := perturb.Find(h, today)
			require.True(t, ok, call)
			return h, c, today
		}
	}
	t.Fatalf("no call %s", call)
	return nil, perturb.Confirmation{}, today
}
