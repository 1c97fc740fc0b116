package audiocall

import (
	"time"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
)

// turns measures turn-taking on the call's frame clock: tick n is the
// frame sent and played at n×20 ms. The caller's side is known exactly
// (the caller plays it); the agent's from the detector on what was played.
type turns struct {
	callerSpeech bool // the caller's frame at this tick carried speech
	callerNoise  bool
	callerEnd    int // tick after the caller's last speech frame; -1: none yet
	callerLoud   int // tick of the caller's latest loud speech frame
	answered     bool
	agentLoud    bool // the agent's utterance is in progress
	lastLoud     int  // tick of the agent's last loud frame
	bargeIn      int  // tick the caller barged in on the agent; -1: none
	out          callsim.TurnTaking
}

func newTurns() *turns { return &turns{callerEnd: -1, bargeIn: -1, lastLoud: -1} }

func ticks(n int) time.Duration { return time.Duration(n) * audio.FrameDuration }

// caller notes the caller's frame at tick n: whether an utterance is
// playing, whether this frame of it is loud, whether noise is. Speech
// runs from an utterance's first loud frame (not the synthesizer's lead-in
// silence) to its end, and ends, for response latency, after its last
// loud frame.
func (t *turns) caller(n int, talking, loud, noise bool) {
	speech := talking && (t.callerSpeech || loud)
	if speech && loud {
		t.callerLoud = n
	}
	if speech && !t.callerSpeech {
		if t.agentLoud {
			t.out.BargeIns++
			t.bargeIn = n
		}
	}
	if !speech && t.callerSpeech {
		t.callerEnd, t.answered = t.callerLoud+1, false
	}
	t.callerSpeech, t.callerNoise = speech, noise
}

// agentOnset: the detector heard the agent start; first is the tick of
// the run's first loud frame.
func (t *turns) agentOnset(first int) {
	t.agentLoud = true
	t.lastLoud = first
	if t.callerEnd >= 0 && !t.answered && !t.callerSpeech {
		t.answered = true
		t.out.Responses = append(t.out.Responses, ticks(max(first-t.callerEnd, 0)))
	}
}

// agentFrame notes a loud agent frame played at tick n.
func (t *turns) agentFrame(n int) {
	if t.agentLoud {
		t.lastLoud = n
	}
}

// agentStop: the agent's utterance is over, by a clear at tick n or by its
// audio stopping after its last loud frame.
func (t *turns) agentStop(n int, cleared bool) {
	if !t.agentLoud {
		return
	}
	t.agentLoud = false
	stop := t.lastLoud + 1
	if cleared {
		stop = n
	}
	if t.bargeIn >= 0 {
		t.out.Yields = append(t.out.Yields, ticks(max(stop-t.bargeIn, 0)))
		t.bargeIn = -1
	} else if cleared && t.callerNoise && !t.callerSpeech {
		t.out.FalseYields++
	}
}

func (t *turns) summary() callsim.TurnTaking {
	out := t.out
	out.Responses = append([]time.Duration(nil), out.Responses...)
	out.Yields = append([]time.Duration(nil), out.Yields...)
	return out
}
