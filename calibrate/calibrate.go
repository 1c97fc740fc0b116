package calibrate

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/callproof/callproof/scorer"
)

// Label is a human verdict on one axis.
type Label string

// Labels. Either means the axis definitions allow both pass and fail, so
// any verdict agrees.
const (
	LabelPass   Label = "pass"
	LabelFail   Label = "fail"
	LabelEither Label = "either"
)

// NoBucket is the expected bucket of a call with no failed axis.
const NoBucket = "none"

// Call is one call's hand labels.
type Call struct {
	ID     string                `yaml:"id"`
	Agent  string                `yaml:"agent,omitempty"`
	Axes   map[scorer.Axis]Label `yaml:"axes"`
	Bucket string                `yaml:"bucket,omitempty"` // primary bucket, NoBucket, or "" (not labelled)
	Why    string                `yaml:"why,omitempty"`
	line   int
}

// Labels is a labels file.
type Labels struct {
	Calls []Call `yaml:"calls"`
}

// Load reads a labels file strictly: unknown fields, unknown axes and
// labels, duplicate ids and calls without all six axes are errors naming
// the line.
func Load(path string) (*Labels, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b, path)
}

// Parse is Load on bytes; name is used in errors.
func Parse(b []byte, name string) (*Labels, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var l Labels
	dec = yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	lines := callLines(&root)
	axes := map[scorer.Axis]bool{}
	for _, a := range scorer.Axes() {
		axes[a] = true
	}
	buckets := map[string]bool{NoBucket: true}
	for _, bk := range scorer.Buckets() {
		buckets[string(bk)] = true
	}
	seen := map[string]int{}
	var errs []error
	for i := range l.Calls {
		c := &l.Calls[i]
		if i < len(lines) {
			c.line = lines[i]
		}
		at := fmt.Sprintf("%s:%d: calls[%d]", name, c.line, i)
		if c.ID == "" {
			errs = append(errs, fmt.Errorf("%s: id: missing", at))
		} else if prev, dup := seen[c.ID]; dup {
			errs = append(errs, fmt.Errorf("%s: id: %q already labelled at line %d", at, c.ID, prev))
		}
		seen[c.ID] = c.line
		for a, v := range c.Axes {
			if !axes[a] {
				errs = append(errs, fmt.Errorf("%s: axes.%s: unknown axis", at, a))
			}
			if v != LabelPass && v != LabelFail && v != LabelEither {
				errs = append(errs, fmt.Errorf("%s: axes.%s: %q is not pass, fail or either", at, a, v))
			}
		}
		for _, a := range scorer.Axes() {
			if _, ok := c.Axes[a]; !ok {
				errs = append(errs, fmt.Errorf("%s: axes.%s: missing", at, a))
			}
		}
		if c.Bucket != "" && !buckets[c.Bucket] {
			errs = append(errs, fmt.Errorf("%s: bucket: unknown bucket %q", at, c.Bucket))
		}
	}
	if len(l.Calls) == 0 {
		errs = append(errs, fmt.Errorf("%s: calls: no calls labelled", name))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &l, nil
}

// callLines returns the line of each item of the top-level calls list.
func callLines(root *yaml.Node) []int {
	if len(root.Content) == 0 {
		return nil
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "calls" {
			var out []int
			for _, it := range m.Content[i+1].Content {
				out = append(out, it.Line)
			}
			return out
		}
	}
	return nil
}

// Cell is one disagreement between a label and a verdict.
type Cell struct {
	Call    string        `json:"call"`
	Axis    scorer.Axis   `json:"axis,omitempty"`
	Label   string        `json:"label"`
	Verdict string        `json:"verdict"`
	Kind    string        `json:"kind"` // false_pass, false_failure, unknown, bucket, missing
	Finding string        `json:"finding,omitempty"`
	Primary scorer.Bucket `json:"-"`
}

// AxisStats is one axis's agreement.
type AxisStats struct {
	Axis          scorer.Axis `json:"axis"`
	Cells         int         `json:"cells"`
	Agree         int         `json:"agree"`
	FalsePasses   int         `json:"false_passes"`
	FalseFailures int         `json:"false_failures"`
	Unknown       int         `json:"unknown"` // labelled pass or fail, scored unknown
	Kappa         float64     `json:"kappa"`
}

// Report is the comparison of labels with scores.
type Report struct {
	Calls         int         `json:"calls"`
	Axes          []AxisStats `json:"axes"`
	Cells         int         `json:"cells"`
	Agree         int         `json:"agree"`
	Kappa         float64     `json:"kappa"`
	FalsePasses   int         `json:"false_passes"`
	FalseFailures int         `json:"false_failures"`
	Unknown       int         `json:"unknown"`
	BucketCalls   int         `json:"bucket_calls"`
	BucketAgree   int         `json:"bucket_agree"`
	Missing       []string    `json:"missing,omitempty"`    // labelled, but not in the run
	Unlabelled    []string    `json:"unlabelled,omitempty"` // in the run, not labelled
	Disagreements []Cell      `json:"disagreements,omitempty"`
}

// Agreement is the share of cells that agree (1 when there are none).
func (r *Report) Agreement() float64 { return ratio(r.Agree, r.Cells) }

// Perfect reports full agreement on every axis cell and bucket, with every
// labelled call present.
func (r *Report) Perfect() bool {
	return r.Agree == r.Cells && r.BucketAgree == r.BucketCalls && len(r.Missing) == 0
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// Compare judges scores against labels. Pure: no I/O.
func Compare(l *Labels, scores []scorer.CallScore) *Report {
	byID := make(map[string]*scorer.CallScore, len(scores))
	for i := range scores {
		byID[scores[i].Call] = &scores[i]
	}
	rep := &Report{}
	stats := map[scorer.Axis]*AxisStats{}
	conf := map[scorer.Axis]*confusion{}
	all := &confusion{}
	for _, a := range scorer.Axes() {
		stats[a] = &AxisStats{Axis: a}
		conf[a] = &confusion{}
	}
	labelled := map[string]bool{}
	for _, c := range l.Calls {
		labelled[c.ID] = true
		s := byID[c.ID]
		if s == nil {
			rep.Missing = append(rep.Missing, c.ID)
			continue
		}
		rep.Calls++
		for _, a := range scorer.Axes() {
			lab := c.Axes[a]
			r := s.Axis(a)
			st := stats[a]
			st.Cells++
			cell := Cell{Call: c.ID, Axis: a, Label: string(lab), Verdict: string(r.Verdict)}
			if len(r.Findings) > 0 {
				cell.Finding = r.Findings[0].Text
			}
			if lab != LabelEither {
				conf[a].add(string(lab), string(r.Verdict))
				all.add(string(lab), string(r.Verdict))
			}
			switch {
			case lab == LabelEither || string(lab) == string(r.Verdict):
				st.Agree++
				continue
			case lab == LabelFail && r.Verdict == scorer.Pass:
				st.FalsePasses++
				cell.Kind = "false_pass"
			case lab == LabelPass && r.Verdict == scorer.Fail:
				st.FalseFailures++
				cell.Kind = "false_failure"
			default:
				st.Unknown++
				cell.Kind = "unknown"
			}
			rep.Disagreements = append(rep.Disagreements, cell)
		}
		if c.Bucket != "" {
			rep.BucketCalls++
			got := string(s.Primary)
			if got == "" {
				got = NoBucket
			}
			if got == c.Bucket {
				rep.BucketAgree++
			} else {
				rep.Disagreements = append(rep.Disagreements, Cell{Call: c.ID, Label: c.Bucket, Verdict: got, Kind: "bucket"})
			}
		}
	}
	for _, s := range scores {
		if !labelled[s.Call] {
			rep.Unlabelled = append(rep.Unlabelled, s.Call)
		}
	}
	sort.Strings(rep.Unlabelled)
	for _, a := range scorer.Axes() {
		st := stats[a]
		st.Kappa = conf[a].kappa()
		rep.Axes = append(rep.Axes, *st)
		rep.Cells += st.Cells
		rep.Agree += st.Agree
		rep.FalsePasses += st.FalsePasses
		rep.FalseFailures += st.FalseFailures
		rep.Unknown += st.Unknown
	}
	rep.Kappa = all.kappa()
	return rep
}

// confusion counts (label, verdict) pairs over the categories pass, fail
// and unknown (a label is never unknown; the scorer's unknown is its own
// category, so it lowers kappa).
type confusion struct {
	n     int
	pairs map[[2]string]int
}

func (c *confusion) add(label, verdict string) {
	if c.pairs == nil {
		c.pairs = map[[2]string]int{}
	}
	c.pairs[[2]string{label, verdict}]++
	c.n++
}

// kappa is Cohen's kappa: (po - pe) / (1 - pe). When both raters put every
// cell in one category (pe = 1) agreement is perfect or not at all.
func (c *confusion) kappa() float64 {
	if c.n == 0 {
		return 1
	}
	cats := []string{"pass", "fail", "unknown"}
	po, pe := 0.0, 0.0
	for _, k := range cats {
		po += float64(c.pairs[[2]string{k, k}])
		rowK, colK := 0, 0
		for _, j := range cats {
			rowK += c.pairs[[2]string{k, j}]
			colK += c.pairs[[2]string{j, k}]
		}
		pe += float64(rowK) * float64(colK)
	}
	po /= float64(c.n)
	pe /= float64(c.n) * float64(c.n)
	if pe >= 1 {
		if po >= 1 {
			return 1
		}
		return 0
	}
	return (po - pe) / (1 - pe)
}

// Text renders the report for people.
func (r *Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "calibration · %d calls labelled and scored\n\n", r.Calls)
	fmt.Fprintf(&b, "%-30s %-12s %-7s %-12s %-14s %s\n", "axis", "agreement", "kappa", "false pass", "false failure", "unknown")
	for _, a := range r.Axes {
		fmt.Fprintf(&b, "%-30s %-12s %-7.3f %-12d %-14d %d\n", a.Axis, fmt.Sprintf("%d / %d", a.Agree, a.Cells), a.Kappa, a.FalsePasses, a.FalseFailures, a.Unknown)
	}
	fmt.Fprintf(&b, "%-30s %-12s %-7.3f %-12d %-14d %d\n", "all axes", fmt.Sprintf("%d / %d", r.Agree, r.Cells), r.Kappa, r.FalsePasses, r.FalseFailures, r.Unknown)
	fmt.Fprintf(&b, "%-30s %d / %d\n", "primary bucket", r.BucketAgree, r.BucketCalls)
	if len(r.Missing) > 0 {
		fmt.Fprintf(&b, "\nlabelled but not in the run: %s\n", strings.Join(r.Missing, ", "))
	}
	if len(r.Unlabelled) > 0 {
		fmt.Fprintf(&b, "\nin the run but not labelled (not judged): %s\n", strings.Join(r.Unlabelled, ", "))
	}
	if len(r.Disagreements) > 0 {
		b.WriteString("\ndisagreements\n")
		for _, c := range r.Disagreements {
			where := string(c.Axis)
			if c.Kind == "bucket" {
				where = "primary bucket"
			}
			fmt.Fprintf(&b, "  %-14s %-36s %-30s label %-7s scored %s\n", c.Kind, c.Call, where, c.Label, c.Verdict)
			if c.Finding != "" {
				fmt.Fprintf(&b, "  %-14s %s\n", "", c.Finding)
			}
		}
	}
	return b.String()
}
