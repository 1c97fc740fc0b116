package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/callproof/callproof/trace"
)

// SavedRun is a run read back from disk: the complete histories, and what
// the directory says about the run as a whole (its manifest and completion
// marker), so a run cut short is told apart from a finished one.
type SavedRun struct {
	Name      string           // the run file read
	Histories []*trace.History // complete histories (call.start … call.end), in file order
	Meta      *Meta            // nil: no meta.json beside the run file
	Done      *Completion      // nil: no completion marker
	Dropped   []string         // calls whose history was left out: torn or never finished
	Warnings  []string         // what was left out, one line each
}

// LoadRun reads a results directory, or a run file (with the meta.json and
// completion marker beside it when it is a directory's run.jsonl). A torn
// last line — a write cut short by kill -9 or a full disk — and the
// unfinished history it belongs to are left out with a warning, never
// failing the whole run; any other unreadable line is an error.
func LoadRun(path string) (*SavedRun, error) {
	dir := ""
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		dir, path = path, filepath.Join(path, RunFile)
	} else if filepath.Base(path) == RunFile {
		dir = filepath.Dir(path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	run, err := decodeRun(b, path)
	if err != nil {
		return nil, err
	}
	if dir == "" {
		return run, nil
	}
	if err := run.readBeside(dir); err != nil {
		return nil, err
	}
	return run, nil
}

// readBeside reads the manifest and the completion marker of a results
// directory into r, when they are there.
func (r *SavedRun) readBeside(dir string) error {
	var meta Meta
	if ok, err := readJSONFile(filepath.Join(dir, MetaFile), &meta); err != nil {
		return err
	} else if ok {
		r.Meta = &meta
	}
	var done Completion
	if ok, err := readJSONFile(filepath.Join(dir, DoneFile), &done); err != nil {
		return err
	} else if ok {
		r.Done = &done
	}
	return nil
}

// DecodeRun reads a run from a stream (no manifest, no marker).
func DecodeRun(r io.Reader, name string) (*SavedRun, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return decodeRun(b, name)
}

func decodeRun(b []byte, name string) (*SavedRun, error) {
	body, torn := splitTorn(b)
	run := &SavedRun{Name: name}
	if torn != "" {
		run.Warnings = append(run.Warnings, tornWarning(name, len(torn)))
		if id := tornCall(torn); id != "" {
			run.Dropped = append(run.Dropped, id)
		}
	}
	grouped, err := trace.ReadJSONL(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, g := range grouped {
		for _, h := range splitAttempts(g) {
			if n := len(h.Events); n == 0 || h.Events[n-1].Kind != trace.KindCallEnd {
				if !slices.Contains(run.Dropped, h.Call) {
					run.Dropped = append(run.Dropped, h.Call)
				}
				run.Warnings = append(run.Warnings, unfinishedWarning(name, h.Call))
				continue
			}
			run.Histories = append(run.Histories, h)
		}
	}
	return run, nil
}

// tornWarning says a run file's torn last line (n bytes) was left out.
func tornWarning(name string, n int) string {
	return fmt.Sprintf("%s: dropped a torn last line (%d bytes, the write was cut short)", name, n)
}

// unfinishedWarning says a call's history without call.end was left out.
func unfinishedWarning(name, call string) string {
	return fmt.Sprintf("%s: call %s: history has no %s (never finished writing); left out", name, call, trace.KindCallEnd)
}

// tornCall finds the call a torn event line belonged to (events are
// encoded call first), or "".
func tornCall(line string) string {
	rest, ok := strings.CutPrefix(line, `{"call":"`)
	if !ok {
		return ""
	}
	id, _, ok := strings.Cut(rest, `"`)
	if !ok || strings.Contains(id, `\`) {
		return ""
	}
	return id
}

// splitAttempts splits one call's events at each call.start: a call that
// appears twice in a file is two attempts, never one history.
func splitAttempts(h *trace.History) []*trace.History {
	var out []*trace.History
	for _, e := range h.Events {
		if e.Kind == trace.KindCallStart || len(out) == 0 {
			out = append(out, &trace.History{Call: h.Call})
		}
		last := out[len(out)-1]
		last.Events = append(last.Events, e)
	}
	return out
}

func readJSONFile(path string, v any) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return true, nil
}

// Planned is the run's manifest, or nil when the run has none.
func (r *SavedRun) Planned() []string {
	if r.Meta == nil {
		return nil
	}
	return r.Meta.Planned
}

// Sorted returns the histories ordered by scenario id, then call id.
func (r *SavedRun) Sorted() []*trace.History {
	hs := append([]*trace.History(nil), r.Histories...)
	SortHistories(hs)
	return hs
}

// SortHistories orders histories by scenario id, then call id: output
// never depends on which call finished first.
func SortHistories(hs []*trace.History) {
	key := func(h *trace.History) string {
		if st := h.Start(); st != nil {
			return st.ScenarioID
		}
		return h.Call
	}
	sort.SliceStable(hs, func(i, j int) bool {
		if a, b := key(hs[i]), key(hs[j]); a != b {
			return a < b
		}
		return hs[i].Call < hs[j].Call
	})
}

// Completeness says whether a saved run covers what it planned: every
// planned call once, and the run finished. A gate over an incomplete run
// does not hold whatever the verdicts say.
type Completeness struct {
	Planned    int      `json:"planned"` // 0: no manifest (an older run, a bare file, stdin)
	Calls      int      `json:"calls"`   // complete histories
	Missing    []string `json:"missing,omitempty"`
	Duplicated []string `json:"duplicated,omitempty"`
	// CutShort: the run never wrote its completion marker (killed, crashed,
	// still running), or was cancelled with calls unfinished (Cancelled).
	CutShort  bool     `json:"cut_short,omitempty"`
	Cancelled []string `json:"cancelled,omitempty"`
	Empty     bool     `json:"empty,omitempty"`
}

// CheckCompleteness compares a saved run with its manifest and marker.
// Without a manifest it can still tell duplicates, an empty run and calls
// whose history was torn.
func CheckCompleteness(r *SavedRun) Completeness {
	// A shard may hold none of a small suite's calls: planned as empty,
	// it is complete with none.
	emptyShard := r.Meta != nil && r.Meta.Shard != nil && len(r.Meta.Planned) == 0
	c := Completeness{Planned: len(r.Planned()), Calls: len(r.Histories), Empty: len(r.Histories) == 0 && !emptyShard}
	count := map[string]int{}
	for _, h := range r.Histories {
		count[h.Call]++
	}
	for id, n := range count {
		if n > 1 {
			c.Duplicated = append(c.Duplicated, id)
		}
	}
	missing := map[string]bool{}
	for _, id := range r.Planned() {
		if count[id] == 0 {
			missing[id] = true
		}
	}
	for _, id := range r.Dropped {
		if count[id] == 0 {
			missing[id] = true
		}
	}
	for id := range missing {
		c.Missing = append(c.Missing, id)
	}
	if c.Planned > 0 {
		c.CutShort = r.Done == nil || len(r.Done.Cancelled) > 0
	}
	if r.Done != nil {
		c.Cancelled = append(c.Cancelled, r.Done.Cancelled...)
	}
	sort.Strings(c.Duplicated)
	sort.Strings(c.Missing)
	sort.Strings(c.Cancelled)
	return c
}

// Complete says whether the run covers its plan.
func (c Completeness) Complete() bool {
	return !c.Empty && !c.CutShort && len(c.Missing) == 0 && len(c.Duplicated) == 0
}

// Problems says, one line each, why the run is incomplete (nothing when
// it is complete).
func (c Completeness) Problems() []string {
	var out []string
	if c.Empty {
		out = append(out, "no calls in the run")
	}
	if c.CutShort {
		switch {
		case len(c.Cancelled) > 0:
			out = append(out, fmt.Sprintf("run cancelled: %d calls unfinished: %s", len(c.Cancelled), strings.Join(c.Cancelled, ", ")))
		default:
			out = append(out, "run cut short: no completion marker (killed, crashed, or still running)")
		}
	}
	if len(c.Missing) > 0 {
		out = append(out, fmt.Sprintf("%d calls missing (planned, no complete history): %s", len(c.Missing), strings.Join(c.Missing, ", ")))
	}
	if len(c.Duplicated) > 0 {
		out = append(out, fmt.Sprintf("%d calls duplicated: %s", len(c.Duplicated), strings.Join(c.Duplicated, ", ")))
	}
	return out
}

// GateRun gates a saved run: the calls in scenario order, then the run's
// completeness. An incomplete run never holds.
func GateRun(r *SavedRun, p Policy) GateResult {
	return gateCalls(r, ScoreCalls(r.Sorted()), p)
}

// gateCalls gates a run's calls, already scored, then its completeness.
func gateCalls(r *SavedRun, calls []Call, p Policy) GateResult {
	g := Gate(calls, p)
	if c := CheckCompleteness(r); !c.Complete() {
		g.Holds = false
		g.Incomplete = &c
	}
	return g
}
