package harness

import (
	"fmt"
	"time"

	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/trace"
)

// DefaultOverloadBound (script time) is how late the harness's own timers
// may fire in a call before the call is marked harness_error, reason
// ReasonOverloaded, instead of scored. It is the 2 s preparation window the
// core scenarios' races are built on (a correction or an interruption must
// land while the agent prepares its tool call): a step, a word or a
// backend timer later than that may have left the window its scenario
// wrote it for, so the call no longer tests what it says. At time scale
// 0.05 it is 100 ms of real time, about twice the worst a busy machine
// showed running the core suite 64 calls at once under -race; at 1.0 it
// is 2 s (docs/PERFORMANCE.md, "Harness lateness").
const DefaultOverloadBound = 2 * time.Second

// ReasonOverloaded starts the harness_error reason of a call whose harness
// lateness exceeded the overload bound; the figures follow.
const ReasonOverloaded = reports.OverloadedPrefix

// overloaded says why a call whose lateness l (settled), or whose
// in-process agent's lateness a (settled; nil when not known), is over
// bound is not scored; "" when both are within it. bound < 0 turns the
// check off.
//
// An in-process agent that acknowledged the offered scale after the
// caller had given up waiting for it (and run at 1.0, callScale) ran at
// another pace than its caller: that call is marked too, as only a
// starved agent or harness acknowledges late.
func overloaded(l trace.HarnessLateness, a *trace.AgentLateness, callScale float64, bound time.Duration) string {
	if bound == 0 {
		bound = DefaultOverloadBound
	}
	if bound < 0 {
		return ""
	}
	if a != nil && a.TimeScale > 0 && callScale > 0 && a.TimeScale != callScale {
		return fmt.Sprintf("%s: the agent in this process acknowledged time scale %g too late, so its caller ran at %g: the call ran at two paces, not its script's",
			ReasonOverloaded, a.TimeScale, callScale)
	}
	if a != nil && a.Worst > bound && a.Worst > l.Worst {
		what, st := "a timer", a.Timers
		for _, o := range []struct {
			what string
			st   trace.LatenessStat
		}{
			{"its speech", a.Speech},
			{"a round trip: the caller's read of its frame and its read of the caller's", trace.LatenessStat{Max: a.RoundTrip()}},
			{"a tool request's departure", a.Tools},
		} {
			if o.st.Max > st.Max {
				what, st = o.what, o.st
			}
		}
		return fmt.Sprintf("%s: the agent in this process ran %s late in script time (%s, %s real), over the %s bound: it was starved of CPU, so the call did not run at its script's pace",
			ReasonOverloaded, a.Worst.Round(time.Millisecond), what, st.Max.Round(time.Millisecond), bound)
	}
	if l.Worst <= bound {
		return ""
	}
	what, st := "a trigger", l.Triggers
	if l.Speech.Max > st.Max {
		what, st = "the caller's speech", l.Speech
	}
	if l.Backend.Max > st.Max {
		what, st = "a backend timer", l.Backend
	}
	return fmt.Sprintf("%s: the harness ran %s late in script time (%s, %s real), over the %s bound: this machine was too busy for the call to test its timing",
		ReasonOverloaded, l.Worst.Round(time.Millisecond), what, st.Max.Round(time.Millisecond), bound)
}

// describeOutcome names an outcome with its reason for a note.
func describeOutcome(o trace.Outcome, reason string) string {
	if o == "" {
		o = trace.OutcomeScored
	}
	if reason == "" {
		return string(o)
	}
	return string(o) + " (" + reason + ")"
}
