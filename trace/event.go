package trace

import "time"

// SchemaVersion is the version of the history format written by this code.
// Bump it when an event's meaning changes; the codec refuses newer files.
const SchemaVersion = 1

// Source says which party an event came from.
type Source string

// Event sources.
const (
	SourceCaller  Source = "caller"
	SourceAgent   Source = "agent"
	SourceBackend Source = "backend"
	SourceHarness Source = "harness"
)

// Kind names what happened. Each kind has one data type (see DataFor).
type Kind string

// Harness events.
const (
	// CallStart is always seq 1: it carries everything needed to re-score.
	KindCallStart Kind = "call.start" // *CallStart
	// CallEnd is always last: the outcome the harness saw (not a verdict).
	KindCallEnd Kind = "call.end" // *CallEnd
	// TriggerFired / TriggerMissed: a script step's trigger fired or its
	// wait ran out; Step names the step.
	KindTriggerFired  Kind = "trigger.fired"  // *TriggerNote
	KindTriggerMissed Kind = "trigger.missed" // *TriggerNote
	// Snapshot is the backend's final state, taken after the call ends.
	KindSnapshot Kind = "backend.snapshot" // *Snapshot
	// Note is free diagnostic text (protocol warnings, timings).
	KindNote Kind = "harness.note" // *Note
)

// Caller events.
const (
	KindCallerSpeechStart   Kind = "caller.speech_start"   // *CallerSpeech (onset: before any words)
	KindCallerSpeechPartial Kind = "caller.speech_partial" // *CallerSpeech (Text so far)
	KindCallerSpeechFinal   Kind = "caller.speech_final"   // *CallerSpeech (whole Text; end of speech)
	KindCallerNoiseStart    Kind = "caller.noise_start"    // *CallerNoise
	KindCallerNoiseEnd      Kind = "caller.noise_end"      // *CallerNoise
	KindCallerDTMF          Kind = "caller.dtmf"           // *CallerDTMF
	KindCallerHangup        Kind = "caller.hangup"         // *Note
)

// Agent events.
const (
	KindAgentSpeechStart Kind = "agent.speech_start" // *AgentSpeech
	KindAgentSpeechText  Kind = "agent.speech_text"  // *AgentSpeech (Text: the words of this utterance so far)
	KindAgentSpeechEnd   Kind = "agent.speech_end"   // *AgentSpeech (Text: everything it said)
	KindAgentClear       Kind = "agent.clear"        // *AgentSpeech (stopped for barge-in)
	KindAgentToolIntent  Kind = "agent.tool_intent"  // *AgentToolIntent
	KindAgentState       Kind = "agent.state"        // *AgentState (self-report)
	KindAgentHangup      Kind = "agent.hangup"       // *Note
	KindAgentTransfer    Kind = "agent.transfer"     // *Note
	KindAgentUnknown     Kind = "agent.unknown"      // *Note (raw unknown message, ignored)
)

// Backend (tool call) events. All carry *ToolEvent; Ref ties the events of
// one HTTP request together.
const (
	KindToolReceived  Kind = "tool.received"  // request arrived and was authenticated
	KindToolRejected  Kind = "tool.rejected"  // 400/403/409: never reached the tool
	KindToolHeld      Kind = "tool.held"      // a scenario hold caught it
	KindToolReleased  Kind = "tool.released"  // the hold let it go
	KindToolCommitted Kind = "tool.committed" // state change persisted (ledger row)
	KindToolResponded Kind = "tool.responded" // the response was written (or dropped: Dropped)
	KindToolCancelled Kind = "tool.cancelled" // client went away or was failed before commit
	KindToolReplayed  Kind = "tool.replayed"  // idempotent replay of a stored response
	KindFaultApplied  Kind = "fault.applied"  // a fault changed this request
)

// Event is one fact on the call's clock.
type Event struct {
	Call   string        `json:"call"`
	Seq    int           `json:"seq"`
	At     time.Duration `json:"at"` // since call start, nanoseconds
	Source Source        `json:"src"`
	Kind   Kind          `json:"kind"`
	Data   any           `json:"data,omitempty"`
}

// History is one call: its events in seq order, the first being call.start.
type History struct {
	Call   string
	Events []Event
}

// Start returns the call.start payload, or nil for a malformed history.
func (h *History) Start() *CallStart {
	if len(h.Events) == 0 {
		return nil
	}
	s, _ := h.Events[0].Data.(*CallStart)
	return s
}

// End returns the call.end payload, or nil if the call never ended.
func (h *History) End() *CallEnd {
	for i := len(h.Events) - 1; i >= 0; i-- {
		if e, ok := h.Events[i].Data.(*CallEnd); ok {
			return e
		}
	}
	return nil
}

// BySeq returns the event with the given seq, or nil.
func (h *History) BySeq(seq int) *Event {
	i := seq - 1
	if i >= 0 && i < len(h.Events) && h.Events[i].Seq == seq {
		return &h.Events[i]
	}
	for k := range h.Events {
		if h.Events[k].Seq == seq {
			return &h.Events[k]
		}
	}
	return nil
}

// Clone returns a deep enough copy for a scorer to work on independently:
// the event slice is copied; payloads are shared and must not be mutated.
func (h *History) Clone() *History {
	c := &History{Call: h.Call, Events: make([]Event, len(h.Events))}
	copy(c.Events, h.Events)
	return c
}
