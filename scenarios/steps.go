package scenarios

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/callproof/callproof/trace"
)

// StepKinds lists the values of a step's do.
func StepKinds() []string {
	return []string{"say", "correct", "negate", "interrupt", "noise", "silence", "dtmf", "hangup",
		"hold", "release", "fail", "fault", "wait_quiet"}
}

// stepKind maps do to the trace step kind and, for speech, the act.
func stepKind(do string) (trace.StepKind, trace.Act, bool) {
	switch do {
	case "say":
		return trace.StepSay, trace.ActSay, true
	case "correct":
		return trace.StepSay, trace.ActCorrect, true
	case "negate":
		return trace.StepSay, trace.ActNegate, true
	case "interrupt":
		return trace.StepSay, trace.ActInterrupt, true
	case "noise":
		return trace.StepNoise, "", true
	case "silence":
		return trace.StepSilence, "", true
	case "dtmf":
		return trace.StepDTMF, "", true
	case "hangup":
		return trace.StepHangup, "", true
	case "hold":
		return trace.StepHold, "", true
	case "release":
		return trace.StepRelease, "", true
	case "fail":
		return trace.StepFail, "", true
	case "fault":
		return trace.StepFault, "", true
	case "wait_quiet":
		return trace.StepWaitQuiet, "", true
	}
	return "", "", false
}

// usedFields lists the optional fields a step kind reads (besides id, do,
// on and required); any other field set on it is an error.
func usedFields(do string) string {
	switch do {
	case "say":
		return "text slots action execute duration audio"
	case "correct":
		return "text slots action execute duration audio"
	case "negate":
		return "text duration audio"
	case "interrupt":
		return "text slots execute invalidates duration audio"
	case "noise":
		return "sound duration audio"
	case "silence":
		return "duration"
	case "dtmf":
		return "digits slots action duration"
	case "hold":
		return "hold match max"
	case "release":
		return "hold"
	case "fail":
		return "hold status"
	case "fault":
		return "fault"
	}
	return ""
}

// setFields lists the optional fields a step sets.
func setFields(st StepSpec) []string {
	var f []string
	add := func(name string, set bool) {
		if set {
			f = append(f, name)
		}
	}
	add("text", st.Text != "")
	add("slots", st.Slots != nil)
	add("action", st.Action != "")
	add("execute", st.Execute != nil)
	add("invalidates", st.Invalidates != nil)
	add("duration", st.Duration != nil)
	add("sound", st.Sound != "")
	add("audio", st.Audio != "")
	add("digits", st.Digits != "")
	add("hold", st.Hold != "")
	add("match", st.Match != nil)
	add("status", st.Status != 0)
	add("fault", st.Fault != nil)
	add("max", st.Max != 0)
	return f
}

var digitsPattern = regexp.MustCompile(`^[0-9*#]+$`)

// stepField is the path of a step's field; compact steps have no path of
// their own, so their problems point at setup.
func (b *builder) stepField(i int, name string) string {
	if b.compact {
		return "setup"
	}
	return join(index("steps", i), name)
}

// steps compiles step specs in order, threading the caller's intent.
func (b *builder) steps(specs []StepSpec) []trace.Step {
	ids := make([]string, len(specs))
	first := map[string]int{}
	for i, st := range specs {
		ids[i] = st.ID
		if ids[i] == "" {
			ids[i] = fmt.Sprintf("step-%d", i+1)
		}
		if j, dup := first[ids[i]]; dup {
			b.add(b.stepField(i, "id"), "duplicate step id %q (also steps[%d])", ids[i], j)
			continue
		}
		first[ids[i]] = i
	}
	holds := map[string]bool{}
	var cur *trace.Intent
	out := make([]trace.Step, 0, len(specs))
	for i, st := range specs {
		p := func(name string) string { return b.stepField(i, name) }
		kind, act, ok := stepKind(st.Do)
		if !ok {
			b.add(p("do"), "unknown step kind %q (want one of %s)", st.Do, strings.Join(StepKinds(), ", "))
			continue
		}
		used := strings.Fields(usedFields(st.Do))
		for _, f := range setFields(st) {
			if !slices.Contains(used, f) {
				b.add(p(f), "not used by do: %s", st.Do)
			}
		}
		step := trace.Step{ID: ids[i], Do: kind, Act: act, Required: st.Required}
		step.On = b.trigger(p("on"), st.On, i, first, st.Do == "wait_quiet")
		if st.Duration != nil {
			// Speech and noise take time; a silence or dtmf may be instant.
			zeroOK := kind != trace.StepSay && kind != trace.StepNoise
			b.duration(p("duration"), *st.Duration, MaxStepDuration, "MaxStepDuration", zeroOK)
			step.Duration = st.Duration.D()
		}
		if st.Audio != "" {
			step.Audio = b.audioFile(p("audio"), st.Audio)
		}
		switch st.Do {
		case "say", "correct", "negate", "interrupt":
			if strings.TrimSpace(st.Text) == "" {
				b.add(p("text"), "required for do: %s", st.Do)
			}
			step.Text = st.Text
			if st.Duration == nil {
				step.Duration = speechDuration(st.Text)
				if step.Duration > MaxStepDuration {
					b.add(p("text"), "takes %v to say at %v a word, over the limit of %v (MaxStepDuration)",
						step.Duration, WordDuration, MaxStepDuration)
				}
			}
			if st.Do == "interrupt" {
				if st.Invalidates == nil {
					b.add(p("invalidates"), "required for do: interrupt (does it cancel the pending action?)")
				} else {
					step.Invalidates = *st.Invalidates
				}
			}
			cur = b.intent(p, st, cur)
			step.Intent = cur.Clone()
		case "dtmf":
			if !digitsPattern.MatchString(st.Digits) {
				b.add(p("digits"), "want digits 0-9, * or #, got %q", st.Digits)
			}
			step.Digits = st.Digits
			if st.Slots != nil || st.Action != "" {
				cur = b.intent(p, st, cur)
			}
			step.Intent = cur.Clone()
		case "noise":
			if st.Sound == "" {
				b.add(p("sound"), "required for do: noise")
			}
			step.Sound = st.Sound
			if st.Duration == nil {
				step.Duration = defaultNoiseLen
			}
		case "hold":
			if st.Hold == "" {
				b.add(p("hold"), "required: the hold's name")
			} else if holds[st.Hold] {
				b.add(p("hold"), "duplicate hold %q", st.Hold)
			}
			holds[st.Hold] = true
			step.Hold = st.Hold
			step.Match = b.match(p("match"), st.Match)
			// trace.Step has no field of its own for a hold's bound; its
			// Duration carries it (the hold releases itself after that).
			b.duration(p("max"), st.Max, MaxHold, "MaxHold", false)
			step.Duration = st.Max.D()
			if step.Duration == 0 {
				step.Duration = defaultHoldMax
			}
		case "release", "fail":
			if st.Hold == "" {
				b.add(p("hold"), "required: the name of an earlier hold")
			} else if !holds[st.Hold] {
				b.add(p("hold"), "names no earlier hold: %q", st.Hold)
			}
			step.Hold = st.Hold
			if st.Do == "fail" {
				if st.Status < 400 || st.Status > 599 {
					b.add(p("status"), "want an HTTP error status 400..599, got %d", st.Status)
				}
				step.Status = st.Status
			}
		case "fault":
			if st.Fault == nil {
				b.add(p("fault"), "required for do: fault")
			} else {
				f := b.fault(p("fault"), *st.Fault)
				step.Fault = &f
			}
		}
		out = append(out, step)
	}
	return out
}

// speechDuration is WordDuration per word.
func speechDuration(text string) time.Duration {
	return time.Duration(len(strings.Fields(text))) * WordDuration
}

// trigger compiles on:. ids maps each step id to its first index.
// A wait_quiet step may set a timeout alone: it bounds the wait for quiet.
func (b *builder) trigger(path string, on *TriggerSpec, i int, ids map[string]int, quiet bool) trace.Trigger {
	if on == nil {
		return trace.Trigger{}
	}
	t := trace.Trigger{After: on.After, Delay: on.Delay.D(), Timeout: on.Timeout.D(), Fallback: on.Fallback.D(), Partials: on.Partials}
	b.duration(join(path, "delay"), on.Delay, MaxStepDuration, "MaxStepDuration", true)
	b.duration(join(path, "timeout"), on.Timeout, MaxStepTimeout, "MaxStepTimeout", false)
	b.duration(join(path, "fallback"), on.Fallback, MaxStepDuration, "MaxStepDuration", false)
	if on.After != "" {
		j, ok := ids[on.After]
		switch {
		case !ok:
			b.add(join(path, "after"), "names no step: %q", on.After)
		case j >= i:
			b.add(join(path, "after"), "%q is not an earlier step (a trigger waits for one that already ran)", on.After)
		}
	}
	if on.Event != "" {
		k, ok := EventKind(on.Event)
		if !ok {
			b.add(join(path, "event"), "unknown event %q (want a trace kind such as tool.held, or an alias such as tool_reaches_backend)", on.Event)
		}
		t.Event = k
	}
	if on.Match != nil {
		if on.Event == "" {
			b.add(join(path, "match"), "needs an event to match")
		}
		t.Match = b.match(join(path, "match"), on.Match)
		if on.Match.Skip != 0 {
			b.add(join(join(path, "match"), "skip"), "only a hold's match can skip requests")
		}
	}
	if on.Timeout > 0 && on.Event == "" && !quiet {
		b.add(join(path, "timeout"), "needs an event to wait for")
	}
	if on.Fallback > 0 && t.Event != trace.KindAgentToolIntent {
		b.add(join(path, "fallback"), "only for event agent.tool_intent")
	}
	switch {
	case on.Partials < 0 || on.Partials > MaxTriggerPartials:
		b.add(join(path, "partials"), "must be 1..%d (MaxTriggerPartials), got %d", MaxTriggerPartials, on.Partials)
	case on.Partials > 0 && (t.Event != trace.KindAgentSpeechStart || on.Delay <= 0):
		b.add(join(path, "partials"), "only for event agent.speech_start with a delay")
	}
	return t
}

// intent applies a speech or dtmf step to the caller's intent. The version
// rises only when the intent changes, so a non-invalidating interrupt keeps
// it.
func (b *builder) intent(p func(string) string, st StepSpec, cur *trace.Intent) *trace.Intent {
	next := cur.Clone()
	start := func() {
		next = &trace.Intent{Action: b.defaultAction(), Execute: true, Slots: map[string]string{}}
	}
	switch st.Do {
	case "say":
		action := st.Action
		if action == "" && cur != nil {
			action = cur.Action
		}
		if next == nil || (action != "" && action != next.Action) {
			start() // a new request starts from empty slots
		}
		if action != "" {
			next.Action = action
		}
		next.Execute = true
	case "correct", "dtmf":
		if next == nil {
			if st.Do == "correct" {
				b.add(p("do"), "correct before any say: nothing to correct")
			}
			start()
		}
		if st.Action != "" {
			next.Action = st.Action
		}
		if st.Do == "correct" && len(st.Slots) == 0 && st.Action == "" && st.Execute == nil {
			b.add(p("slots"), "a correction must change a slot, the action or execute")
		}
	case "negate":
		if next == nil {
			b.add(p("do"), "negate before any say: nothing to negate")
			start()
		}
		next.Execute = false
	case "interrupt":
		if next == nil {
			b.add(p("do"), "interrupt before any say: nothing to interrupt")
			start()
		}
		if st.Invalidates == nil || !*st.Invalidates {
			if len(st.Slots) > 0 {
				b.add(p("slots"), "a non-invalidating interrupt keeps the intent (set invalidates: true)")
			}
			if st.Execute != nil {
				b.add(p("execute"), "a non-invalidating interrupt keeps the intent (set invalidates: true)")
			}
			return cur
		}
		// Invalidating: a new value keeps the action going; none means stop.
		next.Execute = len(st.Slots) > 0
	}
	if st.Execute != nil {
		next.Execute = *st.Execute
	}
	maps.Copy(next.Slots, st.Slots)

	if next.Action == "" {
		b.add(p("action"), "no action: the catalogue has no consequential tool, so name one")
	} else if t, ok := b.tool(next.Action); !ok {
		b.add(p("action"), "tool %q is not in the catalogue (%s)", next.Action, b.toolNames())
	} else {
		for _, k := range trace.SortedKeys(st.Slots) {
			a, found := argOf(t, k)
			if !found {
				b.add(join(p("slots"), k), "%q is not an argument of %s", k, t.Name)
			} else if err := checkArgValue(a, st.Slots[k]); err != nil {
				b.add(join(p("slots"), k), "%v", err)
			}
		}
	}
	switch {
	case cur == nil:
		next.Version = 1
	case sameIntent(cur, next):
		next.Version = cur.Version
	default:
		next.Version = cur.Version + 1
	}
	return next
}

func argOf(t trace.ToolSpec, name string) (trace.ArgSpec, bool) {
	for _, a := range t.Args {
		if a.Name == name {
			return a, true
		}
	}
	return trace.ArgSpec{}, false
}

func sameIntent(a, b *trace.Intent) bool {
	return a.Action == b.Action && a.Execute == b.Execute && maps.Equal(a.Slots, b.Slots)
}

// audioFile resolves a step's recording against the scenario file's
// folder and checks that it is there (its contents are read, and refused
// with the step's id, when an audio call plays it).
func (b *builder) audioFile(path, name string) string {
	if !filepath.IsAbs(name) && b.s.File() != "" {
		name = filepath.Join(filepath.Dir(b.s.File()), name)
	}
	if !strings.HasSuffix(strings.ToLower(name), ".wav") {
		b.add(path, "%q: want a .wav file", name)
		return name
	}
	if fi, err := os.Stat(name); err != nil {
		b.add(path, "%v", err)
	} else if fi.IsDir() {
		b.add(path, "%q is a directory, not a WAV file", name)
	}
	return name
}
