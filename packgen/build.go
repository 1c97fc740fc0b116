package packgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/trace"
)

// Timings, the compact cases' (docs/SCENARIOS.md): a staged hold's bound,
// how long its release waits for the agent's answer to the challenge (its
// first state report), the bound of the final quiet wait, and the
// request's wait for the greeting.
const (
	holdMax     = 5 * time.Second
	releaseWait = 2 * time.Second
	// quietBound is longer than the compact cases' 12s: a generated
	// request names more values, the agent's read-back and confirmation
	// say them all, and after a tool failure it waits out its own tool
	// timeout before it retries.
	quietBound = 20 * time.Second
	greetWait  = 2 * time.Second
	// prepFallback: the prep stage's challenge this long after the
	// caller's words when the agent sends no tool_intent.
	prepFallback = 1500 * time.Millisecond
)

// Caller lines that carry no value (the compact cases' phrasing).
const (
	sayNegate  = "No, wait, don't do that."
	sayGoAhead = "Yes, that's right, go ahead."
	sayConfirm = "Yes, please go ahead."
)

func ms(n int) scenarios.Duration { return scenarios.Duration(time.Duration(n) * time.Millisecond) }

// scenario builds one scenario of tool t.
func (g *gen) scenario(t *target, k kind) (File, error) {
	c, err := g.cast(t)
	if err != nil {
		return File{}, err
	}
	s := &scenarios.Scenario{ID: scenarioID(t.tool.Name, k.name), Category: k.cat}
	s.Tools = g.catalog
	s.Call = &scenarios.CallSpec{Date: g.o.CallDate, TimeZone: scenarios.DefaultTimeZone}
	s.Expected = scenarios.Expected{Captured: true, ActiveStateCorrect: true, ToolArgsCorrect: true,
		StaleWritePrevented: true, BackendCorrect: true, ConfirmationMatchesBackend: true, ShouldExecute: true}

	// The request: the near-miss key when the key is corrected, and the
	// focus value (and, for a create, the second one when that is
	// corrected).
	key := c.key
	if k.field == "key" {
		key = c.near
	}
	said := t.said(k.field == "value2")
	ask := g.ask(t, key, said, c.val)
	var ch *scenarios.StepSpec
	focus := ""
	if len(t.values) > 0 {
		focus = t.values[0].arg.Name
	}
	if k.field == "value2" {
		focus = t.values[1].arg.Name
	}
	var tests string
	switch {
	case k.cat == scenarios.CatCorrection && k.field == "action":
		ch = &scenarios.StepSpec{ID: "negate", Do: "negate", Text: sayNegate}
		s.Expected.ShouldExecute = false
		tests = fmt.Sprintf("the caller takes the %s back while the agent prepares it; nothing must change and the agent must say so", t.tool.Name)
	case k.cat == scenarios.CatCorrection && k.field == "key":
		ch = &scenarios.StepSpec{ID: "correct", Do: "correct", Text: fmt.Sprintf("Sorry, I meant %s %s.", t.noun, g.say.value(t.key, c.key)),
			Slots: map[string]string{t.key.arg.Name: c.key}}
		tests = fmt.Sprintf("%s %s corrected to the near miss %s %s; the write must reach %s only", t.noun, c.near, t.noun, c.key, c.key)
	case k.cat == scenarios.CatCorrection:
		v := t.byName(focus)
		ch = &scenarios.StepSpec{ID: "correct", Do: "correct", Text: fmt.Sprintf("Sorry, make the %s %s.", phrase(focus), g.say.counted(v, c.alt[focus])),
			Slots: map[string]string{focus: c.alt[focus]}}
		tests = fmt.Sprintf("%s %s corrected to %s; the write must carry %s", focus, c.val[focus], c.alt[focus], c.alt[focus])
	case k.cat == scenarios.CatInterruption && k.stage == "noise":
		tests = fmt.Sprintf("a %s over the agent's confirmation must not be taken for the caller", soundName(k.sound))
	case k.cat == scenarios.CatInterruption && k.goOn:
		ch = &scenarios.StepSpec{ID: "interrupt", Do: "interrupt", Text: sayGoAhead, Invalidates: ptr(false)}
		tests = "a barge-in that only agrees must not drop, redo or double the write"
	case k.cat == scenarios.CatInterruption && k.stop:
		ch = &scenarios.StepSpec{ID: "interrupt", Do: "interrupt", Text: stopLine(t), Invalidates: ptr(true)}
		s.Expected.ShouldExecute = false
		tests = "a stop must cancel the write"
	case k.cat == scenarios.CatInterruption:
		// A value replaced: the focus, or the key of a tool that says no
		// other value.
		ch = &scenarios.StepSpec{ID: "interrupt", Do: "interrupt", Invalidates: ptr(true)}
		if focus != "" {
			v := t.byName(focus)
			ch.Text = fmt.Sprintf("Wait, make the %s %s instead.", phrase(focus), g.say.counted(v, c.alt[focus]))
			ch.Slots = map[string]string{focus: c.alt[focus]}
			tests = fmt.Sprintf("%s replaced by %s", focus, c.alt[focus])
		} else {
			ask = g.ask(t, c.near, said, c.val)
			ch.Text = fmt.Sprintf("Wait, I meant %s %s instead.", t.noun, g.say.value(t.key, c.key))
			ch.Slots = map[string]string{t.key.arg.Name: c.key}
			tests = fmt.Sprintf("%s %s replaced by %s", t.noun, c.near, c.key)
		}
	}
	var pre, challenge, post []scenarios.StepSpec
	switch {
	case k.cat == scenarios.CatToolFailure:
		s.Faults = []scenarios.FaultSpec{g.fault(t, k.fault, c)}
		tests = faultTests(k.fault)
	case k.stage == "noise":
		challenge = []scenarios.StepSpec{landed(t), {ID: "noise", Do: "noise", Sound: k.sound, Duration: ptr(ms(400)),
			On: &scenarios.TriggerSpec{After: "landed", Event: string(trace.KindAgentSpeechStart), Delay: ms(200)}}}
	default:
		pre, challenge, post = g.staged(t, k, *ch)
		tests = stageText(k) + ": " + tests
	}
	if g.o.Confirm {
		// The answer to a read-back question: after the agent's first
		// reply, or after its reply to the correction when that comes
		// before anything is sent.
		yes := scenarios.StepSpec{ID: "yes", Do: "interrupt", Text: sayConfirm, Invalidates: ptr(false),
			On: &scenarios.TriggerSpec{Event: string(trace.KindAgentSpeechEnd)}}
		if k.cat == scenarios.CatCorrection && (k.stage == "early" || k.stage == "readback") {
			challenge = append(challenge, yes)
		} else {
			challenge = append([]scenarios.StepSpec{yes}, challenge...)
		}
	}
	steps := append(pre, ask)
	steps = append(steps, challenge...)
	steps = append(steps, post...)
	steps = append(steps,
		scenarios.StepSpec{ID: "quiet", Do: "wait_quiet", On: &scenarios.TriggerSpec{Timeout: scenarios.Duration(quietBound)}},
		scenarios.StepSpec{ID: "bye", Do: "hangup"})
	s.Steps = steps
	s.Records = g.records(t, c)
	s.Description = fmt.Sprintf("%s: %s.", t.tool.Name, tests)
	name := s.ID + ".yaml"
	data := g.yaml(s, k)
	back, err := scenarios.LoadBytes(name, data)
	if err != nil {
		return File{}, fmt.Errorf("packgen: generated %s does not load (a bug): %w", name, err)
	}
	return File{Name: name, Data: data, Tests: tests, parsed: back}, nil
}

func ptr[T any](v T) *T { return &v }

func (t *target) byName(n string) *valuer {
	for _, v := range t.values {
		if v.arg.Name == n {
			return v
		}
	}
	return nil
}

// said lists the value arguments a request names: every required one and
// the focus (with second, the next one too).
func (t *target) said(second bool) []*valuer {
	var out []*valuer
	for i, v := range t.values {
		if v.arg.Required || i == 0 || (second && i == 1) {
			out = append(out, v)
		}
	}
	return out
}

// phrase says an argument's name: "party_size" → "party size".
func phrase(name string) string { return strings.Join(words(name), " ") }

// verb splits a tool's name into its verb and what is left once the
// record's noun is taken out: change_party_size on bookings is "change",
// "party size"; cancel_booking is "cancel", "".
func verb(t *target) (string, string) {
	w := words(t.tool.Name)
	if len(w) == 0 {
		return "change", ""
	}
	noun := append(words(t.noun), words(t.tool.Table)...)
	var rest []string
	for _, x := range w[1:] {
		if !slices.Contains(noun, x) {
			rest = append(rest, x)
		}
	}
	return w[0], strings.Join(rest, " ")
}

func article(s string) string {
	if s != "" && strings.ContainsRune("aeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

// ask is the caller's request, after the agent's greeting.
func (g *gen) ask(t *target, key string, said []*valuer, val map[string]string) scenarios.StepSpec {
	v, rest := verb(t)
	slots := maps.Clone(t.fixed)
	var b strings.Builder
	b.WriteString("Hi, I'd like to " + v + " ")
	if t.key != nil {
		slots[t.key.arg.Name] = key
		if rest != "" {
			b.WriteString("the " + rest + " on ")
		}
		b.WriteString(t.noun + " " + g.say.value(t.key, key) + ".")
	} else {
		if rest == "" {
			rest = t.noun
		}
		b.WriteString(article(rest) + ".")
	}
	var parts []string
	for _, x := range said {
		n := x.arg.Name
		slots[n] = val[n]
		if t.tool.Effect == "update" {
			parts = append(parts, "the "+phrase(n)+" "+g.say.counted(x, val[n]))
		} else {
			parts = append(parts, "the "+phrase(n)+" is "+g.say.counted(x, val[n]))
		}
	}
	if len(parts) > 0 {
		list := strings.Join(parts[:len(parts)-1], ", ")
		if list != "" {
			list += " and "
		}
		list += parts[len(parts)-1]
		if t.tool.Effect == "update" {
			b.WriteString(" Please make " + list + ".")
		} else {
			b.WriteString(" " + strings.ToUpper(list[:1]) + list[1:] + ".")
		}
	}
	return scenarios.StepSpec{ID: "ask", Do: "say", Text: b.String(), Action: t.tool.Name, Slots: slots, Execute: ptr(true),
		On: &scenarios.TriggerSpec{Event: string(trace.KindAgentSpeechEnd), Timeout: scenarios.Duration(greetWait)}}
}

func stopLine(t *target) string {
	if t.tool.Effect == "create" {
		return "Wait, stop, I don't want it after all."
	}
	return "Wait, stop, leave it as it was."
}

func soundName(s string) string {
	switch s {
	case "tv":
		return "TV in the background"
	case "door":
		return "door slam"
	}
	return s
}

func stageText(k kind) string {
	switch k.stage {
	case "early":
		return "in the same breath as the request, before anything is built"
	case "prep":
		return "while the agent prepares the call"
	case "flight":
		return "while the write is in flight (held at the backend)"
	case "readback":
		if k.cat == scenarios.CatInterruption {
			return "mid-sentence, into the agent's confirmation once the write has landed"
		}
		return "at the agent's read-back"
	}
	return k.stage
}

// landed waits for the action's write to land.
func landed(t *target) scenarios.StepSpec {
	return scenarios.StepSpec{ID: "landed", Do: "silence",
		On: &scenarios.TriggerSpec{Event: string(trace.KindToolCommitted), Match: &scenarios.Match{Tool: t.tool.Name}}}
}

// staged places a correction or interruption at its stage, as the
// compact cases do (docs/SCENARIOS.md, Compact cases).
func (g *gen) staged(t *target, k kind, ch scenarios.StepSpec) (pre, challenge, post []scenarios.StepSpec) {
	switch k.stage {
	case "early":
		// More of the request's turn: its onset goes out before the
		// request's final.
	case "prep":
		ch.On = &scenarios.TriggerSpec{Event: string(trace.KindAgentToolIntent), Fallback: scenarios.Duration(prepFallback)}
		ch.Required = true
	case "flight":
		pre = []scenarios.StepSpec{{ID: "hold", Do: "hold", Hold: "h1", Match: &scenarios.Match{Tool: t.tool.Name}, Max: scenarios.Duration(holdMax)}}
		ch.On = &scenarios.TriggerSpec{Event: string(trace.KindToolHeld), Delay: ms(100)}
		ch.Required = true
		// The release is the compact cases': at the agent's first state
		// report after the challenge, or releaseWait after it. An agent
		// withdraws before it reports (docs/PROTOCOL.md, state), so a
		// careful agent's release is moot, and one that keeps the write
		// has it let through at its report, long before its own tool
		// timeout gives up on the hold, however loaded the machine.
		post = []scenarios.StepSpec{{ID: "release", Do: "release", Hold: "h1",
			On: &scenarios.TriggerSpec{After: ch.ID, Event: string(trace.KindAgentState), Timeout: scenarios.Duration(releaseWait)}}}
	case "readback":
		if k.cat == scenarios.CatInterruption {
			// Into the confirmation once the write has landed, at its
			// second word if the words come in a burst.
			ch.On = &scenarios.TriggerSpec{After: "landed", Event: string(trace.KindAgentSpeechStart), Delay: ms(300), Partials: 2}
			return nil, []scenarios.StepSpec{landed(t), ch}, nil
		}
		// Into the agent's first words after the request: its read-back
		// of what it heard, or of what it did.
		ch.On = &scenarios.TriggerSpec{After: "ask", Event: string(trace.KindAgentSpeechStart), Delay: ms(300), Partials: 2}
	}
	return pre, []scenarios.StepSpec{ch}, post
}

// fault is a tool failure on the action's tool.
func (g *gen) fault(t *target, kind string, c *cast) scenarios.FaultSpec {
	f := scenarios.FaultSpec{Kind: kind, Match: &scenarios.Match{Tool: t.tool.Name}, Times: 1}
	switch kind {
	case "status", "status_after_commit":
		f.Status = 500
	case "status_503_twice":
		f.Kind, f.Status, f.Times = "status", 503, 2
	case "wrong_record":
		f.Record = c.decoy
	case "late_success":
		f.Delay, f.Times = ms(800), 0
	}
	return f
}

func faultTests(kind string) string {
	switch kind {
	case "timeout":
		return "the write times out without landing; a safe retry, or the truth, and never a false done"
	case "empty":
		return "the write lands but answers an empty body; the agent must verify before it says done"
	case "wrong_record":
		return "the write lands but the answer shows another record; the agent must not confirm what it did not see"
	case "status":
		return "a 500 before the write lands; a keyed retry or the truth"
	case "status_after_commit":
		return "a 500 after the write landed; a blind retry without an idempotency key doubles it"
	case "drop_response":
		return "the answer is dropped after the write landed; a retry must carry the same idempotency key"
	case "late_success":
		return "the write is accepted (202) and lands 800ms later; no done before it lands, no second write"
	case "duplicate":
		return "the request is delivered twice; the idempotency key must make it land once"
	case "status_503_twice":
		return "two 503s in a row; the agent must retry safely and not give up or claim success early"
	}
	return kind
}

// records are the table's starting records: the record the caller means,
// its near miss and a decoy, each holding other values than the caller
// asks for. A create starts from the decoy alone.
func (g *gen) records(t *target, c *cast) []scenarios.RecordSpec {
	fields := func() map[string]string {
		f := map[string]string{}
		for _, v := range t.values {
			if o := c.old[v.arg.Name]; o != "" {
				f[v.arg.Name] = o
			}
		}
		for n := range t.fixed {
			f[n] = "open"
		}
		if t.tool.Effect == "cancel" && t.tool.StatusField != "" {
			f[t.tool.StatusField] = "open"
		}
		if len(f) == 0 {
			f["status"] = "open"
		}
		return f
	}
	var out []scenarios.RecordSpec
	if t.key != nil {
		out = append(out, scenarios.RecordSpec{Table: t.tool.Table, Key: c.key, Fields: fields()},
			scenarios.RecordSpec{Table: t.tool.Table, Key: c.near, Fields: fields()})
	}
	out = append(out, scenarios.RecordSpec{Table: t.tool.Table, Key: c.decoy, Fields: fields()})
	// A value that is another table's key (add_deposit's
	// confirmation_code names a reservation) names a record that exists:
	// the one asked for and the one corrected to.
	have := map[[2]string]bool{}
	for _, r := range out {
		have[[2]string{r.Table, r.Key}] = true
	}
	for _, v := range t.values {
		for _, other := range g.catalog {
			if other.KeyArg != v.arg.Name || other.Table == t.tool.Table || other.Effect == "create" {
				continue
			}
			for _, key := range []string{c.val[v.arg.Name], c.alt[v.arg.Name]} {
				if !have[[2]string{other.Table, key}] {
					have[[2]string{other.Table, key}] = true
					out = append(out, scenarios.RecordSpec{Table: other.Table, Key: key, Fields: map[string]string{"status": "open"}})
				}
			}
		}
	}
	return out
}

// yaml writes a scenario: block mappings at the top, one flow mapping (in
// JSON, which YAML reads) per list item.
func (g *gen) yaml(s *scenarios.Scenario, k kind) []byte {
	var b bytes.Buffer
	src := g.o.Source
	if src == "" {
		src = "a catalogue"
	}
	fmt.Fprintf(&b, "# Generated by callproof init --catalogue from %s: %s, %s.\n", src, k.cat, k.name)
	fmt.Fprintf(&b, "id: %s\ncategory: %s\ndescription: %s\n", s.ID, s.Category, jsonText(s.Description))
	fmt.Fprintf(&b, "call: {date: %s, time_zone: %s}\n", jsonText(s.Call.Date), jsonText(s.Call.TimeZone))
	list := func(name string, items any) {
		raw, _ := json.Marshal(items)
		var elems []json.RawMessage
		_ = json.Unmarshal(raw, &elems)
		if len(elems) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s:\n", name)
		for _, e := range elems {
			fmt.Fprintf(&b, "  - %s\n", e)
		}
	}
	list("tools", s.Tools)
	list("records", s.Records)
	list("faults", s.Faults)
	list("steps", s.Steps)
	e := s.Expected
	fmt.Fprintf(&b, "expected:\n  captured: %t\n  active_state_correct: %t\n  tool_args_correct: %t\n  stale_write_prevented: %t\n"+
		"  backend_correct: %t\n  confirmation_matches_backend: %t\n  should_execute: %t\n",
		e.Captured, e.ActiveStateCorrect, e.ToolArgsCorrect, e.StaleWritePrevented, e.BackendCorrect, e.ConfirmationMatchesBackend, e.ShouldExecute)
	return b.Bytes()
}

func jsonText(s string) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}
