package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/callproof/callproof/scorer"
)

func TestWriteTableGolden(t *testing.T) {
	s, _, _ := fixtureSummary(t)
	var b bytes.Buffer
	if err := WriteTable(&b, Title{Suite: "core", Agent: "naive"}, s); err != nil {
		t.Fatal(err)
	}
	noTrailingBlanks(t, b.String())
	golden(t, "table", b.Bytes())
}

// Mixed outcomes: an outcomes line, N counts agent errors only, and the
// uncounted calls are listed with their outcome and reason.
func TestWriteTableOutcomesGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, Title{}, Summarize(syntheticScores())); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	noTrailingBlanks(t, out)
	for _, want := range []string{
		"callproof · 10 calls\n",
		"outcomes: scored 7, agent_error 1, harness_error 1, excluded 1\n",
		"end-to-end integrity          2 / 8\n",
		"  c-he  harness_error          mock backend unreachable\n",
		"  c-7   active_state_correct   stale_tool_args\n",
		"  c-ae  tool_args_correct      action_not_executed  agent_error: agent closed the socket\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	golden(t, "table_outcomes", b.Bytes())
}

func TestWriteTableAllScoredHasNoOutcomesLine(t *testing.T) {
	var b bytes.Buffer
	WriteTable(&b, Title{}, SeedTable())
	if strings.Contains(b.String(), "outcomes:") {
		t.Errorf("all calls scored, yet an outcomes line:\n%s", b.String())
	}
	if strings.Contains(b.String(), "failed calls") {
		t.Errorf("no failed calls listed, yet a heading:\n%s", b.String())
	}
}

func TestWriteJSONGolden(t *testing.T) {
	s, _, _ := fixtureSummary(t)
	var b bytes.Buffer
	if err := WriteJSON(&b, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.json", b.Bytes())
	// It round-trips.
	var back Summary
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("WriteJSON does not round-trip:\n got %+v\nwant %+v", back, s)
	}
}

func TestWriteSideBySideGolden(t *testing.T) {
	s, _, _ := fixtureSummary(t)
	cols := []Column{
		{Name: "naive (3 calls)", Summary: s, Note: "FAILS"},
		{Name: "mixed", Summary: Summarize(syntheticScores()), Note: "broken run"},
		{Name: "seed 001 (reference)", Summary: SeedTable(), Note: "-"},
	}
	var b bytes.Buffer
	if err := WriteSideBySide(&b, cols); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	noTrailingBlanks(t, out)
	golden(t, "side_by_side", b.Bytes())

	// One block: every column starts at the same offset on every row that
	// has figures, so bucket counts sit under their agent's name.
	lines := strings.Split(out, "\n")
	col := strings.Index(lines[0], "mixed")
	if col < 0 {
		t.Fatalf("header lacks the column name: %q", lines[0])
	}
	rows := 0
	for _, l := range lines[1:] {
		if l == "" || !strings.Contains(l, "  ") || strings.HasPrefix(l, "root cause") {
			continue
		}
		rows++
		if len(l) <= col || l[col-1] != ' ' || l[col] == ' ' {
			t.Errorf("row not aligned under column %d: %q", col, l)
		}
	}
	if rows < 6+1+3+1 {
		t.Errorf("only %d rows with figures", rows)
	}
	if !strings.Contains(out, "\nroot cause (primary)\n") {
		t.Errorf("bucket heading should stand alone with no trailing cells:\n%s", out)
	}
	// Buckets nobody has as primary are left out.
	if strings.Contains(out, string(scorer.BucketWrongRecord)) {
		t.Errorf("wrong_record is nobody's primary bucket, yet listed:\n%s", out)
	}
}

func TestWriteSideBySideNoNotes(t *testing.T) {
	var b bytes.Buffer
	WriteSideBySide(&b, []Column{{Name: "seed", Summary: SeedTable()}, {Name: "empty", Summary: Summarize(nil)}})
	out := b.String()
	if strings.Contains(out, "release gate") {
		t.Errorf("no notes, yet a release gate row:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "end-to-end integrity") {
			if f := strings.Fields(l); !reflect.DeepEqual(f[2:], []string{"7", "/", "30", "-"}) {
				t.Errorf("integrity row %q: want 7 / 30 for the seed, - for an empty summary", l)
			}
		}
	}
	noTrailingBlanks(t, out)
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWritersReportErrors(t *testing.T) {
	s, hs, scores := fixtureSummary(t)
	for name, err := range map[string]error{
		"WriteTable":      WriteTable(failWriter{}, Title{}, s),
		"WriteJSON":       WriteJSON(failWriter{}, s),
		"WriteSideBySide": WriteSideBySide(failWriter{}, []Column{{Name: "x", Summary: s}}),
		"WriteTimeline":   WriteTimeline(failWriter{}, hs[0], scores[0]),
	} {
		if err == nil {
			t.Errorf("%s: no error from a failing writer", name)
		}
	}
}
