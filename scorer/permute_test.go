package scorer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/internal/doccheck"
	"github.com/callproof/callproof/trace"
)

// permutationCorpora are every recorded history the permutation test
// reorders: the scorer's corpus and each calibration set's run.
func permutationCorpora(t *testing.T) []*trace.History {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*", "*.jsonl"))
	require.NoError(t, err)
	files = append(files, "../testdata/calibration/run/run.jsonl", "../agents/payments/calibration/run/run.jsonl")
	var out []*trace.History
	for _, p := range files {
		f, err := os.Open(p)
		require.NoError(t, err)
		hs, err := trace.ReadJSONL(f)
		f.Close()
		require.NoError(t, err, p)
		out = append(out, hs...)
	}
	return out
}

// moved is h with event j moved to position i (i < j) or event i moved
// to position j (j < i): each event keeps its payload, the positions keep
// their sequence numbers and times.
func moved(h *trace.History, from, to int) *trace.History {
	out := &trace.History{Call: h.Call, Events: slices.Clone(h.Events)}
	e := out.Events[from]
	out.Events = slices.Delete(out.Events, from, from+1)
	out.Events = slices.Insert(out.Events, to, e)
	for k := range out.Events {
		out.Events[k].Seq, out.Events[k].At = h.Events[k].Seq, h.Events[k].At
	}
	return out
}

// reorderings lists the moves of one event past the events recorded within
// OrderWindow before or after it that it is unordered with: [from, to].
func reorderings(h *trace.History) [][2]int {
	var out [][2]int
	ev := h.Events
	for i := range ev {
		// Later events moved before i.
		for j := i + 1; j < len(ev) && ev[j].At-ev[i].At <= OrderWindow; j++ {
			ok := true
			for k := i; k < j && ok; k++ {
				ok = unordered(&ev[k], &ev[j])
			}
			if ok {
				out = append(out, [2]int{j, i})
			}
			ok = true
			for k := i + 1; k <= j && ok; k++ {
				ok = unordered(&ev[i], &ev[k])
			}
			if ok && j > i+1 {
				out = append(out, [2]int{i, j}) // i moved after j
			}
		}
	}
	return out
}

// outcome is what a permutation must not change: every axis verdict and
// the buckets.
func outcome(cs CallScore) string {
	var b strings.Builder
	for _, a := range cs.Axes {
		fmt.Fprintf(&b, "%s=%s ", a.Axis, a.Verdict)
	}
	var bs []string
	for _, x := range cs.Buckets {
		bs = append(bs, string(x.Bucket))
	}
	slices.Sort(bs)
	fmt.Fprintf(&b, "primary=%s buckets=%s", cs.Primary, strings.Join(bs, ","))
	return b.String()
}

// knownFlips lists the histories where reordering events recorded within
// OrderWindow still changes the score (a ratchet: it may only shrink).
var knownFlips = []string{}

// TestPermutations is a metamorphic test: in every recorded history, two
// adjacent events from independent sources recorded within OrderWindow
// carry no order a verdict may depend on, so swapping them must leave every
// verdict and bucket as it was (docs/SCORING.md, "Order").
func TestPermutations(t *testing.T) {
	flips := map[string][]string{}
	histories, swaps := 0, 0
	for _, h := range permutationCorpora(t) {
		histories++
		base := outcome(Score(h))
		for _, m := range reorderings(h) {
			e, past := h.Events[m[0]], h.Events[m[1]]
			how := "before"
			if m[0] < m[1] {
				how = "after"
			}
			swaps++
			if got := outcome(Score(moved(h, m[0], m[1]))); got != base {
				flips[h.Call] = append(flips[h.Call], fmt.Sprintf("#%d %s moved %s #%d %s:\n      %s\n   -> %s",
					e.Seq, e.Kind, how, past.Seq, past.Kind, base, got))
			}
		}
	}
	var calls []string
	for c := range flips {
		calls = append(calls, c)
	}
	slices.Sort(calls)
	t.Logf("%d histories, %d moves of unordered events within %v, %d histories flip", histories, swaps, OrderWindow, len(calls))
	for _, c := range calls {
		t.Logf("%s\n   %s", c, strings.Join(flips[c], "\n   "))
	}
	require.Greater(t, swaps, 50)
	var fresh, gone []string
	for _, c := range calls {
		if !slices.Contains(knownFlips, c) {
			fresh = append(fresh, c)
		}
	}
	for _, c := range knownFlips {
		if _, ok := flips[c]; !ok {
			gone = append(gone, c)
		}
	}
	require.Empty(t, fresh, "verdicts that depend on the order of events recorded within %v", OrderWindow)
	require.Empty(t, gone, "listed in knownFlips but no longer flipping: remove them")
}

// TestOrderWindowDocumented: docs/SCORING.md states OrderWindow.
func TestOrderWindowDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/SCORING.md")
	require.NoError(t, err)
	refs := doccheck.Refs(string(doc), "scorer")["scorer.OrderWindow"]
	require.NotEmpty(t, refs)
	for _, s := range refs {
		got, err := doccheck.Value(OrderWindow, s)
		require.NoError(t, err)
		require.Equal(t, OrderWindow, got)
	}
}
