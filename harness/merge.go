package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// ReasonCancelled is the harness_error reason of a call a cancelled run
// (Ctrl-C) did not finish.
const ReasonCancelled = "run cancelled"

// Resume is what a results directory still needs.
type Resume struct {
	Meta     Meta
	Todo     []string // planned calls with no complete history, in plan order
	Kept     int      // calls kept as they are
	Moved    int      // earlier attempts moved to attempts.jsonl
	Warnings []string
}

// PrepareResume readies dir for `run --resume`: it keeps, per planned
// call, the last complete history that is not a harness error (a call cut
// short by Ctrl-C is one), moves the other attempts to attempts.jsonl,
// drops a torn last line, and rewrites run.jsonl and scores.jsonl to the
// kept calls (atomically). Todo is what is left to place; OpenResults then
// appends it.
func PrepareResume(dir string) (*Resume, error) {
	run, err := LoadRun(dir)
	if err != nil {
		return nil, err
	}
	if run.Meta == nil || len(run.Meta.Planned) == 0 {
		return nil, fmt.Errorf("%s has no run manifest (meta.json with the planned calls): it cannot be resumed", dir)
	}
	res := &Resume{Meta: *run.Meta, Warnings: run.Warnings}
	keep := map[string]int{} // call -> index in run.Histories
	for i, h := range run.Histories {
		if end := h.End(); end != nil && end.Outcome != trace.OutcomeHarnessError {
			keep[h.Call] = i
		}
	}
	var kept, moved []*trace.History
	for i, h := range run.Histories {
		if j, ok := keep[h.Call]; ok && j == i {
			kept = append(kept, h)
		} else {
			moved = append(moved, h)
		}
	}
	for _, id := range run.Meta.Planned {
		if _, ok := keep[id]; !ok {
			res.Todo = append(res.Todo, id)
		}
	}
	res.Kept, res.Moved = len(kept), len(moved)
	if err := writeRunFiles(dir, kept, moved); err != nil {
		return nil, err
	}
	return res, nil
}

// writeRunFiles replaces dir's run, scores and summary with hs (scored
// again: scoring is pure) and appends earlier to its attempts file.
func writeRunFiles(dir string, hs, earlier []*trace.History) error {
	if len(earlier) > 0 {
		f, err := os.OpenFile(filepath.Join(dir, AttemptsFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		b, err := encodeHistories(earlier)
		if err == nil {
			err = appendSynced(f, b)
		}
		if err := errors.Join(err, f.Close()); err != nil {
			return err
		}
	}
	runB, err := encodeHistories(hs)
	if err != nil {
		return err
	}
	var scoresB bytes.Buffer
	var acc reports.Accumulator
	for _, h := range hs {
		s := scorer.Score(h)
		acc.Add(s)
		line, err := json.Marshal(s)
		if err != nil {
			return err
		}
		scoresB.Write(append(line, '\n'))
	}
	if err := replaceFile(filepath.Join(dir, RunFile), runB); err != nil {
		return err
	}
	if err := replaceFile(filepath.Join(dir, ScoresFile), scoresB.Bytes()); err != nil {
		return err
	}
	return writeJSONFile(filepath.Join(dir, SummaryFile), acc.Summary())
}

func encodeHistories(hs []*trace.History) ([]byte, error) {
	var b bytes.Buffer
	for _, h := range hs {
		if err := trace.WriteJSONL(&b, h); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// MergeResult says what Merge did.
type MergeResult struct {
	Calls    int      // calls in the merged run
	Replaced int      // earlier attempts kept in attempts.jsonl
	Warnings []string // what the sources left out (torn lines)
}

// Merge combines results directories into out, a new directory that can be
// gated: per call the later attempt wins (a later directory, or later in
// its file), and every earlier attempt — the sources' own attempts.jsonl
// included — is kept in out's attempts.jsonl. The manifest is the union of
// the sources' plans. The completion marker is written when every source
// has a manifest, so the merged run's completeness is the plan's; calls
// cancelled in a source and not re-run stay listed as cancelled.
func Merge(out string, dirs []string) (*MergeResult, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("merge: no runs to merge")
	}
	var meta Meta
	res := &MergeResult{}
	winner := map[string]*trace.History{}
	var order []string
	var earlier []*trace.History
	planned, inPlan := []string(nil), map[string]bool{}
	manifests := true
	shards, missing := make([]*Shard, len(dirs)), make([][]string, len(dirs))
	for i, dir := range dirs {
		run, err := LoadRun(dir)
		if err != nil {
			return nil, err
		}
		res.Warnings = append(res.Warnings, run.Warnings...)
		if run.Meta != nil && run.Meta.Shard != nil {
			shards[i], missing[i] = run.Meta.Shard, CheckCompleteness(run).Missing
		}
		if run.Meta == nil {
			manifests = false
		} else {
			if i == 0 {
				meta = *run.Meta
			} else if run.Meta.Suite != meta.Suite {
				return nil, fmt.Errorf("merge: %s ran suite %q, %s ran %q: not the same run", dirs[0], meta.Suite, dir, run.Meta.Suite)
			} else if err := sameScenarios(&meta, run.Meta, dirs[0], dir); err != nil {
				return nil, err
			}
			if len(run.Meta.Planned) == 0 && run.Meta.Shard == nil {
				manifests = false
			}
			for _, id := range run.Meta.Planned {
				if !inPlan[id] {
					inPlan[id] = true
					planned = append(planned, id)
				}
			}
		}
		if b, err := os.ReadFile(filepath.Join(dir, AttemptsFile)); err == nil {
			old, err := decodeRun(b, filepath.Join(dir, AttemptsFile))
			if err != nil {
				return nil, err
			}
			res.Warnings = append(res.Warnings, old.Warnings...)
			earlier = append(earlier, old.Histories...)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		for _, h := range run.Histories {
			if prev, ok := winner[h.Call]; ok {
				earlier = append(earlier, prev)
			} else {
				order = append(order, h.Call)
			}
			winner[h.Call] = h
		}
	}
	suite, err := checkShards(dirs, shards, missing)
	if err != nil {
		return nil, err
	}
	if suite != nil {
		// The shards' plans together must be the suite's, each call once.
		if extra, lost := planDiff(planned, suite); len(extra)+len(lost) > 0 {
			return nil, fmt.Errorf("merge: the shards planned %d calls the suite does not have (%s) and left out %d of its calls (%s)",
				len(extra), strings.Join(first3(extra), ", "), len(lost), strings.Join(first3(lost), ", "))
		}
		planned, meta.Shard = suite, nil
	}
	hs := make([]*trace.History, 0, len(order))
	var cancelled []string
	for _, id := range order {
		h := winner[id]
		hs = append(hs, h)
		if end := h.End(); end != nil && end.Outcome == trace.OutcomeHarnessError && end.Reason == ReasonCancelled {
			cancelled = append(cancelled, id)
		}
	}
	SortHistories(hs)
	meta.Planned, meta.Calls, meta.Sources = planned, len(planned), dirs
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	for _, f := range []string{DoneFile, AttemptsFile} {
		if err := os.Remove(filepath.Join(out, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if err := writeJSONFile(filepath.Join(out, MetaFile), meta); err != nil {
		return nil, err
	}
	if err := writeRunFiles(out, hs, earlier); err != nil {
		return nil, err
	}
	if manifests {
		if err := writeJSONFile(filepath.Join(out, DoneFile), Completion{Calls: len(hs), Cancelled: cancelled}); err != nil {
			return nil, err
		}
	}
	res.Calls, res.Replaced = len(hs), len(earlier)
	return res, nil
}

// planDiff lists the ids in got and not in want, and in want and not in
// got.
func planDiff(got, want []string) (extra, lost []string) {
	in := func(ids []string) map[string]bool {
		m := make(map[string]bool, len(ids))
		for _, id := range ids {
			m[id] = true
		}
		return m
	}
	g, w := in(got), in(want)
	for _, id := range got {
		if !w[id] {
			extra = append(extra, id)
		}
	}
	for _, id := range want {
		if !g[id] {
			lost = append(lost, id)
		}
	}
	return extra, lost
}

// sameScenarios refuses to merge runs that placed one scenario id with
// different content (an edited scenario file between the runs), and folds
// b's hashes into a's: a merged run's calls must all be of one version.
func sameScenarios(a, b *Meta, adir, bdir string) error {
	for id, h := range b.ScenarioHashes {
		if ah, ok := a.ScenarioHashes[id]; ok && ah != h {
			return fmt.Errorf("merge: scenario %s changed between %s and %s (content hash %.12s against %.12s): not the same run", id, adir, bdir, ah, h)
		}
	}
	if len(b.ScenarioHashes) > 0 {
		if a.ScenarioHashes == nil {
			a.ScenarioHashes = map[string]string{}
		}
		for id, h := range b.ScenarioHashes {
			a.ScenarioHashes[id] = h
		}
		a.PackHash = PackHash(a.ScenarioHashes)
	}
	return nil
}
