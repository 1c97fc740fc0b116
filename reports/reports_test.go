package reports

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// Golden files live in testdata/*.golden; refresh them with
// UPDATE_GOLDEN=1 go test ./reports/ (or -update).
var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update || os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run UPDATE_GOLDEN=1 go test ./reports/ to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (UPDATE_GOLDEN=1 to accept)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// fixture reads testdata/naive.jsonl: three calls of the naive reference
// agent, recorded by `callproof demo` (corr-01 passes, corr-02 fails on
// stale tool args, tf-06 on a missing idempotency key).
func fixture(t *testing.T) []*trace.History {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "naive.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hs, err := trace.ReadJSONL(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 3 {
		t.Fatalf("fixture has %d calls, want 3", len(hs))
	}
	return hs
}

func fixtureSummary(t *testing.T) (Summary, []*trace.History, []scorer.CallScore) {
	hs := fixture(t)
	scores := scorer.ScoreAll(hs)
	return Summarize(scores), hs, scores
}

func findHistory(t *testing.T, hs []*trace.History, call string) *trace.History {
	t.Helper()
	for _, h := range hs {
		if h.Call == call {
			return h
		}
	}
	t.Fatalf("no call %s in the fixture", call)
	return nil
}

// noTrailingBlanks fails if any line ends in a space or tab.
func noTrailingBlanks(t *testing.T, out string) {
	t.Helper()
	for i, l := range strings.Split(out, "\n") {
		if strings.TrimRight(l, " \t") != l {
			t.Errorf("line %d ends in blanks: %q", i+1, l)
		}
	}
}
