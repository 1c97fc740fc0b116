package htmlreport

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// Golden files live in testdata/*.golden; refresh them with
// go test ./reports/htmlreport/ -update (or UPDATE_GOLDEN=1).
var update = flag.Bool("update", false, "rewrite golden files")

// naive reads ../testdata/naive.jsonl: three calls of the naive reference
// agent recorded by `callproof demo` (corr-01 passes, corr-02 fails on
// stale tool args, tf-06 on a missing idempotency key).
func naive(t testing.TB) Run {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "naive.jsonl"))
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
	sort.Slice(hs, func(i, j int) bool { return hs[i].Call < hs[j].Call })
	return Scored("suite core · agent naive", hs)
}

func render(t testing.TB, r Run) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestWriteGolden(t *testing.T) {
	got := render(t, naive(t))
	path := filepath.Join("testdata", "naive.html.golden")
	if *update || os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./reports/htmlreport/ -update to create it)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs from line %d (-update to accept)\ngot:  %.300s\nwant: %.300s", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs in length: %d lines, want %d (-update to accept)", path, len(gl), len(wl))
	}
}

// The same run gives the same bytes: nothing depends on map order or time.
func TestWriteDeterministic(t *testing.T) {
	r := naive(t)
	first := render(t, r)
	for range 5 {
		if render(t, r) != first {
			t.Fatal("two renderings of one run differ")
		}
	}
}

// One file, no network: no URL, no external script, style or image.
func TestSelfContained(t *testing.T) {
	out := render(t, naive(t))
	for _, bad := range []string{"http://", "https://", "<link", "src=", "@import", "url("} {
		if strings.Contains(out, bad) {
			t.Errorf("the page contains %q: it must load nothing", bad)
		}
	}
	if !strings.Contains(out, "<style>") || !strings.Contains(out, "<script>") {
		t.Error("CSS and JS are not inlined")
	}
}

// Agent speech is untrusted: a <script> the agent says is text on the page.
func TestAgentTextEscaped(t *testing.T) {
	r := naive(t)
	const evil = `<script>alert("owned")</script><img src=x onerror=alert(1)>`
	h := r.Calls[1].History.Clone()
	n := 0
	for i, e := range h.Events {
		if d, ok := e.Data.(*trace.AgentSpeech); ok && d.Text != "" {
			c := *d
			c.Text = evil + " " + d.Text
			h.Events[i].Data = &c
			n++
		}
	}
	if n == 0 {
		t.Fatal("no agent speech to poison")
	}
	r.Calls[1] = Call{History: h, Score: scorer.Score(h)}
	out := render(t, r)
	if strings.Contains(out, evil) || strings.Contains(out, `<script>alert`) || strings.Contains(out, "<img") {
		t.Fatal("the agent's markup reached the page unescaped")
	}
	if !strings.Contains(out, "&lt;script&gt;alert(&#34;owned&#34;)&lt;/script&gt;") {
		t.Error("the agent's words are missing from the page (escaped)")
	}
	if c := strings.Count(out, "<script>"); c != 1 {
		t.Errorf("%d <script> elements, want only the page's own", c)
	}
}

// Every event has its anchor, every citation links to one that exists, and
// the events a failing axis cites are marked cited in the table and lanes.
func TestAnchorsAndCitations(t *testing.T) {
	r := naive(t)
	out := render(t, r)
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(` id="([^"]+)"`).FindAllStringSubmatch(out, -1) {
		if ids[m[1]] {
			t.Errorf("id %q appears twice", m[1])
		}
		ids[m[1]] = true
	}
	for _, c := range r.Calls {
		for _, e := range c.History.Events {
			if !ids[eventAnchor(c.History.Call, e.Seq)] {
				t.Errorf("%s #%d has no anchor", c.History.Call, e.Seq)
			}
			// One lane mark at least per event.
			if !strings.Contains(out, `href="#`+eventAnchor(c.History.Call, e.Seq)+`" data-seq=`) {
				t.Errorf("%s #%d has no lane mark", c.History.Call, e.Seq)
			}
		}
	}
	for _, m := range regexp.MustCompile(`href="#([^"]+)"`).FindAllStringSubmatch(out, -1) {
		if !ids[m[1]] {
			t.Errorf("link to #%s, which is not on the page", m[1])
		}
	}
	// corr-02's tool_args_correct fails citing #33 and #39.
	for _, seq := range []string{"33", "39"} {
		row := regexp.MustCompile(`<tr id="corr-02-e` + seq + `" data-seq="` + seq + `" class="[^"]*\bcited\b`)
		if !row.MatchString(out) {
			t.Errorf("corr-02 #%s is not marked cited in the event table", seq)
		}
		mark := regexp.MustCompile(`<a class="m [^"]*\bcited\b[^"]*" href="#corr-02-e` + seq + `"`)
		if !mark.MatchString(out) {
			t.Errorf("corr-02 #%s is not marked cited in the lanes", seq)
		}
	}
	// corr-01 passes: nothing of it is cited.
	if regexp.MustCompile(`id="corr-01-e\d+" data-seq="\d+" class="[^"]*\bcited\b`).MatchString(out) {
		t.Error("a passing call has cited events")
	}
}

// The lanes: each of corr-02's parties is there, and its one tool request
// runs from received to response with the commit on it.
func TestLanes(t *testing.T) {
	r := naive(t)
	c := r.Calls[1]
	if c.History.Call != "corr-02" {
		t.Fatalf("call 1 is %s", c.History.Call)
	}
	tr := buildTrack(c.History, map[int]bool{})
	var names []string
	for _, l := range tr.Lanes {
		names = append(names, l.Name)
	}
	if got := strings.Join(names, " "); got != "caller agent tools backend harness" {
		t.Fatalf("lanes %q", got)
	}
	tools := tr.Lanes[2]
	if len(tools.Rows) != 1 || tools.Rows[0].Label != "r1 update_order" {
		t.Fatalf("tool rows %+v", tools.Rows)
	}
	bar := tools.Rows[0].Spans[0]
	if !strings.Contains(bar.Class, "committed") || !strings.Contains(bar.Label, "order_number=5590") || !strings.Contains(bar.Label, "→ 200") {
		t.Errorf("tool bar %+v", bar)
	}
	var backend []string
	for _, row := range tr.Lanes[3].Rows {
		backend = append(backend, row.Label)
	}
	if got := strings.Join(backend, " "); got != "orders/5519 orders/5590 orders/5599" {
		t.Errorf("backend rows %q", got)
	}
	// orders/5590 went v1 → v2 at the stale commit.
	if s := tr.Lanes[3].Rows[1].Spans; len(s) != 2 || s[0].Label != "v1" || !strings.HasPrefix(s[1].Label, "v2 {delivery_date=2026-12-03}") {
		t.Errorf("orders/5590 versions %+v", s)
	}
	// The agent's second utterance was cleared by the caller's correction.
	cleared := false
	for _, s := range tr.Lanes[1].Rows[0].Spans {
		cleared = cleared || strings.Contains(s.Class, "cleared")
	}
	if !cleared {
		t.Error("no cleared agent utterance in corr-02")
	}
}

// Filters offer what the run has; the calls table carries what they match.
func TestFiltersAndRows(t *testing.T) {
	out := render(t, naive(t))
	for _, want := range []string{
		`<option value="stale_tool_args">stale_tool_args (1)</option>`,
		`<option value="missing_idempotency_key">missing_idempotency_key (1)</option>`,
		`<option value="tool_args_correct">tool_args_correct (1)</option>`,
		`<option value="scored">scored (3)</option>`,
		`data-call="corr-02" data-buckets="stale_tool_args" data-fail="tool_args_correct stale_write_prevented backend_correct confirmation_matches_backend" data-outcome="scored" data-integrity="no"`,
		`data-call="corr-01" data-buckets="" data-fail="" data-outcome="scored" data-integrity="yes"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %s", want)
		}
	}
}

// TestSizeBudget holds the page to maxBytesPerCall a call (see the budget
// at maxBytesPerCall).
func TestSizeBudget(t *testing.T) {
	r := naive(t)
	out := render(t, r)
	t.Logf("naive fixture: %d calls, %d bytes", len(r.Calls), len(out))
	if len(out) > len(r.Calls)*maxBytesPerCall {
		t.Errorf("%d bytes for %d calls: over the budget of %d a call", len(out), len(r.Calls), maxBytesPerCall)
	}
}

func TestEmptyRun(t *testing.T) {
	out := render(t, Run{})
	if !strings.Contains(out, "0 of 0 calls") || !strings.Contains(out, "No failed call.") {
		t.Error("an empty run does not render as one")
	}
}

// Histories cut short (a crashed agent, a killed run) render too, their
// open utterances and requests running to the end of the track.
func TestCutShortHistories(t *testing.T) {
	for _, c := range naive(t).Calls {
		for _, n := range []int{0, 1, 12, 31, 45} {
			h := c.History.Clone()
			h.Events = h.Events[:min(n, len(h.Events))]
			r := Run{Title: "cut", Calls: []Call{{History: h, Score: scorer.Score(h)}}}
			out := render(t, r)
			for _, e := range h.Events {
				if !strings.Contains(out, ` id="`+eventAnchor(h.Call, e.Seq)+`"`) {
					t.Errorf("%s cut to %d: #%d has no anchor", h.Call, n, e.Seq)
				}
			}
		}
	}
}
