package scenarios

import (
	"fmt"
	"time"

	"github.com/invopop/jsonschema"
)

// Category says which failure family a scenario probes.
type Category string

// Categories. A negation is a correction whose setup field is "action".
const (
	CatCorrection   Category = "correction"
	CatInterruption Category = "interruption"
	CatToolFailure  Category = "tool_failure"
	CatCombined     Category = "combined" // several families at once (explicit steps)
	CatDTMF         Category = "dtmf"     // keypad entry (explicit steps)
)

// Categories lists the valid categories.
func Categories() []Category {
	return []Category{CatCorrection, CatInterruption, CatToolFailure, CatCombined, CatDTMF}
}

// Scenario is one scenario file. Field tags are JSON names; the loader reads
// YAML by the same names, and a field without omitempty is required.
type Scenario struct {
	ID       string   `json:"id" jsonschema:"pattern=^[a-z0-9][a-z0-9_-]*$"`
	Category Category `json:"category" jsonschema:"enum=correction,enum=interruption,enum=tool_failure,enum=combined,enum=dtmf"`
	// Description is one line: the bug the scenario is built to catch.
	// Required in packs; optional for a lone case so seed 001's shape loads.
	Description string `json:"description,omitempty"`
	// Seed for the call's random source; default a stable hash of ID.
	Seed *int64 `json:"seed,omitempty"`
	// Setup is free-form per category; compact cases compile from it.
	Setup    map[string]any `json:"setup,omitempty"`
	Expected Expected       `json:"expected"`

	Tools    []Tool       `json:"tools,omitempty"`
	Records  []RecordSpec `json:"records,omitempty"`
	Faults   []FaultSpec  `json:"faults,omitempty"`
	Steps    []StepSpec   `json:"steps,omitempty"`
	Timeouts *Timeouts    `json:"timeouts,omitempty"`

	// Limits override the call's budgets against a misbehaving agent;
	// each field left out keeps its default.
	Limits *LimitsSpec `json:"limits,omitempty"`
	// CustomParameters are passed to the agent in start.customParameters.
	CustomParameters map[string]string `json:"custom_parameters,omitempty"`
	// Call is the call's date and time zone, which relative dates ("tomorrow")
	// resolve against; left out, DefaultCallDate in DefaultTimeZone.
	Call *CallSpec `json:"call,omitempty"`

	src *source // where it was loaded from; nil when built in code
}

// File is the name the scenario was loaded from ("" when built in code).
func (s *Scenario) File() string {
	if s.src == nil {
		return ""
	}
	return s.src.file
}

// CallSpec is the call's calendar: the day it takes place on, in a time
// zone. Each field left out keeps its default.
type CallSpec struct {
	// Date is YYYY-MM-DD; default DefaultCallDate.
	Date string `json:"date,omitempty" jsonschema:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$"`
	// TimeZone is an IANA zone name ("America/New_York"); default
	// DefaultTimeZone.
	TimeZone string `json:"time_zone,omitempty"`
}

// Expected is what a correct agent achieves: the six axes and whether the
// caller's action should end up executed. It is the packs' oracle and is
// never read by the compiler or the scorer.
type Expected struct {
	Captured                   bool `json:"captured"`
	ActiveStateCorrect         bool `json:"active_state_correct"`
	ToolArgsCorrect            bool `json:"tool_args_correct"`
	StaleWritePrevented        bool `json:"stale_write_prevented"`
	BackendCorrect             bool `json:"backend_correct"`
	ConfirmationMatchesBackend bool `json:"confirmation_matches_backend"`
	ShouldExecute              bool `json:"should_execute"`
}

// Tool is one catalogue entry (trace.ToolSpec in file form).
type Tool struct {
	Name          string `json:"name"`
	Description   string `json:"description,omitempty"`
	Effect        string `json:"effect" jsonschema:"enum=read,enum=update,enum=create,enum=cancel,enum=delete"`
	Table         string `json:"table"`
	KeyArg        string `json:"key_arg,omitempty"`
	Consequential bool   `json:"consequential,omitempty"`
	Args          []Arg  `json:"args,omitempty"`
	// StatusField and StatusValue (effect cancel, both required): the
	// field the cancel writes and the value, e.g. status and cancelled.
	StatusField string `json:"status_field,omitempty"`
	StatusValue string `json:"status_value,omitempty"`
}

// Arg is one tool argument.
type Arg struct {
	Name        string   `json:"name"`
	Type        string   `json:"type" jsonschema:"enum=string,enum=integer,enum=date,enum=time,enum=number"`
	Required    bool     `json:"required,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Pattern     string   `json:"pattern,omitempty"`
	Description string   `json:"description,omitempty"`
}

// RecordSpec is one starting record. Version 0 means 1.
type RecordSpec struct {
	Table   string            `json:"table"`
	Key     string            `json:"key"`
	Version int               `json:"version,omitempty"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// Match selects tool calls by name and argument values.
type Match struct {
	Tool string            `json:"tool,omitempty"`
	Args map[string]string `json:"args,omitempty"`
	// Skip (holds only): let this many matching requests through first.
	Skip int `json:"skip,omitempty" jsonschema:"minimum=0"`
}

// FaultSpec is one backend fault (trace.Fault in file form).
type FaultSpec struct {
	Kind        string   `json:"kind" jsonschema:"enum=latency,enum=timeout,enum=status,enum=status_after_commit,enum=empty,enum=wrong_record,enum=late_success,enum=duplicate,enum=drop_response"`
	Match       *Match   `json:"match,omitempty"`
	Probability float64  `json:"probability,omitempty" jsonschema:"minimum=0,maximum=1"`
	Times       int      `json:"times,omitempty" jsonschema:"minimum=0"`
	Delay       Duration `json:"delay,omitempty"`
	Status      int      `json:"status,omitempty" jsonschema:"minimum=100,maximum=599"`
	Record      string   `json:"record,omitempty"`
}

// StepSpec is one step of an explicit script. Which fields apply depends on
// Do; Validate rejects fields a step kind does not use.
type StepSpec struct {
	ID string       `json:"id,omitempty"`
	Do string       `json:"do" jsonschema:"enum=say,enum=correct,enum=negate,enum=interrupt,enum=noise,enum=silence,enum=dtmf,enum=hangup,enum=hold,enum=release,enum=fail,enum=fault,enum=wait_quiet"`
	On *TriggerSpec `json:"on,omitempty"`

	// Speech (say, correct, negate, interrupt) and dtmf.
	Text        string            `json:"text,omitempty"`
	Slots       map[string]string `json:"slots,omitempty"`
	Action      string            `json:"action,omitempty"`
	Execute     *bool             `json:"execute,omitempty"`
	Invalidates *bool             `json:"invalidates,omitempty"`
	Duration    *Duration         `json:"duration,omitempty"`
	Sound       string            `json:"sound,omitempty"`
	// Audio is a recorded WAV file (relative to the scenario file) the
	// caller plays instead of synthesizing Text (speech) or generating
	// Sound (noise), on audio dialects; text dialects ignore it.
	Audio  string `json:"audio,omitempty"`
	Digits string `json:"digits,omitempty" jsonschema:"pattern=^[0-9*#]+$"`

	// Backend control.
	Hold   string     `json:"hold,omitempty"`
	Match  *Match     `json:"match,omitempty"`
	Status int        `json:"status,omitempty"`
	Fault  *FaultSpec `json:"fault,omitempty"`
	Max    Duration   `json:"max,omitempty"`

	Required bool `json:"required,omitempty"`
}

// TriggerSpec is when a step runs (see trace.Trigger). Event takes a trace
// kind ("tool.held") or a friendly alias ("tool_reaches_backend").
type TriggerSpec struct {
	After    string   `json:"after,omitempty"`
	Event    string   `json:"event,omitempty"`
	Match    *Match   `json:"match,omitempty"`
	Delay    Duration `json:"delay,omitempty"`
	Timeout  Duration `json:"timeout,omitempty"`
	Fallback Duration `json:"fallback,omitempty"`
	// Partials (with event agent.speech_start and a delay): fire early, at
	// the utterance's Nth agent.speech_text (trace.Trigger.Partials).
	Partials int `json:"partials,omitempty" jsonschema:"minimum=0,maximum=100"`
}

// Timeouts override the script's defaults.
type Timeouts struct {
	Step  Duration `json:"step,omitempty"`
	Call  Duration `json:"call,omitempty"`
	Quiet Duration `json:"quiet,omitempty"`
}

// LimitsSpec overrides a call's budgets. Every field is optional and, when
// written, positive and at most its Max constant (limits.go). Left out, a
// field keeps the harness default: the callsim and mockbackend constants
// docs/SCENARIOS.md names.
type LimitsSpec struct {
	// MaxEventTextBytes bounds the agent text kept in one recorded event.
	MaxEventTextBytes int `json:"max_event_text_bytes,omitempty" jsonschema:"minimum=1,maximum=1048576"`
	// MaxCallTextBytes bounds the agent text of the call (agent_error
	// "text budget" past it).
	MaxCallTextBytes int64 `json:"max_call_text_bytes,omitempty" jsonschema:"minimum=1,maximum=67108864"`
	// MaxHistoryBytes bounds the call's history as JSONL ("history budget").
	MaxHistoryBytes int64 `json:"max_history_bytes,omitempty" jsonschema:"minimum=1,maximum=268435456"`
	// MaxHistoryEvents bounds the events of the call's history ("history
	// budget").
	MaxHistoryEvents int `json:"max_history_events,omitempty" jsonschema:"minimum=1,maximum=1000000"`
	// MaxToolRequestsPerSecond is the sustained tool request rate (real
	// time), bursts of as many ("tool_flood").
	MaxToolRequestsPerSecond int `json:"max_tool_requests_per_second,omitempty" jsonschema:"minimum=1,maximum=10000"`
	// MaxToolRequestsPerCall bounds the tool requests of the call
	// ("tool_flood").
	MaxToolRequestsPerCall int `json:"max_tool_requests_per_call,omitempty" jsonschema:"minimum=1,maximum=1000000"`
	// IdleTimeout (real time, never scaled) is how long the agent may send
	// nothing, not even a pong, before the call ends ("unresponsive").
	IdleTimeout Duration `json:"idle_timeout,omitempty"`
	// MaxToolConnections bounds the call's open connections to its tools
	// listener ("tool connections").
	MaxToolConnections int `json:"max_tool_connections,omitempty" jsonschema:"minimum=1,maximum=4096"`
	// MaxToolHeaderBytes bounds one tool request's headers ("tool
	// connections").
	MaxToolHeaderBytes int `json:"max_tool_header_bytes,omitempty" jsonschema:"minimum=1,maximum=1048576"`
	// ToolHeaderTimeout (real time) bounds reading one tool request's
	// headers ("tool connections").
	ToolHeaderTimeout Duration `json:"tool_header_timeout,omitempty"`
	// MaxIdleToolConnections bounds the call's idle keep-alive tool
	// connections ("tool connections").
	MaxIdleToolConnections int `json:"max_idle_tool_connections,omitempty" jsonschema:"minimum=1,maximum=4096"`
}

// Duration is a time.Duration written as a Go duration string ("300ms").
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf("%q", time.Duration(d).String())), nil
}

// durationPattern matches what time.ParseDuration accepts, without a sign.
const durationPattern = `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$|^0$`

// JSONSchema describes Duration in the generated schema.
func (Duration) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: durationPattern, Description: `Go duration, e.g. "300ms", "1.5s"`}
}
