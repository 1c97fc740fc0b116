package trace

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"
	"time"
)

// declaredKinds parses event.go for every constant of type Kind, so a kind
// added without a payload type (DataFor) or a round-trip case fails here.
func declaredKinds(t *testing.T) []Kind {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "event.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []Kind
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Kind" {
				continue
			}
			for _, v := range vs.Values {
				lit := v.(*ast.BasicLit)
				kinds = append(kinds, Kind(strings.Trim(lit.Value, `"`)))
			}
		}
	}
	if len(kinds) < 30 {
		t.Fatalf("found only %d Kind constants in event.go", len(kinds))
	}
	return kinds
}

// samplePayload returns a payload for kind with every field set, so a
// field the codec loses shows up in the comparison.
func samplePayload(t *testing.T, k Kind) any {
	v := 4
	intent := &Intent{Version: 2, Action: "update_order", Execute: true, Slots: map[string]string{"order_number": "5590", "quantity": "4"}}
	switch DataFor(k).(type) {
	case *CallStart:
		return &CallStart{Schema: SchemaVersion, ScenarioID: "corr-02", Category: "correction", Suite: "core", Agent: "naive", Transport: "native",
			Seed: -42, TimeScale: 0.1,
			Script: Script{
				Steps: []Step{
					{ID: "ask", Do: StepSay, On: Trigger{Event: KindAgentSpeechEnd, Timeout: 2 * time.Second}, Act: ActSay, Text: "Hi.", Intent: intent, Duration: time.Second},
					{ID: "hold", Do: StepHold, On: Trigger{After: "ask", Match: &ToolMatch{Tool: "update_order", Args: map[string]string{"quantity": "4"}}, Delay: time.Millisecond, Fallback: 3}, Hold: "h1", Match: &ToolMatch{Tool: "update_order"}, Required: true},
					{ID: "fault", Do: StepFault, Fault: &Fault{Kind: FaultStatus, Status: 503, Times: 1, Probability: 0.5, Delay: time.Millisecond, Record: "5519"}},
					{ID: "beep", Do: StepDTMF, Digits: "12#"},
					{ID: "cough", Do: StepNoise, Sound: "cough", Invalidates: true, Status: 500},
				},
				StepTimeout: 4 * time.Second, CallTimeout: 20 * time.Second, Quiet: 1200 * time.Millisecond,
			},
			Tools: []ToolSpec{{Name: "update_order", Description: "d", Effect: EffectUpdate, Table: "orders", KeyArg: "order_number", Consequential: true,
				Args: []ArgSpec{{Name: "order_number", Type: "string", Required: true, Pattern: `^\d{4}$`, Description: "n"}, {Name: "status", Type: "string", Enum: []string{"open", "shipped"}}}}},
			Records: []Record{{Table: "orders", Key: "5590", Version: 1, Fields: map[string]string{"quantity": "1"}}},
			Faults:  []Fault{{Kind: FaultLatency, Delay: time.Second}},
		}
	case *CallEnd:
		return &CallEnd{Outcome: OutcomeAgentError, Reason: "socket closed", TimeScale: 0.1, ResponseLatency: 3 * time.Millisecond, YieldLatency: time.Millisecond}
	case *TriggerNote:
		return &TriggerNote{Step: "correct", On: "agent.tool_intent", Cause: 28, Reason: "timed out"}
	case *Snapshot:
		return &Snapshot{Records: []Record{{Table: "orders", Key: "5590", Version: 2, Fields: map[string]string{"quantity": "4"}}}}
	case *Note:
		return &Note{Text: "note for " + string(k)}
	case *CallerSpeech:
		return &CallerSpeech{Step: "correct", Utterance: "c2", Act: ActCorrect, Text: "Sorry, make that 4.", Intent: intent, Invalidates: true}
	case *CallerNoise:
		return &CallerNoise{Step: "cough", ID: "n1", Sound: "cough", Duration: 400 * time.Millisecond}
	case *CallerDTMF:
		return &CallerDTMF{Step: "beep", Digits: "5590#", Intent: intent}
	case *AgentSpeech:
		return &AgentSpeech{Utterance: "a3", Text: "Done."}
	case *AgentToolIntent:
		return &AgentToolIntent{Tool: "update_order", Args: map[string]string{"quantity": "4"}}
	case *AgentState:
		return &AgentState{Version: 2, Slots: map[string]string{"quantity": "4"}, Pending: "update_order"}
	case *ToolEvent:
		return &ToolEvent{Ref: "r1", Tool: "update_order", Args: map[string]string{"quantity": "4"}, IdempotencyKey: "k1", BuiltFrom: &v,
			Remote: "127.0.0.1:5000", Hold: "h1", Fault: "status", Status: 503, Error: "unavailable", Dropped: true, Reason: "r",
			ReplayOf: "r0", DuplicateOf: "r0", Table: "orders", Key: "5590", Before: map[string]string{"quantity": "1"}, After: map[string]string{"quantity": "4"},
			VersionBefore: 1, VersionAfter: 2, Body: `{"ok":true}`}
	}
	t.Fatalf("no sample payload for %s (DataFor gives %T)", k, DataFor(k))
	return nil
}

func TestDataForCoversEveryKind(t *testing.T) {
	seen := map[Kind]bool{}
	for _, k := range declaredKinds(t) {
		if seen[k] {
			t.Errorf("kind %q declared twice", k)
		}
		seen[k] = true
		d := DataFor(k)
		if d == nil {
			t.Errorf("DataFor(%q) = nil: the codec cannot decode it", k)
			continue
		}
		if reflect.TypeOf(d).Kind() != reflect.Pointer {
			t.Errorf("DataFor(%q) = %T, want a pointer", k, d)
		}
		// A fresh value every time: decoding must not share state.
		if DataFor(k) == d {
			t.Errorf("DataFor(%q) returned the same pointer twice", k)
		}
	}
	if DataFor("no.such_kind") != nil {
		t.Error("DataFor of an unknown kind should be nil")
	}
}

func TestJSONLRoundTripEveryKind(t *testing.T) {
	kinds := declaredKinds(t)
	h := &History{Call: "corr-02"}
	// call.start first, then every other kind in turn.
	all := append([]Kind{KindCallStart}, kinds...)
	seq := 0
	for _, k := range all {
		if k == KindCallStart && seq > 0 {
			continue
		}
		seq++
		h.Events = append(h.Events, Event{Call: h.Call, Seq: seq, At: time.Duration(seq) * 1234567, Source: SourceHarness, Kind: k, Data: samplePayload(t, k)})
	}
	// And an event with no payload at all.
	seq++
	h.Events = append(h.Events, Event{Call: h.Call, Seq: seq, At: time.Second, Source: SourceCaller, Kind: KindCallerHangup})

	var b bytes.Buffer
	if err := WriteJSONL(&b, h); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n != len(h.Events) {
		t.Fatalf("%d lines for %d events", n, len(h.Events))
	}
	got, err := ReadJSONL(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d histories, want 1", len(got))
	}
	if len(got[0].Events) != len(h.Events) {
		t.Fatalf("%d events back, want %d", len(got[0].Events), len(h.Events))
	}
	for i := range h.Events {
		w, g := h.Events[i], got[0].Events[i]
		if !reflect.DeepEqual(g, w) {
			t.Errorf("event %d (%s) does not round-trip:\n got %#v\nwant %#v", i, w.Kind, g.Data, w.Data)
		}
	}
	if !reflect.DeepEqual(got[0], h) {
		t.Error("history does not round-trip")
	}
}

func TestReadJSONLGroupsCalls(t *testing.T) {
	in := `
{"call":"b","seq":1,"kind":"call.start","data":{"schema":1,"scenario":"sb"}}
{"call":"a","seq":1,"kind":"call.start","data":{"schema":1,"scenario":"sa"}}

{"call":"b","seq":2,"kind":"call.end","data":{}}
   
{"call":"a","seq":2,"kind":"future.kind","data":{"x":1}}
{"call":"a","seq":3,"kind":"call.end"}
`
	hs, err := ReadJSONL(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 2 || hs[0].Call != "b" || hs[1].Call != "a" {
		t.Fatalf("calls %v, want b then a (order of first appearance)", hs)
	}
	if len(hs[0].Events) != 2 || len(hs[1].Events) != 3 {
		t.Fatalf("event counts %d, %d; want 2, 3", len(hs[0].Events), len(hs[1].Events))
	}
	if hs[1].Start().ScenarioID != "sa" || hs[0].End() == nil {
		t.Error("payloads not decoded to their types")
	}
	// An unknown kind keeps its data raw.
	raw, ok := hs[1].Events[1].Data.(json.RawMessage)
	if !ok || string(raw) != `{"x":1}` {
		t.Errorf("unknown kind data = %#v, want the raw JSON", hs[1].Events[1].Data)
	}
	if hs[1].Events[2].Data != nil {
		t.Errorf("no data should decode to nil, got %#v", hs[1].Events[2].Data)
	}
}

func TestReadJSONLErrors(t *testing.T) {
	start := `{"call":"c","seq":1,"kind":"call.start","data":{"schema":1,"scenario":"s"}}`
	tests := []struct {
		name, in, want string
	}{
		{"garbled line", start + "\n" + `{"call":"c","seq":2,` + "\n", "line 2: "},
		{"garbled after blank lines", "\n\n" + start + "\n\nnot json\n", "line 5: "},
		{"wrong payload type", start + "\n" + `{"call":"c","seq":2,"kind":"agent.state","data":{"version":"two"}}`, "line 2: agent.state data: "},
		{"wrong envelope type", `{"call":"c","seq":"one","kind":"call.start"}`, "line 1: "},
		{"newer schema", `{"call":"c","seq":1,"kind":"call.start","data":{"schema":99,"scenario":"s"}}`, "line 1: history schema 99 is newer than this callproof (1)"},
		{"first event not call.start", start + "\n" + `{"call":"d","seq":1,"kind":"caller.hangup"}` + "\n" + `{"call":"d","seq":2,"kind":"call.start","data":{"schema":1}}`, "call d: first event is not call.start"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs, err := ReadJSONL(strings.NewReader(tt.in))
			if err == nil {
				t.Fatalf("no error; got %d histories", len(hs))
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if hs != nil {
				t.Errorf("histories returned with an error")
			}
		})
	}
}

func TestReadJSONLCurrentAndOlderSchema(t *testing.T) {
	for _, schema := range []string{"0", "1"} {
		in := `{"call":"c","seq":1,"kind":"call.start","data":{"schema":` + schema + `}}`
		if _, err := ReadJSONL(strings.NewReader(in)); err != nil {
			t.Errorf("schema %s refused: %v", schema, err)
		}
	}
}

func TestReadJSONLLongLine(t *testing.T) {
	long := strings.Repeat("x", 1<<20) // far beyond bufio's default 64 KiB
	h := &History{Call: "c", Events: []Event{
		{Call: "c", Seq: 1, Kind: KindCallStart, Data: &CallStart{Schema: SchemaVersion}},
		{Call: "c", Seq: 2, Kind: KindNote, Data: &Note{Text: long}},
	}}
	var b bytes.Buffer
	if err := WriteJSONL(&b, h); err != nil {
		t.Fatal(err)
	}
	hs, err := ReadJSONL(&b)
	if err != nil {
		t.Fatal(err)
	}
	if got := hs[0].Events[1].Data.(*Note).Text; got != long {
		t.Errorf("long note came back with %d bytes", len(got))
	}
}

func TestWriteJSONLError(t *testing.T) {
	h := &History{Call: "c", Events: []Event{{Call: "c", Seq: 7, Kind: KindNote, Data: func() {}}}}
	err := WriteJSONL(&bytes.Buffer{}, h)
	if err == nil || !strings.Contains(err.Error(), "call c seq 7") {
		t.Errorf("error = %v, want it to name call c seq 7", err)
	}
}
