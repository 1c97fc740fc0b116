package scenarios

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/callproof/callproof/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// describe renders a step on one line so scripts compare step by step.
func describe(s trace.Step) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", s.ID, s.Do)
	if s.Act != "" {
		fmt.Fprintf(&b, "/%s", s.Act)
	}
	var on []string
	if s.On.After != "" {
		on = append(on, "after="+s.On.After)
	}
	if s.On.Event != "" {
		on = append(on, "event="+string(s.On.Event))
	}
	if s.On.Match != nil {
		on = append(on, "match="+s.On.Match.Tool)
	}
	if s.On.Delay != 0 {
		on = append(on, "delay="+s.On.Delay.String())
	}
	if s.On.Fallback != 0 {
		on = append(on, "fallback="+s.On.Fallback.String())
	}
	if len(on) > 0 {
		fmt.Fprintf(&b, " on{%s}", strings.Join(on, " "))
	}
	if s.Text != "" {
		fmt.Fprintf(&b, " %q", s.Text)
	}
	if i := s.Intent; i != nil {
		fmt.Fprintf(&b, " v%d %s exec=%t", i.Version, i.Action, i.Execute)
		for _, k := range trace.SortedKeys(i.Slots) {
			fmt.Fprintf(&b, " %s=%s", k, i.Slots[k])
		}
	}
	if s.Do == trace.StepSay && s.Act == trace.ActInterrupt {
		fmt.Fprintf(&b, " invalidates=%t", s.Invalidates)
	}
	if s.Hold != "" {
		fmt.Fprintf(&b, " hold=%s", s.Hold)
	}
	if s.Match != nil {
		fmt.Fprintf(&b, " match=%s", s.Match.Tool)
		if s.Match.Skip > 0 {
			fmt.Fprintf(&b, " skip=%d", s.Match.Skip)
		}
	}
	if s.Sound != "" {
		fmt.Fprintf(&b, " sound=%s", s.Sound)
	}
	if s.Digits != "" {
		fmt.Fprintf(&b, " digits=%s", s.Digits)
	}
	if s.Status != 0 {
		fmt.Fprintf(&b, " status=%d", s.Status)
	}
	if s.Do == trace.StepNoise || s.Do == trace.StepSilence || s.Do == trace.StepHold {
		fmt.Fprintf(&b, " for=%s", s.Duration)
	}
	if s.Required {
		b.WriteString(" required")
	}
	return b.String()
}

func compilePack(t *testing.T, name, id string) *Compiled {
	t.Helper()
	pack, err := Pack(name)
	require.NoError(t, err)
	c, err := Compile(find(t, pack, id))
	require.NoError(t, err)
	return c
}

const (
	askDate = `ask say/say on{event=agent.speech_end} "Hi, I'd like to change the delivery date on order 5590 to December 3." v1 update_order exec=true delivery_date=2026-12-03 order_number=5590`
	askQty  = `ask say/say on{event=agent.speech_end} "Hi, please change the quantity on order 5590 to 2." v1 update_order exec=true order_number=5590 quantity=2`
	askShip = `ask say/say on{event=agent.speech_end} "Hi, please ship order 5590 today." v1 ship_order exec=true order_number=5590`
	tail1   = "quiet wait_quiet"
	tail2   = "bye hangup"
)

func TestCompileStagesStepByStep(t *testing.T) {
	tests := []struct {
		pack, id string
		want     []string
	}{
		{"core", "corr-01", []string{askDate,
			`correct say/correct "Sorry, I meant order 5599." v2 update_order exec=true delivery_date=2026-12-03 order_number=5599`,
			tail1, tail2}},
		{"core", "corr-02", []string{askDate,
			`correct say/correct on{event=agent.tool_intent fallback=1.5s} "Sorry, I meant order 5599." v2 update_order exec=true delivery_date=2026-12-03 order_number=5599 required`,
			tail1, tail2}},
		{"core", "corr-03", []string{"hold hold hold=h1 match=update_order for=5s", askDate,
			`correct say/correct on{event=tool.held delay=100ms} "Sorry, I meant order 5599." v2 update_order exec=true delivery_date=2026-12-03 order_number=5599 required`,
			"release release on{after=correct event=agent.state} hold=h1", tail1, tail2}},
		{"core", "corr-06", []string{"hold hold hold=h1 match=update_order skip=1 for=5s", askDate,
			`correct say/correct on{event=tool.held delay=100ms} "Sorry, make that December 5." v2 update_order exec=true delivery_date=2026-12-05 order_number=5590 required`,
			`release release on{after=correct event=agent.state} hold=h1`,
			tail1, tail2}},
		{"core", "corr-07", []string{askQty,
			`correct say/correct on{event=agent.tool_intent fallback=1.5s} "Sorry, make that 4." v2 update_order exec=true order_number=5590 quantity=4 required`,
			tail1, tail2}},
		{"core", "corr-10", []string{"hold hold hold=h1 match=ship_order for=5s", askShip,
			`negate say/negate on{event=tool.held delay=100ms} "No, wait, don't do that." v2 ship_order exec=false order_number=5590 required`,
			"release release on{after=negate event=agent.state} hold=h1", tail1, tail2}},
		{"core", "int-01", []string{askDate,
			`landed silence on{event=tool.committed match=update_order} for=0s`,
			`interrupt say/interrupt on{after=landed event=agent.speech_start delay=300ms} "Wait, make that December 7 instead." v2 update_order exec=true delivery_date=2026-12-07 order_number=5590 invalidates=true`,
			tail1, tail2}},
		{"core", "int-02", []string{askDate,
			`landed silence on{event=tool.committed match=update_order} for=0s`,
			`interrupt say/interrupt on{after=landed event=agent.speech_start delay=300ms} "Yes, that's right, go ahead." v1 update_order exec=true delivery_date=2026-12-03 order_number=5590 invalidates=false`,
			tail1, tail2}},
		{"core", "int-03", []string{askDate,
			`interrupt say/interrupt on{event=agent.tool_intent fallback=1.5s} "Wait, stop, don't change anything." v2 update_order exec=false delivery_date=2026-12-03 order_number=5590 invalidates=true required`,
			tail1, tail2}},
		{"core", "int-04", []string{askQty,
			`interrupt say/interrupt on{event=agent.tool_intent fallback=1.5s} "Wait, make that 5 instead." v2 update_order exec=true order_number=5590 quantity=5 invalidates=true required`,
			tail1, tail2}},
		{"core", "int-05", []string{"hold hold hold=h1 match=update_order for=5s", askDate,
			`interrupt say/interrupt on{event=tool.held delay=100ms} "Wait, stop, don't change anything." v2 update_order exec=false delivery_date=2026-12-03 order_number=5590 invalidates=true required`,
			"release release on{after=interrupt event=agent.state} hold=h1", tail1, tail2}},
		{"core", "int-08", []string{askDate,
			"landed silence on{event=tool.committed match=update_order} for=0s",
			"noise noise on{after=landed event=agent.speech_start delay=200ms} sound=cough for=400ms",
			tail1, tail2}},
		{"core", "tf-06", []string{askShip, tail1, tail2}},
		{"extended", "ext-02-dtmf-order-number", []string{
			`ask say/say on{event=agent.speech_end} "Hi, I'd like to change the delivery date on my order to December 3." v1 update_order exec=true delivery_date=2026-12-03`,
			"keys dtmf on{event=agent.speech_end delay=300ms} v2 update_order exec=true delivery_date=2026-12-03 order_number=5590 digits=5590# required",
			tail1, tail2}},
		{"extended", "ext-07-injected-fault-with-noise", []string{askQty,
			"inject fault on{event=agent.tool_intent fallback=1.5s}",
			`confirm say/interrupt on{event=fault.applied delay=100ms} "Yes, that's right, go ahead." v1 update_order exec=true order_number=5590 quantity=2 invalidates=false`,
			"cough noise on{event=agent.speech_start delay=200ms} sound=cough for=400ms",
			tail1, tail2}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			c := compilePack(t, tt.pack, tt.id)
			var got []string
			for _, s := range c.Script.Steps {
				got = append(got, describe(s))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCompileScriptDefaults(t *testing.T) {
	c := compilePack(t, "core", "corr-02")
	assert.Equal(t, 10*time.Second, c.Script.StepTimeout)
	assert.Equal(t, 30*time.Second, c.Script.CallTimeout)
	assert.Equal(t, 1200*time.Millisecond, c.Script.Quiet)
	assert.Equal(t, OrderCatalog(), c.Tools)
	assert.Empty(t, c.Faults)
	// 200ms a word: "Sorry, I meant order 5599." is 5 words.
	assert.Equal(t, time.Second, c.Script.Steps[1].Duration)

	// Starting records: the initial and corrected orders plus the decoy,
	// none of them already holding a value the caller asks for; no shipments.
	var keys []string
	for _, r := range c.Records {
		assert.Equal(t, "orders", r.Table)
		assert.Equal(t, 1, r.Version)
		assert.Equal(t, "2026-12-01", r.Fields["delivery_date"])
		assert.Equal(t, "1", r.Fields["quantity"])
		assert.Equal(t, "open", r.Fields["status"])
		keys = append(keys, r.Key)
	}
	assert.Equal(t, []string{"5590", "5599", "5519"}, keys)
	assert.NotEqual(t, c.Records[0].Fields["item"], c.Records[1].Fields["item"])

	ext := compilePack(t, "extended", "ext-03-correction-during-timeout-retry")
	assert.Equal(t, 6*time.Second, ext.Script.StepTimeout)
	assert.Equal(t, 30*time.Second, ext.Script.CallTimeout)
	assert.Equal(t, DefaultQuiet, ext.Script.Quiet)
}

func TestCompileToolFailureFaults(t *testing.T) {
	upd := &trace.ToolMatch{Tool: "update_order"}
	tests := []struct {
		id   string
		want trace.Fault
	}{
		{"tf-01", trace.Fault{Kind: trace.FaultTimeout, Match: upd, Times: 1}},
		{"tf-02", trace.Fault{Kind: trace.FaultEmpty, Match: upd, Times: 1}},
		{"tf-03", trace.Fault{Kind: trace.FaultWrongRecord, Match: upd, Times: 1, Record: "5519"}},
		{"tf-04", trace.Fault{Kind: trace.FaultStatus, Match: upd, Times: 1, Status: 500}},
		{"tf-05", trace.Fault{Kind: trace.FaultLateSuccess, Match: upd, Delay: 800 * time.Millisecond}},
		{"tf-06", trace.Fault{Kind: trace.FaultDuplicate, Match: &trace.ToolMatch{Tool: "ship_order"}, Times: 1}},
		{"tf-07", trace.Fault{Kind: trace.FaultDropResp, Match: upd, Times: 1}},
		{"tf-08", trace.Fault{Kind: trace.FaultStatusAfter, Match: upd, Times: 1, Status: 500}},
		{"tf-09", trace.Fault{Kind: trace.FaultLatency, Match: upd, Delay: 900 * time.Millisecond}},
		{"tf-10", trace.Fault{Kind: trace.FaultStatus, Match: upd, Times: 2, Status: 503}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			c := compilePack(t, "core", tt.id)
			assert.Equal(t, []trace.Fault{tt.want}, c.Faults)
			assert.Len(t, c.Script.Steps, 3)
		})
	}
	retry := compilePack(t, "core", "corr-06")
	assert.Equal(t, []trace.Fault{{Kind: trace.FaultStatus, Match: upd, Times: 1, Status: 500, Delay: 300 * time.Millisecond}}, retry.Faults)
}

func TestExplicitIntentVersions(t *testing.T) {
	const body = `id: intents
category: combined
description: "intent threading"
expected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true, backend_correct: true, confirmation_matches_backend: true, should_execute: false}
steps:
  - {id: a, do: say, text: "Hi, please change the quantity on order 5590 to 2.", slots: {order_number: "5590", quantity: "2"}}
  - {id: b, do: interrupt, invalidates: false, text: "Yes, go ahead."}
  - {id: c, do: interrupt, invalidates: true, text: "Wait, make that 3 instead.", slots: {quantity: "3"}}
  - {id: d, do: correct, text: "Sorry, make that 3.", slots: {quantity: "3"}}
  - {id: e, do: interrupt, invalidates: true, text: "Wait, stop."}
  - {id: f, do: correct, text: "Sorry, I meant order 5599.", slots: {order_number: "5599"}, execute: true}
  - {id: g, do: negate, text: "No, don't."}
`
	s, err := LoadBytes("intents.yaml", []byte(body))
	require.NoError(t, err)
	c, err := Compile(s)
	require.NoError(t, err)
	type v struct {
		version int
		execute bool
		qty     string
		order   string
	}
	want := []v{{1, true, "2", "5590"}, {1, true, "2", "5590"}, {2, true, "3", "5590"}, {2, true, "3", "5590"},
		{3, false, "3", "5590"}, {4, true, "3", "5599"}, {5, false, "3", "5599"}}
	require.Len(t, c.Script.Steps, len(want))
	for k, st := range c.Script.Steps {
		in := st.Intent
		assert.Equal(t, want[k], v{in.Version, in.Execute, in.Slots["quantity"], in.Slots["order_number"]}, st.ID)
	}
	// Each step's intent is its own copy.
	c.Script.Steps[0].Intent.Slots["quantity"] = "99"
	assert.Equal(t, "2", c.Script.Steps[1].Intent.Slots["quantity"])
}

func TestCompilerNeverReadsExpected(t *testing.T) {
	for _, name := range PackNames() {
		pack, err := Pack(name)
		require.NoError(t, err)
		for _, s := range pack {
			t.Run(s.ID, func(t *testing.T) {
				before, err := Compile(s)
				require.NoError(t, err)
				flipped := *s
				e := &flipped.Expected
				e.Captured, e.ActiveStateCorrect, e.ToolArgsCorrect = !e.Captured, !e.ActiveStateCorrect, !e.ToolArgsCorrect
				e.StaleWritePrevented, e.BackendCorrect = !e.StaleWritePrevented, !e.BackendCorrect
				e.ConfirmationMatchesBackend, e.ShouldExecute = !e.ConfirmationMatchesBackend, !e.ShouldExecute
				flipped.Description = "something else entirely"
				after, err := Compile(&flipped)
				require.NoError(t, err)
				assert.Equal(t, before.Script, after.Script)
				assert.Equal(t, before.Tools, after.Tools)
				assert.Equal(t, before.Records, after.Records)
				assert.Equal(t, before.Faults, after.Faults)
				assert.Equal(t, before.Seed, after.Seed)
			})
		}
	}
}

func TestSeedDefaultsToStableHashOfID(t *testing.T) {
	a := &Scenario{ID: "corr-02"}
	assert.Equal(t, SeedOf(a), SeedOf(&Scenario{ID: "corr-02"}))
	assert.NotEqual(t, SeedOf(a), SeedOf(&Scenario{ID: "corr-03"}))
	assert.Equal(t, int64(-8731965553004105624), SeedOf(a), "the hash must not change between releases")
	seven := int64(7)
	assert.Equal(t, int64(7), SeedOf(&Scenario{ID: "corr-02", Seed: &seven}))
}

func TestOrderCatalog(t *testing.T) {
	cat := OrderCatalog()
	require.Len(t, cat, 4)
	get, upd, ship, shipGet := cat[0], cat[1], cat[2], cat[3]
	assert.Equal(t, []any{"get_order", trace.EffectRead, "orders", "order_number", false},
		[]any{get.Name, get.Effect, get.Table, get.KeyArg, get.Consequential})
	assert.Equal(t, []any{"update_order", trace.EffectUpdate, "orders", "order_number", true},
		[]any{upd.Name, upd.Effect, upd.Table, upd.KeyArg, upd.Consequential})
	assert.Equal(t, []any{"ship_order", trace.EffectCreate, "shipments", "", true},
		[]any{ship.Name, ship.Effect, ship.Table, ship.KeyArg, ship.Consequential})
	assert.Equal(t, []any{"get_shipment", trace.EffectRead, "shipments", "shipment_id", false},
		[]any{shipGet.Name, shipGet.Effect, shipGet.Table, shipGet.KeyArg, shipGet.Consequential})
	assert.Equal(t, []string{"order_number", "delivery_date", "quantity"}, argNames(upd))
	assert.Equal(t, []string{"date", "integer"}, []string{upd.Args[1].Type, upd.Args[2].Type})
	// A fresh copy each call: callers may not change the built-in one.
	cat[0].Name = "changed"
	assert.Equal(t, "get_order", OrderCatalog()[0].Name)
	assert.True(t, reflect.DeepEqual(OrderCatalog(), OrderCatalog()))
}

func argNames(t trace.ToolSpec) []string {
	var n []string
	for _, a := range t.Args {
		n = append(n, a.Name)
	}
	return n
}

func TestEventNames(t *testing.T) {
	for alias, kind := range EventAliases() {
		k, ok := EventKind(alias)
		assert.True(t, ok, alias)
		assert.Equal(t, kind, k)
		_, ok = EventKind(string(kind))
		assert.True(t, ok, "alias %s points at a kind triggers do not accept: %s", alias, kind)
	}
	k, ok := EventKind("tool_reaches_backend")
	assert.True(t, ok)
	assert.Equal(t, trace.KindToolReceived, k)
	_, ok = EventKind("call.start")
	assert.False(t, ok, "harness events are not triggers")
}

func TestTriggerRules(t *testing.T) {
	const head = "id: t\ncategory: combined\nexpected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true, backend_correct: true, confirmation_matches_backend: true, should_execute: true}\nsteps:\n  - {id: a, do: say, text: \"Hi, please ship order 5590 today.\", action: ship_order}\n"
	tests := []struct{ step, want string }{
		{"  - {id: b, do: wait_quiet, on: {after: c}}\n  - {id: c, do: hangup}\n",
			`t.yaml:6: steps[1].on.after: "c" is not an earlier step (a trigger waits for one that already ran)`},
		{"  - {id: b, do: hangup, on: {event: tool.held, fallback: 1s}}\n",
			"t.yaml:6: steps[1].on.fallback: only for event agent.tool_intent"},
		{"  - {id: b, do: hangup, on: {match: {tool: ship_order}}}\n",
			"t.yaml:6: steps[1].on.match: needs an event to match"},
		{"  - {id: b, do: hangup, on: {event: tool.held, delay: 1s, partials: 2}}\n",
			"t.yaml:6: steps[1].on.partials: only for event agent.speech_start with a delay"},
		{"  - {id: b, do: hangup, on: {event: agent.speech_start, partials: 2}}\n",
			"t.yaml:6: steps[1].on.partials: only for event agent.speech_start with a delay"},
		{"  - {id: b, do: hangup, on: {event: agent.speech_start, delay: 1s, partials: 101}}\n",
			"t.yaml:6: steps[1].on.partials: must be 1..100 (MaxTriggerPartials), got 101"},
		{"  - {id: b, do: correct, text: \"Sorry.\", slots: {colour: red}}\n",
			`t.yaml:6: steps[1].slots.colour: "colour" is not an argument of ship_order`},
		{"  - {id: b, do: correct, text: \"Sorry, I meant order 55.\", slots: {order_number: \"55\"}}\n",
			`t.yaml:6: steps[1].slots.order_number: "55" does not match ^\d{4}$`},
		{"  - {id: b, do: interrupt, invalidates: false, text: \"Yes.\", slots: {order_number: \"5599\"}}\n",
			"t.yaml:6: steps[1].slots: a non-invalidating interrupt keeps the intent (set invalidates: true)"},
		{"  - {id: b, do: fail, hold: h}\n",
			`t.yaml:6: steps[1].hold: names no earlier hold: "h"`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := LoadBytes("t.yaml", []byte(head+tt.step))
			got := errStrings(t, err)
			require.NotEmpty(t, got)
			assert.Equal(t, tt.want, got[0])
		})
	}
}
