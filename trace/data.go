package trace

import (
	"time"
	_ "time/tzdata" // CallStart.Today reads the same zones on every machine
)

// Outcome of a call, separate from its verdict.
type Outcome string

// Outcomes. Only OutcomeScored calls carry axis verdicts that count.
const (
	OutcomeScored       Outcome = "scored"
	OutcomeAgentError   Outcome = "agent_error"   // agent crashed, hung, broke protocol
	OutcomeHarnessError Outcome = "harness_error" // our fault: never a verdict; re-run
	OutcomeExcluded     Outcome = "excluded"      // scenario meaningless without a missed trigger
)

// CallStart opens every history. The scorer reads Script, Tools and
// Records; ScenarioID and Category are labels for reports and the gate and
// must never change a score.
type CallStart struct {
	Schema     int    `json:"schema"`
	ScenarioID string `json:"scenario"`
	// Trial is which of a run's repeated calls of the scenario this is
	// (from 1); 0 when the run places each scenario once.
	Trial     int        `json:"trial,omitempty"`
	Category  string     `json:"category,omitempty"`
	Suite     string     `json:"suite,omitempty"`
	Agent     string     `json:"agent,omitempty"`
	Transport string     `json:"transport,omitempty"`
	Seed      int64      `json:"seed"`
	TimeScale float64    `json:"time_scale"`
	Script    Script     `json:"script"`
	Tools     []ToolSpec `json:"tools"`
	Records   []Record   `json:"records"`
	Faults    []Fault    `json:"faults,omitempty"`
	// CallDate (YYYY-MM-DD) and TimeZone (IANA name) are the call's
	// calendar, which relative dates resolve against. Empty in histories
	// recorded before they existed: readers treat relative dates as unknown.
	CallDate string `json:"call_date,omitempty"`
	TimeZone string `json:"time_zone,omitempty"`
}

// CallEnd closes a history with what the harness saw. Outcome is empty when
// the call ran to completion; the scorer then decides (usually scored).
type CallEnd struct {
	Outcome Outcome `json:"outcome,omitempty"`
	Reason  string  `json:"reason,omitempty"`
	// TimeScale is the scale the call actually ran at: the offered one if
	// the agent acknowledged it, else 1.0. Zero in older histories.
	TimeScale float64 `json:"time_scale,omitempty"`
	// Diagnostics beside the axes (not verdicts).
	ResponseLatency time.Duration `json:"response_latency,omitempty"`
	YieldLatency    time.Duration `json:"yield_latency,omitempty"`
	// Audio is set for calls over an audio dialect: what the audio showed.
	Audio *AudioDiag `json:"audio,omitempty"`
	// Lateness is how late the harness's own scheduled actions ran
	// against the script in this call. Zero in older histories.
	Lateness *HarnessLateness `json:"harness_lateness,omitempty"`
	// AgentLateness is how late the agent's own timers ran in this call,
	// for an agent the harness runs in its own process and measures
	// itself (the reference agents); nil for any other agent. It is never
	// read from the wire: an agent cannot excuse a call by claiming it.
	AgentLateness *AgentLateness `json:"agent_lateness,omitempty"`
}

// HarnessLateness is how late the harness's own timers fired in one call,
// against when the script (or the event that triggered a step) said they
// should: a measure of the harness's machine, never of the agent. Real
// time; Worst is in script time, the figure the overload bound applies to.
type HarnessLateness struct {
	// Triggers: steps that waited for a time or an event, from that time
	// (or the event's arrival) to the step starting; wait_quiet included.
	Triggers LatenessStat `json:"triggers"`
	// Speech: the caller's words (partials and finals at their word
	// times), noise and silence ends; in audio, the caller's 20 ms frames.
	Speech LatenessStat `json:"speech"`
	// Backend: the mock backend's own timers (a hold's release after its
	// max, an injected latency, a timeout fault).
	Backend LatenessStat `json:"backend"`
	// Worst is the largest Max above divided by the call's time scale.
	Worst time.Duration `json:"worst_script"`
	// CPUPressure is the share (0..1) of the call's wall time during
	// which some runnable task on this machine waited for a CPU (Linux
	// pressure stall information): an agent on the same machine starves
	// with the harness. Absent where the kernel does not report it.
	CPUPressure *float64 `json:"cpu_pressure,omitempty"`
}

// AgentLateness is how late an in-process agent's own timers fired in one
// call, measured on the agent's clock against when each was due: a
// measure of the machine the agent shares with the harness, never a
// verdict on the agent. Real time; Worst is in script time, the figure
// the overload bound applies to.
type AgentLateness struct {
	// Timers: every timer the agent set (end of turn, preparation, the
	// read-back's wait, tool timeouts, polls and back-offs, each word),
	// from when it was due to when it fired.
	Timers LatenessStat `json:"timers"`
	// Speech: each spoken word against its utterance's schedule (the
	// utterance's start plus its words' time, on which each word is
	// timed): how far the agent's speech fell behind its own pace.
	Speech LatenessStat `json:"speech"`
	// Reads: each caller frame, from when the caller sent it to when the
	// agent's loop took it; Sends: each agent frame, from when the
	// agent's loop sent it to when the caller read it. Both ends run in
	// one process, so one clock measures them (the native text wire
	// only, WireTimes; empty on other wires). A message that reaches its
	// reader late is acted on late, which no timer of either side shows.
	Reads LatenessStat `json:"reads"`
	Sends LatenessStat `json:"sends"`
	// Tools: each tool request, from the agent's call to the moment it
	// was written to its connection (its departure).
	Tools LatenessStat `json:"tools"`
	// Worst is the largest Max above divided by TimeScale, Reads and
	// Sends taken together: the caller's answer to an agent's act reaches
	// the agent late by a send and a read (the round trip, RoundTrip).
	Worst time.Duration `json:"worst_script"`
	// TimeScale is the scale the agent acknowledged and ran its timers
	// at; the caller ran at 1.0 instead when the ack came too late.
	TimeScale float64 `json:"time_scale"`
}

// Settle sets TimeScale (1 when scale <= 0) and Worst at it.
func (l *AgentLateness) Settle(scale float64) {
	if scale <= 0 {
		scale = 1
	}
	l.TimeScale = scale
	l.Worst = time.Duration(float64(max(l.Timers.Max, l.Speech.Max, l.RoundTrip(), l.Tools.Max)) / scale)
}

// RoundTrip is the latest send and the latest read together (real time):
// the most an agent's act and the caller's answer to it could have been
// delayed on their way, which neither side's timers show.
func (l *AgentLateness) RoundTrip() time.Duration { return l.Reads.Max + l.Sends.Max }

// WireTimes is when the caller sent each of its frames (Sent[k]: the
// frame with sequence number k+1) and read each of the agent's (Received,
// in order), on the process's clock. A runner hands them to an agent in
// its own process (harness.Runner.AgentLateness), which matches them
// against its own reads and sends (AgentLateness.Reads, .Sends).
type WireTimes struct {
	Sent     []time.Time
	Received []time.Time
}

// MaxWireTimes bounds each list of WireTimes; later frames are not timed.
const MaxWireTimes = 1 << 14

// LatenessStat counts the scheduled actions of one kind in a call and how
// late the worst of them ran (real time).
type LatenessStat struct {
	N   int           `json:"n"`
	Max time.Duration `json:"max"`
}

// Add folds one action's lateness in.
func (s *LatenessStat) Add(late time.Duration) {
	s.N++
	s.Max = max(s.Max, late)
}

// Merge folds another count of the same kind in.
func (s *LatenessStat) Merge(o LatenessStat) {
	s.N += o.N
	s.Max = max(s.Max, o.Max)
}

// Settle sets Worst from the three kinds at the call's time scale (1 when
// scale <= 0).
func (l *HarnessLateness) Settle(scale float64) {
	if scale <= 0 {
		scale = 1
	}
	m := max(l.Triggers.Max, l.Speech.Max, l.Backend.Max)
	l.Worst = time.Duration(float64(m) / scale)
}

// UnclearText starts the recorded text of an agent utterance that was
// transcribed from audio by a recognizer that could not vouch for the
// words: the scorer reads such an utterance as an undecided claim and
// takes no values from it.
const UnclearText = "[unclear]"

// RecognizedText starts the recorded text of an agent utterance that was
// transcribed from audio by a recognizer that vouched for the words (not
// the agent's own transcript). The scorer reads its claim and its values,
// but a value in it that differs from what the backend or the caller's
// intent holds is no proof: a recognizer can mishear one number as
// another, consistently. Such a mismatch leaves the axis unknown, never
// failed (docs/SCORING.md, "Recognized speech").
const RecognizedText = "[recognized]"

// AudioDiag is an audio call's timing, measured on the call's 20 ms frame
// clock (real time). Diagnostics, never verdicts.
type AudioDiag struct {
	// Frames the caller sent, and how late against their schedule.
	Frames      int           `json:"frames"`
	LatenessP50 time.Duration `json:"lateness_p50"`
	LatenessP99 time.Duration `json:"lateness_p99"`
	LatenessMax time.Duration `json:"lateness_max"`
	// Responses: caller's end of speech to the agent's first audio, per
	// answered turn. Yields: caller's speech onset over agent audio to
	// that audio stopping or being cleared, per yield.
	Responses   []time.Duration `json:"responses,omitempty"`
	Yields      []time.Duration `json:"yields,omitempty"`
	BargeIns    int             `json:"barge_ins,omitempty"`
	FalseYields int             `json:"false_yields,omitempty"` // clears while the caller made only noise
	Recording   string          `json:"recording,omitempty"`    // the stereo WAV, relative to the history
}

// TriggerNote records a script step's trigger.
type TriggerNote struct {
	Step   string `json:"step"`
	On     string `json:"on,omitempty"`     // the trigger as written
	Cause  int    `json:"cause,omitempty"`  // seq of the event that fired it
	Reason string `json:"reason,omitempty"` // why it was missed
}

// Note is free text.
type Note struct {
	Text string `json:"text,omitempty"`
}

// Snapshot is the backend's state when the call ended.
type Snapshot struct {
	Records []Record `json:"records"`
}

// CallerSpeech is one caller utterance. Intent is what the caller wants once
// this utterance is complete (versioned: each change bumps Intent.Version).
type CallerSpeech struct {
	Step        string  `json:"step"`
	Utterance   string  `json:"utt"`
	Act         Act     `json:"act"`
	Text        string  `json:"text"`
	Intent      *Intent `json:"intent,omitempty"`
	Invalidates bool    `json:"invalidates,omitempty"`
}

// CallerNoise is a non-speech sound the agent must not treat as speech.
type CallerNoise struct {
	Step     string        `json:"step"`
	ID       string        `json:"id"`
	Sound    string        `json:"sound"`
	Duration time.Duration `json:"duration,omitempty"`
}

// CallerDTMF is keypad input.
type CallerDTMF struct {
	Step   string  `json:"step"`
	Digits string  `json:"digits"`
	Intent *Intent `json:"intent,omitempty"`
}

// AgentSpeech is one agent utterance (start, text, end or clear).
type AgentSpeech struct {
	Utterance string `json:"utt"`
	Text      string `json:"text,omitempty"`
}

// AgentToolIntent is the agent's notice that it started preparing a call.
type AgentToolIntent struct {
	Tool string            `json:"tool"`
	Args map[string]string `json:"args,omitempty"`
}

// AgentState is the agent's self-report of its working state.
type AgentState struct {
	Version int               `json:"version"`
	Slots   map[string]string `json:"slots"`
	Pending string            `json:"pending,omitempty"` // action it intends, if any
}

// ToolEvent is every backend event of one HTTP tool request. Fields are
// filled as the request progresses; each event carries the ones it adds.
type ToolEvent struct {
	Ref            string            `json:"ref"`
	Tool           string            `json:"tool"`
	Args           map[string]string `json:"args,omitempty"`
	IdempotencyKey string            `json:"idem_key,omitempty"`
	BuiltFrom      *int              `json:"built_from,omitempty"` // X-State-Version the agent sent
	Remote         string            `json:"remote,omitempty"`
	Hold           string            `json:"hold,omitempty"`
	Fault          string            `json:"fault,omitempty"`
	Status         int               `json:"status,omitempty"`
	Error          string            `json:"error,omitempty"`
	Dropped        bool              `json:"dropped,omitempty"` // response never sent
	// Deleted (tool.committed of a delete): the record Table/Key was
	// removed; Before holds its last fields, After is empty.
	Deleted  bool   `json:"deleted,omitempty"`
	Reason   string `json:"reason,omitempty"`
	ReplayOf string `json:"replay_of,omitempty"`
	// DuplicateOf: this request is the network repeating request Ref
	// (a duplicate-delivery fault); its answer reached nobody.
	DuplicateOf string `json:"duplicate_of,omitempty"`
	// Commit details.
	Table         string            `json:"table,omitempty"`
	Key           string            `json:"key,omitempty"`
	Before        map[string]string `json:"before,omitempty"`
	After         map[string]string `json:"after,omitempty"`
	VersionBefore int               `json:"version_before,omitempty"`
	VersionAfter  int               `json:"version_after,omitempty"`
	// Response body as sent (or as it would have been, if Dropped).
	Body string `json:"body,omitempty"`
}

// Today is the call's date as midnight in its time zone: what "today"
// means to the caller, for resolving relative dates. ok is false when the
// history has no calendar (recorded before it existed) or a bad one:
// readers then treat relative dates as unknown.
func (s *CallStart) Today() (day time.Time, ok bool) {
	if s == nil || s.CallDate == "" || s.TimeZone == "" {
		return time.Time{}, false
	}
	loc, err := time.LoadLocation(s.TimeZone)
	if err != nil || s.TimeZone == "Local" {
		return time.Time{}, false
	}
	d, err := time.ParseInLocation("2006-01-02", s.CallDate, loc)
	if err != nil {
		return time.Time{}, false
	}
	return d, true
}
