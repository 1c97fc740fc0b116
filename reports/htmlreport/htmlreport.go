package htmlreport

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// Size budget: the page is its assets (about 20 KB) and, per call, one
// table row and one lane mark per event (each mark carries its event's
// description as a tooltip) and a span per utterance, request and record
// version: about 35 KB a call of the core suite, 1.05 MB for naive's 30
// calls. TestSizeBudget holds the naive fixture to maxBytesPerCall, which
// keeps a 30-call run under 2 MB.
const maxBytesPerCall = 64 << 10

//go:embed assets
var assets embed.FS

// Run is what one report shows: a run's calls, in the order to list them.
type Run struct {
	Title string // the page's heading, e.g. "suite core · agent naive"
	Calls []Call
}

// Call is one call's evidence and what the scorer said about it.
type Call struct {
	History *trace.History
	Score   scorer.CallScore
}

// Scored scores each history and pairs it with its score, keeping their
// order.
func Scored(title string, hs []*trace.History) Run {
	r := Run{Title: title, Calls: make([]Call, len(hs))}
	for i, h := range hs {
		r.Calls[i] = Call{History: h, Score: scorer.Score(h)}
	}
	return r
}

// Write renders r as one self-contained HTML document. The output depends
// only on r: the same run gives the same bytes.
func Write(w io.Writer, r Run) error {
	scores := make([]scorer.CallScore, len(r.Calls))
	for i, c := range r.Calls {
		scores[i] = c.Score
	}
	return Stream(w, r.Title, scores, func(each func(Call) error) error {
		for _, c := range r.Calls {
			if err := each(c); err != nil {
				return err
			}
		}
		return nil
	})
}

// Stream writes the same document as Write for a run told in two parts:
// every call's score at once (the summary, the filters and the table's
// rows), then each call with its history, one at a time and in the same
// order, through calls (its section). So a run of thousands of calls is
// written holding one call's evidence, not all of it. calls must hand
// each its calls in scores' order, and stop at each's first error.
func Stream(w io.Writer, title string, scores []scorer.CallScore, calls func(each func(Call) error) error) error {
	tmpl, err := template.New("report.html.tmpl").ParseFS(assets, "assets/report.html.tmpl")
	if err != nil {
		return err
	}
	css, err := assets.ReadFile("assets/report.css")
	if err != nil {
		return err
	}
	js, err := assets.ReadFile("assets/report.js")
	if err != nil {
		return err
	}
	p := build(title, scores)
	// The assets are ours, embedded at build time: trusted, inlined as is.
	p.CSS = template.CSS(css)
	p.JS = template.JS(js)
	if err := tmpl.ExecuteTemplate(w, "head", p); err != nil {
		return err
	}
	n := 0
	err = calls(func(c Call) error {
		if n >= len(scores) || c.History == nil || c.History.Call != scores[n].Call {
			return fmt.Errorf("htmlreport: call %d is not the %d-th of the scores", n+1, n+1)
		}
		n++
		return tmpl.ExecuteTemplate(w, "call", buildCall(c))
	})
	if err != nil {
		return err
	}
	if n != len(scores) {
		return fmt.Errorf("htmlreport: %d calls told for %d scores", n, len(scores))
	}
	return tmpl.ExecuteTemplate(w, "tail", p)
}

type page struct {
	Title     string
	CSS       template.CSS
	JS        template.JS
	Sum       summary
	Filters   []filter
	AxisHeads []axisHead
	Calls     []callView
}

type filter struct {
	Name, Label string
	Options     []option
}

type option struct {
	Value, Label string
}

type axisHead struct {
	Axis  scorer.Axis
	Short string
}

type summary struct {
	Calls, Counted, Integrity int
	Axes                      []axisRow
	IntegrityBar              template.CSS
	Buckets                   []reports.BucketCount
	Outcomes                  []outcomeCount
	Latency                   string
}

type axisRow struct {
	Axis                scorer.Axis
	Pass, Fail, Unknown int
	PassW, FailW, UnkW  template.CSS
	PassPct             string
}

type outcomeCount struct {
	Outcome trace.Outcome
	N       int
}

type callView struct {
	ID, Anchor, RowID                string
	Scenario, Category, Challenge    string
	Outcome                          trace.Outcome
	Reason                           string
	Integrity                        bool
	Cells                            []cell
	Primary                          scorer.Bucket
	Secondary                        []scorer.Bucket
	DataBuckets, DataFail, DataInteg string
	Axes                             []axisView
	Buckets                          []bucketView
	Diff                             []trace.FieldDiff
	Track                            track
	Events                           []eventRow
	Duration, Latency                string
}

type cell struct {
	Axis    scorer.Axis
	Verdict scorer.Verdict
}

type axisView struct {
	Axis     scorer.Axis
	Verdict  scorer.Verdict
	Findings []finding
}

type bucketView struct {
	Bucket   scorer.Bucket
	Primary  bool
	Findings []finding
}

type finding struct {
	Text  string
	Seqs  string // every seq the finding cites, for the page to highlight together
	Cites []cite
}

type cite struct {
	Href  string
	Seq   int
	Label string
}

type eventRow struct {
	Anchor             string
	Seq                int
	Time               string
	Source, Kind, Text string
	Cited              bool
}

// citeSuffix is the "[#33 tool.received, …]" a finding's text ends with;
// the page shows those citations as links instead.
var citeSuffix = regexp.MustCompile(`\s*\[#\d+[^\]]*\]\s*$`)

var axisShort = map[scorer.Axis]string{
	scorer.Captured:                   "captured",
	scorer.ActiveStateCorrect:         "state",
	scorer.ToolArgsCorrect:            "args",
	scorer.StaleWritePrevented:        "stale write",
	scorer.BackendCorrect:             "backend",
	scorer.ConfirmationMatchesBackend: "confirm",
}

// build is the page without its calls' sections: the summary, the
// filters and a row per call, all from the scores.
func build(title string, scores []scorer.CallScore) page {
	p := page{Title: title}
	if p.Title == "" {
		p.Title = "callproof run"
	}
	for _, a := range scorer.Axes() {
		p.AxisHeads = append(p.AxisHeads, axisHead{Axis: a, Short: axisShort[a]})
	}
	p.Sum = buildSummary(reports.Summarize(scores))
	p.Filters = buildFilters(scores)
	for _, s := range scores {
		p.Calls = append(p.Calls, buildRow(s))
	}
	return p
}

func buildSummary(s reports.Summary) summary {
	out := summary{Calls: s.Calls, Counted: s.Counted, Integrity: s.Integrity, Buckets: s.Buckets}
	for _, a := range s.Axes {
		out.Axes = append(out.Axes, axisRow{
			Axis: a.Axis, Pass: a.Pass, Fail: a.Fail, Unknown: a.Unknown,
			PassW: width(a.Pass, s.Counted), FailW: width(a.Fail, s.Counted), UnkW: width(a.Unknown, s.Counted),
			PassPct: pct(a.Pass, s.Counted),
		})
	}
	out.IntegrityBar = width(s.Integrity, s.Counted)
	for _, o := range trace.SortedKeys(outcomeKeys(s.Outcomes)) {
		out.Outcomes = append(out.Outcomes, outcomeCount{Outcome: trace.Outcome(o), N: s.Outcomes[trace.Outcome(o)]})
	}
	if l := s.Latency; l.ResponseP50 > 0 || l.YieldP50 > 0 {
		var parts []string
		if l.ResponseP50 > 0 {
			parts = append(parts, fmt.Sprintf("response p50 %s p95 %s", round(l.ResponseP50), round(l.ResponseP95)))
		}
		if l.YieldP50 > 0 {
			parts = append(parts, fmt.Sprintf("yield p50 %s p95 %s (%d)", round(l.YieldP50), round(l.YieldP95), l.Yields))
		}
		out.Latency = strings.Join(parts, " · ")
	}
	return out
}

func outcomeKeys(m map[trace.Outcome]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[string(k)] = v
	}
	return out
}

// buildFilters offers only values some call has, each with its count.
func buildFilters(scores []scorer.CallScore) []filter {
	bucketN := map[scorer.Bucket]int{}
	axisN := map[scorer.Axis]int{}
	outcomeN := map[string]int{}
	none, anyFail, whole := 0, 0, 0
	for _, s := range scores {
		if len(s.Buckets) == 0 {
			none++
		}
		for _, b := range s.Buckets {
			bucketN[b.Bucket]++
		}
		failed := false
		for _, a := range s.Axes {
			if a.Verdict == scorer.Fail {
				axisN[a.Axis]++
				failed = true
			}
		}
		if failed {
			anyFail++
		}
		if s.Integrity {
			whole++
		}
		outcomeN[string(s.Outcome)]++
	}
	bucket := filter{Name: "bucket", Label: "bucket", Options: []option{{"", fmt.Sprintf("any (%d)", len(scores))}}}
	for _, b := range scorer.Buckets() {
		if n := bucketN[b]; n > 0 {
			bucket.Options = append(bucket.Options, option{string(b), fmt.Sprintf("%s (%d)", b, n)})
		}
	}
	bucket.Options = append(bucket.Options, option{"-", fmt.Sprintf("no bucket (%d)", none)})
	axis := filter{Name: "axis", Label: "failing axis", Options: []option{{"", "any or none"}, {"*", fmt.Sprintf("some axis fails (%d)", anyFail)}}}
	for _, a := range scorer.Axes() {
		if n := axisN[a]; n > 0 {
			axis.Options = append(axis.Options, option{string(a), fmt.Sprintf("%s (%d)", a, n)})
		}
	}
	outcome := filter{Name: "outcome", Label: "outcome", Options: []option{{"", "any"}}}
	for _, o := range trace.SortedKeys(outcomeN) {
		outcome.Options = append(outcome.Options, option{o, fmt.Sprintf("%s (%d)", o, outcomeN[o])})
	}
	integ := filter{Name: "integrity", Label: "integrity", Options: []option{{"", "any"},
		{"yes", fmt.Sprintf("holds (%d)", whole)}, {"no", fmt.Sprintf("broken (%d)", len(scores)-whole)}}}
	return []filter{bucket, axis, outcome, integ}
}

// buildRow is a call's row in the table: what its score says.
func buildRow(s scorer.CallScore) callView {
	id := s.Call
	v := callView{
		ID: id, Anchor: "call-" + id, RowID: "row-" + id,
		Scenario: s.Scenario, Category: s.Category, Challenge: string(s.Challenge),
		Outcome: s.Outcome, Reason: s.Reason, Integrity: s.Integrity,
		Primary: s.Primary, Secondary: s.Secondary, Diff: s.Diff,
		DataInteg: "no",
	}
	if s.Integrity {
		v.DataInteg = "yes"
	}
	var fails, buckets []string
	for _, ax := range scorer.Axes() {
		a := s.Axis(ax)
		v.Cells = append(v.Cells, cell{Axis: ax, Verdict: a.Verdict})
		if a.Verdict == scorer.Fail {
			fails = append(fails, string(ax))
		}
	}
	for _, b := range s.Buckets {
		buckets = append(buckets, string(b.Bucket))
	}
	v.DataBuckets = strings.Join(buckets, " ")
	v.DataFail = strings.Join(fails, " ")
	return v
}

// buildCall is a call's section: its row's facts, then the findings, the
// timeline and the events from its history.
func buildCall(c Call) callView {
	s, h := c.Score, c.History
	id := h.Call
	v := buildRow(s)
	v.ID, v.Anchor, v.RowID = id, "call-"+id, "row-"+id
	cited := map[int]bool{}
	for _, ax := range scorer.Axes() {
		a := s.Axis(ax)
		av := axisView{Axis: ax, Verdict: a.Verdict}
		for _, f := range a.Findings {
			av.Findings = append(av.Findings, buildFinding(h, f))
			if a.Verdict == scorer.Fail {
				for _, e := range f.Events {
					cited[e] = true
				}
			}
		}
		v.Axes = append(v.Axes, av)
	}
	for _, b := range s.Buckets {
		bv := bucketView{Bucket: b.Bucket, Primary: b.Bucket == s.Primary}
		for _, f := range b.Findings {
			bv.Findings = append(bv.Findings, buildFinding(h, f))
			for _, e := range f.Events {
				cited[e] = true
			}
		}
		v.Buckets = append(v.Buckets, bv)
	}
	var end time.Duration
	for _, e := range h.Events {
		end = max(end, e.At)
	}
	v.Duration = msText(end)
	if d := s.Diag; d.ResponseLatency > 0 || d.YieldLatency > 0 {
		var parts []string
		if d.ResponseLatency > 0 {
			parts = append(parts, "response latency "+msText(d.ResponseLatency))
		}
		if d.YieldLatency > 0 {
			parts = append(parts, "yield latency "+msText(d.YieldLatency))
		}
		v.Latency = strings.Join(parts, " · ")
	}
	for _, e := range h.Events {
		v.Events = append(v.Events, eventRow{
			Anchor: eventAnchor(id, e.Seq), Seq: e.Seq, Time: msText(e.At),
			Source: string(e.Source), Kind: string(e.Kind), Text: reports.Describe(e), Cited: cited[e.Seq],
		})
	}
	v.Track = buildTrack(h, cited)
	return v
}

func buildFinding(h *trace.History, f scorer.Finding) finding {
	out := finding{Text: citeSuffix.ReplaceAllString(f.Text, "")}
	seqs := make([]string, len(f.Events))
	for i, seq := range f.Events {
		seqs[i] = fmt.Sprint(seq)
		label := fmt.Sprintf("#%d", seq)
		if e := h.BySeq(seq); e != nil {
			label += " " + string(e.Kind)
		}
		out.Cites = append(out.Cites, cite{Href: eventAnchor(h.Call, seq), Seq: seq, Label: label})
	}
	out.Seqs = strings.Join(seqs, " ")
	return out
}

// eventAnchor is the id of an event's row in the event table, the target
// every citation and lane mark links to.
func eventAnchor(call string, seq int) string { return fmt.Sprintf("%s-e%d", call, seq) }

func msText(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

func width(k, n int) template.CSS {
	if n == 0 {
		return "width:0%"
	}
	return template.CSS(fmt.Sprintf("width:%.2f%%", 100*float64(k)/float64(n)))
}

func pct(k, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(k)/float64(n))
}

// sortedRecords orders records by table, then key.
func sortedRecords(rs []trace.Record) []trace.Record {
	out := append([]trace.Record(nil), rs...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Table != out[j].Table {
			return out[i].Table < out[j].Table
		}
		return out[i].Key < out[j].Key
	})
	return out
}
