package audiocall

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/callproof/callproof/callsim"
)

// A call on the frame clock: the caller speaks ticks 0–49, the agent
// answers from tick 60 (its detector sure at 65), the caller barges in at
// tick 100, the agent clears at 112; a door slam at 150 draws a clear at
// 160 (a false yield); the caller barges in at 200 and the agent's audio
// simply stops after tick 214.
func TestTurnsOnTheFrameClock(t *testing.T) {
	tr := newTurns()
	agent := false
	for n := 0; n < 260; n++ {
		speech := n < 50 || (n >= 100 && n < 130) || (n >= 200 && n < 230)
		noise := n >= 150 && n < 165
		// Each utterance opens with two frames of lead-in silence, which
		// are not speech yet.
		lead := n < 2 || (n >= 100 && n < 102) || (n >= 200 && n < 202)
		tr.caller(n, speech, speech && !lead, noise)
		switch {
		case n == 65, n == 135, n == 185:
			tr.agentOnset(n - 5)
			agent = true
		case n == 112, n == 160:
			tr.agentStop(n, true)
			agent = false
		case n == 220:
			tr.agentStop(n, false)
			agent = false
		}
		if agent && n <= 214 {
			tr.agentFrame(n)
		}
	}
	got := tr.summary()
	assert.Equal(t, callsim.TurnTaking{
		// 50→60; 130→130 (the agent's audio began as the caller stopped):
		// no second response for the turn that ended at 230, it was never
		// answered.
		Responses: []time.Duration{200 * time.Millisecond, 0},
		// Counted from the first loud frame (102, 202), not the lead-in.
		Yields:      []time.Duration{200 * time.Millisecond, 260 * time.Millisecond},
		BargeIns:    2,
		FalseYields: 1,
	}, got)
}
