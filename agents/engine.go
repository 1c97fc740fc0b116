package agents

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

type jobState int

const (
	jobPreparing jobState = iota // building the call (Prepare)
	jobHeld                      // built; waiting for the caller's turn to end
	jobRunning                   // worker running
)

// job is the engine's one piece of tool work at a time.
type job struct {
	plan   plan
	state  jobState
	cancel context.CancelFunc
	spoke  bool // ConfirmsOnAccept already said "Done"
	// gate: a worker waiting to send a consequential write until the
	// caller's turn settles (nil: none waiting).
	gate chan bool
	// readBack is the utterance reading the call back; waitBack holds the
	// call until the caller has heard it out and had the chance to answer
	// (the generic careful agent, confirmFirst).
	readBack *utterance
	waitBack bool
}

type utterance struct {
	id      string
	words   []string
	said    int
	outcome bool // an answer to the caller's request, repeated if cut off
	// wordTime is its speaking time per word: the configured WordTime, or
	// in audio mode its audio's length shared among its words.
	wordTime time.Duration
	// answer is set on a write's answer, so it can be re-worded while it
	// waits behind the caller's turn.
	answer *answered
	// began is when it started: its word k is due at began + k·wordTime.
	began time.Time
}

// answered is what an answer utterance reports.
type answered struct {
	out outcome
	p   plan
}

// engine is the agent's brain for one call. Only the session loop touches
// it; workers and timers talk to it through the inbox.
type engine struct {
	cfg    Config // durations already scaled once start arrives
	base   Config // durations at scale 1.0
	client *http.Client
	s      *session
	// pace is the call's clock (cfg.Clock and base.Clock): it measures
	// how late the call's timers and words ran.
	pace *pace

	started bool
	callID  string
	// The call's calendar from start ("" when the caller sent none): what
	// the caller's "today" is. Kept for relative dates; unused so far.
	callDate, timeZone string
	tools              *toolClient
	catalog            []trace.ToolSpec
	dom                domain

	// Versioned slot state: version rises on every change.
	version    int
	stateDirty bool // a version not yet self-reported
	action     string
	execute    bool
	slots      map[string]string
	handled    int // last version answered (done, failed, refused, asked)

	// Turn-taking.
	// callerOpen holds the caller's utterances begun and not yet final:
	// a turn of several utterances opens the next before closing the
	// last (docs/PROTOCOL.md, "speech"), and ends only when none is open.
	callerOpen map[string]bool
	eotPending bool
	eotGen     int
	eotStop    func() bool

	// Tool work.
	nextJob  int
	job      *job
	prepStop func() bool
	orig     map[string]map[string]string // record fields before the first write
	created  map[string]trace.ToolSpec    // records this call created: key → the create
	pending  map[string]bool              // records a write was accepted for, never seen landed
	touched  map[string]map[string]bool   // fields this call's writes may have changed

	// Speech.
	nextUtt       int
	speaking      *utterance
	queue         []*utterance
	wordStop      func() bool
	repeat        []string // answers cut off by a barge-in
	repeatVersion int
}

func newEngine(cfg Config, client *http.Client, s *session) *engine {
	p := newPace(cfg.Clock)
	cfg.Clock = p
	return &engine{
		cfg: cfg, base: cfg, client: client, s: s, pace: p,
		slots:      map[string]string{},
		callerOpen: map[string]bool{},
		orig:       map[string]map[string]string{},
		created:    map[string]trace.ToolSpec{},
		pending:    map[string]bool{},
		touched:    map[string]map[string]bool{},
	}
}

func (e *engine) has(f Flaw) bool { return e.cfg.Has(f) }

func (e *engine) stopTimers() {
	for _, stop := range []func() bool{e.eotStop, e.prepStop, e.wordStop} {
		if stop != nil {
			stop()
		}
	}
}

func (e *engine) after(d time.Duration, kind timerKind, id int) func() bool {
	return e.cfg.Clock.AfterFunc(d, func() { e.s.post(timerEvent{kind: kind, id: id}) })
}

// handle reacts to one inbox event; true ends the call.
func (e *engine) handle(ev any) bool {
	switch ev := ev.(type) {
	case closedEvent:
		return true
	case frameEvent:
		if _, text := e.s.tw.(textWire); text {
			e.pace.wireAt(&e.pace.reads)
		}
		return e.frame(ev.msg)
	case timerEvent:
		e.timer(ev)
	case acceptedEvent:
		e.accepted(ev.job, ev.values)
	case doneEvent:
		e.done(ev.job, ev.out)
	case gateEvent:
		e.gateWrite(ev)
	}
	return false
}

func (e *engine) frame(m native.Message) bool {
	if m.Event == native.EventStop {
		return true
	}
	if m.Event == native.EventStart {
		if m.Start != nil && !e.started {
			e.start(m.Start)
		}
		return false
	}
	if !e.started {
		return false
	}
	switch {
	case m.Event == native.EventSpeech && m.Speech != nil:
		switch m.Speech.Phase {
		case native.PhaseOnset, native.PhasePartial:
			if !e.callerSpeaking() && m.Speech.Phase == native.PhaseOnset {
				e.bargeIn(true)
			}
			e.callerOpen[m.Speech.ID] = true
			e.stopEOT()
		case native.PhaseFinal:
			delete(e.callerOpen, m.Speech.ID)
			e.hear(m.Speech.Text)
			if !e.callerSpeaking() {
				e.reportState()
				e.startEOT()
			}
		}
	case m.Event == native.EventSound && m.Sound != nil:
		if m.Sound.Phase == native.PhaseOnset && e.has(AnySoundBargesIn) {
			e.bargeIn(false)
		}
	case m.Event == native.EventDTMF && m.DTMF != nil:
		// Keypad entry: the digits without the # or * that end them.
		digits := strings.Trim(m.DTMF.Digits, "#*")
		if digits != "" {
			e.hear(e.dom.dtmf(digits))
			e.startEOT()
		}
	}
	return false // unknown events are ignored
}

func (e *engine) start(st *native.Start) {
	e.started = true
	scale := st.TimeScale
	if scale <= 0 {
		scale = 1
	}
	sc := func(d time.Duration) time.Duration { return time.Duration(float64(d) * scale) }
	e.cfg.EndOfTurn = sc(e.base.EndOfTurn)
	e.cfg.Prepare = sc(e.base.Prepare)
	e.cfg.WordTime = sc(e.base.WordTime)
	e.cfg.ToolTimeout = sc(e.base.ToolTimeout)
	e.cfg.RetryBackoff = sc(e.base.RetryBackoff)
	e.cfg.PollEvery = sc(e.base.PollEvery)
	e.cfg.Confirm = sc(e.base.Confirm)
	e.callID = st.CallID
	e.pace.setScale(scale)
	e.cfg.paces.put(st.CallID, e.pace)
	e.callDate, e.timeZone = st.CallDate, st.TimeZone
	e.catalog = append([]trace.ToolSpec(nil), st.Tools.Catalog...)
	if len(e.catalog) == 0 {
		e.catalog = append(e.catalog, e.cfg.Catalogue...)
	}
	if len(e.catalog) == 0 {
		e.catalog = defaultCatalog()
	}
	if e.cfg.Generic || !isOrderCatalog(e.catalog) {
		e.dom = newGenericDomain(e.catalog, st.CallDate, st.TimeZone)
	} else {
		e.dom = orderDomain{catalog: e.catalog}
	}
	e.tools = &toolClient{http: e.client, clock: e.cfg.Clock, pace: e.pace, baseURL: st.Tools.BaseURL, token: st.Tools.Token, timeout: e.cfg.ToolTimeout}
	e.s.send(native.Message{Event: native.EventAck, Ack: &native.Ack{TimeScale: scale, Agent: e.cfg.Name, ToolIntents: true}})
	e.say(greeting, false)
}

// --- understanding ---

// hear applies one final to the slot state; a change bumps the version,
// is self-reported and invalidates work built from the old version.
func (e *engine) hear(text string) {
	h := e.dom.understand(text, e.action)
	changed := false
	if h.negate && !e.has(IgnoresNegation) {
		if e.execute {
			e.execute = false
			changed = true
		}
	} else {
		if h.action != "" && h.action != e.action && (e.action == "" || !e.has(IgnoresCorrections)) {
			e.action = h.action
			changed = true
		}
		for _, k := range trace.SortedKeys(h.slots) {
			v := h.slots[k]
			if e.slots[k] == v || (e.slots[k] != "" && e.has(IgnoresCorrections)) {
				continue
			}
			e.slots[k] = v
			changed = true
		}
		if !e.execute && e.action != "" && (h.action != "" || len(h.slots) > 0 || h.proceed) {
			e.execute = true
			changed = true
		}
	}
	if !changed {
		return
	}
	e.version++
	if !e.has(KeepsSentCalls) {
		// An answer queued behind the caller's turn speaks for the old
		// version: drop it; the new version gets its own answer.
		kept := e.queue[:0]
		for _, u := range e.queue {
			if !u.outcome {
				kept = append(kept, u)
			}
		}
		e.queue = kept
	} else {
		// The naive pipeline hears perfectly: an answer still waiting to
		// be spoken is worded from what it heard last, and that answer
		// stands for the new version too — it never acts on it.
		for _, u := range e.queue {
			if u.answer != nil && u.said == 0 {
				u.words = strings.Fields(e.answerText(u.answer.out, true, u.answer.p))
				e.handled = e.version
			}
		}
	}
	e.stateDirty = true
	// Withdraw first, report after: the withdrawal's close is in the
	// backend's socket before the report leaves (spawn), so a harness that
	// lets a held write go at the report finds it already withdrawn.
	e.invalidate()
	if !e.callerSpeaking() {
		e.reportState()
	}
}

// reportState self-reports the working state, once per caller turn: at
// the final that leaves no caller utterance open (hear, frame). A final
// heard while the turn's next utterance is already open (an early
// correction's onset precedes the request's final, docs/PROTOCOL.md
// "speech") reports nothing: that report would carry the words the open
// utterance is replacing, and as the caller's next frames are recorded
// before the agent's report is read, it would stand as the agent's first
// act after the correction (stale_working_state) whenever the recorder's
// reader ran late. Reports are deduplicated by stateDirty.
func (e *engine) reportState() {
	if !e.stateDirty {
		return
	}
	e.stateDirty = false
	pending := ""
	if e.execute {
		pending = e.action
	}
	e.s.send(native.Message{Event: native.EventState, State: &native.State{Version: e.version, Slots: copyMap(e.slots), Pending: pending}})
}

// invalidate reacts to a version change while tool work exists.
func (e *engine) invalidate() {
	j := e.job
	if j == nil {
		return
	}
	switch j.state {
	case jobPreparing:
		if !e.has(KeepsBuiltCalls) {
			e.prepStop()
			e.job = nil
		}
	case jobHeld:
		e.job = nil
	case jobRunning:
		e.openGate(j, false) // a write not yet sent is built, not sent: drop it
		if !e.has(KeepsSentCalls) {
			j.cancel() // the backend sees the request go away
		}
	}
}

// --- turn-taking and decisions ---

func (e *engine) startEOT() {
	e.stopEOT()
	e.eotGen++
	e.eotPending = true
	e.eotStop = e.after(e.cfg.EndOfTurn, timerEOT, e.eotGen)
}

func (e *engine) stopEOT() {
	if e.eotStop != nil {
		e.eotStop()
	}
	e.eotPending = false
}

func (e *engine) callerSpeaking() bool { return len(e.callerOpen) > 0 }

func (e *engine) settled() bool { return !e.callerSpeaking() && !e.eotPending }

func (e *engine) timer(ev timerEvent) {
	switch ev.kind {
	case timerEOT:
		if ev.id == e.eotGen && e.eotPending {
			e.eotPending = false
			e.decide()
		}
	case timerPrepare:
		if e.job != nil && e.job.plan.id == ev.id && e.job.state == jobPreparing {
			e.prepared()
		}
	case timerWord:
		if e.speaking != nil && e.nextUtt == ev.id {
			e.word()
		}
	case timerConfirm:
		if j := e.job; j != nil && j.plan.id == ev.id && j.waitBack {
			j.waitBack = false
			if j.state == jobHeld && j.plan.version == e.version && e.settled() {
				e.launch(j)
			}
		}
	}
}

// decide acts on the caller's settled turn.
func (e *engine) decide() {
	if !e.settled() {
		return
	}
	if e.repeat != nil {
		if e.version == e.repeatVersion {
			for _, t := range e.repeat {
				e.say(t, true)
			}
		}
		e.repeat = nil
	}
	e.kick()
	if j := e.job; j != nil {
		if !e.readBackOpen(j) {
			j.waitBack = false // the caller has answered the read-back, or cut it short
		}
		if j.state != jobHeld {
			e.openGate(j, j.plan.version == e.version)
			return // its prepare timer or its worker will come back here
		}
		if j.plan.version == e.version {
			if e.readBackOpen(j) {
				return // the caller answers once it is heard out
			}
			j.waitBack = false
			e.launch(j)
			return
		}
		e.job = nil
	}
	if e.version == e.handled || e.action == "" {
		return
	}
	key := e.slots[e.dom.keyArg(e.action)]
	if !e.execute {
		e.handled = e.version
		if !e.has(KeepsSentCalls) && len(e.touched)+len(e.created) > 0 {
			e.nextJob++
			e.launch(&job{plan: e.newPlan(e.nextJob, true, "", nil)})
			return
		}
		e.say(e.dom.nothingChanged(e.action, key), true)
		return
	}
	args := e.argsFor(e.action)
	if q := e.dom.ask(e.action, args); q != "" {
		e.handled = e.version
		e.say(q, false)
		return
	}
	e.prepare(args)
}

// argsFor builds a tool's arguments from the slots (the domain keeps only
// those the catalogue declares).
func (e *engine) argsFor(tool string) map[string]string { return e.dom.argsFor(tool, e.slots) }

func declares(spec trace.ToolSpec, arg string) bool {
	for _, a := range spec.Args {
		if a.Name == arg {
			return true
		}
	}
	return false
}

// prepare reads back, announces the intent and builds the call from a
// snapshot of the current version.
func (e *engine) prepare(args map[string]string) {
	e.nextJob++
	p := e.newPlan(e.nextJob, false, e.action, args)
	e.job = &job{plan: p, state: jobPreparing, waitBack: e.confirmFirst()}
	e.job.readBack = e.say(e.dom.readBack(e.action, args), false)
	e.s.send(native.Message{Event: native.EventToolIntent, ToolIntent: &native.ToolIntent{Tool: e.action, Args: copyMap(args)}})
	e.prepStop = e.after(e.cfg.Prepare, timerPrepare, p.id)
}

// prepared: the call is built. Careful sends it only from a stable version
// in a settled turn; KeepsBuiltCalls sends whatever it built.
func (e *engine) prepared() {
	j := e.job
	switch {
	case e.has(KeepsBuiltCalls):
		e.launch(j)
	case j.plan.version != e.version:
		e.job = nil
		e.decide()
	case !e.settled() || j.waitBack:
		j.state = jobHeld // decide (or the read-back's end) launches it if the turn changes nothing
	default:
		e.launch(j)
	}
}

func (e *engine) newPlan(id int, negate bool, tool string, args map[string]string) plan {
	p := plan{id: id, callID: e.callID, version: e.version, negate: negate, args: args}
	p.tool, _ = trace.Catalog(e.catalog, tool)
	if p.tool.Name == "" && tool != "" {
		p.tool = builtinSpec(tool)
	}
	ref := tool
	if ref == "" {
		ref = e.action // a negation puts back what the action in force wrote
	}
	p.key = e.dom.keyArg(ref)
	p.read, p.update = e.dom.readTool(ref), e.dom.updateTool(ref)
	if p.tool.Effect == trace.EffectCreate {
		for _, t := range e.catalog {
			if t.Effect == trace.EffectRead && t.Table == p.tool.Table && t.KeyArg != "" && keyOnly(t) {
				p.created = t
				break
			}
		}
	}
	if !e.has(KeepsSentCalls) {
		// Careful knows what it may have changed and what was there before,
		// so a write overtaken by a correction can be put back.
		order := args[p.key]
		p.preRead = targets(p.tool) && e.orig[order] == nil
		p.lookups = e.dom.lookups(tool, args)
		for _, k := range trace.SortedKeys(e.created) {
			// A withdrawal takes back every create; a corrected create
			// takes back the ones it replaces.
			if negate || p.tool.Name == e.created[k].Name {
				u := e.dom.undoTool(e.created[k].Table)
				p.undo = append(p.undo, undo{tool: u, key: k, args: e.dom.argsFor(u.Name, map[string]string{u.KeyArg: k})})
			}
		}
		if e.confirmFirst() {
			p.awaitLanding = copyMap(e.pending)
			p.reRead = true
			p.checkAnswer = true
		}
		p.restore = map[string]map[string]string{}
		for o, fields := range e.touched {
			for f := range fields {
				if v, ok := e.orig[o][f]; ok {
					if p.restore[o] == nil {
						p.restore[o] = map[string]string{}
					}
					p.restore[o][f] = v
				}
			}
		}
	}
	return p
}

func (e *engine) launch(j *job) {
	j.state = jobRunning
	e.job = j
	id := j.plan.id
	w := &worker{cfg: e.cfg, client: e.tools, accepted: func(v map[string]string) { e.s.post(acceptedEvent{job: id, values: v}) }}
	if !e.has(KeepsBuiltCalls) {
		w.gate = func(ctx context.Context) bool {
			reply := make(chan bool, 1)
			e.s.post(gateEvent{job: id, reply: reply})
			select {
			case ok := <-reply:
				return ok
			case <-ctx.Done():
				return false
			case <-e.s.ctx.Done():
				return false // the call is over: start no new write
			}
		}
	}
	j.cancel = e.s.spawn(e.s.ctx, w, j.plan)
}

// gateWrite answers a worker about to send a consequential write: a
// careful agent never sends one while the caller holds the floor (the
// caller may be changing the very values it carries), nor once the
// version it was built from is gone. Launching only in a settled turn is
// not enough: a pre-read or a retry can take long enough for the caller
// to start speaking before the write goes out.
func (e *engine) gateWrite(ev gateEvent) {
	j := e.job
	switch {
	case j == nil || j.plan.id != ev.job || j.plan.version != e.version:
		ev.reply <- false
	case e.settled():
		ev.reply <- true
	default:
		j.gate = ev.reply // decide opens it when the turn settles
	}
}

// openGate answers a waiting worker, if any.
func (e *engine) openGate(j *job, ok bool) {
	if j.gate != nil {
		j.gate <- ok
		j.gate = nil
	}
}

// accepted: the main write got a 202 (pending). With ConfirmsOnAccept the
// agent confirms its slots at once.
func (e *engine) accepted(id int, values map[string]string) {
	j := e.job
	if j == nil || j.plan.id != id || !e.has(ConfirmsOnAccept) || j.spoke {
		return
	}
	if j.plan.version != e.version && !e.has(KeepsSentCalls) {
		return // careful about staleness: this result is not the answer
	}
	j.spoke = true
	e.sayAnswer(outcome{kind: outDone, values: values}, j.plan.version != e.version, j.plan)
}

// done: the worker finished.
func (e *engine) done(id int, out outcome) {
	j := e.job
	if j == nil || j.plan.id != id {
		return
	}
	e.job = nil
	for o, f := range out.orig {
		if e.orig[o] == nil {
			e.orig[o] = f
		}
	}
	for o, fs := range out.touched {
		if e.touched[o] == nil {
			e.touched[o] = map[string]bool{}
		}
		for _, f := range fs {
			e.touched[o][f] = true
		}
	}
	for _, k := range out.created {
		if !j.plan.negate && j.plan.tool.Table != "" && e.dom.undoTool(j.plan.tool.Table).Name != "" {
			e.created[k] = j.plan.tool
		}
	}
	for _, k := range out.undone {
		delete(e.created, k)
	}
	for _, k := range out.accepted {
		if out.kind != outDone || j.plan.negate {
			e.pending[k] = true
		}
	}
	for _, o := range out.clean {
		if !(o == j.plan.args[j.plan.key] && !j.plan.negate) {
			delete(e.touched, o)
		}
	}
	stale := j.plan.version != e.version
	if out.kind == outCancelled || (stale && !e.has(KeepsSentCalls)) {
		e.decide() // rebuild from the current version once the turn settles
		return
	}
	if j.plan.negate {
		key := e.slots[e.dom.keyArg(e.action)]
		if out.kind == outDone {
			e.say(e.dom.nothingChanged(e.action, key), true)
		} else {
			e.say(e.dom.undoFailed(e.action, key), true)
		}
		return
	}
	e.handled = e.version
	if !j.spoke {
		e.sayAnswer(out, stale, j.plan)
	}
}

// sayAnswer queues the answer to a write (worded by answerText).
func (e *engine) sayAnswer(out outcome, stale bool, p plan) {
	e.queue = append(e.queue, &utterance{words: strings.Fields(e.answerText(out, stale, p)), outcome: true, answer: &answered{out: out, p: p}})
	e.kick()
}

// answerText words the result of a write. A stale result (KeepsSentCalls)
// is still the answer, but worded with the slots as they are now: the agent
// heard the correction, it just never acted on it.
func (e *engine) answerText(out outcome, stale bool, p plan) string {
	action, values := p.tool.Name, out.values
	if stale || values == nil {
		action, values = e.action, e.argsFor(e.action)
		if !e.execute {
			return e.dom.nothingChanged(action, values[e.dom.keyArg(action)])
		}
	}
	key := values[e.dom.keyArg(action)]
	switch out.kind {
	case outDone:
		if e.has(ConfirmsWrongValue) {
			values = e.dom.wrongValues(action, values)
		}
		return e.dom.done(action, values)
	case outUnconfirmed:
		return e.dom.unconfirmed(action, key)
	default:
		return e.dom.failed(action, key)
	}
}

// --- speech ---

func (e *engine) say(text string, outcome bool) *utterance {
	u := &utterance{words: strings.Fields(text), outcome: outcome}
	e.queue = append(e.queue, u)
	e.kick()
	return u
}

// confirmFirst: the generic careful agent sends a consequential call only
// once the caller has heard its read-back and could answer it.
func (e *engine) confirmFirst() bool {
	_, generic := e.dom.(*genericDomain)
	return generic && !e.has(KeepsBuiltCalls)
}

// readBackOpen reports a job whose read-back is still being said or
// waits to be.
func (e *engine) readBackOpen(j *job) bool {
	if j.readBack == nil {
		return false
	}
	if e.speaking == j.readBack {
		return true
	}
	for _, u := range e.queue {
		if u == j.readBack {
			return true
		}
	}
	return false
}

// kick starts the next queued utterance, never over a speaking caller
// (unless the agent ignores barge-in altogether).
func (e *engine) kick() {
	if e.speaking != nil || len(e.queue) == 0 || (e.callerSpeaking() && !e.has(IgnoresBargeIn)) {
		return
	}
	u := e.queue[0]
	e.queue = e.queue[1:]
	e.nextUtt++
	u.id = fmt.Sprintf("a%d", e.nextUtt)
	e.speaking = u
	e.s.send(native.Message{Event: native.EventAgentSpeech, AgentSpeech: &native.AgentSpeech{ID: u.id, Phase: native.PhaseStart}})
	u.wordTime = e.cfg.WordTime
	if d := e.s.speak(u.id, strings.Join(u.words, " ")); d > 0 && len(u.words) > 0 {
		u.wordTime = d / time.Duration(len(u.words))
	}
	u.began = e.pace.Now()
	e.wordStop = e.after(u.wordTime, timerWord, e.nextUtt)
}

// word: one more word has been spoken.
func (e *engine) word() {
	u := e.speaking
	if u.said < len(u.words) {
		u.said++
		e.pace.spoke(u.began.Add(time.Duration(u.said) * u.wordTime))
		e.s.send(native.Message{Event: native.EventAgentSpeech, AgentSpeech: &native.AgentSpeech{ID: u.id, Phase: native.PhaseText, Text: strings.Join(u.words[:u.said], " ")}})
	}
	if u.said < len(u.words) {
		// The next word is due on the utterance's schedule, not one word
		// time after this one fired: a timer's own lateness is not carried
		// into every later word (a late word is followed by the next one
		// at its time, or at once when that has passed).
		due := u.began.Add(time.Duration(u.said+1) * u.wordTime)
		e.wordStop = e.after(max(due.Sub(e.pace.Now()), 0), timerWord, e.nextUtt)
		return
	}
	e.s.send(native.Message{Event: native.EventAgentSpeech, AgentSpeech: &native.AgentSpeech{ID: u.id, Phase: native.PhaseEnd, Text: strings.Join(u.words, " ")}})
	e.speaking = nil
	if j := e.job; j != nil && j.readBack == u && j.waitBack {
		e.after(e.cfg.Confirm, timerConfirm, j.plan.id)
	}
	e.kick()
}

// bargeIn stops the current utterance. For speech, answers that were cut
// or still queued are kept to repeat if the caller's turn changes nothing;
// a sound (AnySoundBargesIn) just abandons the utterance.
func (e *engine) bargeIn(speech bool) {
	if speech && e.has(IgnoresBargeIn) {
		return
	}
	u := e.speaking
	if u == nil {
		return
	}
	if e.wordStop != nil {
		e.wordStop()
	}
	e.speaking = nil
	e.s.send(native.Message{Event: native.EventClear, Clear: &native.Clear{ID: u.id}})
	if !speech {
		e.kick()
		return
	}
	var keep []string
	if u.outcome {
		keep = append(keep, strings.Join(u.words, " "))
	}
	for _, q := range e.queue {
		if q.outcome {
			keep = append(keep, strings.Join(q.words, " "))
		}
	}
	e.queue = nil
	e.repeat, e.repeatVersion = keep, e.version
}
