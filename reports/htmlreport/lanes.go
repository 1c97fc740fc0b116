package htmlreport

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"

	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/trace"
)

// track is one call's lanes on one clock. Every position is given twice,
// as a share of the call's duration (time) and of its events (order), and
// the page's CSS picks one: on the time axis a tool request that commits
// and answers within 0.1 ms is one point, in event order every event gets
// room of its own.
type track struct {
	Lanes      []lane
	TimeTicks  []tick
	OrderTicks []tick
}

type lane struct {
	Name, Class string
	Rows        []*row
}

type row struct {
	Label, Title string
	Spans        []span
	Marks        []mark
}

type span struct {
	Class, Label, Title string
	Style               template.CSS
}

// mark is one event on a row; it links to the event's table row.
type mark struct {
	Class, Href, Title string
	Seq                int
	Style              template.CSS
	Cited              bool
}

type tick struct {
	Style template.CSS
	Label string
}

// pos is a place on both axes, in percent of the track's width.
type pos struct{ t, o float64 }

var (
	callStart = pos{0, 0}
	callEnd   = pos{100, 100}
)

type trackBuilder struct {
	call   string
	end    time.Duration
	index  map[int]int // seq → position in the history
	n      int
	cited  map[int]bool
	placed map[int]bool
}

func (b *trackBuilder) at(e trace.Event) pos {
	p := pos{o: 100 * (float64(b.index[e.Seq]) + 0.5) / float64(b.n)}
	if b.end > 0 {
		p.t = 100 * float64(e.At) / float64(b.end)
	}
	return p
}

func (b *trackBuilder) mark(r *row, e trace.Event, class string) {
	b.placed[e.Seq] = true
	r.Marks = append(r.Marks, mark{
		Class: class, Href: eventAnchor(b.call, e.Seq), Seq: e.Seq, Cited: b.cited[e.Seq],
		Title: fmt.Sprintf("#%d · %s · %s · %s", e.Seq, msText(e.At), e.Kind, reports.Describe(e)),
		Style: template.CSS(fmt.Sprintf("--t:%.3f;--o:%.3f", b.at(e).t, b.at(e).o)),
	})
}

func spanOf(class, label, title string, from, to pos) span {
	return span{Class: class, Label: label, Title: title,
		Style: template.CSS(fmt.Sprintf("--t0:%.3f;--t1:%.3f;--o0:%.3f;--o1:%.3f", from.t, to.t, from.o, to.o))}
}

// utterance is a speech span being built: caller or agent words from
// onset to end.
type utterance struct {
	from pos
	text string
	act  string
}

func buildTrack(h *trace.History, cited map[int]bool) track {
	b := &trackBuilder{call: h.Call, index: map[int]int{}, n: max(len(h.Events), 1), cited: cited, placed: map[int]bool{}}
	for i, e := range h.Events {
		b.index[e.Seq] = i
		b.end = max(b.end, e.At)
	}
	var t track
	t.Lanes = append(t.Lanes, b.caller(h), b.agent(h), b.tools(h), b.backend(h), b.harness(h))
	kept := t.Lanes[:0]
	for _, l := range t.Lanes {
		rows := l.Rows[:0]
		for _, r := range l.Rows {
			if len(r.Spans)+len(r.Marks) > 0 {
				rows = append(rows, r)
			}
		}
		if l.Rows = rows; len(rows) > 0 {
			kept = append(kept, l)
		}
	}
	t.Lanes = kept
	t.TimeTicks = timeTicks(b.end)
	t.OrderTicks = orderTicks(h.Events)
	return t
}

func (b *trackBuilder) caller(h *trace.History) lane {
	speech := &row{Label: "speech", Title: "caller speech, onset to final words"}
	sounds := &row{Label: "sounds · keys", Title: "noise, DTMF, hang-up"}
	words := map[string]*utterance{}
	noise := map[string]pos{}
	for _, e := range h.Events {
		switch d := e.Data.(type) {
		case *trace.CallerSpeech:
			u := words[d.Utterance]
			if u == nil || e.Kind == trace.KindCallerSpeechStart {
				u = &utterance{from: b.at(e), act: string(d.Act)}
				words[d.Utterance] = u
			}
			switch e.Kind {
			case trace.KindCallerSpeechStart:
				b.mark(speech, e, "onset")
			case trace.KindCallerSpeechPartial:
				u.text = d.Text
				b.mark(speech, e, "tick")
			case trace.KindCallerSpeechFinal:
				label := "[" + u.act + "] " + d.Text
				class := "sp act-" + u.act
				if d.Invalidates {
					class += " invalidates"
				}
				speech.Spans = append(speech.Spans, spanOf(class, label, label, u.from, b.at(e)))
				delete(words, d.Utterance)
				b.mark(speech, e, "final")
			}
		case *trace.CallerNoise:
			if e.Kind == trace.KindCallerNoiseStart {
				noise[d.ID] = b.at(e)
				b.mark(sounds, e, "noise")
				continue
			}
			from, ok := noise[d.ID]
			if !ok {
				from = b.at(e)
			}
			delete(noise, d.ID)
			sounds.Spans = append(sounds.Spans, spanOf("sp noise", d.Sound, "noise: "+d.Sound, from, b.at(e)))
			b.mark(sounds, e, "noise")
		case *trace.CallerDTMF:
			b.mark(sounds, e, "dtmf")
		default:
			if e.Kind == trace.KindCallerHangup {
				b.mark(sounds, e, "hangup")
			}
		}
	}
	// Speech the call ended in the middle of runs to the end, marked cut.
	for _, id := range trace.SortedKeys(words) {
		u := words[id]
		label := "[" + u.act + "] " + u.text + "…"
		speech.Spans = append(speech.Spans, spanOf("sp cut act-"+u.act, label, label+" (never finished)", u.from, callEnd))
	}
	for _, id := range trace.SortedKeys(noise) {
		sounds.Spans = append(sounds.Spans, spanOf("sp noise cut", id, "noise never ended", noise[id], callEnd))
	}
	return lane{Name: "caller", Class: "caller", Rows: []*row{speech, sounds}}
}

func (b *trackBuilder) agent(h *trace.History) lane {
	speech := &row{Label: "speech", Title: "agent utterances, start to end or clear"}
	acts := &row{Label: "tool intents · state", Title: "the agent's own notices: tool intents and self-reported working state"}
	words := map[string]*utterance{}
	for _, e := range h.Events {
		if e.Source != trace.SourceAgent {
			continue
		}
		switch d := e.Data.(type) {
		case *trace.AgentSpeech:
			u := words[d.Utterance]
			if u == nil || e.Kind == trace.KindAgentSpeechStart {
				u = &utterance{from: b.at(e)}
				words[d.Utterance] = u
			}
			if d.Text != "" {
				u.text = d.Text
			}
			switch e.Kind {
			case trace.KindAgentSpeechStart:
				b.mark(speech, e, "onset")
			case trace.KindAgentSpeechText:
				b.mark(speech, e, "tick")
			case trace.KindAgentSpeechEnd, trace.KindAgentClear:
				class, label := "sp said", u.text
				if e.Kind == trace.KindAgentClear {
					class = "sp cleared"
					label = "✕ " + label
				}
				if label == "" {
					label = d.Utterance
				}
				speech.Spans = append(speech.Spans, spanOf(class, label, d.Utterance+": "+u.text, u.from, b.at(e)))
				delete(words, d.Utterance)
				if e.Kind == trace.KindAgentClear {
					b.mark(speech, e, "clear")
				} else {
					b.mark(speech, e, "final")
				}
			}
		case *trace.AgentToolIntent:
			b.mark(acts, e, "intent")
		case *trace.AgentState:
			b.mark(acts, e, "state")
		default:
			b.mark(acts, e, "note")
		}
	}
	for _, id := range trace.SortedKeys(words) {
		u := words[id]
		speech.Spans = append(speech.Spans, spanOf("sp said cut", u.text+"…", id+": "+u.text+" (never finished)", u.from, callEnd))
	}
	return lane{Name: "agent", Class: "agent", Rows: []*row{speech, acts}}
}

// request is one tool request's row being built.
type request struct {
	row       *row
	from, to  pos
	held      *pos
	tool      string
	args      map[string]string
	status    int
	dropped   bool
	committed bool
	cancelled bool
	rejected  bool
	dup       bool
}

var toolClass = map[trace.Kind]string{
	trace.KindToolReceived:  "recv",
	trace.KindToolRejected:  "reject",
	trace.KindToolHeld:      "hold",
	trace.KindToolReleased:  "release",
	trace.KindToolCommitted: "commit",
	trace.KindToolResponded: "resp",
	trace.KindToolCancelled: "cancel",
	trace.KindToolReplayed:  "replay",
	trace.KindFaultApplied:  "fault",
}

func (b *trackBuilder) tools(h *trace.History) lane {
	l := lane{Name: "tools", Class: "tools"}
	reqs := map[string]*request{}
	var order []string
	for _, e := range h.Events {
		d, ok := e.Data.(*trace.ToolEvent)
		if !ok {
			continue
		}
		r := reqs[d.Ref]
		if r == nil {
			r = &request{row: &row{Label: d.Ref + " " + d.Tool}, from: b.at(e), tool: d.Tool}
			reqs[d.Ref] = r
			order = append(order, d.Ref)
			l.Rows = append(l.Rows, r.row)
		}
		r.to = b.at(e)
		if d.Args != nil {
			r.args = d.Args
		}
		r.dup = r.dup || d.DuplicateOf != ""
		class := toolClass[e.Kind]
		switch e.Kind {
		case trace.KindToolReceived:
			r.row.Title = reports.Describe(e)
		case trace.KindToolHeld:
			p := b.at(e)
			r.held = &p
		case trace.KindToolReleased:
			if r.held != nil {
				r.row.Spans = append(r.row.Spans, spanOf("sp held", "hold "+d.Hold, "held by the scenario: "+d.Hold, *r.held, b.at(e)))
				r.held = nil
			}
		case trace.KindToolCommitted:
			r.committed = true
		case trace.KindToolCancelled:
			r.cancelled = true
		case trace.KindToolRejected:
			r.rejected, r.status = true, d.Status
		case trace.KindToolResponded:
			r.status, r.dropped = d.Status, d.Dropped
			if d.Status >= 400 {
				class += " bad"
			}
			if d.Dropped {
				class += " dropped"
			}
		}
		b.mark(r.row, e, class)
	}
	for _, ref := range order {
		r := reqs[ref]
		if r.held != nil {
			r.row.Spans = append(r.row.Spans, spanOf("sp held", "held", "held until the end", *r.held, r.to))
		}
		class, label := "sp req", r.tool+" "+kvText(r.args)
		switch {
		case r.rejected:
			class += " rejected"
			label += fmt.Sprintf(" → rejected %d", r.status)
		case r.cancelled:
			class += " cancelled"
			label += " → cancelled"
		case r.status != 0:
			label += fmt.Sprintf(" → %d", r.status)
		}
		if r.dropped {
			label += " (dropped)"
		}
		if r.committed {
			class += " committed"
			label += " · committed"
		}
		if r.dup {
			class += " dup"
			label += " · duplicate delivery"
		}
		if max(r.from.t, r.from.o) > 55 {
			class += " flip" // label on the bar's left, inside the track
		}
		// The bar goes first so the hold band and the marks sit on it.
		r.row.Spans = append([]span{spanOf(class, label, ref+" "+label, r.from, r.to)}, r.row.Spans...)
	}
	return l
}

// version is a backend record's row being built: the version it holds
// since from.
type version struct {
	row   *row
	from  pos
	label string
	title string
	n     int
}

func (b *trackBuilder) backend(h *trace.History) lane {
	l := lane{Name: "backend", Class: "backend"}
	recs := map[string]*version{}
	var all []*version
	add := func(table, key string, from pos) *version {
		v := &version{row: &row{Label: table + "/" + key, Title: "versions of " + table + "/" + key}, from: from}
		recs[table+"/"+key] = v
		all = append(all, v)
		l.Rows = append(l.Rows, v.row)
		return v
	}
	closeAt := func(v *version, to pos) {
		if v.label == "" {
			return
		}
		class := "sp rec"
		if v.n > 1 {
			class += " later"
		}
		v.row.Spans = append(v.row.Spans, spanOf(class, v.label, v.title, v.from, to))
	}
	if st := h.Start(); st != nil {
		for _, r := range sortedRecords(st.Records) {
			v := add(r.Table, r.Key, callStart)
			v.n, v.label = r.Version, fmt.Sprintf("v%d", r.Version)
			v.title = fmt.Sprintf("%s/%s v%d %s (at the start)", r.Table, r.Key, r.Version, kvText(r.Fields))
		}
	}
	for _, e := range h.Events {
		switch d := e.Data.(type) {
		case *trace.ToolEvent:
			if e.Kind != trace.KindToolCommitted || d.Table == "" {
				continue
			}
			v := recs[d.Table+"/"+d.Key]
			if v == nil {
				v = add(d.Table, d.Key, b.at(e))
			}
			closeAt(v, b.at(e))
			v.from, v.n = b.at(e), d.VersionAfter
			v.label = fmt.Sprintf("v%d %s", d.VersionAfter, kvText(changed(d.Before, d.After)))
			v.title = fmt.Sprintf("%s/%s v%d %s (%s %s)", d.Table, d.Key, d.VersionAfter, kvText(d.After), d.Ref, d.Tool)
			b.mark(v.row, e, "commit")
		case *trace.Snapshot:
			for _, r := range sortedRecords(d.Records) {
				v := recs[r.Table+"/"+r.Key]
				if v == nil {
					v = add(r.Table, r.Key, b.at(e))
				}
				b.mark(v.row, e, "snap")
			}
		}
	}
	for _, v := range all {
		closeAt(v, callEnd)
	}
	return l
}

func (b *trackBuilder) harness(h *trace.History) lane {
	r := &row{Label: "script · harness", Title: "call start and end, script triggers, notes"}
	for _, e := range h.Events {
		if b.placed[e.Seq] {
			continue
		}
		class := "note"
		switch e.Kind {
		case trace.KindCallStart, trace.KindCallEnd:
			class = "edge"
		case trace.KindTriggerFired:
			class = "trig"
		case trace.KindTriggerMissed:
			class = "miss"
		case trace.KindSnapshot:
			class = "snap"
		}
		b.mark(r, e, class)
	}
	return lane{Name: "harness", Class: "harness", Rows: []*row{r}}
}

// timeTicks marks the time axis at a round step, about eight of them.
func timeTicks(end time.Duration) []tick {
	if end <= 0 {
		return []tick{{Style: "--t:0", Label: "0"}}
	}
	step := niceStep(float64(end) / float64(time.Millisecond) / 8)
	var out []tick
	for k := 0; float64(k)*step <= float64(end)/float64(time.Millisecond); k++ {
		ms := float64(k) * step
		at := 100 * ms * float64(time.Millisecond) / float64(end)
		if k > 0 && at > 95 {
			break // its label would run off the track
		}
		label := fmt.Sprintf("%g ms", ms)
		if step >= 1000 {
			label = fmt.Sprintf("%g s", ms/1000)
		}
		out = append(out, tick{Style: template.CSS(fmt.Sprintf("--t:%.3f", at)), Label: label})
	}
	return out
}

// orderTicks labels every few events with its seq.
func orderTicks(evs []trace.Event) []tick {
	if len(evs) == 0 {
		return nil
	}
	step := int(max(niceStep(float64(len(evs))/12), 1))
	var out []tick
	for i := 0; i < len(evs) && (i == 0 || 100*float64(i)/float64(len(evs)) <= 95); i += step {
		out = append(out, tick{Style: template.CSS(fmt.Sprintf("--o:%.3f", 100*(float64(i)+0.5)/float64(len(evs)))), Label: fmt.Sprintf("#%d", evs[i].Seq)})
	}
	return out
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// changed is the fields a write changed, with their new values.
func changed(before, after map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range after {
		if before[k] != v {
			out[k] = v
		}
	}
	return out
}

func kvText(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range trace.SortedKeys(m) {
		parts = append(parts, k+"="+m[k])
	}
	return "{" + strings.Join(parts, " ") + "}"
}
