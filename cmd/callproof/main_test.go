package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/callproof/callproof/reports"
)

// TestMain lets the test binary act as the callproof command inside the
// scripts: `exec callproof ...` runs run() in a child process.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"callproof": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs testdata/script/*.txtar. Each script starts with a copy
// of testdata/fixtures (recorded demo histories, filtered to five calls) in
// $WORK/fx, so paths in outputs are relative and stable.
func TestScripts(t *testing.T) {
	fixtures, err := filepath.Abs(filepath.Join("testdata", "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		// UPDATE_GOLDEN=1 rewrites the golden files kept inside the scripts.
		UpdateScripts: os.Getenv("UPDATE_GOLDEN") != "",
		Setup: func(env *testscript.Env) error {
			return os.CopyFS(filepath.Join(env.WorkDir, "fx"), os.DirFS(fixtures))
		},
	})
}

// TestDemoMatchesScoreAndReport checks the demo's claim: its figures are
// exactly what `callproof score` then `callproof report --json` give on the
// histories it saved.
func TestDemoMatchesScoreAndReport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the core suite against both reference agents")
	}
	dir := t.TempDir()
	var demoOut, demoErr bytes.Buffer
	if code := run([]string{"demo", "--json", "--out", dir, "--scale", "0.05"}, &demoOut, &demoErr); code != exitOK {
		t.Fatalf("demo exit %d\nstderr:\n%s", code, demoErr.String())
	}
	var demo struct {
		Suite  string `json:"suite"`
		Agents []struct {
			Agent   string          `json:"agent"`
			Dir     string          `json:"dir"`
			Summary json.RawMessage `json:"summary"`
		} `json:"agents"`
		Seed json.RawMessage `json:"seed_001"`
	}
	if err := json.Unmarshal(demoOut.Bytes(), &demo); err != nil {
		t.Fatalf("demo --json output: %v\n%s", err, demoOut.String())
	}
	if demo.Suite != "core" || len(demo.Agents) != 2 || len(demo.Seed) == 0 {
		t.Fatalf("demo --json: suite %q, %d agents, seed %d bytes", demo.Suite, len(demo.Agents), len(demo.Seed))
	}
	seen := map[string]bool{}
	for _, a := range demo.Agents {
		seen[a.Agent] = true
		t.Run(a.Agent, func(t *testing.T) {
			if want := filepath.Join(dir, a.Agent); a.Dir != want {
				t.Errorf("dir = %q, want %q", a.Dir, want)
			}
			var scoreOut, errOut bytes.Buffer
			if code := run([]string{"score", filepath.Join(dir, a.Agent, "run.jsonl")}, &scoreOut, &errOut); code != exitOK {
				t.Fatalf("score exit %d: %s", code, errOut.String())
			}
			if n := strings.Count(scoreOut.String(), "\n"); n != 30 {
				t.Errorf("score printed %d lines, want 30 (one per core call)", n)
			}
			scores := filepath.Join(t.TempDir(), "scores.jsonl")
			if err := os.WriteFile(scores, scoreOut.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			var reportOut bytes.Buffer
			errOut.Reset()
			if code := run([]string{"report", "--json", scores}, &reportOut, &errOut); code != exitOK {
				t.Fatalf("report exit %d: %s", code, errOut.String())
			}
			var got, want reports.Summary
			if err := json.Unmarshal(reportOut.Bytes(), &got); err != nil {
				t.Fatalf("report --json: %v", err)
			}
			if err := json.Unmarshal(a.Summary, &want); err != nil {
				t.Fatalf("demo summary: %v", err)
			}
			if want.Calls != 30 {
				t.Errorf("demo summary counts %d calls, want 30", want.Calls)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("score+report summary differs from the demo's\n got: %s\nwant: %s", reportOut.String(), a.Summary)
			}
			// The scores file the run wrote as it went must agree too.
			var savedOut bytes.Buffer
			if code := run([]string{"report", "--json", filepath.Join(dir, a.Agent)}, &savedOut, &errOut); code != exitOK {
				t.Fatalf("report DIR exit %d: %s", code, errOut.String())
			}
			var saved reports.Summary
			if err := json.Unmarshal(savedOut.Bytes(), &saved); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(saved, want) {
				t.Errorf("report on the saved scores.jsonl differs from the demo's summary\n got: %s\nwant: %s", savedOut.String(), a.Summary)
			}
		})
	}
	if !seen["naive"] || !seen["careful"] {
		t.Errorf("demo agents = %v, want naive and careful", seen)
	}
}

// TestExitCodes pins the exact exit code of each documented case
// (docs/CLI.md); the scripts check what is printed.
func TestExitCodes(t *testing.T) {
	fx := func(p string) string { return filepath.Join("testdata", "fixtures", p) }
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	strict := write("strict.yaml", "min_integrity: 1.0\n")
	badPolicy := write("bad.yaml", "min_integrity: 1.0\nno_such_key: true\n")
	garbled := write("garbled.jsonl", "{\"call\":\n")
	empty := write("empty.jsonl", "")
	tests := []struct {
		args []string
		want int
	}{
		{nil, exitUsage},
		{[]string{"help"}, exitOK},
		{[]string{"--help"}, exitOK},
		{[]string{"nosuchcommand"}, exitUsage},
		{[]string{"validate"}, exitOK},
		{[]string{"validate", filepath.Join(dir, "missing.yaml")}, exitUsage},
		{[]string{"schema"}, exitOK},
		{[]string{"schema", "x"}, exitUsage},
		{[]string{"score", fx("naive/run.jsonl")}, exitOK},
		{[]string{"score", garbled}, exitUsage},
		{[]string{"score"}, exitUsage},
		{[]string{"report", fx("naive")}, exitOK},
		{[]string{"report", "--json", fx("naive/scores.jsonl")}, exitOK},
		{[]string{"report", garbled}, exitUsage},
		{[]string{"show", fx("naive"), "corr-02"}, exitOK},
		{[]string{"show", fx("naive"), "corr-99"}, exitUsage},
		{[]string{"gate", fx("careful")}, exitOK},
		{[]string{"gate", "--json", fx("careful")}, exitOK},
		{[]string{"gate", fx("naive")}, exitGate},
		{[]string{"gate", "--json", fx("naive")}, exitGate},
		{[]string{"gate", fx("broken")}, exitBroken},
		{[]string{"gate", "--json", fx("broken")}, exitBroken},
		{[]string{"gate", "--policy", strict, fx("careful")}, exitOK},
		{[]string{"gate", "--policy", strict, fx("naive")}, exitGate},
		{[]string{"gate", "--policy", badPolicy, fx("careful")}, exitUsage},
		{[]string{"gate", garbled}, exitUsage},
		{[]string{"agent", "naive", "--listen", "127.0.0.1:0", "--with", "nosuchflaw"}, exitUsage},
		{[]string{"agent", "nosuchagent", "--listen", "127.0.0.1:0"}, exitUsage},
		{[]string{"agent"}, exitUsage},
		{[]string{"agent", "careful", "--listen", "127.0.0.1:0", "--catalogue", "no/such/catalogue.yaml"}, exitUsage},
		{[]string{"demo", "--nosuchflag"}, exitUsage},
		{[]string{"run"}, exitUsage},
		{[]string{"check"}, exitUsage},
		{[]string{"run", "--help"}, exitOK},
		{[]string{"gate", "-h"}, exitOK},
		{[]string{"agent", "-h"}, exitOK},
		{[]string{"merge"}, exitUsage},
		{[]string{"merge", "--help"}, exitOK},
		{[]string{"run", "--agent", "http://x/", "--out", filepath.Join(dir, "never")}, exitUsage},
		{[]string{"run", "--agent", "ws://127.0.0.1:1/", "--out", filepath.Join(dir, "never"), "--scale", "NaN"}, exitUsage},
		{[]string{"run", "--agent", "ws://127.0.0.1:1/", "--out", fx("naive")}, exitUsage},
		{[]string{"report", fx("naive/run.jsonl")}, exitUsage},
		{[]string{"gate", empty}, exitIncomplete},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(tt.args, &stdout, &stderr); got != tt.want {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", got, tt.want, stdout.String(), stderr.String())
			}
		})
	}
}
