package release

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

var created = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

func meta() BaselineMeta {
	return BaselineMeta{Created: created, Agent: "careful", AgentVersion: "v1.4.2-3-gabc1234", Suite: "core", PackHash: "p1aaaaaaaaaaaaaa",
		ScenarioHashes: map[string]string{"corr-01": "h1", "corr-02": "h2", "int-01": "h3", "tf-01": "h4", "tf-02": "h5", "tf-03": "h6", "tf-04": "h7"}}
}

func TestNewBaseline(t *testing.T) {
	b := NewBaseline(meta(), fixture(), 3)
	if b.Version != BaselineVersion || b.K != 3 || b.Agent != "careful" || !b.Created.Equal(created) || b.PackHash != "p1aaaaaaaaaaaaaa" {
		t.Errorf("header %+v", b)
	}
	if b.Calls != 16 || b.Integrity != 10 || b.Axes[scorer.ToolArgsCorrect] != 11 || b.Axes[scorer.Captured] != 15 {
		t.Errorf("suite %d/%d axes %v", b.Integrity, b.Calls, b.Axes)
	}
	c2, ok := b.Scenario("corr-02")
	if !ok || c2.Trials != 3 || c2.Integrity != 2 || c2.Axes[scorer.StaleWritePrevented] != 2 || c2.Axes[scorer.BackendCorrect] != 3 {
		t.Fatalf("corr-02 %+v", c2)
	}
	want := []TrialOutcome{
		{Call: "corr-02.t1", Outcome: trace.OutcomeScored, Integrity: true},
		{Call: "corr-02.t2", Outcome: trace.OutcomeScored, Failing: []scorer.Axis{scorer.ToolArgsCorrect, scorer.StaleWritePrevented}, Primary: scorer.BucketStaleToolArgs},
		{Call: "corr-02.t3", Outcome: trace.OutcomeScored, Integrity: true},
		{Call: "corr-02.t4", Outcome: trace.OutcomeHarnessError},
	}
	if !reflect.DeepEqual(c2.Outcomes, want) {
		t.Errorf("corr-02 outcomes\n got %+v\nwant %+v", c2.Outcomes, want)
	}
	if err := b.validate(); err != nil {
		t.Errorf("a new baseline does not validate: %v", err)
	}
	// The meta's map is copied, not shared.
	m := meta()
	b2 := NewBaseline(m, fixture(), 3)
	m.ScenarioHashes["corr-01"] = "changed"
	if b2.ScenarioHashes["corr-01"] != "h1" {
		t.Errorf("baseline shares the caller's hash map")
	}
}

func TestSaveLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "base")
	b := NewBaseline(meta(), fixture(), 3)
	if err := Save(dir, b); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, b) {
		t.Errorf("round trip differs\n got %+v\nwant %+v", got, b)
	}
	// Overwrite: the second save replaces the first, no temp file stays.
	b.Agent = "naive"
	if err := Save(dir, b); err != nil {
		t.Fatal(err)
	}
	if got, _ := Load(dir); got.Agent != "naive" {
		t.Errorf("second save not read back: %q", got.Agent)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != BaselineFile {
		t.Errorf("directory holds %v, want only %s", ents, BaselineFile)
	}
	// An invalid baseline is refused and the saved one left alone.
	bad := b
	bad.Integrity = 99
	if err := Save(dir, bad); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("saving an inconsistent baseline: %v", err)
	}
	if got, err := Load(dir); err != nil || got.Agent != "naive" {
		t.Errorf("saved baseline damaged: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	good, err := json.Marshal(NewBaseline(meta(), fixture(), 3))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	for _, tc := range []struct {
		name, body, want string
	}{
		{"not json", "{", "unexpected EOF"},
		{"unknown field", edit(func(m map[string]any) { m["extra"] = 1 }), `unknown field "extra"`},
		{"trailing data", string(good) + "{}", "data after"},
		{"newer version", edit(func(m map[string]any) { m["version"] = 2 }), "format version 2"},
		{"no k", edit(func(m map[string]any) { m["k"] = 0 }), "k is 0"},
		{"unknown axis", edit(func(m map[string]any) { m["axes"].(map[string]any)["vibes"] = 1 }), `unknown axis "vibes"`},
		{"counts disagree", edit(func(m map[string]any) { m["integrity"] = 11 }), "add up to 10 of 16"},
		{"axis sum disagrees", edit(func(m map[string]any) { m["axes"].(map[string]any)["captured"] = 14 }), "captured says 14"},
		{"scenario trials disagree", edit(func(m map[string]any) {
			m["scenarios"].([]any)[0].(map[string]any)["trials"] = 4
		}), "scenario corr-01: says 3 of 4"},
		{"scenario order", edit(func(m map[string]any) {
			s := m["scenarios"].([]any)
			s[0], s[1] = s[1], s[0]
		}), "out of order"},
		{"bad outcome", edit(func(m map[string]any) {
			m["scenarios"].([]any)[0].(map[string]any)["outcomes"].([]any)[0].(map[string]any)["outcome"] = "fine"
		}), `unknown outcome "fine"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, BaselineFile), []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), filepath.Join(dir, BaselineFile)) {
				t.Errorf("error %v, want one naming the file and saying %q", err, tc.want)
			}
		})
	}
	_, err = Load(t.TempDir())
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), BaselineFile) {
		t.Errorf("missing baseline: %v", err)
	}
}

// TestBaselineJSON pins the file format documented in docs/GATING.md.
func TestBaselineJSON(t *testing.T) {
	b := NewBaseline(meta(), append(trialsOf("corr-01", "", "PPPPPP"), trialsOf("corr-02", scorer.BucketStaleToolArgs, "PPFFPP", "H")...), 2)
	got, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "baseline.json.golden", append(got, '\n'))
	if !slices.Contains(strings.Split(string(got), "\n"), `  "version": 1,`) {
		t.Errorf("no version field")
	}
}
