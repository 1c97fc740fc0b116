package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// DataFor returns a new, empty payload of the type an event kind carries,
// or nil for a kind this version does not know.
func DataFor(k Kind) any {
	switch k {
	case KindCallStart:
		return &CallStart{}
	case KindCallEnd:
		return &CallEnd{}
	case KindTriggerFired, KindTriggerMissed:
		return &TriggerNote{}
	case KindSnapshot:
		return &Snapshot{}
	case KindNote, KindCallerHangup, KindAgentHangup, KindAgentTransfer, KindAgentUnknown:
		return &Note{}
	case KindCallerSpeechStart, KindCallerSpeechPartial, KindCallerSpeechFinal:
		return &CallerSpeech{}
	case KindCallerNoiseStart, KindCallerNoiseEnd:
		return &CallerNoise{}
	case KindCallerDTMF:
		return &CallerDTMF{}
	case KindAgentSpeechStart, KindAgentSpeechText, KindAgentSpeechEnd, KindAgentClear:
		return &AgentSpeech{}
	case KindAgentToolIntent:
		return &AgentToolIntent{}
	case KindAgentState:
		return &AgentState{}
	case KindToolReceived, KindToolRejected, KindToolHeld, KindToolReleased, KindToolCommitted,
		KindToolResponded, KindToolCancelled, KindToolReplayed, KindFaultApplied:
		return &ToolEvent{}
	}
	return nil
}

type wireEvent struct {
	Call   string          `json:"call"`
	Seq    int             `json:"seq"`
	At     time.Duration   `json:"at"`
	Source Source          `json:"src"`
	Kind   Kind            `json:"kind"`
	Data   json.RawMessage `json:"data,omitempty"`
}

// UnmarshalJSON decodes an event, giving Data its kind's concrete type.
// Unknown kinds keep their data as json.RawMessage.
func (e *Event) UnmarshalJSON(b []byte) error {
	var w wireEvent
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Event{Call: w.Call, Seq: w.Seq, At: w.At, Source: w.Source, Kind: w.Kind}
	if len(w.Data) == 0 || string(w.Data) == "null" {
		return nil
	}
	d := DataFor(w.Kind)
	if d == nil {
		e.Data = w.Data
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(w.Data))
	if err := dec.Decode(d); err != nil {
		return fmt.Errorf("%s data: %w", w.Kind, err)
	}
	e.Data = d
	return nil
}

// WriteJSONL writes a history as one JSON event per line.
func WriteJSONL(w io.Writer, h *History) error {
	enc := json.NewEncoder(w)
	for i := range h.Events {
		if err := enc.Encode(&h.Events[i]); err != nil {
			return fmt.Errorf("call %s seq %d: %w", h.Call, h.Events[i].Seq, err)
		}
	}
	return nil
}

// ReadJSONL reads the histories in a JSONL stream, grouped by call in the
// order calls first appear. Errors name the line.
func ReadJSONL(r io.Reader) ([]*History, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	byCall := map[string]*History{}
	var order []*History
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if e.Kind == KindCallStart {
			if s, ok := e.Data.(*CallStart); ok && s.Schema > SchemaVersion {
				return nil, fmt.Errorf("line %d: history schema %d is newer than this callproof (%d)", line, s.Schema, SchemaVersion)
			}
		}
		h := byCall[e.Call]
		if h == nil {
			h = &History{Call: e.Call}
			byCall[e.Call] = h
			order = append(order, h)
		}
		h.Events = append(h.Events, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	for _, h := range order {
		if len(h.Events) == 0 || h.Events[0].Kind != KindCallStart {
			return nil, fmt.Errorf("call %s: first event is not %s", h.Call, KindCallStart)
		}
	}
	return order, nil
}
