package callsim

import (
	"context"
	"fmt"
	"time"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// Voice is an optional Conn capability of audio dialects: the caller's
// words and noises become sound on the wire, so an utterance lasts as long
// as its audio, not as long as the script's word count says. The simulator
// prepares each utterance before its onset frame (same id) and each noise
// before its onset frame; the onset starts the sound at the dialect's next
// frame.
type Voice interface {
	// PrepareSpeech makes the audio of text ready under id and returns
	// its length (real time).
	PrepareSpeech(ctx context.Context, id, text string) (time.Duration, error)
	// PrepareSound makes a noise of kind ready under id, d long.
	PrepareSound(ctx context.Context, id, kind string, d time.Duration) error
	// PrepareRecording makes a recorded WAV ready under id instead, as
	// the utterance (noise false) or the noise (true), and returns its
	// length.
	PrepareRecording(ctx context.Context, id, path string, noise bool) (time.Duration, error)
}

// Flusher is an optional Conn capability of dialects that derive agent
// events after the fact (an utterance's text is known only once it was
// transcribed). Flush returns once every such event has been taken by
// Recv and the agent's speech in progress has been closed, or when ctx
// ends. The simulator calls it when the script is over, before the stop
// frame, while it still records what Recv returns.
type Flusher interface {
	Flush(ctx context.Context) error
}

// Pacer is an optional Conn capability of real-time dialects: how late the
// caller's frames went out against their 20 ms schedule. A call whose
// lateness an agent could perceive (Lateness.Behind) ends as
// harness_error: its timings are the harness's, not the agent's.
type Pacer interface {
	Lateness() Lateness
}

// Lateness summarises how far behind schedule the caller's frames went
// out.
type Lateness struct {
	Frames        int           // frames sent
	P50, P99, Max time.Duration // lateness percentiles and worst
	Frame         time.Duration // the frame length
}

// JitterAllowance is how late one caller frame may go out and the call
// still be the agent's to judge. Every agent plays its input through a
// jitter buffer, real telephony jitters by tens of milliseconds, and a
// late frame is followed at once by the ones queued behind it, so the
// agent sees a short hiccup, not a pause; 60 ms stays well under the
// 100 ms of quiet in which a listener first hears a break in speech.
const JitterAllowance = 60 * time.Millisecond

// Behind reports whether the caller's pacing was too late to trust the
// call's timings: a frame went out later than JitterAllowance. Lateness
// is measured against the schedule fixed when the call started, not
// against the previous frame, so it is also the stream's cumulative
// drift: a pacer slowly falling behind crosses the allowance as surely as
// one stall does, while a few frames a millisecond or two over their
// slot never do.
func (l Lateness) Behind() bool { return l.Frame > 0 && l.Max > JitterAllowance }

// Why states the figures of a call that fell behind, after ReasonBehind.
func (l Lateness) Why() string {
	return fmt.Sprintf("frames up to %s late (p99 %s), over the %s jitter allowance", l.Max, l.P99, JitterAllowance)
}

// ReasonBehind is the harness_error reason of a call whose caller fell
// behind real time (followed by the figures).
const ReasonBehind = "caller fell behind real time"

// PacingIndependent reports whether an agent_error reason judges only
// what the agent sent (how it parses, how much of it there is), never
// the caller's timing: a call that ends so stays
// agent_error even if its caller fell behind real time (ReasonBehind). An
// agent's junk must never make the harness blame itself, and decoding
// that junk is what may have made the caller late. A flood is not one:
// it is counted per second as frames are read, so a reader that was late
// reads a burst.
func PacingIndependent(reason string) bool {
	for _, r := range PacingIndependentReasons() {
		if reason == r {
			return true
		}
	}
	return false
}

// PacingIndependentReasons lists PacingIndependent's reasons.
func PacingIndependentReasons() []string {
	return []string{ReasonGarbageFrame, ReasonOversizedFrame, ReasonTextBudget, ReasonHistoryBudget}
}

// TurnTaker is an optional Conn capability of audio dialects: turn-taking
// measured from the audio itself, frame by frame, rather than from when
// events were recorded.
type TurnTaker interface {
	TurnTaking() TurnTaking
}

// TurnTaking is what the audio showed of the call's turn-taking (real
// time). They are diagnostics beside the six axes, not integrity axes.
type TurnTaking struct {
	// Responses: per caller turn the agent answered, from the caller's
	// last frame of speech to the agent's first loud frame.
	Responses []time.Duration `json:"responses,omitempty"`
	// Yields: per barge-in (caller speech starting over agent audio), from
	// the caller's first frame of speech to the agent's audio stopping (its
	// last loud frame played, or its clear).
	Yields []time.Duration `json:"yields,omitempty"`
	// BargeIns counts caller utterances that began over agent audio;
	// a barge-in the agent never yielded to has no Yields entry.
	BargeIns int `json:"barge_ins,omitempty"`
	// FalseYields counts clears the agent sent while the caller made only
	// noise (no speech in progress).
	FalseYields int `json:"false_yields,omitempty"`
}

// CallSetup is what a transport may tailor to one call.
type CallSetup struct {
	ID      string
	Tools   []trace.ToolSpec
	Records []trace.Record
	// CallDate and TimeZone are the call's calendar (empty: unstated).
	CallDate string
	TimeZone string
	// Access is the call's way to its tools (URL, token, MCP URL,
	// catalogue) and CustomParameters the scenario's, for a dialect that
	// hands the call's data over before its start (WebRTC's request_data).
	Access           native.Tools
	CustomParameters map[string]string
}

// PerCall is an optional Transport capability: a transport set up for one
// call — its recording's file, its recognizer's grammar (built from the
// call's catalogue and records), its noise seed. The harness asks for one
// per call when the transport has it.
type PerCall interface {
	ForCall(c CallSetup) Transport
}

// Recorded is an optional Conn capability: the file the call's audio was
// written to when the connection closed ("" when none).
type Recorded interface {
	Recording() string
}

// Stretcher is an optional Conn capability of dialects whose calls run
// slower than the script's timing model: real synthesized speech, the
// agent's and the caller's, takes longer than a scripted 300 ms a word,
// and a recognizer needs time after each utterance. WaitStretch (at least
// 1) multiplies every bound on waiting — the call timeout, step and
// trigger timeouts, the no-response rule, the idle timeout — and nothing
// else: delays, durations and quiet periods keep their script values, so
// the race a scenario sets up is the same race.
type Stretcher interface {
	WaitStretch() float64
}
