package entity

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

var ticked = regexp.MustCompile("`([^`]*)`")

// TestDocumentedExamples checks every example in docs/SCORING.md, "Value
// dimensions": each reads as one entity of its dimension with the
// readings the table lists, value first.
func TestDocumentedExamples(t *testing.T) {
	b, err := os.ReadFile("../docs/SCORING.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	_, sec, ok := strings.Cut(doc, "### Value dimensions\n")
	if !ok {
		t.Fatal("docs/SCORING.md has no Value dimensions section")
	}
	sec, _, _ = strings.Cut(sec, "\n### ")
	_, ex, ok := strings.Cut(sec, "| dimension | said | reads as |")
	if !ok {
		t.Fatal("no examples table")
	}
	dims := map[string]Dim{}
	for d := DimNumber; d <= DimName; d++ {
		dims[d.String()] = d
	}
	n := 0
	for _, line := range strings.Split(ex, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || strings.HasPrefix(cells[1], "---") {
			continue
		}
		dim, ok := dims[strings.TrimSpace(cells[1])]
		said := ticked.FindStringSubmatch(cells[2])
		if !ok || said == nil {
			continue
		}
		var want []string
		for _, m := range ticked.FindAllStringSubmatch(cells[3], -1) {
			want = append(want, m[1])
		}
		n++
		es := Extract(said[1], Options{Ref: callDay})
		if len(es) != 1 || es[0].Dim != dim {
			t.Errorf("%q: got %s, want one %s", said[1], render(es), dim)
			continue
		}
		got := []string{es[0].Value}
		for _, a := range es[0].Alternatives {
			got = append(got, a.Value)
		}
		if strings.Join(got, " or ") != strings.Join(want, " or ") {
			t.Errorf("%q reads as %s, documented %s", said[1], strings.Join(got, " or "), strings.Join(want, " or "))
		}
	}
	if n < 30 {
		t.Errorf("only %d documented examples found", n)
	}
}

// TestDocumentedForms checks the forms table of "Value dimensions": every
// form quoted in a row reads as an entity of that row's dimension.
func TestDocumentedForms(t *testing.T) {
	b, err := os.ReadFile("../docs/SCORING.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, _ := strings.Cut(string(b), "### Value dimensions\n")
	_, tab, ok := strings.Cut(sec, "| dimension | forms read | canonical |")
	if !ok {
		t.Fatal("no forms table")
	}
	tab, _, _ = strings.Cut(tab, "\n\n")
	dims := map[string]Dim{}
	for d := DimNumber; d <= DimName; d++ {
		dims[d.String()] = d
	}
	n := 0
	for _, line := range strings.Split(tab, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		dim, ok := dims[strings.TrimSpace(cells[1])]
		if !ok {
			continue
		}
		for _, m := range ticked.FindAllStringSubmatch(cells[2], -1) {
			n++
			found := false
			for _, e := range Extract(m[1], Options{Ref: callDay, BareTime: true}) {
				found = found || e.Dim == dim && e.Value != ""
			}
			if !found {
				t.Errorf("documented %s form %q reads as %s", dim, m[1], render(Extract(m[1], Options{Ref: callDay, BareTime: true})))
			}
		}
	}
	if n < 60 {
		t.Errorf("only %d documented forms found", n)
	}
}
