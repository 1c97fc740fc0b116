package harness_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/trace"
)

// IndexRun reads a results directory as LoadRun does — the same calls,
// drops, warnings, manifest and marker — while holding only each call's
// ends, and Load gives back each whole history byte for byte.
func TestIndexRunMatchesLoadRun(t *testing.T) {
	appendLines := func(t *testing.T, dir string, b []byte) {
		f, err := os.OpenFile(filepath.Join(dir, harness.RunFile), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.Write(b)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	cases := map[string]func(t *testing.T) string{
		"finished": func(t *testing.T) string {
			return fxDir(t, []string{"a", "b", "c"}, true, fxGood("c"), fxGood("a"), fxEnded("b", trace.OutcomeAgentError, "dial"))
		},
		"torn last call": func(t *testing.T) string {
			dir := fxDir(t, []string{"a", "b", "c"}, false, fxGood("a"), fxGood("b"))
			fxTear(t, dir, fxGood("c"))
			return dir
		},
		"a call never finished writing": func(t *testing.T) string {
			dir := fxDir(t, []string{"a", "b"}, false, fxGood("a"))
			h := fxGood("b")
			h.Events = h.Events[:len(h.Events)-1] // whole lines, no call.end
			appendLines(t, dir, fxJSONL(t, []*trace.History{h}))
			return dir
		},
		"two attempts of a call": func(t *testing.T) string {
			return fxDir(t, []string{"a", "b"}, true, fxGood("a"), fxEnded("b", trace.OutcomeHarnessError, harness.ReasonCancelled), fxGood("b"))
		},
		"a call's lines split by another's": func(t *testing.T) string {
			dir := fxDir(t, []string{"a", "b"}, true, fxGood("a"))
			b := fxGood("b")
			head := &trace.History{Call: "b", Events: b.Events[:2]}
			tail := &trace.History{Call: "b", Events: b.Events[2:]}
			appendLines(t, dir, fxJSONL(t, []*trace.History{head, fxGood("c"), tail}))
			return dir
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			dir := mk(t)
			want, err := harness.LoadRun(dir)
			require.NoError(t, err)
			x, err := harness.IndexRun(dir)
			require.NoError(t, err)
			got := x.Run
			assert.Equal(t, fxCallIDs(want.Sorted()), fxCallIDs(got.Sorted()))
			assert.ElementsMatch(t, want.Dropped, got.Dropped)
			assert.ElementsMatch(t, want.Warnings, got.Warnings)
			assert.Equal(t, want.Meta, got.Meta)
			assert.Equal(t, want.Done, got.Done)
			assert.Equal(t, harness.CheckCompleteness(want), harness.CheckCompleteness(got))
			ws, gs := want.Sorted(), got.Sorted()
			for i := range gs {
				h, err := x.Load(gs[i])
				require.NoError(t, err)
				assert.Equal(t, string(fxJSONL(t, []*trace.History{ws[i]})), string(fxJSONL(t, []*trace.History{h})), gs[i].Call)
			}
		})
	}
}
