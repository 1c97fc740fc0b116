package release

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// BaselineVersion is the baseline.json format this package writes and reads.
const BaselineVersion = 1

// BaselineFile is the name of the baseline inside its directory.
const BaselineFile = "baseline.json"

// BaselineMeta says which run a baseline (or a history line) records. The
// time is passed in: nothing here reads the clock.
type BaselineMeta struct {
	Created      time.Time
	Agent        string
	AgentVersion string // the agent's version or commit, free text
	Suite        string
	// PackHash and ScenarioHashes are the scenario content hashes the run
	// was placed with; Compare judges a scenario only when its hash is
	// equal on both sides.
	PackHash       string
	ScenarioHashes map[string]string
}

// Baseline is an accepted run's results, kept to judge later runs against.
type Baseline struct {
	Version        int               `json:"version"`
	Created        time.Time         `json:"created"`
	Agent          string            `json:"agent"`
	AgentVersion   string            `json:"agent_version,omitempty"`
	Suite          string            `json:"suite"`
	PackHash       string            `json:"pack_hash"`
	ScenarioHashes map[string]string `json:"scenario_hashes"`
	K              int               `json:"k"`
	Scenarios      []ScenarioResult  `json:"scenarios"` // by scenario id
	// Suite figures over every counted call.
	Calls     int                 `json:"calls"`
	Integrity int                 `json:"integrity"`
	Axes      map[scorer.Axis]int `json:"axes"`
}

// ScenarioResult is one scenario's trials in a baseline.
type ScenarioResult struct {
	Scenario  string              `json:"scenario"`
	Trials    int                 `json:"trials"`    // counted trials n
	Integrity int                 `json:"integrity"` // of them with integrity, c
	Axes      map[scorer.Axis]int `json:"axes"`      // passes per axis
	// Outcomes lists every call of the scenario, harness errors included,
	// in trial order.
	Outcomes []TrialOutcome `json:"outcomes"`
}

// TrialOutcome is one call of a scenario as a baseline remembers it.
type TrialOutcome struct {
	Call      string        `json:"call"`
	Outcome   trace.Outcome `json:"outcome"`
	Integrity bool          `json:"integrity"`
	// Failing are the axes that did not pass (fail or unknown).
	Failing []scorer.Axis `json:"failing,omitempty"`
	Primary scorer.Bucket `json:"primary,omitempty"`
}

// Scenario returns one scenario's result.
func (b Baseline) Scenario(id string) (ScenarioResult, bool) {
	for _, s := range b.Scenarios {
		if s.Scenario == id {
			return s, true
		}
	}
	return ScenarioResult{}, false
}

// NewBaseline records a run's scores as a baseline.
func NewBaseline(meta BaselineMeta, scores []scorer.CallScore, k int) Baseline {
	tr := Trials(scores, k)
	b := Baseline{
		Version: BaselineVersion, Created: meta.Created, Agent: meta.Agent, AgentVersion: meta.AgentVersion,
		Suite: meta.Suite, PackHash: meta.PackHash, ScenarioHashes: map[string]string{}, K: tr.K,
		Calls: tr.Calls, Integrity: tr.Integrity.Pass, Axes: map[scorer.Axis]int{},
	}
	for id, h := range meta.ScenarioHashes {
		b.ScenarioHashes[id] = h
	}
	for _, a := range tr.Axes {
		b.Axes[a.Axis] = a.Pass
	}
	_, groups := groupScores(scores)
	for _, st := range tr.Scenarios {
		sr := ScenarioResult{Scenario: st.Scenario, Trials: st.Trials(), Integrity: st.Integrity.Pass, Axes: map[scorer.Axis]int{}}
		for _, a := range st.Axes {
			sr.Axes[a.Axis] = a.Pass
		}
		for _, c := range groups[st.Scenario] {
			sr.Outcomes = append(sr.Outcomes, trialOutcome(c))
		}
		b.Scenarios = append(b.Scenarios, sr)
	}
	return b
}

func trialOutcome(s scorer.CallScore) TrialOutcome {
	t := TrialOutcome{Call: s.Call, Outcome: s.Outcome, Integrity: s.Integrity && counted(s.Outcome), Primary: s.Primary}
	if counted(s.Outcome) {
		t.Failing = failingAxes(s)
	}
	return t
}

// failingAxes lists the axes of a call that did not pass, in axis order.
func failingAxes(s scorer.CallScore) []scorer.Axis {
	var out []scorer.Axis
	for _, a := range scorer.Axes() {
		if s.Axis(a).Verdict != scorer.Pass {
			out = append(out, a)
		}
	}
	return out
}

// Save writes dir/baseline.json. It writes a temporary file in dir and
// renames it over the old one, so a crash leaves either baseline whole,
// never half of one.
func Save(dir string, b Baseline) (err error) {
	path := filepath.Join(dir, BaselineFile)
	if err := b.validate(); err != nil {
		return fmt.Errorf("release: refusing to write %s: %w", path, err)
	}
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return fmt.Errorf("release: %s: %w", path, err)
	}
	data = append(data, '\n')
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	f, err := os.CreateTemp(dir, ".baseline-*.tmp")
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("release: writing %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	// The rename is durable only once the directory is; best effort, as
	// some file systems refuse to sync a directory.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// Load reads dir/baseline.json strictly: unknown fields, trailing data, a
// different format version and figures that do not add up are errors that
// name the file.
func Load(dir string) (Baseline, error) {
	path := filepath.Join(dir, BaselineFile)
	var b Baseline
	data, err := os.ReadFile(path)
	if err != nil {
		return b, fmt.Errorf("release: baseline: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return Baseline{}, fmt.Errorf("release: %s: %w", path, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Baseline{}, fmt.Errorf("release: %s: data after the baseline object", path)
	}
	if err := b.validate(); err != nil {
		return Baseline{}, fmt.Errorf("release: %s: %w", path, err)
	}
	return b, nil
}

// validate checks that a baseline is one this version understands and that
// its counts agree with each other, so a hand-edited or truncated file is
// refused rather than compared.
func (b Baseline) validate() error {
	if b.Version != BaselineVersion {
		return fmt.Errorf("format version %d, this build reads version %d", b.Version, BaselineVersion)
	}
	if b.K < 1 {
		return fmt.Errorf("k is %d, want at least 1", b.K)
	}
	if err := checkAxes("axes", b.Axes, b.Calls); err != nil {
		return err
	}
	calls, integrity := 0, 0
	sums := map[scorer.Axis]int{}
	for i, s := range b.Scenarios {
		if s.Scenario == "" {
			return fmt.Errorf("scenarios[%d]: no scenario id", i)
		}
		if i > 0 && b.Scenarios[i-1].Scenario >= s.Scenario {
			return fmt.Errorf("scenarios[%d]: %q is out of order or repeated", i, s.Scenario)
		}
		if err := checkAxes("scenario "+s.Scenario+": axes", s.Axes, s.Trials); err != nil {
			return err
		}
		n, c := 0, 0
		for _, o := range s.Outcomes {
			if o.Call == "" {
				return fmt.Errorf("scenario %s: an outcome without a call id", s.Scenario)
			}
			switch o.Outcome {
			case trace.OutcomeScored, trace.OutcomeAgentError, trace.OutcomeHarnessError, trace.OutcomeExcluded:
			default:
				return fmt.Errorf("scenario %s: call %s: unknown outcome %q", s.Scenario, o.Call, o.Outcome)
			}
			if counted(o.Outcome) {
				n++
				if o.Integrity {
					c++
				}
			} else if o.Integrity {
				return fmt.Errorf("scenario %s: call %s: a %s call cannot have integrity", s.Scenario, o.Call, o.Outcome)
			}
		}
		if n != s.Trials || c != s.Integrity {
			return fmt.Errorf("scenario %s: says %d of %d trials with integrity, its outcomes show %d of %d", s.Scenario, s.Integrity, s.Trials, c, n)
		}
		calls += n
		integrity += c
		for a, v := range s.Axes {
			sums[a] += v
		}
	}
	if calls != b.Calls || integrity != b.Integrity {
		return fmt.Errorf("says %d of %d calls with integrity, its scenarios add up to %d of %d", b.Integrity, b.Calls, integrity, calls)
	}
	for _, a := range scorer.Axes() {
		if sums[a] != b.Axes[a] {
			return fmt.Errorf("axes: %s says %d passes, its scenarios add up to %d", a, b.Axes[a], sums[a])
		}
	}
	return nil
}

func checkAxes(where string, m map[scorer.Axis]int, n int) error {
	known := map[scorer.Axis]bool{}
	for _, a := range scorer.Axes() {
		known[a] = true
	}
	for a, v := range m {
		if !known[a] {
			return fmt.Errorf("%s: unknown axis %q", where, a)
		}
		if v < 0 || v > n {
			return fmt.Errorf("%s: %s has %d passes of %d", where, a, v, n)
		}
	}
	return nil
}
