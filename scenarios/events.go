package scenarios

import (
	"sort"

	"github.com/callproof/callproof/trace"
)

// triggerKinds are the trace kinds a trigger may wait for: everything the
// caller, the agent or the backend records during a call.
func triggerKinds() []trace.Kind {
	return []trace.Kind{
		trace.KindCallerSpeechStart, trace.KindCallerSpeechPartial, trace.KindCallerSpeechFinal,
		trace.KindCallerNoiseStart, trace.KindCallerNoiseEnd, trace.KindCallerDTMF,
		trace.KindAgentSpeechStart, trace.KindAgentSpeechText, trace.KindAgentSpeechEnd, trace.KindAgentClear,
		trace.KindAgentToolIntent, trace.KindAgentState, trace.KindAgentHangup, trace.KindAgentTransfer,
		trace.KindToolReceived, trace.KindToolRejected, trace.KindToolHeld, trace.KindToolReleased,
		trace.KindToolCommitted, trace.KindToolResponded, trace.KindToolCancelled, trace.KindToolReplayed,
		trace.KindFaultApplied,
	}
}

// eventAliases are friendly trigger names for authors.
func eventAliases() map[string]trace.Kind {
	return map[string]trace.Kind{
		"agent_starts_speaking":  trace.KindAgentSpeechStart,
		"agent_speaks":           trace.KindAgentSpeechText,
		"agent_stops_speaking":   trace.KindAgentSpeechEnd,
		"agent_yields":           trace.KindAgentClear,
		"agent_state":            trace.KindAgentState,
		"tool_intent":            trace.KindAgentToolIntent,
		"tool_reaches_backend":   trace.KindToolReceived,
		"tool_rejected":          trace.KindToolRejected,
		"tool_held":              trace.KindToolHeld,
		"tool_released":          trace.KindToolReleased,
		"tool_committed":         trace.KindToolCommitted,
		"write_lands":            trace.KindToolCommitted,
		"tool_responded":         trace.KindToolResponded,
		"tool_cancelled":         trace.KindToolCancelled,
		"tool_replayed":          trace.KindToolReplayed,
		"fault_applied":          trace.KindFaultApplied,
		"caller_starts_speaking": trace.KindCallerSpeechStart,
		"caller_finishes":        trace.KindCallerSpeechFinal,
		"caller_dtmf":            trace.KindCallerDTMF,
	}
}

// EventKind resolves a trigger event name (a trace kind or an alias).
func EventKind(name string) (trace.Kind, bool) {
	for _, k := range triggerKinds() {
		if string(k) == name {
			return k, true
		}
	}
	k, ok := eventAliases()[name]
	return k, ok
}

// EventAliases returns the friendly trigger names and the kinds they mean.
func EventAliases() map[string]trace.Kind { return eventAliases() }

// EventNames lists every accepted trigger event name, kinds then aliases,
// sorted within each group.
func EventNames() []string {
	var kinds, aliases []string
	for _, k := range triggerKinds() {
		kinds = append(kinds, string(k))
	}
	for a := range eventAliases() {
		aliases = append(aliases, a)
	}
	sort.Strings(kinds)
	sort.Strings(aliases)
	return append(kinds, aliases...)
}
