package callsim

import (
	"time"

	"github.com/callproof/callproof/trace"
)

// Latencies computes the call's timing diagnostics from its events (real
// durations, zero when not observed):
//
//   - response: from the first caller.speech_final to the agent's next
//     agent.speech_start;
//   - yield: from the first caller speech onset made while the agent was
//     speaking to the agent's next clear or speech end.
func Latencies(evs []trace.Event) (response, yield time.Duration) {
	firstFinal := time.Duration(-1)
	speaking := map[string]bool{}
	bargeIn := time.Duration(-1)
	for _, e := range evs {
		switch e.Kind {
		case trace.KindCallerSpeechFinal:
			if firstFinal < 0 {
				firstFinal = e.At
			}
		case trace.KindAgentSpeechStart:
			if firstFinal >= 0 && response == 0 {
				response = max(e.At-firstFinal, 1)
			}
			if d, ok := e.Data.(*trace.AgentSpeech); ok {
				speaking[d.Utterance] = true
			}
		case trace.KindCallerSpeechStart:
			if bargeIn < 0 && len(speaking) > 0 {
				bargeIn = e.At
			}
		case trace.KindAgentSpeechEnd, trace.KindAgentClear:
			if bargeIn >= 0 && yield == 0 {
				yield = max(e.At-bargeIn, 1)
			}
			d, ok := e.Data.(*trace.AgentSpeech)
			if e.Kind == trace.KindAgentClear && (!ok || d.Utterance == "") {
				clear(speaking)
			} else if ok {
				delete(speaking, d.Utterance)
			}
		}
	}
	return response, yield
}
