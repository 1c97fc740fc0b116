package scorer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/callproof/callproof/trace"
)

// recorded are histories from real runs of the core pack (the reference
// agents over loopback WebSocket against the real mock backend, time scale
// 0.1), kept verbatim as rec_<agent>_<scenario>.jsonl. Unlike the hand-built
// fixtures they carry every streamed word, partial and timing of a live call.
var recorded = []struct {
	dir, agent, scenario string
	axes                 string
	primary              Bucket
	secondary            []Bucket
}{
	{"ok", "careful", "corr-03", "pppppp", "", nil},
	{"ok", "careful", "corr-10", "pppppp", "", nil},
	{"ok", "careful", "int-05", "pppppp", "", nil},
	{"ok", "careful", "tf-07", "pppppp", "", nil},
	{"ok", "careful", "ext-01-hangup-held-write", "pppppp", "", nil},
	{"ok", "naive", "int-01", "pppppp", "", nil},
	{"bad", "naive", "corr-02", "ppffff", BucketStaleToolArgs, nil},
	{"bad", "naive", "corr-03", "ppffff", BucketStaleToolArgs, []Bucket{BucketInflightNotCanceled}},
	{"bad", "naive", "corr-10", "pppfff", BucketInflightNotCanceled, nil},
	{"bad", "naive", "int-08", "fppppf", BucketNoiseBargeIn, []Bucket{BucketNeverConfirmed}},
	{"bad", "naive", "tf-02", "pppfpp", BucketUnsafeRetry, nil},
	{"bad", "naive", "tf-03", "ffpppf", BucketUnverifiedResult, nil},
	{"bad", "naive", "tf-05", "fppppf", BucketEarlyConfirmation, nil},
	{"bad", "naive", "tf-06", "ppppfp", BucketMissingIdempotency, nil},
	{"bad", "naive", "tf-10", "ppppfp", BucketGaveUp, nil},
}

func TestRecordedRuns(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range recorded {
		name := "rec_" + r.agent + "_" + r.scenario + ".jsonl"
		path := filepath.Join("testdata", "histories", r.dir, name)
		seen[path] = true
		t.Run(r.agent+"/"+r.scenario, func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			hs, err := trace.ReadJSONL(f)
			if err != nil || len(hs) != 1 {
				t.Fatalf("%v (%d histories)", err, len(hs))
			}
			cs := Score(hs[0])
			if cs.Outcome != trace.OutcomeScored {
				t.Fatalf("outcome %s (%s)", cs.Outcome, cs.Reason)
			}
			if got := vector(cs); got != r.axes {
				t.Errorf("axes %s, want %s\n%s", got, r.axes, dump(cs))
			}
			if cs.Primary != r.primary {
				t.Errorf("primary %q, want %q\n%s", cs.Primary, r.primary, dump(cs))
			}
			if !slices.Equal(cs.Secondary, r.secondary) {
				t.Errorf("secondary %v, want %v", cs.Secondary, r.secondary)
			}
			if cs.Integrity != (r.dir == "ok") {
				t.Errorf("fixture in %s/ but integrity %v", r.dir, cs.Integrity)
			}
			checkCitations(t, hs[0], cs)
		})
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "histories", "*", "rec_*.jsonl"))
	for _, p := range files {
		if !seen[p] && !strings.HasSuffix(p, ".tmp") {
			t.Errorf("%s is not listed in recorded_test.go", p)
		}
	}
}
