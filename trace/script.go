package trace

import "time"

// Act says what a caller utterance does to the caller's intent.
type Act string

// Caller acts.
const (
	ActSay       Act = "say"       // states the request (first intent)
	ActCorrect   Act = "correct"   // replaces a slot value
	ActNegate    Act = "negate"    // withdraws the action ("no, don't")
	ActInterrupt Act = "interrupt" // barges in; may or may not invalidate
	ActConfirm   Act = "confirm"   // answers yes to the agent
	ActChat      Act = "chat"      // says something that changes nothing
)

// Intent is the caller's wish at one moment: run Action with Slots as its
// arguments (Execute) or run nothing. Version goes up with every change, so
// "built from stale values" is a comparison of versions.
type Intent struct {
	Version int               `json:"version"`
	Action  string            `json:"action,omitempty"`
	Execute bool              `json:"execute"`
	Slots   map[string]string `json:"slots,omitempty"`
}

// Clone returns an independent copy.
func (i *Intent) Clone() *Intent {
	if i == nil {
		return nil
	}
	c := *i
	c.Slots = make(map[string]string, len(i.Slots))
	for k, v := range i.Slots {
		c.Slots[k] = v
	}
	return &c
}

// StepKind is what a script step does.
type StepKind string

// Step kinds.
const (
	StepSay       StepKind = "say"        // caller speech; Act in Step.Act
	StepNoise     StepKind = "noise"      // non-speech sound
	StepSilence   StepKind = "silence"    // caller stays quiet for Duration
	StepDTMF      StepKind = "dtmf"       // keypad digits
	StepHangup    StepKind = "hangup"     // caller ends the call
	StepHold      StepKind = "hold"       // arm a backend hold for matching tool calls
	StepRelease   StepKind = "release"    // let a held call proceed
	StepFail      StepKind = "fail"       // answer a held call with Status, no commit
	StepFault     StepKind = "fault"      // add a fault to the backend now
	StepWaitQuiet StepKind = "wait_quiet" // wait until the agent is quiet and no tool call is open
)

// Script is a compiled scenario: the steps the simulator runs, in order.
// Each step waits for its trigger, then acts.
type Script struct {
	Steps       []Step        `json:"steps"`
	StepTimeout time.Duration `json:"step_timeout"` // default wait for a trigger
	CallTimeout time.Duration `json:"call_timeout"` // whole call bound
	// Quiet is how long the agent must be silent (no speech, no open tool
	// call) for a wait_quiet step to complete.
	Quiet time.Duration `json:"quiet"`
}

// Step is one action of the caller or of the scenario's backend control.
type Step struct {
	ID string   `json:"id"`
	Do StepKind `json:"do"`
	On Trigger  `json:"on"`

	// Speech.
	Act         Act           `json:"act,omitempty"`
	Text        string        `json:"text,omitempty"`
	Intent      *Intent       `json:"intent,omitempty"`      // the caller's intent once said
	Invalidates bool          `json:"invalidates,omitempty"` // interrupt: cancels the pending action
	Duration    time.Duration `json:"duration,omitempty"`    // speech, noise or silence length

	Sound  string `json:"sound,omitempty"`  // noise: cough, door, tv...
	Audio  string `json:"audio,omitempty"`  // speech or noise: a recorded WAV to play (audio dialects)
	Digits string `json:"digits,omitempty"` // dtmf

	// Backend control.
	Hold   string     `json:"hold,omitempty"`   // hold name (hold/release/fail)
	Match  *ToolMatch `json:"match,omitempty"`  // hold: which calls
	Status int        `json:"status,omitempty"` // fail: HTTP status
	Fault  *Fault     `json:"fault,omitempty"`  // fault step

	// Required: the scenario means nothing if this step never runs; a
	// missed trigger then makes the call excluded instead of scored.
	Required bool `json:"required,omitempty"`
}

// Trigger says when a step runs: Delay after the first event of kind Event
// (matching Match) recorded after the After step (default: the previous
// step) completed, or Delay after that step when Event is empty.
type Trigger struct {
	// After names the step whose completion starts the wait (default: the
	// previous step).
	After string        `json:"after,omitempty"`
	Event Kind          `json:"event,omitempty"`
	Match *ToolMatch    `json:"match,omitempty"`
	Delay time.Duration `json:"delay,omitempty"`
	// Timeout bounds the wait for Event (default Script.StepTimeout).
	Timeout time.Duration `json:"timeout,omitempty"`
	// Fallback: for agent.tool_intent, fire this long after the caller's
	// last final words if the agent sends no tool-intent notice.
	Fallback time.Duration `json:"fallback,omitempty"`
	// Partials: with Event agent.speech_start and a Delay, fire at that
	// utterance's Partials-th agent.speech_text if it comes before the
	// Delay is up. An agent whose words come faster than their time (a
	// starved agent's burst) is then still cut off mid-utterance: the
	// trigger follows its words, not the clock.
	Partials int `json:"partials,omitempty"`
}

// ToolMatch selects tool calls by name and argument values.
type ToolMatch struct {
	Tool string            `json:"tool,omitempty"`
	Args map[string]string `json:"args,omitempty"`
	// Skip, for holds only: let this many matching requests through
	// before catching one (1 = catch the retry, not the first try). It
	// makes "hold the retry" an ordering, not a race with the first try.
	Skip int `json:"skip,omitempty"`
}

// Matches reports whether a call of tool with args is selected.
func (m *ToolMatch) Matches(tool string, args map[string]string) bool {
	if m == nil {
		return true
	}
	if m.Tool != "" && m.Tool != tool {
		return false
	}
	for k, v := range m.Args {
		if args[k] != v {
			return false
		}
	}
	return true
}

// FaultKind names a backend fault.
type FaultKind string

// Fault kinds.
const (
	FaultLatency     FaultKind = "latency"             // respond after Delay
	FaultTimeout     FaultKind = "timeout"             // hang until the client gives up; no commit
	FaultStatus      FaultKind = "status"              // answer Status (5xx) without committing
	FaultStatusAfter FaultKind = "status_after_commit" // commit, then answer Status
	FaultEmpty       FaultKind = "empty"               // commit, answer 200 with an empty body
	FaultWrongRecord FaultKind = "wrong_record"        // answer with Record's data instead
	FaultLateSuccess FaultKind = "late_success"        // answer 202 pending now, commit after Delay
	FaultDuplicate   FaultKind = "duplicate"           // deliver the request twice
	FaultDropResp    FaultKind = "drop_response"       // commit, then drop the connection
)

// Fault is one composable backend fault, applied to matching requests.
type Fault struct {
	Kind        FaultKind     `json:"kind"`
	Match       *ToolMatch    `json:"match,omitempty"`
	Probability float64       `json:"probability,omitempty"` // 0 means always
	Times       int           `json:"times,omitempty"`       // first N matching requests; 0 = every one
	Delay       time.Duration `json:"delay,omitempty"`
	Status      int           `json:"status,omitempty"`
	Record      string        `json:"record,omitempty"` // wrong_record: the key returned instead
}
