package scorer

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/callproof/callproof/trace"
)

// builder writes a hand-authored history the way the harness would record
// it: one clock, one seq counter, and a simulated backend whose commits go
// through trace.Apply so before/after, bodies and the snapshot agree.
type builder struct {
	h     *trace.History
	start *trace.CallStart
	at    time.Duration
	gap   time.Duration
	recs  []trace.Record
	reqs  map[string]*trace.ToolEvent
}

var orderTools = []trace.ToolSpec{
	{Name: "get_order", Effect: trace.EffectRead, Table: "orders", KeyArg: "order_number",
		Args: []trace.ArgSpec{{Name: "order_number", Type: "string", Required: true, Pattern: `^\d{4}$`}}},
	{Name: "update_order", Effect: trace.EffectUpdate, Table: "orders", KeyArg: "order_number", Consequential: true,
		Args: []trace.ArgSpec{{Name: "order_number", Type: "string", Required: true, Pattern: `^\d{4}$`},
			{Name: "delivery_date", Type: "date"}, {Name: "quantity", Type: "integer"}}},
	{Name: "ship_order", Effect: trace.EffectCreate, Table: "shipments", Consequential: true,
		Args: []trace.ArgSpec{{Name: "order_number", Type: "string", Required: true, Pattern: `^\d{4}$`}}},
}

func order(key, date, qty string) trace.Record {
	return trace.Record{Table: "orders", Key: key, Version: 1, Fields: map[string]string{
		"delivery_date": date, "quantity": qty, "item": "kettle", "status": "open"}}
}

// kv builds a string map from alternating keys and values.
func kv(pairs ...string) map[string]string {
	m := make(map[string]string, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i]] = pairs[i+1]
	}
	return m
}

func intent(ver int, action string, exec bool, slots ...string) *trace.Intent {
	return &trace.Intent{Version: ver, Action: action, Execute: exec, Slots: kv(slots...)}
}

func say(id string, act trace.Act, text string, in *trace.Intent) trace.Step {
	return trace.Step{ID: id, Do: trace.StepSay, Act: act, Text: text, Intent: in, Invalidates: act == trace.ActNegate}
}

func newCall(id, category string, faults []trace.Fault, records []trace.Record, steps ...trace.Step) *builder {
	return newCallIn(orderTools, id, category, faults, records, steps...)
}

// newCallIn is newCall with another tool catalogue (bookingTools, say):
// the simulated backend executes the call's own catalogue.
func newCallIn(tools []trace.ToolSpec, id, category string, faults []trace.Fault, records []trace.Record, steps ...trace.Step) *builder {
	b := &builder{h: &trace.History{Call: id}, gap: 200 * time.Millisecond, reqs: map[string]*trace.ToolEvent{}}
	for _, r := range records {
		b.recs = append(b.recs, r.Clone())
	}
	b.start = &trace.CallStart{Schema: trace.SchemaVersion, ScenarioID: id, Category: category, Suite: "fixtures",
		Agent: "fixture", Transport: "native", Seed: 1, TimeScale: 1,
		Script: trace.Script{Steps: steps, StepTimeout: 10 * time.Second, CallTimeout: 60 * time.Second, Quiet: time.Second},
		Tools:  tools, Records: records, Faults: faults}
	b.emit(trace.SourceHarness, trace.KindCallStart, b.start)
	return b
}

func (b *builder) emit(src trace.Source, k trace.Kind, data any) int {
	seq := len(b.h.Events) + 1
	if seq > 1 {
		b.at += b.gap
	}
	b.h.Events = append(b.h.Events, trace.Event{Call: b.h.Call, Seq: seq, At: b.at, Source: src, Kind: k, Data: data})
	return seq
}

// wait adds extra time before the next event.
func (b *builder) wait(d time.Duration) *builder { b.at += d; return b }

func (b *builder) step(id string) trace.Step {
	for _, s := range b.start.Script.Steps {
		if s.ID == id {
			return s
		}
	}
	panic("no step " + id)
}

func (b *builder) speech(id string) *trace.CallerSpeech {
	s := b.step(id)
	return &trace.CallerSpeech{Step: id, Utterance: "c-" + id, Act: s.Act, Text: s.Text, Intent: s.Intent.Clone(), Invalidates: s.Invalidates}
}

func (b *builder) fired(id string) *builder {
	b.emit(trace.SourceHarness, trace.KindTriggerFired, &trace.TriggerNote{Step: id})
	return b
}

// callerStart / callerFinal are a caller utterance's onset and end.
func (b *builder) callerStart(id string) *builder {
	d := b.speech(id)
	d.Text = ""
	b.emit(trace.SourceCaller, trace.KindCallerSpeechStart, d)
	return b
}

func (b *builder) callerFinal(id string) *builder {
	b.emit(trace.SourceCaller, trace.KindCallerSpeechFinal, b.speech(id))
	return b
}

func (b *builder) caller(id string) *builder { return b.callerStart(id).callerFinal(id) }

func (b *builder) noise(id string, phase trace.Kind) *builder {
	s := b.step(id)
	b.emit(trace.SourceCaller, phase, &trace.CallerNoise{Step: id, ID: "n-" + id, Sound: s.Sound, Duration: s.Duration})
	return b
}

// hangup records the caller ending the call.
func (b *builder) hangup() *builder {
	b.emit(trace.SourceCaller, trace.KindCallerHangup, &trace.Note{})
	return b
}

func (b *builder) speakStart(utt, text string) *builder {
	b.emit(trace.SourceAgent, trace.KindAgentSpeechStart, &trace.AgentSpeech{Utterance: utt})
	b.emit(trace.SourceAgent, trace.KindAgentSpeechText, &trace.AgentSpeech{Utterance: utt, Text: text})
	return b
}

func (b *builder) speakEnd(utt, text string) *builder {
	b.emit(trace.SourceAgent, trace.KindAgentSpeechEnd, &trace.AgentSpeech{Utterance: utt, Text: text})
	return b
}

func (b *builder) speak(utt, text string) *builder {
	return b.speakStart(utt, text).speakEnd(utt, text)
}

func (b *builder) clear(utt, text string) *builder {
	b.emit(trace.SourceAgent, trace.KindAgentClear, &trace.AgentSpeech{Utterance: utt, Text: text})
	return b
}

func (b *builder) state(ver int, pending string, slots ...string) *builder {
	b.emit(trace.SourceAgent, trace.KindAgentState, &trace.AgentState{Version: ver, Slots: kv(slots...), Pending: pending})
	return b
}

func (b *builder) toolIntent(tool string, args ...string) *builder {
	b.emit(trace.SourceAgent, trace.KindAgentToolIntent, &trace.AgentToolIntent{Tool: tool, Args: kv(args...)})
	return b
}

// recv records a request arriving; idem and builtFrom are optional headers.
func (b *builder) recv(ref, idem string, builtFrom int, tool string, args ...string) *builder {
	te := &trace.ToolEvent{Ref: ref, Tool: tool, Args: kv(args...), IdempotencyKey: idem, Remote: "127.0.0.1"}
	if builtFrom > 0 {
		te.BuiltFrom = &builtFrom
	}
	b.reqs[ref] = te
	b.emit(trace.SourceBackend, trace.KindToolReceived, te)
	return b
}

func (b *builder) tev(ref string) *trace.ToolEvent {
	r := b.reqs[ref]
	return &trace.ToolEvent{Ref: ref, Tool: r.Tool}
}

func (b *builder) faultApplied(ref string, k trace.FaultKind) *builder {
	te := b.tev(ref)
	te.Fault = string(k)
	b.emit(trace.SourceBackend, trace.KindFaultApplied, te)
	return b
}

func (b *builder) held(ref, hold string) *builder {
	te := b.tev(ref)
	te.Hold = hold
	b.emit(trace.SourceBackend, trace.KindToolHeld, te)
	return b
}

func (b *builder) released(ref, hold string) *builder {
	te := b.tev(ref)
	te.Hold = hold
	b.emit(trace.SourceBackend, trace.KindToolReleased, te)
	return b
}

// commit applies the request to the simulated backend and records it.
func (b *builder) commit(ref string) *builder {
	r := b.reqs[ref]
	spec, _ := trace.Catalog(b.start.Tools, r.Tool)
	next, err := trace.Apply(b.recs, spec, r.Args)
	if err != nil {
		panic(err)
	}
	te := b.tev(ref)
	te.Table = spec.Table
	var before, after trace.Record
	switch spec.Effect {
	case trace.EffectCreate:
		after = next[len(next)-1]
	case trace.EffectDelete:
		before = *record(b.recs, spec.Table, r.Args[spec.KeyArg])
		after.Key, te.Deleted = before.Key, true
	default:
		key := r.Args[spec.KeyArg]
		before, after = *record(b.recs, spec.Table, key), *record(next, spec.Table, key)
	}
	te.Key, te.Before, te.After = after.Key, before.Fields, after.Fields
	te.VersionBefore, te.VersionAfter = before.Version, after.Version
	b.recs = next
	b.emit(trace.SourceBackend, trace.KindToolCommitted, te)
	return b
}

func recordBody(r trace.Record) string {
	out, _ := json.Marshal(map[string]any{"ok": true, "record": r})
	return string(out)
}

// ok answers 200 with the current record the request names (or created).
func (b *builder) ok(ref string) *builder {
	r := b.reqs[ref]
	spec, _ := trace.Catalog(b.start.Tools, r.Tool)
	var rec trace.Record
	if spec.Effect == trace.EffectCreate {
		for _, x := range b.recs {
			if x.Table == spec.Table {
				rec = x
			}
		}
	} else if g := record(b.recs, spec.Table, r.Args[spec.KeyArg]); g != nil {
		rec = *g
	} else {
		rec = trace.Record{Table: spec.Table, Key: r.Args[spec.KeyArg]} // deleted
	}
	return b.respond(ref, 200, recordBody(rec), false)
}

func (b *builder) respond(ref string, status int, body string, dropped bool) *builder {
	te := b.tev(ref)
	te.Status, te.Body, te.Dropped = status, body, dropped
	if status >= 400 {
		te.Error = "server_error"
	}
	b.emit(trace.SourceBackend, trace.KindToolResponded, te)
	return b
}

func errorBody(typ, msg string) string {
	return fmt.Sprintf(`{"ok":false,"error":{"type":%q,"message":%q}}`, typ, msg)
}

func (b *builder) cancelled(ref, reason string) *builder {
	te := b.tev(ref)
	te.Reason = reason
	b.emit(trace.SourceBackend, trace.KindToolCancelled, te)
	return b
}

func (b *builder) replayed(ref, of string) *builder {
	te := b.tev(ref)
	te.ReplayOf = of
	b.emit(trace.SourceBackend, trace.KindToolReplayed, te)
	return b
}

// call is the common case: received, committed (if consequential), 200.
func (b *builder) call(ref, idem, tool string, args ...string) *builder {
	b.recv(ref, idem, 0, tool, args...)
	if spec, _ := trace.Catalog(b.start.Tools, tool); spec.Consequential {
		b.commit(ref)
	}
	return b.ok(ref)
}

// end records the snapshot and call.end.
func (b *builder) end(outcome trace.Outcome, reason string) *trace.History {
	recs := make([]trace.Record, len(b.recs))
	copy(recs, b.recs)
	b.emit(trace.SourceHarness, trace.KindSnapshot, &trace.Snapshot{Records: recs})
	b.emit(trace.SourceHarness, trace.KindCallEnd, &trace.CallEnd{Outcome: outcome, Reason: reason,
		ResponseLatency: 800 * time.Millisecond, YieldLatency: 300 * time.Millisecond})
	return b.h
}

func (b *builder) done() *trace.History { return b.end("", "") }
