package release

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/callproof/callproof/internal/safetext"
	"github.com/callproof/callproof/scorer"
)

// HistoryVersion is the history line format this package writes and reads.
const HistoryVersion = 1

// Gate verdict words for history lines, in the order a run is judged:
// incomplete (not the run that was planned), broken (a harness error: it
// proves nothing), then the rules.
const (
	GateHolds      = "holds"
	GateFails      = "fails"
	GateBroken     = "broken"
	GateIncomplete = "incomplete"
)

// GateWord turns a gate result's flags into its history word.
func GateWord(holds, broken, incomplete bool) string {
	switch {
	case incomplete:
		return GateIncomplete
	case broken:
		return GateBroken
	case !holds:
		return GateFails
	}
	return GateHolds
}

// HistoryLine is one run in the run history: one JSON object per line.
type HistoryLine struct {
	Version      int       `json:"version"`
	Time         time.Time `json:"time"`
	Agent        string    `json:"agent"`
	AgentVersion string    `json:"agent_version,omitempty"`
	Suite        string    `json:"suite"`
	PackHash     string    `json:"pack_hash"`
	K            int       `json:"k,omitempty"`
	// Calls counts the calls counted as trials; harness errors and
	// excluded calls are apart.
	Calls         int                 `json:"calls"`
	HarnessErrors int                 `json:"harness_errors,omitempty"`
	Excluded      int                 `json:"excluded,omitempty"`
	Axes          map[scorer.Axis]int `json:"axes"`
	Integrity     int                 `json:"integrity"`
	Gate          string              `json:"gate"`
	Baseline      *BaselineCounts     `json:"baseline,omitempty"`
}

// BaselineCounts is a comparison with the baseline, reduced to counts.
type BaselineCounts struct {
	Compared        int  `json:"compared"`
	Regressions     int  `json:"regressions"`
	RateRegressions int  `json:"rate_regressions,omitempty"`
	Fixes           int  `json:"fixes"`
	Unchanged       int  `json:"unchanged"`
	Changed         int  `json:"changed,omitempty"`
	Added           int  `json:"added,omitempty"`
	Removed         int  `json:"removed,omitempty"`
	PackChanged     bool `json:"pack_changed,omitempty"`
}

// NewHistoryLine records a run: meta.Created is the run's time, gate one
// of the Gate words, cmp the comparison with the baseline or nil.
func NewHistoryLine(meta BaselineMeta, tr TrialReport, gate string, cmp *Comparison) HistoryLine {
	l := HistoryLine{
		Version: HistoryVersion, Time: meta.Created, Agent: meta.Agent, AgentVersion: meta.AgentVersion,
		Suite: meta.Suite, PackHash: meta.PackHash, K: tr.K, Calls: tr.Calls,
		HarnessErrors: len(tr.HarnessErrors), Excluded: len(tr.Excluded),
		Axes: map[scorer.Axis]int{}, Integrity: tr.Integrity.Pass, Gate: gate,
	}
	for _, a := range tr.Axes {
		l.Axes[a.Axis] = a.Pass
	}
	if cmp != nil {
		l.Baseline = &BaselineCounts{
			Compared: cmp.Compared, Regressions: len(cmp.Regressions), RateRegressions: len(cmp.RateRegressions),
			Fixes: len(cmp.Fixes), Unchanged: cmp.Unchanged, Changed: len(cmp.ChangedScenarios),
			Added: len(cmp.Added), Removed: len(cmp.Removed), PackChanged: cmp.PackChanged,
		}
	}
	return l
}

// AppendHistory appends one line to the history file, creating it. The line
// goes out in a single write on an O_APPEND descriptor, so concurrent
// appenders do not interleave within a line, and is synced before return. If
// the file ends in a torn line (a crash mid-append), a newline is written
// first, so only that line is lost, never the new one.
func AppendHistory(path string, l HistoryLine) error {
	if l.Version == 0 {
		l.Version = HistoryVersion
	}
	data, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("release: history %s: %w", path, err)
	}
	// JSON leaves bidi overrides and zero-width characters as they are;
	// written as \u escapes they read the same and never reach a
	// terminal that shows the file.
	var safe bytes.Buffer
	if _, err := safetext.NewWriter(&safe).Write(data); err != nil {
		return fmt.Errorf("release: history %s: %w", path, err)
	}
	data = safe.Bytes()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("release: history: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			data = append([]byte{'\n'}, data...)
		}
	}
	data = append(data, '\n')
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("release: history %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("release: history %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("release: history %s: %w", path, err)
	}
	return nil
}

// ReadHistory reads every line of a history file. A line that is not a
// valid history line (torn, hand-edited, a newer format) is skipped with a
// warning naming its line number: one bad line must not hide the rest of
// the history. The error is for the file itself (missing, unreadable).
func ReadHistory(path string) ([]HistoryLine, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("release: history: %w", err)
	}
	defer f.Close()
	var lines []HistoryLine
	var warnings []string
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		raw, rerr := r.ReadBytes('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return lines, warnings, fmt.Errorf("release: history %s: %w", path, rerr)
		}
		if text := bytes.TrimSpace(raw); len(text) > 0 {
			l, err := parseHistoryLine(text)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("%s:%d: skipped: %v", path, n, err))
			} else {
				lines = append(lines, l)
			}
		}
		if rerr != nil {
			break
		}
	}
	return lines, warnings, nil
}

func parseHistoryLine(text []byte) (HistoryLine, error) {
	var l HistoryLine
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return l, err
	}
	if dec.More() {
		return l, errors.New("data after the JSON object")
	}
	if l.Version != HistoryVersion {
		return l, fmt.Errorf("format version %d, this build reads version %d", l.Version, HistoryVersion)
	}
	if l.Time.IsZero() {
		return l, errors.New("no time")
	}
	if err := checkAxes("axes", l.Axes, l.Calls); err != nil {
		return l, err
	}
	if l.Integrity < 0 || l.Integrity > l.Calls {
		return l, fmt.Errorf("integrity %d of %d calls", l.Integrity, l.Calls)
	}
	return l, nil
}

// axisAbbrev keeps the trend table narrow enough for a terminal.
var axisAbbrev = map[scorer.Axis]string{
	scorer.Captured:                   "capt",
	scorer.ActiveStateCorrect:         "state",
	scorer.ToolArgsCorrect:            "args",
	scorer.StaleWritePrevented:        "stale",
	scorer.BackendCorrect:             "backend",
	scorer.ConfirmationMatchesBackend: "confirm",
}

// WriteTrend prints one row per run, in the order given: time (UTC),
// agent version, short pack hash, integrity and each axis as k/N, the gate
// word, and the change in integrity rate against the previous row of the
// same agent and pack ("new" for the first; rates of different packs are
// not comparable). Strings from the file are escaped (safetext): a line
// break or control character in a version cannot break or repaint the table.
func WriteTrend(w io.Writer, lines []HistoryLine) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"time", "version", "pack", "integrity"}
	for _, a := range scorer.Axes() {
		head = append(head, axisAbbrev[a])
	}
	head = append(head, "gate", "vs prev")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	prev := map[string]HistoryLine{}
	for _, l := range lines {
		version := safetext.Escape(l.AgentVersion)
		if version == "" {
			version = "-"
		}
		row := []string{l.Time.UTC().Format("2006-01-02 15:04"), version, safetext.Escape(shortHash(l.PackHash)), kOfN(l.Integrity, l.Calls)}
		for _, a := range scorer.Axes() {
			row = append(row, kOfN(l.Axes[a], l.Calls))
		}
		key := l.Agent + "\x00" + l.PackHash
		delta := "new"
		if p, ok := prev[key]; ok {
			delta = rateDelta(p.Integrity, p.Calls, l.Integrity, l.Calls)
		}
		// A run with no counted call (all harness errors) has no rate:
		// it is neither compared nor compared against.
		if l.Calls == 0 {
			delta = "-"
		} else {
			prev[key] = l
		}
		row = append(row, safetext.Escape(l.Gate), delta)
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

func kOfN(k, n int) string { return fmt.Sprintf("%d/%d", k, n) }

func shortHash(h string) string {
	if h == "" {
		return "-"
	}
	if len(h) > 8 {
		return h[:8]
	}
	return h
}

// rateDelta is the change of rate in percentage points with an arrow.
func rateDelta(k0, n0, k1, n1 int) string {
	if n0 == 0 || n1 == 0 {
		return "?"
	}
	d := 100 * (float64(k1)/float64(n1) - float64(k0)/float64(n0))
	switch {
	case d > 0.05:
		return fmt.Sprintf("↑ +%.1f pts", d)
	case d < -0.05:
		return fmt.Sprintf("↓ %.1f pts", d)
	}
	return "="
}
