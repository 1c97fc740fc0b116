package calibration_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/callproof/callproof/calibrate"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scorer"
)

// ratchetFile lists the cells where today's scorer and the hand labels
// disagree, one "call axis label verdict" line each (axis "bucket" for the
// primary bucket). It may only shrink: rewrite it with
//
//	RATCHET_UPDATE=1 go test -run TestPaymentsAgreement ./agents/payments/calibration/
//
// after a scorer change that removed disagreements (never to add one); it
// deletes the file once nothing disagrees.
const ratchetFile = "disagreements.txt"

// cellLine is a disagreement as the ratchet file writes it.
func cellLine(c calibrate.Cell) string {
	axis := string(c.Axis)
	if axis == "" {
		axis = "bucket"
	}
	return strings.Join([]string{c.Call, axis, c.Label, c.Verdict}, " ")
}

func readRatchet(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(ratchetFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no ratchet: the set agrees fully (scripts/test.sh gates it at 100 %)
	}
	require.NoError(t, err)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// TestPaymentsAgreement re-scores the recorded run and compares it with the
// hand labels: the disagreeing cells must be exactly those of the ratchet
// file. It prints the agreement figures.
func TestPaymentsAgreement(t *testing.T) {
	hs, err := harness.ReadRun(runDir + "/" + harness.RunFile)
	require.NoError(t, err)
	labels, err := calibrate.Load("labels.yaml")
	require.NoError(t, err)
	rep := calibrate.Compare(labels, scorer.ScoreAll(hs))
	t.Log("\n" + rep.Text())
	require.Empty(t, rep.Missing, "labelled calls missing from the run")
	require.Empty(t, rep.Unlabelled, "calls without labels")
	require.Equal(t, len(plan()), rep.Calls)

	var got []string
	for _, c := range rep.Disagreements {
		got = append(got, cellLine(c))
	}
	slices.Sort(got)
	if os.Getenv("RATCHET_UPDATE") != "" && len(got) == 0 {
		err := os.Remove(ratchetFile)
		if !errors.Is(err, fs.ErrNotExist) {
			require.NoError(t, err)
		}
	} else if os.Getenv("RATCHET_UPDATE") != "" {
		head := "# Cells where today's scorer disagrees with labels.yaml (call axis label verdict).\n" +
			"# A ratchet: TestPaymentsAgreement fails on a cell not listed here and on a\n" +
			"# listed cell that now agrees. Only ever remove lines.\n"
		require.NoError(t, os.WriteFile(ratchetFile, []byte(head+strings.Join(got, "\n")+"\n"), 0o644))
	}
	want := readRatchet(t)
	slices.Sort(want)
	var fresh, gone []string
	for _, g := range got {
		if !slices.Contains(want, g) {
			fresh = append(fresh, g)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			gone = append(gone, w)
		}
	}
	t.Logf("payments family: %d/%d cells agree (%.1f %%), %d false passes, %d known disagreements",
		rep.Agree, rep.Cells, 100*rep.Agreement(), rep.FalsePasses, len(want))
	require.Empty(t, fresh, "new disagreements with the hand labels (not in %s)", ratchetFile)
	require.Empty(t, gone, "listed disagreements that no longer occur: remove them from %s", ratchetFile)
}

// TestPaymentsLabels: one well-formed label per planned call, in plan
// order, with a bucket exactly when an axis fails.
func TestPaymentsLabels(t *testing.T) {
	b, err := os.ReadFile("labels.yaml")
	require.NoError(t, err)
	var doc struct {
		Calls []struct {
			ID     string            `yaml:"id"`
			Agent  string            `yaml:"agent"`
			Axes   map[string]string `yaml:"axes"`
			Bucket string            `yaml:"bucket"`
			Why    string            `yaml:"why"`
		} `yaml:"calls"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	require.NoError(t, dec.Decode(&doc))
	require.Len(t, doc.Calls, len(plan()))
	for i, l := range doc.Calls {
		require.Equal(t, plan()[i].id(), l.ID)
		require.Equal(t, plan()[i].variant, l.Agent, l.ID)
		require.NotEmpty(t, l.Why, l.ID)
		require.Len(t, l.Axes, 6, l.ID)
		fails := false
		for _, v := range l.Axes {
			require.Contains(t, []string{"pass", "fail", "either"}, v, l.ID)
			fails = fails || v == "fail"
		}
		require.Equal(t, fails, l.Bucket != "none", "%s: a bucket exactly when an axis fails", l.ID)
	}
}
