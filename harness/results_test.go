package harness_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// resultCalls makes n hand-built calls with their real scores.
func fxCalls(n int) ([]*trace.History, []scorer.CallScore) {
	var hs []*trace.History
	var ss []scorer.CallScore
	for i := range n {
		h := fxGood(fmt.Sprintf("call-%d", i))
		if i%2 == 1 { // vary the content so lines are not interchangeable
			h = fxHist(fmt.Sprintf("call-%d", i), fxCat(fxWrite("r1", ""), fxConfirm("a1"))...)
		}
		hs = append(hs, h)
		ss = append(ss, scorer.Score(h))
	}
	return hs, ss
}

func fxJSONL(t *testing.T, hs []*trace.History) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, h := range hs {
		require.NoError(t, trace.WriteJSONL(&b, h))
	}
	return b.Bytes()
}

func fxReadJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v), "%s", b)
}

func TestResultsWriteAndReadBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "out") // CreateResults makes parents
	meta := harness.Meta{Agent: "ws://127.0.0.1:1/", Suite: "core", Seed: 7, TimeScale: 0.05, Calls: 2, Transport: "native"}
	res, err := harness.CreateResults(dir, meta)
	require.NoError(t, err)
	assert.Equal(t, dir, res.Dir())

	var gotMeta harness.Meta
	fxReadJSON(t, filepath.Join(dir, harness.MetaFile), &gotMeta)
	assert.Equal(t, meta, gotMeta)

	hs, ss := fxCalls(2)
	require.NoError(t, res.Add(hs[0], ss[0]))

	// An interrupted run keeps what finished: the first call is readable
	// before the second is added or anything is closed.
	early, err := harness.ReadRun(filepath.Join(dir, harness.RunFile))
	require.NoError(t, err)
	require.Len(t, early, 1)
	var sum reports.Summary
	fxReadJSON(t, filepath.Join(dir, harness.SummaryFile), &sum)
	assert.Equal(t, 1, sum.Calls)

	require.NoError(t, res.Add(hs[1], ss[1]))
	require.NoError(t, res.Close())

	gotHs, err := harness.ReadRun(filepath.Join(dir, harness.RunFile))
	require.NoError(t, err)
	require.Len(t, gotHs, 2)
	assert.Equal(t, []string{"call-0", "call-1"}, []string{gotHs[0].Call, gotHs[1].Call})
	// Lossless: re-encoding what was read gives the bytes written.
	assert.Equal(t, string(fxJSONL(t, hs)), string(fxJSONL(t, gotHs)))
	// Re-scoring the saved histories gives the saved scores.
	assert.Equal(t, ss, scorer.ScoreAll(gotHs))

	gotSs, err := harness.ReadScores(filepath.Join(dir, harness.ScoresFile))
	require.NoError(t, err)
	assert.Equal(t, ss, gotSs)

	fxReadJSON(t, filepath.Join(dir, harness.SummaryFile), &sum)
	assert.Equal(t, 2, sum.Calls, "summary.json covers every call once the results are closed")
	assert.Equal(t, reports.Summarize(ss), sum, "summary.json holds the suite figures of every call")

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{harness.RunFile, harness.ScoresFile, harness.SummaryFile, harness.MetaFile}, names, "no temp files left behind")
}

func TestResultsCreateTruncatesEarlierRun(t *testing.T) {
	dir := t.TempDir()
	hs, ss := fxCalls(2)
	res, err := harness.CreateResults(dir, harness.Meta{Suite: "core"})
	require.NoError(t, err)
	for i := range hs {
		require.NoError(t, res.Add(hs[i], ss[i]))
	}
	require.NoError(t, res.Close())

	res, err = harness.CreateResults(dir, harness.Meta{Suite: "core"})
	require.NoError(t, err)
	require.NoError(t, res.Add(hs[0], ss[0]))
	require.NoError(t, res.Close())
	got, err := harness.ReadScores(filepath.Join(dir, harness.ScoresFile))
	require.NoError(t, err)
	assert.Len(t, got, 1, "a fresh run does not append to the old one")
}

// Calls finish concurrently in a run; every one must land whole.
func TestResultsConcurrentAdd(t *testing.T) {
	dir := t.TempDir()
	res, err := harness.CreateResults(dir, harness.Meta{Suite: "core"})
	require.NoError(t, err)
	hs, ss := fxCalls(16)
	var wg sync.WaitGroup
	for i := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, res.Add(hs[i], ss[i]))
		}()
	}
	wg.Wait()
	require.NoError(t, res.Close())

	gotHs, err := harness.ReadRun(filepath.Join(dir, harness.RunFile))
	require.NoError(t, err)
	gotSs, err := harness.ReadScores(filepath.Join(dir, harness.ScoresFile))
	require.NoError(t, err)
	require.Len(t, gotHs, 16)
	require.Len(t, gotSs, 16)
	byCall := map[string]int{}
	for i, h := range hs {
		byCall[h.Call] = i
	}
	for i, h := range gotHs {
		want := hs[byCall[h.Call]]
		assert.Equal(t, string(fxJSONL(t, []*trace.History{want})), string(fxJSONL(t, []*trace.History{h})))
		// Same order in both files.
		assert.Equal(t, h.Call, gotSs[i].Call)
	}
}

func TestReadScoresBadLineNamesTheLine(t *testing.T) {
	_, ss := fxCalls(2)
	var lines []string
	for _, s := range ss {
		b, err := json.Marshal(s)
		require.NoError(t, err)
		lines = append(lines, string(b))
	}
	for _, tc := range []struct {
		name, content, want string
	}{
		{"truncated", lines[0] + "\n" + lines[1][:len(lines[1])/2] + "\n", ":2: "},
		{"garbled", lines[0] + "\n\n" + lines[1] + "\n{not json}\n", ":4: "}, // blank lines still count
		{"wrong type", `{"call": 5}` + "\n", ":1: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), harness.ScoresFile)
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o644))
			_, err := harness.ReadScores(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path+tc.want)
		})
	}
	// DecodeScores names its input the same way.
	_, err := harness.DecodeScores(strings.NewReader(lines[0]+"\n{\n"+lines[1]+"\n"), "-")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "-:2: "), err.Error())

	_, err = harness.ReadScores(filepath.Join(t.TempDir(), "missing.jsonl"))
	assert.Error(t, err)
}

func TestReadRunBadLineNamesTheLine(t *testing.T) {
	hs, _ := fxCalls(2)
	first := fxJSONL(t, hs[:1])
	nl := bytes.Count(first, []byte("\n"))
	content := append(append(first, []byte(`{"call":"call-0","seq":99,"kind":"call.end","da`+"\n")...), fxJSONL(t, hs[1:])...)
	path := filepath.Join(t.TempDir(), harness.RunFile)
	require.NoError(t, os.WriteFile(path, content, 0o644))
	_, err := harness.ReadRun(path)
	require.Error(t, err, "a garbled line that is not the last is corruption, not a torn write")
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), fmt.Sprintf("line %d", nl+1))
}

// A history file given where scores are expected is refused, naming what
// it is: every event line would decode as an empty score.
func TestReadScoresRefusesAHistory(t *testing.T) {
	hs, _ := fxCalls(1)
	path := filepath.Join(t.TempDir(), harness.RunFile)
	require.NoError(t, os.WriteFile(path, fxJSONL(t, hs), 0o644))
	_, err := harness.ReadScores(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "this is a history (run.jsonl), not scores")
	_, err = harness.DecodeScores(strings.NewReader(`{"foo": 1}`+"\n"), "x")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "x:1: not a call score")
}

// A write cut short (kill -9, a full disk) leaves a last line without its
// newline: it is dropped with a warning, the rest is read.
func TestReadScoresTornLastLine(t *testing.T) {
	_, ss := fxCalls(2)
	a, err := json.Marshal(ss[0])
	require.NoError(t, err)
	b, err := json.Marshal(ss[1])
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), harness.ScoresFile)
	require.NoError(t, os.WriteFile(path, append(append(a, '\n'), b[:len(b)/2]...), 0o644))
	got, warnings, err := harness.ReadScoresWarn(path)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, ss[0].Call, got[0].Call)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "torn last line")
}

// summary.json is rewritten at most once per SummaryEvery while calls
// complete, and once more at Close, so it always ends covering every call
// (docs/CLI.md, "Results directory").
func TestResultsSummaryCadence(t *testing.T) {
	assert.Equal(t, time.Second, harness.SummaryEvery)
	dir := t.TempDir()
	res, err := harness.CreateResults(dir, harness.Meta{Suite: "core"})
	require.NoError(t, err)
	hs, ss := fxCalls(3)
	start := time.Now()
	for i := range hs {
		require.NoError(t, res.Add(hs[i], ss[i]))
	}
	var sum reports.Summary
	fxReadJSON(t, filepath.Join(dir, harness.SummaryFile), &sum)
	if time.Since(start) < harness.SummaryEvery {
		assert.Equal(t, 1, sum.Calls, "written at the first call, not again within a second")
	}
	require.NoError(t, res.Close())
	fxReadJSON(t, filepath.Join(dir, harness.SummaryFile), &sum)
	assert.Equal(t, 3, sum.Calls, "Close writes what the summary lacked")
}
