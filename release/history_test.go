package release

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callproof/callproof/scorer"
)

func TestGateWord(t *testing.T) {
	for _, tc := range []struct {
		holds, broken, incomplete bool
		want                      string
	}{
		{true, false, false, GateHolds},
		{false, false, false, GateFails},
		{false, true, false, GateBroken},
		{false, true, true, GateIncomplete}, // incomplete first, as the gate command exits
		{false, false, true, GateIncomplete},
	} {
		if got := GateWord(tc.holds, tc.broken, tc.incomplete); got != tc.want {
			t.Errorf("GateWord(%v,%v,%v) = %q, want %q", tc.holds, tc.broken, tc.incomplete, got, tc.want)
		}
	}
}

func TestNewHistoryLine(t *testing.T) {
	tr := Trials(fixture(), 3)
	cmp := Compare(runOf(3, scen{"a", "h1", []string{ok6}}), runOf(3, scen{"a", "h1", []string{"FFFFFF"}}, scen{"b", "h2", []string{ok6}}))
	l := NewHistoryLine(meta(), tr, GateFails, &cmp)
	want := HistoryLine{
		Version: HistoryVersion, Time: created, Agent: "careful", AgentVersion: "v1.4.2-3-gabc1234", Suite: "core", PackHash: "p1aaaaaaaaaaaaaa",
		K: 3, Calls: 16, HarnessErrors: 2, Excluded: 2, Integrity: 10, Gate: "fails",
		Axes: map[scorer.Axis]int{scorer.Captured: 15, scorer.ActiveStateCorrect: 15, scorer.ToolArgsCorrect: 11,
			scorer.StaleWritePrevented: 11, scorer.BackendCorrect: 12, scorer.ConfirmationMatchesBackend: 11},
		Baseline: &BaselineCounts{Compared: 1, Regressions: 1, Added: 1, PackChanged: true},
	}
	if !reflect.DeepEqual(l, want) {
		t.Errorf("\n got %+v %+v\nwant %+v %+v", l, l.Baseline, want, want.Baseline)
	}
	if NewHistoryLine(meta(), tr, GateHolds, nil).Baseline != nil {
		t.Errorf("baseline counts without a comparison")
	}
}

func line(min int, version, pack string, integrity, calls int, axes [6]int, gate string) HistoryLine {
	l := HistoryLine{Version: HistoryVersion, Time: created.Add(time.Duration(min) * time.Minute), Agent: "careful", AgentVersion: version,
		Suite: "core", PackHash: pack, Calls: calls, Integrity: integrity, Gate: gate, Axes: map[scorer.Axis]int{}}
	for i, a := range scorer.Axes() {
		l.Axes[a] = axes[i]
	}
	return l
}

func historyLines() []HistoryLine {
	p1 := "3f9a0c1d2e4b5a6978"
	p2 := "77aa0c1d2e4b5a6978"
	return []HistoryLine{
		line(0, "v1.0.0", p1, 8, 30, [6]int{25, 29, 20, 15, 16, 13}, GateFails),
		line(60, "v1.1.0", p1, 20, 30, [6]int{30, 30, 24, 22, 23, 20}, GateFails),
		line(120, "", p2, 0, 0, [6]int{}, GateBroken),
		line(180, "v1.2.0", p1, 30, 30, [6]int{30, 30, 30, 30, 30, 30}, GateHolds),
		line(240, "v1.2.1", p1, 29, 30, [6]int{30, 30, 29, 29, 30, 30}, GateFails),
		line(300, "v1.2.1", p2, 87, 90, [6]int{90, 90, 88, 88, 89, 89}, GateHolds),
		line(360, "v1.2.2", p1, 29, 30, [6]int{30, 30, 29, 29, 30, 30}, GateFails),
	}
}

func TestHistoryRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	want := historyLines()
	want[1].Baseline = &BaselineCounts{Compared: 30, Regressions: 0, Fixes: 12, Unchanged: 18}
	for _, l := range want {
		if err := AppendHistory(path, l); err != nil {
			t.Fatal(err)
		}
	}
	got, warnings, err := ReadHistory(path)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("err %v warnings %v", err, warnings)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip differs\n got %+v\nwant %+v", got, want)
	}
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), "\n"); n != len(want) {
		t.Errorf("%d newlines for %d lines", n, len(want))
	}
	// A zero Version is written as the current one.
	l := want[0]
	l.Version = 0
	if err := AppendHistory(path, l); err != nil {
		t.Fatal(err)
	}
	if got, w, _ := ReadHistory(path); len(got) != len(want)+1 || len(w) > 0 {
		t.Errorf("unversioned line: %d lines, warnings %v", len(got), w)
	}
}

// TestHistoryTornLine: a crash mid-append leaves a line without its
// newline; the next append starts a fresh line, and reading skips only
// the torn one, with a warning naming it.
func TestHistoryTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	ls := historyLines()
	if err := AppendHistory(path, ls[0]); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"version":1,"time":"2025-03-14T`)
	f.Close()
	if err := AppendHistory(path, ls[1]); err != nil {
		t.Fatal(err)
	}
	got, warnings, err := ReadHistory(path)
	if err != nil || len(got) != 2 || got[1].AgentVersion != "v1.1.0" {
		t.Fatalf("got %d lines, err %v", len(got), err)
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], path+":2: skipped") {
		t.Errorf("warnings %q", warnings)
	}
}

func TestReadHistoryBadLines(t *testing.T) {
	good := `{"version":1,"time":"2025-03-14T09:26:53Z","agent":"a","suite":"core","pack_hash":"p","calls":3,"axes":{"captured":3},"integrity":2,"gate":"fails"}`
	body := strings.Join([]string{
		good,
		"",
		`not json`,
		`{"version":2,"time":"2025-03-14T09:26:53Z","agent":"a","suite":"core","pack_hash":"p","calls":3,"axes":{},"integrity":2,"gate":"fails"}`,
		`{"version":1,"time":"2025-03-14T09:26:53Z","agent":"a","suite":"core","pack_hash":"p","calls":3,"axes":{},"integrity":2,"gate":"fails","mood":"good"}`,
		`{"version":1,"agent":"a","suite":"core","pack_hash":"p","calls":3,"axes":{},"integrity":2,"gate":"fails"}`,
		`{"version":1,"time":"2025-03-14T09:26:53Z","agent":"a","suite":"core","pack_hash":"p","calls":3,"axes":{"vibes":1},"integrity":2,"gate":"fails"}`,
		`{"version":1,"time":"2025-03-14T09:26:53Z","agent":"a","suite":"core","pack_hash":"p","calls":3,"axes":{},"integrity":4,"gate":"fails"}`,
		good + ` {}`,
		"  " + good + "  ",
		good, // no final newline
	}, "\n")
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	got, warnings, err := ReadHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Errorf("%d good lines, want 3", len(got))
	}
	want := []string{":3: skipped: invalid character", ":4: skipped: format version 2", `:5: skipped: json: unknown field "mood"`,
		":6: skipped: no time", `:7: skipped: axes: unknown axis "vibes"`, ":8: skipped: integrity 4 of 3", ":9: skipped: data after"}
	if len(warnings) != len(want) {
		t.Fatalf("warnings %q", warnings)
	}
	for i, w := range want {
		if !strings.HasPrefix(warnings[i], path+w) {
			t.Errorf("warning %d: %q, want prefix %q", i, warnings[i], path+w)
		}
	}
	if _, _, err := ReadHistory(filepath.Join(t.TempDir(), "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestWriteTrend(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTrend(&b, historyLines()); err != nil {
		t.Fatal(err)
	}
	golden(t, "trend.golden", b.Bytes())
}

func TestRateDelta(t *testing.T) {
	for _, tc := range []struct {
		k0, n0, k1, n1 int
		want           string
	}{
		{8, 30, 20, 30, "↑ +40.0 pts"},
		{30, 30, 29, 30, "↓ -3.3 pts"},
		{29, 30, 87, 90, "="}, // same rate, more calls
		{0, 0, 5, 10, "?"},
	} {
		if got := rateDelta(tc.k0, tc.n0, tc.k1, tc.n1); got != tc.want {
			t.Errorf("rateDelta(%d/%d → %d/%d) = %q, want %q", tc.k0, tc.n0, tc.k1, tc.n1, got, tc.want)
		}
	}
}

// TestAppendHistoryConcurrent: appenders racing on one file never
// interleave within a line.
func TestAppendHistoryConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				l := line(g*100+i, "v"+strconv.Itoa(g), "pack", i, 30, [6]int{}, GateHolds)
				if err := AppendHistory(path, l); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	got, warnings, err := ReadHistory(path)
	if err != nil || len(warnings) > 0 || len(got) != 100 {
		t.Errorf("%d lines, warnings %v, err %v", len(got), warnings, err)
	}
}
