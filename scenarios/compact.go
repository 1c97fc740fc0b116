package scenarios

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/callproof/callproof/trace"
)

// Compact setup defaults.
const (
	DefaultOrder    = "5590"
	DefaultDate     = "2026-12-03"
	DefaultQuantity = "2"
)

// Stages per category, in the order docs/SCENARIOS.md lists them.
func correctionStages() []string {
	return []string{"early", "during_tool_prep", "after_tool_sent", "during_retry"}
}

func interruptionStages() []string {
	return []string{"before_agent_finishes", "during_tool_prep", "after_tool_started", "background_noise"}
}

// Sounds a background_noise interruption may play.
func Sounds() []string { return []string{"cough", "door", "tv", "music", "traffic"} }

// Caller phrasing (docs/ARCHITECTURE.md); the reference agents parse it.
const (
	sayRequestDate     = "Hi, I'd like to change the delivery date on order %s to %s."
	sayRequestQuantity = "Hi, please change the quantity on order %s to %s."
	sayRequestShip     = "Hi, please ship order %s today."
	sayCorrectOrder    = "Sorry, I meant order %s."
	sayCorrectValue    = "Sorry, make that %s."
	sayNegate          = "No, wait, don't do that."
	sayInterruptValue  = "Wait, make that %s instead."
	sayInterruptStop   = "Wait, stop, don't change anything."
	sayInterruptGoOn   = "Yes, that's right, go ahead."
)

// request is the caller's opening utterance and the intent it sets.
type request struct {
	text, action string
	slots        map[string]string
}

func dateRequest(order string, d time.Time) request {
	return request{fmt.Sprintf(sayRequestDate, order, spokenDate(d)), "update_order",
		map[string]string{"order_number": order, "delivery_date": isoDate(d)}}
}

func quantityRequest(order, qty string) request {
	return request{fmt.Sprintf(sayRequestQuantity, order, qty), "update_order",
		map[string]string{"order_number": order, "quantity": qty}}
}

func shipRequest(order string) request {
	return request{fmt.Sprintf(sayRequestShip, order), "ship_order", map[string]string{"order_number": order}}
}

func ptr[T any](v T) *T { return &v }

func ms(n int) Duration { return Duration(time.Duration(n) * time.Millisecond) }

// setup reads a compact setup, reporting problems at setup.<key>.
type setup struct {
	b *builder
	m map[string]any
}

func (r setup) path(key string) string { return join("setup", key) }

func (r setup) has(key string) bool {
	v, ok := r.m[key]
	return ok && v != nil
}

// allow reports keys the category does not know.
func (r setup) allow(keys ...string) {
	var unknown []string
	for k := range r.m {
		if !slices.Contains(keys, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		r.b.add(r.path(k), "unknown setup key for category %s (want one of %s)", r.b.s.Category, strings.Join(keys, ", "))
	}
}

// str returns a scalar as text; def when absent; "" and a problem when
// required (def "") and absent.
func (r setup) str(key, def string, required bool) string {
	v, ok := r.m[key]
	if !ok || v == nil {
		if required {
			r.b.add(r.path(key), "required for category %s", r.b.s.Category)
		}
		return def
	}
	s, isStr := v.(string)
	if !isStr {
		r.b.add(r.path(key), "want a value, got %T", v)
		return def
	}
	return strings.TrimSpace(s)
}

func (r setup) oneOf(key, def string, required bool, allowed ...string) string {
	v := r.str(key, def, required)
	if v != "" && !slices.Contains(allowed, v) {
		r.b.add(r.path(key), "%q: want one of %s", v, strings.Join(allowed, ", "))
		return ""
	}
	return v
}

func (r setup) flag(key string, required bool) (bool, bool) {
	v, ok := r.m[key]
	if !ok || v == nil {
		if required {
			r.b.add(r.path(key), "required (true or false) for this stage")
		}
		return false, false
	}
	f, isBool := v.(bool)
	if !isBool {
		r.b.add(r.path(key), "want bool, got %v", v)
	}
	return f, isBool
}

func (r setup) integer(key string, def, lo, hi int) int {
	v := r.str(key, "", false)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		r.b.add(r.path(key), "%q: want an integer %d..%d", v, lo, hi)
		return def
	}
	return n
}

var (
	orderRe    = regexp.MustCompile(`^\d{4}$`)
	quantityRe = regexp.MustCompile(`^\d{1,3}$`)
)

func (r setup) order(key, def string, required bool) string {
	v := r.str(key, def, required)
	if v != "" && !orderRe.MatchString(v) {
		r.b.add(r.path(key), "%q: an order number is 4 digits", v)
	}
	return v
}

func (r setup) quantity(key, def string, required bool) string {
	v := r.str(key, def, required)
	if v != "" && !quantityRe.MatchString(v) {
		r.b.add(r.path(key), "%q: a quantity is 1-3 digits", v)
	}
	return v
}

func (r setup) date(key, def string, required bool) time.Time {
	d, _ := r.dateOK(key, def, required)
	return d
}

// dateOK is date that also says whether the value was usable.
func (r setup) dateOK(key, def string, required bool) (time.Time, bool) {
	v := r.str(key, def, required)
	if v == "" {
		v = DefaultDate
	}
	d, err := parseDate(v)
	if err != nil {
		r.b.add(r.path(key), "%v", err)
		d, _ = parseDate(DefaultDate)
		return d, false
	}
	return d, true
}

// initial reads initial_value, which restates (and must agree with) the
// request's own key such as order or date.
func (r setup) initial(own string) string {
	if r.has("initial_value") && r.has(own) && r.str("initial_value", "", false) != r.str(own, "", false) {
		r.b.add(r.path("initial_value"), "conflicts with setup.%s", own)
	}
	if r.has("initial_value") {
		return "initial_value"
	}
	return own
}

// compactSteps expands a compact setup into a step script and faults.
func (b *builder) compactSteps() ([]StepSpec, []FaultSpec) {
	s := b.s
	if s.Category == CatCombined || s.Category == CatDTMF {
		b.add("steps", "required for category %s (it has no compact form)", s.Category)
		return nil, nil
	}
	if s.Setup == nil {
		if slices.Contains(Categories(), s.Category) {
			b.add("setup", "required: write a compact setup or explicit steps")
		}
		return nil, nil
	}
	r := setup{b: b, m: s.Setup}
	switch s.Category {
	case CatCorrection:
		return b.correction(r)
	case CatInterruption:
		return b.interruption(r)
	case CatToolFailure:
		return b.toolFailure(r)
	}
	return nil, nil
}

func (b *builder) correction(r setup) ([]StepSpec, []FaultSpec) {
	r.allow("field", "initial_value", "corrected_value", "interrupt_stage", "order", "date", "quantity")
	field := r.oneOf("field", "", true, "order_number", "delivery_date", "quantity", "action")
	stage := r.oneOf("interrupt_stage", "", true, correctionStages()...)
	var req request
	var ch StepSpec
	switch field {
	case "order_number":
		from := r.order(r.initial("order"), DefaultOrder, false)
		to := r.order("corrected_value", "", true)
		if to != "" && to == from {
			b.add("setup.corrected_value", "equals the initial value: nothing is corrected")
		}
		req = dateRequest(from, r.date("date", DefaultDate, false))
		ch = StepSpec{ID: "correct", Do: "correct", Text: fmt.Sprintf(sayCorrectOrder, to), Slots: map[string]string{"order_number": to}}
	case "delivery_date":
		from := r.date(r.initial("date"), DefaultDate, false)
		to, ok := r.dateOK("corrected_value", "", true)
		if ok && r.has("corrected_value") && from.Equal(to) {
			b.add("setup.corrected_value", "equals the initial value: nothing is corrected")
		}
		req = dateRequest(r.order("order", DefaultOrder, false), from)
		ch = StepSpec{ID: "correct", Do: "correct", Text: fmt.Sprintf(sayCorrectValue, spokenDate(to)), Slots: map[string]string{"delivery_date": isoDate(to)}}
	case "quantity":
		from := r.quantity(r.initial("quantity"), DefaultQuantity, false)
		to := r.quantity("corrected_value", "", true)
		if to != "" && to == from {
			b.add("setup.corrected_value", "equals the initial value: nothing is corrected")
		}
		req = quantityRequest(r.order("order", DefaultOrder, false), from)
		ch = StepSpec{ID: "correct", Do: "correct", Text: fmt.Sprintf(sayCorrectValue, to), Slots: map[string]string{"quantity": to}}
	case "action":
		// Negation: the request names the action, the "correction" takes it back.
		order := r.order("order", DefaultOrder, false)
		switch r.oneOf("initial_value", "ship_order", false, "ship_order", "update_order") {
		case "update_order":
			req = dateRequest(order, r.date("date", DefaultDate, false))
		default:
			req = shipRequest(order)
		}
		r.oneOf("corrected_value", "none", false, "none")
		ch = StepSpec{ID: "negate", Do: "negate", Text: sayNegate}
	default:
		return nil, nil
	}
	if stage == "" {
		return nil, nil
	}
	return staged(stage, req, ch)
}

func (b *builder) interruption(r setup) ([]StepSpec, []FaultSpec) {
	r.allow("interrupt_stage", "invalidates", "field", "initial_value", "corrected_value", "sound", "order", "date", "quantity")
	stage := r.oneOf("interrupt_stage", "", true, interruptionStages()...)
	field := r.oneOf("field", "delivery_date", false, "delivery_date", "quantity")
	order := r.order("order", DefaultOrder, false)
	var req request
	var newValue string // as spoken
	var newSlot map[string]string
	switch field {
	case "quantity":
		req = quantityRequest(order, r.quantity(r.initial("quantity"), DefaultQuantity, false))
		if r.has("corrected_value") {
			q := r.quantity("corrected_value", "", false)
			newValue, newSlot = q, map[string]string{"quantity": q}
		}
	default:
		req = dateRequest(order, r.date(r.initial("date"), DefaultDate, false))
		if r.has("corrected_value") {
			d := r.date("corrected_value", "", false)
			newValue, newSlot = spokenDate(d), map[string]string{"delivery_date": isoDate(d)}
		}
	}
	if stage == "" {
		return nil, nil
	}
	if stage == "background_noise" {
		sound := r.oneOf("sound", "", true, Sounds()...)
		if inv, ok := r.flag("invalidates", false); ok && inv {
			b.add("setup.invalidates", "background noise never invalidates")
		}
		if r.has("corrected_value") {
			b.add("setup.corrected_value", "not used by background_noise")
		}
		// After the write lands, noise over the agent's confirmation: a
		// correct agent keeps talking.
		landed := StepSpec{ID: "landed", Do: "silence", Duration: ptr(Duration(0)),
			On: &TriggerSpec{Event: string(trace.KindToolCommitted), Match: &Match{Tool: req.action}}}
		noise := StepSpec{ID: "noise", Do: "noise", Sound: sound, Duration: ptr(ms(400)),
			On: &TriggerSpec{After: "landed", Event: string(trace.KindAgentSpeechStart), Delay: ms(200)}}
		return script(nil, ask(req), []StepSpec{landed, noise}, nil), nil
	}
	if r.has("sound") {
		b.add("setup.sound", "only for interrupt_stage background_noise")
	}
	inv, _ := r.flag("invalidates", true)
	ch := StepSpec{ID: "interrupt", Do: "interrupt", Invalidates: ptr(inv)}
	switch {
	case inv && newSlot != nil:
		ch.Text, ch.Slots = fmt.Sprintf(sayInterruptValue, newValue), newSlot
	case inv:
		ch.Text = sayInterruptStop
	default:
		if r.has("corrected_value") {
			b.add("setup.corrected_value", "a non-invalidating interruption changes nothing")
		}
		ch.Text = sayInterruptGoOn
	}
	return staged(stage, req, ch)
}

func (b *builder) toolFailure(r setup) ([]StepSpec, []FaultSpec) {
	r.allow("fault", "status", "delay_ms", "times", "tool", "record", "field", "order", "date", "quantity")
	var kinds []string
	for _, k := range faultKinds() {
		kinds = append(kinds, string(k))
	}
	kind := trace.FaultKind(r.oneOf("fault", "", true, kinds...))
	tool := r.oneOf("tool", "update_order", false, "update_order", "ship_order")
	order := r.order("order", DefaultOrder, false)
	var req request
	switch {
	case tool == "ship_order":
		if r.has("field") {
			b.add("setup.field", "not used with tool ship_order")
		}
		req = shipRequest(order)
	case r.oneOf("field", "delivery_date", false, "delivery_date", "quantity") == "quantity":
		req = quantityRequest(order, r.quantity("quantity", DefaultQuantity, false))
	default:
		req = dateRequest(order, r.date("date", DefaultDate, false))
	}
	f := FaultSpec{Kind: string(kind), Match: &Match{Tool: req.action}, Times: 1}
	delayed := kind == trace.FaultLatency || kind == trace.FaultLateSuccess
	withStatus := kind == trace.FaultStatus || kind == trace.FaultStatusAfter
	switch kind {
	case trace.FaultLatency:
		f.Delay, f.Times = ms(900), 0
	case trace.FaultLateSuccess:
		f.Delay, f.Times = ms(800), 0
	case trace.FaultStatus, trace.FaultStatusAfter:
		f.Status = 500
	case trace.FaultWrongRecord:
		f.Record = r.order("record", DecoyOrder, false)
	}
	only := func(key string, ok bool) bool {
		if r.has(key) && !ok {
			b.add(r.path(key), "not used by fault %s", kind)
			return false
		}
		return r.has(key)
	}
	if only("status", withStatus) {
		f.Status = r.integer("status", f.Status, 400, 599)
	}
	if only("delay_ms", delayed) {
		f.Delay = ms(r.integer("delay_ms", int(f.Delay.D()/time.Millisecond), 1, int(MaxFaultDelay/time.Millisecond)))
	}
	only("record", kind == trace.FaultWrongRecord)
	f.Times = r.integer("times", f.Times, 0, MaxFaultTimes)
	if kind == "" {
		return nil, nil
	}
	return script(nil, ask(req), nil, nil), []FaultSpec{f}
}

// ask is the caller's request. It waits for the end of the agent's first
// utterance (its greeting) so the request never barges in on it; an agent
// that does not greet is asked after the trigger's timeout.
func ask(req request) StepSpec {
	return StepSpec{ID: "ask", Do: "say", Text: req.text, Action: req.action, Slots: req.slots, Execute: ptr(true),
		On: &TriggerSpec{Event: string(trace.KindAgentSpeechEnd), Timeout: Duration(2 * time.Second)}}
}

// quietBound bounds the final wait_quiet of a compact script.
const quietBound = 12 * time.Second

// script assembles pre, ask, the challenge, post, then wait_quiet and hangup.
func script(pre []StepSpec, a StepSpec, challenge, post []StepSpec) []StepSpec {
	out := append(slices.Clone(pre), a)
	out = append(out, challenge...)
	out = append(out, post...)
	// The quiet wait outlasts an agent's tool timeout and a retry or two,
	// so a slow but correct agent is never hung up on mid-recovery.
	quiet := StepSpec{ID: "quiet", Do: "wait_quiet", On: &TriggerSpec{Timeout: Duration(quietBound)}}
	return append(out, quiet, StepSpec{ID: "bye", Do: "hangup"})
}

// holdMax bounds a staged hold; releaseWait is how long the release waits
// for the agent's answer to the challenge before letting the write through.
const (
	holdMax     = 5 * time.Second
	releaseWait = 2 * time.Second
)

// release lets the held write through once the agent has answered the
// challenge: at its first state report after it, or releaseWait after it
// for an agent that sends none. An ordering, not a margin: an agent that
// withdraws the write before it reports (docs/PROTOCOL.md, state) has its
// close in the backend's socket by then, so the release is moot; one that
// keeps the write has it released at its report, long before its own
// tool timeout could give up on the hold, however loaded the machine.
func release(after string) StepSpec {
	return StepSpec{ID: "release", Do: "release", Hold: "h1",
		On: &TriggerSpec{After: after, Event: string(trace.KindAgentState), Timeout: Duration(releaseWait)}}
}

// staged places a correction, negation or interruption at its stage.
func staged(stage string, req request, ch StepSpec) ([]StepSpec, []FaultSpec) {
	var pre, post []StepSpec
	var faults []FaultSpec
	switch stage {
	case "early":
		// Straight after the request, in the same turn: the agent cannot
		// have built anything yet, whatever the machine's load.
		ch.On = &TriggerSpec{}
	case "before_agent_finishes":
		// Into the agent's confirmation, once the write has landed: the
		// stage never overlaps a preparation or an open call, whatever the
		// machine's load, and a correct agent must stop talking, take the
		// change and put the landed write right.
		landed := StepSpec{ID: "landed", Do: "silence", Duration: ptr(Duration(0)),
			On: &TriggerSpec{Event: string(trace.KindToolCommitted), Match: &Match{Tool: req.action}}}
		// At the agent's second word if that comes first: a starved agent
		// whose words come in a burst is still cut off mid-utterance.
		ch.On = &TriggerSpec{After: "landed", Event: string(trace.KindAgentSpeechStart), Delay: ms(300), Partials: 2}
		return script(pre, ask(req), []StepSpec{landed, ch}, post), faults
	case "during_tool_prep":
		// The fallback (for agents that send no tool_intent) sits well
		// after a typical end of turn, so an agent that does send one is
		// never overtaken by it.
		ch.On = &TriggerSpec{Event: string(trace.KindAgentToolIntent), Fallback: ms(1500)}
		ch.Required = true
	case "after_tool_sent", "after_tool_started":
		// The hold is armed before the request so the write cannot slip past.
		pre = []StepSpec{{ID: "hold", Do: "hold", Hold: "h1", Match: &Match{Tool: req.action}, Max: Duration(holdMax)}}
		ch.On = &TriggerSpec{Event: string(trace.KindToolHeld), Delay: ms(100)}
		ch.Required = true
		post = []StepSpec{release(ch.ID)}
	case "during_retry":
		// The first write fails; the hold, armed before the request, lets
		// that first try through and catches the retry; the correction
		// lands while the retry is held, then the retry is released.
		faults = []FaultSpec{{Kind: string(trace.FaultStatus), Status: 500, Times: 1, Delay: ms(300), Match: &Match{Tool: req.action}}}
		pre = []StepSpec{{ID: "hold", Do: "hold", Hold: "h1", Match: &Match{Tool: req.action, Skip: 1}, Max: Duration(holdMax)}}
		ch.On = &TriggerSpec{Event: string(trace.KindToolHeld), Delay: ms(100)}
		ch.Required = true
		post = []StepSpec{release(ch.ID)}
	}
	return script(pre, ask(req), []StepSpec{ch}, post), faults
}
