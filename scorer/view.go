package scorer

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/callproof/callproof/entity"
	"github.com/callproof/callproof/trace"
)

// baseYield is how long an agent may keep talking once the caller starts
// speaking over it, before the harness time scale is applied. 1.5 s is a
// generous human turn-taking bound: a barge-in that is not honoured within
// it is not honoured at all.
const baseYield = 1500 * time.Millisecond

// mark is one recorded caller intent (speech final or DTMF).
type mark struct {
	seq     int
	onset   int // seq of the utterance's speech onset (seq for DTMF)
	in      *trace.Intent
	norm    map[string]string // slots in canonical form
	changed bool              // version differs from the previous mark
}

// request is every backend event of one tool HTTP request (one Ref).
type request struct {
	ref        string
	tool       string
	spec       trace.ToolSpec
	args       map[string]string // canonical
	idem       string
	recv       int
	initiated  int // seq of the agent.tool_intent that announced it, else recv
	rejected   int
	responded  int
	cancelled  int
	commits    []int
	status     int
	body       string
	dropped    bool
	fault      string
	faultSeq   int
	held       bool
	problem    string        // what the agent got back if it was bad (see resultProblem)
	dupOf      string        // the request this one is a network duplicate of
	retryAt    int           // timeout: seq of the agent's next request of the same tool
	wrong      *trace.Record // record returned instead of the requested one
	commitKeys [][2]string   // table/key of each commit
	// compensates is the commit this request undoes: it restores the
	// record's values from before the call after the caller withdrew or
	// replaced what that commit wrote (docs/SCORING.md, "Compensation").
	compensates *commitRef
	// undoneBefore is the record as its first commit found it (nil for a
	// create): what a compensating cancel or delete undid.
	undoneBefore *trace.Record
}

func (r *request) consequential() bool { return r.spec.Consequential }

// closed is the seq at which the request stopped being in flight, or 0.
func (r *request) closed() int {
	c := 0
	for _, s := range []int{r.responded, r.cancelled} {
		if s > 0 && (c == 0 || s < c) {
			c = s
		}
	}
	return c
}

// moment is when the agent learned how the request went (response or
// cancellation), or 0.
func (r *request) moment() int { return r.closed() }

// after is the seq after which the agent's acts answer this request's
// outcome: moment, except for a timeout whose retry reached the backend
// before the backend noticed the client leave (the agent gave up first;
// the disconnect is seen late under load).
func (r *request) after() int {
	if r.retryAt > 0 && (r.closed() == 0 || r.retryAt < r.closed()) {
		return r.retryAt - 1
	}
	return r.moment()
}

// retries links each timed-out request to the first later request of the
// same tool that the agent sent (not a network duplicate).
func (v *view) retries() {
	for _, r := range v.reqs {
		if r.problem != "timeout" {
			continue
		}
		for _, o := range v.reqs {
			if o != r && o.dupOf == "" && o.tool == r.tool && o.recv > r.recv {
				if r.retryAt == 0 || o.recv < r.retryAt {
					r.retryAt = o.recv
				}
			}
		}
	}
}

// openAt reports whether the request was in flight at seq.
func (r *request) openAt(seq int) bool {
	if r.recv == 0 || r.recv >= seq || r.rejected > 0 {
		return false
	}
	if c := r.closed(); c > 0 && c < seq {
		return false
	}
	return len(r.commits) == 0 || r.commits[0] > seq
}

// utterance is one agent utterance from start to end or clear.
type utterance struct {
	id                string
	start, end, clear int
	startAt, stopAt   time.Duration
	text              string
	f                 facts
}

func (u *utterance) completed() bool { return u.end > 0 && u.clear == 0 }

type noiseWin struct {
	step       string
	start, end int
	from, to   time.Duration
}

type toolIntent struct {
	seq  int
	tool string
	args map[string]string
	used bool
	// late is the request this notice announced when it reached us after
	// the request itself (agents may send the notice and the HTTP request
	// concurrently): it is not a new act.
	late *request
}

// view is one history indexed once for every axis and bucket rule.
type view struct {
	h           *trace.History
	start       *trace.CallStart
	lex         *lexicon
	ftypes      map[string]string // field name -> argument type
	normed      map[[2]string]string
	keyFields   map[string]bool // fields some tool keys on
	yield       time.Duration
	lastSeq     int
	lastAt      time.Duration
	marks       []mark
	final       *mark // I*: the intent in force at the end
	finalSeq    int   // the caller final that first carried I*'s version
	want        []trace.Record
	wantNote    string
	snap        *trace.Snapshot
	snapSeq     int
	held        []trace.Record // the net snapshot, created records keyed as S* predicts (alignCreated)
	reqs        []*request
	byRef       map[string]*request
	utts        []*utterance
	uttByStart  map[int]*utterance
	states      []int
	intents     []*toolIntent
	noise       []noiseWin
	speechStart map[string]int // caller step -> first speech_start seq
	speechFinal map[string]int // caller step -> first speech_final seq
	ch          challenge
	// Computed once: the diffs and commits several rules read.
	targetKeys [][2]string
	cs         []commitRef
	diff       []trace.FieldDiff // S* vs snapshot
	unchanged  bool              // the net snapshot equals the starting records

	// net is the snapshot without the created records a compensation
	// cancelled (they count as absent); undone holds the records
	// compensations cancelled or deleted, as they were before the undo.
	net, undone []trace.Record
}

func (v *view) ev(seq int) *trace.Event { return v.h.BySeq(seq) }

func (v *view) spec(tool string) (trace.ToolSpec, bool) { return trace.Catalog(v.start.Tools, tool) }

// argType is the schema type of a tool argument ("" when unknown).
func (v *view) argType(tool, name string) string {
	if s, ok := v.spec(tool); ok {
		for _, a := range s.Args {
			if a.Name == name {
				return a.Type
			}
		}
	}
	return ""
}

// kindOf is an argument's type for reading values: typeKey for the tool's
// key argument, else its declared type.
func (v *view) kindOf(tool, name string) string {
	if s, ok := v.spec(tool); ok && s.KeyArg == name {
		return typeKey
	}
	return v.argType(tool, name)
}

// fieldKind is kindOf for a record field: typeKey when some tool keys on
// it, else the type of any tool argument of that name.
func (v *view) fieldKind(name string) string {
	if v.keyFields[name] {
		return typeKey
	}
	return v.fieldType(name)
}

// fieldType finds a field's type from any tool that takes it as argument.
func (v *view) fieldType(name string) string { return v.ftypes[name] }

// norm is normValue, remembered per call: the same few keys, dates and
// counts recur in every event of a history.
func (v *view) norm(typ, s string) string {
	k := [2]string{typ, s}
	if n, ok := v.normed[k]; ok {
		return n
	}
	n := normValue(typ, s)
	v.normed[k] = n
	return n
}

// indexFields records, once per call, each field's type (from the first
// tool that takes it) and which fields some tool keys on.
func (v *view) indexFields() {
	v.ftypes, v.keyFields, v.normed = map[string]string{}, map[string]bool{}, map[[2]string]string{}
	for _, t := range v.start.Tools {
		if t.KeyArg != "" {
			v.keyFields[t.KeyArg] = true
		}
		for _, a := range t.Args {
			if _, ok := v.ftypes[a.Name]; !ok {
				v.ftypes[a.Name] = a.Type
			}
		}
	}
}

func (v *view) normArgs(tool string, args map[string]string) map[string]string {
	out := make(map[string]string, len(args))
	for k, a := range args {
		if a = v.norm(v.argType(tool, k), a); a != "" {
			out[k] = a
		}
	}
	return out
}

// index walks the history once. start must be non-nil. The yield bound
// uses the time scale the call actually ran at (call.end) when recorded,
// else the one offered in call.start.
func index(h *trace.History, start *trace.CallStart, end *trace.CallEnd) *view {
	v := &view{h: h, start: start, lex: newLexicon(start.Tools), byRef: map[string]*request{}, uttByStart: map[int]*utterance{},
		speechStart: map[string]int{}, speechFinal: map[string]int{}}
	if day, ok := start.Today(); ok {
		// Relative dates ("tomorrow") count from the call's own day.
		v.lex.ref = entity.Ref{Date: day, Zone: day.Location()}
	}
	v.indexFields()
	scale := start.TimeScale
	if end != nil && end.TimeScale > 0 {
		scale = end.TimeScale
	}
	if scale <= 0 {
		scale = 1
	}
	v.yield = time.Duration(float64(baseYield) * scale)
	open := map[string]*utterance{}
	// ended keeps closed utterances by id: an audio dialect transcribes an
	// utterance once it is over, so its text arrives after its end and
	// still belongs to it (and to its start's place on the timeline).
	ended := map[string]*utterance{}
	noiseOpen := map[string]int{}
	for i := range h.Events {
		e := &h.Events[i]
		v.lastSeq, v.lastAt = e.Seq, e.At
		switch d := e.Data.(type) {
		case *trace.CallerSpeech:
			switch e.Kind {
			case trace.KindCallerSpeechStart:
				if _, ok := v.speechStart[d.Step]; !ok {
					v.speechStart[d.Step] = e.Seq
				}
			case trace.KindCallerSpeechFinal:
				if _, ok := v.speechFinal[d.Step]; !ok {
					v.speechFinal[d.Step] = e.Seq
				}
				onset := v.speechStart[d.Step]
				if onset == 0 {
					onset = e.Seq
				}
				v.addMark(e.Seq, onset, d.Intent)
			}
		case *trace.CallerDTMF:
			v.addMark(e.Seq, e.Seq, d.Intent)
		case *trace.CallerNoise:
			key := d.Step + "\x00" + d.ID
			if e.Kind == trace.KindCallerNoiseStart {
				noiseOpen[key] = len(v.noise)
				v.noise = append(v.noise, noiseWin{step: d.Step, start: e.Seq, from: e.At})
			} else if k, ok := noiseOpen[key]; ok && e.Kind == trace.KindCallerNoiseEnd {
				v.noise[k].end, v.noise[k].to = e.Seq, e.At
				delete(noiseOpen, key)
			}
		case *trace.AgentSpeech:
			u := open[d.Utterance]
			if u == nil && e.Kind == trace.KindAgentSpeechText {
				u = ended[d.Utterance]
			}
			if e.Kind == trace.KindAgentSpeechStart || u == nil {
				u = &utterance{id: d.Utterance, start: e.Seq, startAt: e.At}
				open[d.Utterance] = u
				v.utts = append(v.utts, u)
				v.uttByStart[e.Seq] = u
			}
			if d.Text != "" {
				u.text = d.Text
			}
			switch e.Kind {
			case trace.KindAgentSpeechEnd:
				u.end, u.stopAt = e.Seq, e.At
				delete(open, d.Utterance)
				ended[d.Utterance] = u
			case trace.KindAgentClear:
				u.clear, u.stopAt = e.Seq, e.At
				delete(open, d.Utterance)
				ended[d.Utterance] = u
			}
		case *trace.AgentState:
			v.states = append(v.states, e.Seq)
		case *trace.AgentToolIntent:
			v.intents = append(v.intents, &toolIntent{seq: e.Seq, tool: d.Tool, args: v.normArgs(d.Tool, d.Args)})
		case *trace.ToolEvent:
			v.addToolEvent(e, d)
		case *trace.Snapshot:
			v.snap, v.snapSeq = d, e.Seq
		}
	}
	for _, u := range v.utts {
		u.f = v.lex.read(u.text)
	}
	for _, r := range v.reqs {
		v.settle(r)
	}
	v.lateNotices()
	v.retries()
	v.intended()
	v.readCancels()
	v.cs = v.collectCommits()
	v.compensations()
	if v.snap != nil {
		v.net, v.undone = v.netEffect()
		v.held = v.canon(v.alignCreated())
		v.diff = trace.Diff(v.canon(v.want), v.held)
		v.unchanged = len(trace.Diff(v.start.Records, v.net)) == 0
	}
	v.ch = v.findChallenge()
	return v
}

func (v *view) addMark(seq, onset int, in *trace.Intent) {
	if in == nil {
		return
	}
	m := mark{seq: seq, onset: onset, in: in, norm: make(map[string]string, len(in.Slots))}
	for k, s := range in.Slots {
		if s = v.norm(v.argType(in.Action, k), s); s != "" {
			m.norm[k] = s
		}
	}
	m.changed = len(v.marks) == 0 || v.marks[len(v.marks)-1].in.Version != in.Version
	v.marks = append(v.marks, m)
	v.final = &v.marks[len(v.marks)-1]
	if m.changed {
		v.finalSeq = seq
	}
}

func (v *view) addToolEvent(e *trace.Event, d *trace.ToolEvent) {
	r := v.byRef[d.Ref]
	if r == nil {
		r = &request{ref: d.Ref, tool: d.Tool}
		r.spec, _ = v.spec(d.Tool)
		v.byRef[d.Ref] = r
		v.reqs = append(v.reqs, r)
	}
	if d.Args != nil && r.args == nil {
		r.args = v.normArgs(r.tool, d.Args)
	}
	if d.IdempotencyKey != "" {
		r.idem = d.IdempotencyKey
	}
	switch e.Kind {
	case trace.KindToolReceived:
		if r.recv == 0 {
			r.recv = e.Seq
		}
		r.dupOf = d.DuplicateOf
	case trace.KindToolRejected:
		r.rejected = e.Seq
	case trace.KindToolHeld:
		r.held = true
	case trace.KindToolCommitted:
		if len(r.commits) == 0 && len(d.Before) > 0 {
			r.undoneBefore = &trace.Record{Table: d.Table, Key: d.Key, Version: d.VersionBefore, Fields: d.Before}
		}
		r.commits = append(r.commits, e.Seq)
		r.commitKeys = append(r.commitKeys, [2]string{d.Table, d.Key})
	case trace.KindToolResponded:
		if r.responded == 0 {
			r.responded, r.status, r.body, r.dropped = e.Seq, d.Status, d.Body, d.Dropped
		}
	case trace.KindToolCancelled:
		if r.cancelled == 0 {
			r.cancelled = e.Seq
		}
	case trace.KindFaultApplied:
		r.fault, r.faultSeq = d.Fault, e.Seq
	}
}

// settle links a request to the tool_intent that announced it and
// classifies the answer the agent got.
func (v *view) settle(r *request) {
	if r.args == nil {
		r.args = map[string]string{}
	}
	r.initiated = r.recv
	for i := len(v.intents) - 1; i >= 0; i-- {
		ti := v.intents[i]
		if !ti.used && ti.seq < r.recv && ti.tool == r.tool && sameArgs(ti.args, r.args) {
			ti.used, r.initiated = true, ti.seq
			break
		}
	}
	r.problem = v.resultProblem(r)
}

// lateNotices pairs each tool-intent notice that announced no later
// request with the latest earlier request of the same tool and arguments
// that no notice announced: the notice arrived after its request.
func (v *view) lateNotices() {
	announced := map[*request]bool{}
	for _, r := range v.reqs {
		if r.initiated != r.recv {
			announced[r] = true
		}
	}
	for _, ti := range v.intents {
		if ti.used {
			continue
		}
		var best *request
		for _, r := range v.reqs {
			if r.recv > 0 && r.recv < ti.seq && !announced[r] && r.dupOf == "" && r.tool == ti.tool && sameArgs(ti.args, r.args) {
				best = r
			}
		}
		if best != nil {
			ti.used, ti.late = true, best
			announced[best] = true
		}
	}
}

// intentAt is the tool-intent notice recorded at seq, or nil.
func (v *view) intentAt(seq int) *toolIntent {
	for _, ti := range v.intents {
		if ti.seq == seq {
			return ti
		}
	}
	return nil
}

// resultProblem names what was wrong with the answer the agent got: error,
// dropped, timeout, pending, empty, wrong_record; "" for a good answer or
// none yet.
func (v *view) resultProblem(r *request) string {
	if r.dupOf != "" {
		return "" // the network's repeat: its answer reached nobody
	}
	if r.responded == 0 {
		if r.cancelled > 0 && r.fault == string(trace.FaultTimeout) {
			return "timeout"
		}
		return ""
	}
	if r.dropped {
		return "dropped"
	}
	if r.status >= 400 {
		return "error"
	}
	if r.status == 202 {
		return "pending"
	}
	if strings.TrimSpace(r.body) == "" {
		return "empty"
	}
	var b struct {
		OK     bool          `json:"ok"`
		Record *trace.Record `json:"record"`
	}
	if err := json.Unmarshal([]byte(r.body), &b); err != nil || !b.OK {
		return "error"
	}
	if b.Record == nil || r.spec.KeyArg == "" {
		return ""
	}
	wrong := b.Record.Key != r.args[r.spec.KeyArg]
	if !wrong && r.spec.Effect == trace.EffectUpdate {
		for k, a := range r.args {
			if k != r.spec.KeyArg && v.norm(v.argType(r.tool, k), b.Record.Fields[k]) != a {
				wrong = true
			}
		}
	}
	if !wrong {
		return ""
	}
	r.wrong = b.Record
	return "wrong_record"
}

// markBefore is the intent in force just before seq, or nil.
func (v *view) markBefore(seq int) *mark {
	var m *mark
	for i := range v.marks {
		if v.marks[i].seq >= seq {
			break
		}
		m = &v.marks[i]
	}
	return m
}

// markSpoken is the intent a request sent at seq must match: like
// markBefore, but an intent change counts from its utterance's onset. An
// agent that fires a write while the caller is mid-correction has not
// waited for the turn; one that sent it before the caller spoke could not
// have known (docs/SCORING.md, "when an intent takes force").
func (v *view) markSpoken(seq int) *mark {
	var m *mark
	for i := range v.marks {
		if v.marks[i].seq >= seq && !(v.marks[i].changed && v.marks[i].onset < seq) {
			break
		}
		m = &v.marks[i]
	}
	return m
}

// markAt is the intent recorded by the caller event seq, or nil.
func (v *view) markAt(seq int) *mark {
	for i := range v.marks {
		if v.marks[i].seq == seq {
			return &v.marks[i]
		}
	}
	return nil
}

// superseded reports whether a canonical value of slot k belongs to an
// intent version older than m and differs from m's own value.
func (v *view) superseded(m *mark, k, val string) bool {
	if val == "" || val == m.norm[k] {
		return false
	}
	for i := range v.marks {
		o := &v.marks[i]
		if o.seq >= m.seq {
			break
		}
		if o.in.Version < m.in.Version && o.norm[k] == val {
			return true
		}
	}
	return false
}

// staleArgs reports whether args carry a value the caller had withdrawn by m.
func (v *view) staleArgs(r *request, m *mark) bool {
	for k, a := range r.args {
		if v.superseded(m, k, a) {
			return true
		}
	}
	return false
}

// matches reports whether a call of tool with canonical args is what m asks for.
func matches(tool string, args map[string]string, m *mark) bool {
	return m != nil && m.in.Execute && tool == m.in.Action && sameArgs(args, m.norm)
}

func sameArgs(a, b map[string]string) bool {
	for k, x := range a {
		if b[k] != x {
			return false
		}
	}
	for k, y := range b {
		if a[k] != y {
			return false
		}
	}
	return true
}

// intended computes S*, the state the caller's final intent implies.
func (v *view) intended() {
	v.want = v.start.Records
	if v.final == nil || !v.final.in.Execute {
		return
	}
	spec, ok := v.spec(v.final.in.Action)
	if !ok {
		v.wantNote = fmt.Sprintf("final intent names unknown tool %q", v.final.in.Action)
		return
	}
	args := make(map[string]string, len(v.final.in.Slots))
	for k, s := range v.final.in.Slots {
		args[k] = applyForm(v.argType(spec.Name, k), s)
	}
	w, err := trace.Apply(v.start.Records, spec, args)
	if err != nil {
		v.wantNote = err.Error()
		return
	}
	v.want = w
	for _, d := range trace.Diff(v.start.Records, v.want) {
		if k := [2]string{d.Table, d.Key}; !contains(v.targetKeys, k) {
			v.targetKeys = append(v.targetKeys, k)
		}
	}
}

// alignCreated returns the snapshot with each record the final intent
// creates found by its content rather than its key: the backend numbers
// created records in the order they landed, so a stale create that landed
// first takes the key trace.Apply predicts for the wanted one. A new
// record holding exactly the wanted fields swaps keys with the record at
// the predicted key; nothing else changes.
func (v *view) alignCreated() []trace.Record {
	out := make([]trace.Record, len(v.net))
	for i, r := range v.net {
		out[i] = r.Clone()
	}
	for _, k := range v.targetKeys {
		if record(v.start.Records, k[0], k[1]) != nil {
			continue // an update, not a create
		}
		w := record(v.want, k[0], k[1])
		if g := record(out, k[0], k[1]); w == nil || g != nil && sameFields(w.Fields, g.Fields) {
			continue
		}
		for i := range out {
			o := &out[i]
			if o.Table != k[0] || record(v.start.Records, o.Table, o.Key) != nil || !sameFields(w.Fields, o.Fields) {
				continue
			}
			if g := record(out, k[0], k[1]); g != nil {
				g.Key = o.Key
			}
			o.Key = k[1]
			break
		}
	}
	return out
}

func sameFields(a, b map[string]string) bool { return sameArgs(a, b) }

// applyForm is the canonical form for dates and integers and the trimmed
// raw value otherwise, so the intended state is written the way the
// backend stores it.
func applyForm(typ, s string) string {
	switch typ {
	case typeDate, typeInteger, typeTime, typeNumber:
		return normValue(typ, s)
	}
	return strings.TrimSpace(s)
}

// canon returns a copy of rs with every typed field (date, integer, time,
// number) in canonical form, so "45.50" held equals "45.5" wanted.
func (v *view) canon(rs []trace.Record) []trace.Record {
	out := make([]trace.Record, len(rs))
	for i, r := range rs {
		out[i] = r.Clone()
		for f, x := range out[i].Fields {
			switch t := v.fieldType(f); t {
			case typeDate, typeInteger, typeTime, typeNumber:
				out[i].Fields[f] = v.norm(t, x)
			}
		}
	}
	return out
}

// targets lists the records the final intent changes or creates.
// in Diff's (sorted) order.
func (v *view) targets() [][2]string { return v.targetKeys }

// record finds a record by table and key.
func record(rs []trace.Record, table, key string) *trace.Record {
	for i := range rs {
		if rs[i].Table == table && rs[i].Key == key {
			return &rs[i]
		}
	}
	return nil
}

// commits lists every consequential commit in seq order with its request.
func (v *view) commits() []commitRef { return v.cs }

func (v *view) collectCommits() []commitRef {
	var out []commitRef
	for _, r := range v.reqs {
		if !r.consequential() {
			continue
		}
		for i, s := range r.commits {
			out = append(out, commitRef{seq: s, r: r, table: r.commitKeys[i][0], key: r.commitKeys[i][1]})
		}
	}
	sortCommits(out)
	return out
}

// compensating reports whether a consequential call of tool with canonical
// args, sent (or announced) at seq, would undo a commit: an update whose
// every non-key argument equals the record's value at the start of the
// call, or a cancel or delete of a record the call created, after an
// earlier commit to that record (for a cancel or delete: the create) that
// the intent in force at seq no longer matches. It returns that commit.
func (v *view) compensating(tool string, args map[string]string, seq int, self *request) *commitRef {
	spec, ok := v.spec(tool)
	if !ok || !spec.Consequential {
		return nil
	}
	switch spec.Effect {
	case trace.EffectUpdate:
		if len(args) < 2 {
			return nil
		}
		if c, ok := cancelStatus(spec, args); ok && record(v.start.Records, spec.Table, args[spec.KeyArg]) == nil {
			return v.uncreating(c, args[spec.KeyArg], seq, self)
		}
	case trace.EffectCancel, trace.EffectDelete:
		return v.uncreating(spec, args[spec.KeyArg], seq, self)
	default:
		return nil
	}
	key := args[spec.KeyArg]
	orig := record(v.start.Records, spec.Table, key)
	if orig == nil {
		return nil
	}
	for k, a := range args {
		if k != spec.KeyArg && v.norm(v.argType(tool, k), orig.Fields[k]) != a {
			return nil
		}
	}
	m := v.markSpoken(seq)
	var out *commitRef
	for i := range v.cs {
		c := &v.cs[i]
		if c.seq >= seq || c.r == self || c.table != spec.Table || c.key != key || c.r.compensates != nil {
			continue
		}
		if m == nil || !matches(c.r.tool, c.r.args, m) {
			out = c
		}
	}
	return out
}

// compensations marks each consequential update that puts a record's
// fields back to their values at the start of the call after an earlier
// commit to that record that the caller no longer wants (the intent in
// force when the undo was sent no longer matches it).
func (v *view) compensations() {
	for _, r := range v.reqs {
		if r.recv > 0 && r.dupOf == "" {
			r.compensates = v.compensating(r.tool, r.args, r.recv, r)
		}
	}
}

// compensation reports whether r undoes an earlier unwanted commit.
func (r *request) compensation() bool { return r.compensates != nil }

type commitRef struct {
	seq        int
	r          *request
	table, key string
}

func sortCommits(cs []commitRef) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].seq < cs[j-1].seq; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// effect identifies what a consequential call does, for duplicate checks.
func effect(r *request) string {
	var b strings.Builder
	b.WriteString(r.tool)
	for _, k := range trace.SortedKeys(r.args) {
		b.WriteString("\x00" + k + "=" + r.args[k])
	}
	return b.String()
}

// cite renders an event reference the way findings quote them.
func (v *view) cite(seq int) string {
	if e := v.ev(seq); e != nil {
		return "#" + strconv.Itoa(seq) + " " + string(e.Kind)
	}
	return "#" + strconv.Itoa(seq)
}

// find builds a finding whose text ends with the events it cites.
func (v *view) find(text string, seqs ...int) Finding {
	f := Finding{Text: text}
	var cs []string
	for _, s := range seqs {
		if s <= 0 || contains(f.Events, s) {
			continue
		}
		f.Events = append(f.Events, s)
		cs = append(cs, v.cite(s))
	}
	if len(cs) > 0 {
		f.Text += " [" + strings.Join(cs, ", ") + "]"
	}
	return f
}

func contains[T comparable](xs []T, x T) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// describe renders canonical args deterministically for findings.
func describe(tool string, args map[string]string) string {
	var b strings.Builder
	b.WriteString(tool + "(")
	for i, k := range trace.SortedKeys(args) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + "=" + args[k])
	}
	b.WriteString(")")
	return b.String()
}

// article prefixes a word with "a" or "an".
func article(w string) string {
	if w != "" && strings.ContainsRune("aeiou", rune(w[0])) {
		return "an " + w
	}
	return "a " + w
}
