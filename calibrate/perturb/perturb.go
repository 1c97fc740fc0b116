package perturb

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/callproof/callproof/trace"
)

// DefaultCallDate is the call's date relative forms are said against, the
// documented default for histories that state none (docs/SCORING.md).
const DefaultCallDate = "2026-11-30"

// Kind says whether a variant must still pass or must fail.
type Kind string

// Kinds of variant.
const (
	Respell Kind = "respell" // the same values said otherwise: must pass
	Perturb Kind = "perturb" // one value changed: must fail
)

// Variant is one derived confirmation.
type Variant struct {
	Call      string
	Dimension Dimension
	Kind      Kind
	Arg       string // the argument whose value was re-said or changed ("" for a verb paraphrase)
	Value     string // the value said in Text
	Was, Now  string // the span replaced and its replacement
	Text      string // the whole new utterance
	Corpus    bool   // the replacement came from the fixed corpus
	utt       string
}

// Confirmation is the utterance a call's variants rewrite.
type Confirmation struct {
	Utterance string
	Text      string
	Values    []Spoken // the committed values found in it
	// Held are the values the committed record holds after the commit,
	// in any field (its key included). Naming one of them in place of
	// another is no perturbation: the claim still names the record's
	// values, so a perturbation never substitutes one.
	Held []string
}

// Spoken is one committed value found in a confirmation.
type Spoken struct {
	Arg       string
	Value     string
	Dimension Dimension
	Span      string   // as said
	Others    []string // other records' (or the enum's) values of the field
}

// CorpusEntry is one line of the fixed corpus: a value of a dimension and a
// way of saying it.
type CorpusEntry struct {
	Dimension Dimension
	Value     string
	Form      string
}

// utterances returns each agent utterance's id, full text and the
// sequence number of its start, in order.
type utt struct {
	id   string
	text string
	seq  int
}

func utterancesOf(h *trace.History) []utt {
	var out []utt
	idx := map[string]int{}
	for _, e := range h.Events {
		sp, ok := e.Data.(*trace.AgentSpeech)
		if !ok {
			continue
		}
		switch e.Kind {
		case trace.KindAgentSpeechStart:
			idx[sp.Utterance] = len(out)
			out = append(out, utt{id: sp.Utterance, seq: e.Seq})
		case trace.KindAgentSpeechText, trace.KindAgentSpeechEnd:
			if i, ok := idx[sp.Utterance]; ok && len(sp.Text) >= len(out[i].text) {
				out[i].text = sp.Text
			}
		}
	}
	return out
}

// Find picks the confirmation of a call: the last utterance after the last
// commit that names at least one value of that commit's arguments (or the
// key it wrote). ok is false when there is none.
func Find(h *trace.History, today time.Time) (Confirmation, bool) {
	st := h.Start()
	if st == nil {
		return Confirmation{}, false
	}
	var last *trace.ToolEvent
	lastSeq := 0
	for _, e := range h.Events {
		if te, ok := e.Data.(*trace.ToolEvent); ok && e.Kind == trace.KindToolCommitted {
			last, lastSeq = te, e.Seq
		}
	}
	if last == nil {
		return Confirmation{}, false
	}
	args := map[string]string{}
	for _, e := range h.Events {
		if te, ok := e.Data.(*trace.ToolEvent); ok && te.Ref == last.Ref && len(te.Args) > 0 {
			for k, v := range te.Args {
				args[k] = v
			}
		}
	}
	spec := toolSpec(st.Tools, last.Tool)
	if spec == nil {
		return Confirmation{}, false
	}
	us := utterancesOf(h)
	for i := len(us) - 1; i >= 0; i-- {
		u := us[i]
		if u.seq < lastSeq || u.text == "" {
			continue
		}
		var found []Spoken
		for _, a := range spec.Args {
			v, ok := args[a.Name]
			if !ok || v == "" || slices.Contains(a.Enum, v) && len(a.Enum) == 1 {
				continue // a single-value enum (status: cancelled) is the verb's business
			}
			d, ok := dimensionOf(a.Type, v)
			if !ok {
				continue
			}
			if span := locate(u.text, forms(d, v, today)); span != "" {
				found = append(found, Spoken{Arg: a.Name, Value: v, Dimension: d, Span: span,
					Others: othersOf(st, spec, a, v)})
			}
		}
		if len(found) > 0 {
			return Confirmation{Utterance: u.id, Text: u.text, Values: found, Held: held(last, args)}, true
		}
	}
	return Confirmation{}, false
}

// held lists the values the committed record holds: its key and fields
// after the commit, and the commit's arguments.
func held(te *trace.ToolEvent, args map[string]string) []string {
	out := []string{te.Key}
	for _, v := range te.After {
		out = append(out, v)
	}
	for _, v := range args {
		out = append(out, v)
	}
	sort.Strings(out)
	return dedupe(out)
}

// isHeld reports whether v is one of the held values, compared without
// case, spaces or punctuation ("K7Q2" and "k-7q2" are the same value).
func isHeld(held []string, v string) bool {
	k := bare(v)
	if k == "" {
		return false
	}
	for _, h := range held {
		if bare(h) == k {
			return true
		}
	}
	return false
}

func bare(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

func toolSpec(tools []trace.ToolSpec, name string) *trace.ToolSpec {
	for i := range tools {
		if tools[i].Name == name {
			return &tools[i]
		}
	}
	return nil
}

// othersOf are the values other records of the table hold for the field,
// and the enum's other values.
func othersOf(st *trace.CallStart, spec *trace.ToolSpec, a trace.ArgSpec, v string) []string {
	var out []string
	for _, r := range st.Records {
		if r.Table != spec.Table {
			continue
		}
		if a.Name == spec.KeyArg && r.Key != v {
			out = append(out, r.Key)
		}
		if o, ok := r.Fields[a.Name]; ok && o != v {
			out = append(out, o)
		}
	}
	for _, e := range a.Enum {
		if e != v {
			out = append(out, e)
		}
	}
	sort.Strings(out)
	return dedupe(out)
}

// locate finds the longest form said in text, as a whole word run
// (case-insensitive); "" if none.
func locate(text string, fs []string) string {
	best := ""
	for _, f := range fs {
		if len(f) <= len(best) {
			continue
		}
		if m := wordMatch(f).FindStringSubmatchIndex(text); m != nil {
			best = text[m[2]:m[3]]
		}
	}
	return best
}

func wordMatch(f string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:^|\b|[\s$])` + `(` + regexp.QuoteMeta(f) + `)` + `(?:$|\b|[\s.,;!?])`)
}

// replace substitutes now for the first whole-word occurrence of was.
func replace(text, was, now string) string {
	m := wordMatch(was).FindStringSubmatchIndex(text)
	if m == nil {
		return text
	}
	return text[:m[2]] + now + text[m[3]:]
}

// verbParaphrases pairs a claim phrase with others that say the same.
var verbParaphrases = [][]string{
	{"is rescheduled for", "has been moved to", "is now set for", "now stands on"},
	{"has been cancelled", "is cancelled", "is now cancelled", "has been called off"},
	{"that's cancelled", "that one's cancelled", "it's cancelled", "I've cancelled it"},
	{"I've booked", "I have booked", "I booked", "I've reserved"},
	{"I've placed", "I have placed", "I've put through"},
	{"is now set for", "is now down for", "has been changed to"},
	{"Your payment is on its way", "Your payment has been scheduled", "That payment's been set up", "The payment's all set"},
	{"All set:", "Done:", "You're all set:", "That's done:"},
	{"now goes out for", "will now go out for", "has been changed to"},
	{"I've put", "I have put", "I've moved"},
}

// Generate derives every variant of one confirmation. corpus entries of a
// dimension are used for the values of that dimension.
func Generate(call string, c Confirmation, today time.Time, corpus []CorpusEntry) []Variant {
	var out []Variant
	add := func(v Variant) {
		v.Call, v.utt = call, c.Utterance
		if v.Kind == Perturb && isHeld(c.Held, v.Value) {
			return // the record holds it: naming it is no perturbation
		}
		v.Text = replace(c.Text, v.Was, v.Now)
		if v.Text != c.Text {
			out = append(out, v)
		}
	}
	for _, s := range c.Values {
		for _, f := range forms(s.Dimension, s.Value, today) {
			if !strings.EqualFold(f, s.Span) {
				add(Variant{Dimension: s.Dimension, Kind: Respell, Arg: s.Arg, Value: s.Value, Was: s.Span, Now: f})
			}
		}
		for _, n := range neighbours(s.Dimension, s.Value, s.Others) {
			nd := s.Dimension
			if d, ok := dimensionOf("", n); ok && s.Dimension != Name {
				nd = d
			}
			for _, f := range forms(nd, n, today) {
				add(Variant{Dimension: s.Dimension, Kind: Perturb, Arg: s.Arg, Value: n, Was: s.Span, Now: f})
			}
		}
		for _, e := range corpus {
			if e.Dimension != s.Dimension || strings.EqualFold(e.Form, s.Span) {
				continue
			}
			k := Perturb
			if e.Value == s.Value {
				k = Respell
			} else if s.Dimension == Name && !slices.Contains(s.Others, e.Value) {
				continue // a name no record or enum of this call holds proves nothing
			}
			add(Variant{Dimension: s.Dimension, Kind: k, Arg: s.Arg, Value: e.Value, Was: s.Span, Now: e.Form, Corpus: true})
		}
	}
	for _, group := range verbParaphrases {
		for _, p := range group {
			if !strings.Contains(c.Text, p) {
				continue
			}
			for _, q := range group {
				if q != p {
					add(Variant{Dimension: Verb, Kind: Respell, Was: p, Now: q})
				}
			}
			break
		}
	}
	return out
}

// Apply returns a copy of h whose confirmation says v.Text instead.
func Apply(h *trace.History, v Variant) *trace.History {
	out := &trace.History{Call: h.Call, Events: make([]trace.Event, len(h.Events))}
	copy(out.Events, h.Events)
	for i, e := range out.Events {
		if st, ok := e.Data.(*trace.CallStart); ok && st.CallDate == "" {
			// Relative forms were said against DefaultCallDate: the
			// variant is a call on that day (a history without a call
			// date reads relative dates as unknown).
			cp := *st
			cp.CallDate, cp.TimeZone = DefaultCallDate, "UTC"
			out.Events[i].Data = &cp
			continue
		}
		sp, ok := e.Data.(*trace.AgentSpeech)
		if !ok || sp.Utterance != v.utt || sp.Text == "" || e.Kind == trace.KindAgentClear {
			continue
		}
		cp := *sp
		cp.Text = replace(sp.Text, v.Was, v.Now)
		out.Events[i].Data = &cp
	}
	return out
}
