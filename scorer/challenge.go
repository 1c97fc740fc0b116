package scorer

import "github.com/callproof/callproof/trace"

// ChallengeKind is what a call tests, inferred from its script and events
// (never from the scenario's category label).
type ChallengeKind string

// Challenge kinds.
const (
	ChallengeCorrection   ChallengeKind = "correction"
	ChallengeNegation     ChallengeKind = "negation"
	ChallengeInterruption ChallengeKind = "interruption"
	ChallengeNoise        ChallengeKind = "noise"
	ChallengeToolFailure  ChallengeKind = "tool_failure"
	ChallengePlain        ChallengeKind = "plain"
)

// challenge is the event the agent had to handle and the moment it happened.
type challenge struct {
	kind         ChallengeKind
	step         *trace.Step
	onset, final int  // speech challenges: caller speech_start and speech_final
	invalidating bool // speech challenges: the pending action is no longer wanted as built
	faults       []*request
}

// findChallenge picks one kind by precedence: the first caller speech step
// with act correct/negate/interrupt that was actually spoken, else backend
// faults, else noise, else plain. A call has one kind so that captured is
// judged on the one event the scenario was built around.
func (v *view) findChallenge() challenge {
	steps := v.start.Script.Steps
	for i := range steps {
		st := &steps[i]
		if st.Do != trace.StepSay || (st.Act != trace.ActCorrect && st.Act != trace.ActNegate && st.Act != trace.ActInterrupt) {
			continue
		}
		fin := v.speechFinal[st.ID]
		if fin == 0 {
			break // never spoken (a missed trigger): judge the call on what remains
		}
		c := challenge{step: st, onset: v.speechStart[st.ID], final: fin}
		m := v.markAt(fin)
		invalidates := st.Invalidates
		if d, ok := v.ev(fin).Data.(*trace.CallerSpeech); ok && d.Invalidates {
			invalidates = true
		}
		if st.Act == trace.ActNegate || m != nil && !m.in.Execute {
			c.kind, c.invalidating = ChallengeNegation, true
		} else if st.Act == trace.ActCorrect {
			c.kind, c.invalidating = ChallengeCorrection, true
		} else {
			c.kind = ChallengeInterruption
			c.invalidating = invalidates || m != nil && m.changed
		}
		return c
	}
	hasFaults := len(v.start.Faults) > 0
	for _, st := range steps {
		if st.Do == trace.StepFault || st.Do == trace.StepFail {
			hasFaults = true
		}
	}
	var faults []*request
	for _, r := range v.reqs {
		if r.fault != "" || r.held && r.status >= 400 {
			hasFaults = true
			if r.problem != "" {
				faults = append(faults, r)
			}
		}
	}
	if hasFaults {
		return challenge{kind: ChallengeToolFailure, faults: faults}
	}
	if len(v.noise) > 0 {
		return challenge{kind: ChallengeNoise}
	}
	return challenge{kind: ChallengePlain}
}

// ChallengeKinds lists every kind the scorer infers.
func ChallengeKinds() []ChallengeKind {
	return []ChallengeKind{ChallengeCorrection, ChallengeNegation, ChallengeInterruption, ChallengeNoise, ChallengeToolFailure, ChallengePlain}
}

func (c challenge) speech() bool {
	return c.kind == ChallengeCorrection || c.kind == ChallengeNegation || c.kind == ChallengeInterruption
}

// anchor is the caller final after which the agent's working state must
// reflect the challenge: the challenge's own final for speech, else the
// final that established the caller's last intent.
func (v *view) anchor() int {
	if v.ch.speech() {
		return v.ch.final
	}
	return v.finalSeq
}
