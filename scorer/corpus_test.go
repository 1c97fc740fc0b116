package scorer

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/callproof/callproof/trace"
)

var update = flag.Bool("update", false, "rewrite testdata/histories from fixtures_test.go")

func fixturePath(f fixture) string {
	return filepath.Join("testdata", "histories", f.dir, f.name+".jsonl")
}

func encode(t testing.TB, h *trace.History) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.WriteJSONL(&buf, h); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCorpusInSync keeps the committed JSONL equal to the fixture
// definitions (run with -update to rewrite them) and rejects orphans.
func TestCorpusInSync(t *testing.T) {
	known := map[string]bool{}
	for _, f := range fixtures {
		p := fixturePath(f)
		known[p] = true
		want := encode(t, f.build())
		if *update {
			if err := os.WriteFile(p, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (run go test ./scorer -run TestCorpusInSync -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is out of date with fixtures_test.go (run with -update)", p)
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "histories", "*", "*.jsonl"))
	for _, p := range files {
		if strings.HasPrefix(filepath.Base(p), "rec_") {
			continue // recorded runs: see recorded_test.go
		}
		if !known[p] {
			t.Errorf("%s has no fixture definition", p)
		}
	}
}

func load(t testing.TB, f fixture) *trace.History {
	t.Helper()
	r, err := os.Open(fixturePath(f))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	hs, err := trace.ReadJSONL(r)
	if err != nil || len(hs) != 1 {
		t.Fatalf("%s: %v (%d histories)", f.name, err, len(hs))
	}
	return hs[0]
}

func vector(cs CallScore) string {
	var b strings.Builder
	for _, a := range cs.Axes {
		b.WriteByte(string(a.Verdict)[0])
	}
	return b.String()
}

func TestCorpus(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.dir+"/"+f.name, func(t *testing.T) {
			h := load(t, f)
			cs := Score(h)
			if got := vector(cs); got != f.want.axes {
				t.Errorf("axes %s, want %s\n%s", got, f.want.axes, dump(cs))
			}
			if cs.Outcome != f.want.outcome {
				t.Errorf("outcome %s, want %s", cs.Outcome, f.want.outcome)
			}
			if cs.Primary != f.want.primary {
				t.Errorf("primary %q, want %q\n%s", cs.Primary, f.want.primary, dump(cs))
			}
			if !slices.Equal(cs.Secondary, f.want.secondary) {
				t.Errorf("secondary %v, want %v", cs.Secondary, f.want.secondary)
			}
			if cs.Challenge != f.want.challenge {
				t.Errorf("challenge %q, want %q", cs.Challenge, f.want.challenge)
			}
			wantIntegrity := f.want.axes == "pppppp" && f.want.outcome == trace.OutcomeScored
			if cs.Integrity != wantIntegrity {
				t.Errorf("integrity %v, want %v", cs.Integrity, wantIntegrity)
			}
			if f.dir == "ok" != cs.Integrity {
				t.Errorf("fixture in %s/ but integrity %v", f.dir, cs.Integrity)
			}
			if len(cs.Axes) != 6 {
				t.Fatalf("%d axes", len(cs.Axes))
			}
			for i, a := range Axes() {
				if cs.Axes[i].Axis != a || len(cs.Axes[i].Findings) == 0 {
					t.Errorf("axis %d is %s with %d findings, want %s with findings", i, cs.Axes[i].Axis, len(cs.Axes[i].Findings), a)
				}
			}
			if (cs.Primary == "") != (len(cs.Buckets) == 0) {
				t.Errorf("primary %q but %d bucket hits", cs.Primary, len(cs.Buckets))
			}
			if strings.Contains(f.want.axes, "f") && cs.Primary == "" {
				t.Errorf("a failed call must have a primary bucket")
			}
			checkCitations(t, h, cs)
		})
	}
}

func dump(cs CallScore) string {
	var b strings.Builder
	for _, a := range cs.Axes {
		b.WriteString("  " + string(a.Axis) + " " + string(a.Verdict) + "\n")
		for _, f := range a.Findings {
			b.WriteString("    - " + f.Text + "\n")
		}
	}
	for _, h := range cs.Buckets {
		for _, f := range h.Findings {
			b.WriteString("  bucket " + string(h.Bucket) + ": " + f.Text + "\n")
		}
	}
	return b.String()
}

var citeRE = regexp.MustCompile(`#(\d+) ([a-z_]+\.[a-z_]+)`)

// claimKinds: a finding that uses the word on the left must cite at least
// one event of a kind on the right.
var claimKinds = []struct {
	word  string
	kinds []trace.Kind
}{
	{"committed", []trace.Kind{trace.KindToolCommitted}},
	{"cleared", []trace.Kind{trace.KindAgentClear}},
	{"self-report", []trace.Kind{trace.KindAgentState}},
	{"noise", []trace.Kind{trace.KindCallerNoiseStart}},
	{"snapshot", []trace.Kind{trace.KindSnapshot}},
	{"was received", []trace.Kind{trace.KindToolReceived}},
	{"done-claim", []trace.Kind{trace.KindAgentSpeechStart}},
	{"confirmation", []trace.Kind{trace.KindAgentSpeechStart, trace.KindCallerSpeechFinal}},
	{"answer to", []trace.Kind{trace.KindToolResponded, trace.KindToolCancelled}},
	{"interruption", []trace.Kind{trace.KindCallerSpeechStart, trace.KindCallerSpeechFinal}},
}

// checkCitations: every cited seq exists, is quoted with its real kind, and
// the finding's words are backed by an event of the kind they name.
func checkCitations(t *testing.T, h *trace.History, cs CallScore) {
	t.Helper()
	var all []Finding
	for _, a := range cs.Axes {
		all = append(all, a.Findings...)
	}
	for _, b := range cs.Buckets {
		if len(b.Findings) == 0 {
			t.Errorf("bucket %s has no findings", b.Bucket)
		}
		all = append(all, b.Findings...)
	}
	for _, f := range all {
		quoted := citeRE.FindAllStringSubmatch(f.Text, -1)
		if len(quoted) != len(f.Events) {
			t.Errorf("finding %q quotes %d events but cites %d", f.Text, len(quoted), len(f.Events))
			continue
		}
		kinds := map[trace.Kind]bool{}
		for i, q := range quoted {
			seq, _ := strconv.Atoi(q[1])
			e := h.BySeq(seq)
			if e == nil || seq != f.Events[i] || string(e.Kind) != q[2] {
				t.Errorf("finding %q: citation #%s %s does not match the history", f.Text, q[1], q[2])
				continue
			}
			kinds[e.Kind] = true
		}
		text := f.Text
		if i := strings.Index(text, " ["); i >= 0 {
			text = text[:i]
		}
		if len(f.Events) == 0 {
			continue
		}
		for _, c := range claimKinds {
			if !strings.Contains(text, c.word) {
				continue
			}
			ok := false
			for _, k := range c.kinds {
				ok = ok || kinds[k]
			}
			if !ok {
				t.Errorf("finding %q says %q but cites no %v", f.Text, c.word, c.kinds)
			}
		}
	}
}
