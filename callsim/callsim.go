package callsim

import (
	"context"
	"errors"
	"time"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// Backend is the scenario's control over the agent's tools during a call.
// *mockbackend.Call satisfies it. Durations are script time: the backend
// applies the scale it was given by SetTimeScale.
type Backend interface {
	Hold(name string, m *trace.ToolMatch, max time.Duration) error
	Release(name string) error
	Fail(name string, status int) error
	Inject(f trace.Fault) error
	SetTimeScale(f float64)
}

// Transport dials an agent in one wire dialect.
type Transport interface {
	Dial(ctx context.Context, agentURL string) (Conn, error)
}

// Conn is one call's connection, in native messages whatever the dialect.
// Send and Recv may be used from different goroutines; Close is safe to
// call more than once and unblocks both.
type Conn interface {
	Send(ctx context.Context, m native.Message) error
	// Recv returns the next frame. Errors wrap ErrGarbageFrame or
	// ErrOversizedFrame when the agent broke the protocol; any other error
	// means the connection is gone.
	Recv(ctx context.Context) (Frame, error)
	Close() error
}

// Frame is one message from the agent with the text it arrived as, kept so
// unknown messages can be recorded verbatim.
type Frame struct {
	Message native.Message
	Raw     []byte
}

// FrameLimiter is an optional Conn capability: refuse frames larger than n
// bytes. The simulator calls it before the first Recv.
type FrameLimiter interface {
	SetFrameLimit(n int64)
}

// Lingerer is an optional Conn capability: how long the caller, its
// script done, stays on the line in silence before it hangs up, for an
// agent known to leave some time after its last words (a Pipecat bot
// over WebRTC plays out silence first). An agent leaving meanwhile ends
// the call as its own hang-up. Zero or less: the caller hangs up at once.
type Lingerer interface {
	Linger() time.Duration
}

// Deadliner is an optional Conn capability that bounds every wait on the
// agent inside the connection itself, so no read or write outlives the
// call and a hung agent is noticed even while the caller is silent. The
// simulator calls both methods before the first Recv and again once the
// call's time scale is settled; they may be called while a Recv is
// blocked and take effect on it.
type Deadliner interface {
	// SetCallDeadline makes every read and write fail after t (the call's
	// end plus the time for the stop frame).
	SetCallDeadline(t time.Time)
	// SetIdleTimeout makes Recv fail with ErrUnresponsive once the agent
	// has sent nothing for d: no frame and no answer to the connection's
	// keepalive (a WebSocket ping). Zero turns it off.
	SetIdleTimeout(d time.Duration)
}

// Protocol violations a Conn reports from Recv.
var (
	ErrGarbageFrame   = errors.New("garbage frame")
	ErrOversizedFrame = errors.New("oversized frame")
	// ErrUnresponsive: the agent sent nothing, not even a pong, within the
	// idle timeout (see Deadliner), or a read outlasted the call deadline.
	ErrUnresponsive = errors.New("agent unresponsive")
)

// Reasons a call ends as agent_error (Result.Reason). The ones marked
// "prefix" are followed by ": " and the underlying error.
const (
	ReasonDial           = "dial"                        // prefix: connection refused, handshake failed or timed out
	ReasonClosed         = "agent closed the connection" // prefix: the agent's side went away while the pump read
	ReasonConnLost       = "connection lost"             // prefix: a write to the agent failed
	ReasonGarbageFrame   = "garbage frame"               // not a JSON object, or a binary frame
	ReasonOversizedFrame = "oversized frame"             // one frame over Limits.MaxFrameBytes
	ReasonFlood          = "flood"                       // over Limits.MaxMessagesPerSecond sustained, or Limits.MaxMessagesPerCall
	ReasonTextBudget     = "text budget"                 // agent text over Limits.MaxCallTextBytes in one call
	ReasonHistoryBudget  = "history budget"              // the call's history over Limits.MaxHistoryBytes or Limits.MaxHistoryEvents
	ReasonUnresponsive   = "unresponsive"                // nothing from the agent, not even a pong, for Limits.IdleTimeout
	ReasonNoResponse     = "no response"                 // no agent speech within the step timeout after the caller's first final
	ReasonCallTimeout    = "call timeout"                // the script outlasted the call timeout
	ReasonAborted        = "aborted"                     // Call.Abort fired without a reason
)

// TruncationMarker ends agent text cut to Limits.MaxEventTextBytes in a
// recorded event.
const TruncationMarker = "…(truncated)"

// Limits bound what one call accepts from the agent. A zero field is
// unset: in Call.Limits it falls back to the Simulator's Options.Limits,
// and there to the Default constant of the same name. Values below zero
// count as unset.
//
// Agent text is every string an agent message carries into the history:
// agent_speech id and text, clear id, tool_intent tool and args, state
// slots and pending, hangup reason, transfer target, ack agent name. It is
// counted as sent (before truncation). Unknown messages are not text: they
// are recorded cut to MaxEventTextBytes and count towards the history.
type Limits struct {
	MaxFrameBytes        int64 // largest frame; over it the call ends (oversized frame)
	MaxMessagesPerSecond int   // sustained frame rate, bursts of one second's worth; over it: flood
	MaxMessagesPerCall   int   // frames in one call; over it: flood
	// MaxEventTextBytes bounds the agent text kept in one recorded event;
	// the rest is cut and TruncationMarker appended. The call goes on.
	MaxEventTextBytes int
	// MaxCallTextBytes bounds the agent text of one call, as sent; over it
	// the call ends (text budget).
	MaxCallTextBytes int64
	// MaxHistoryBytes bounds the call's history as JSONL (every party's
	// events, as trace.WriteJSONL writes them); over it the call ends
	// (history budget), keeping the event that crossed it.
	MaxHistoryBytes int64
	// MaxHistoryEvents bounds the number of events in the call's history;
	// over it the call ends (history budget).
	MaxHistoryEvents int
	// IdleTimeout (real time) is how long the agent may send nothing, not
	// even a pong to the connection's keepalive, before the call ends
	// (unresponsive). Unset, it is the scaled step timeout but at least
	// DefaultMinIdleTimeout. Needs a Conn that is a Deadliner.
	IdleTimeout time.Duration
}

// or fills l's unset fields from def.
func (l Limits) or(def Limits) Limits {
	pick := func(v, d int64) int64 {
		if v <= 0 {
			return d
		}
		return v
	}
	l.MaxFrameBytes = pick(l.MaxFrameBytes, def.MaxFrameBytes)
	l.MaxMessagesPerSecond = int(pick(int64(l.MaxMessagesPerSecond), int64(def.MaxMessagesPerSecond)))
	l.MaxMessagesPerCall = int(pick(int64(l.MaxMessagesPerCall), int64(def.MaxMessagesPerCall)))
	l.MaxEventTextBytes = int(pick(int64(l.MaxEventTextBytes), int64(def.MaxEventTextBytes)))
	l.MaxCallTextBytes = pick(l.MaxCallTextBytes, def.MaxCallTextBytes)
	l.MaxHistoryBytes = pick(l.MaxHistoryBytes, def.MaxHistoryBytes)
	l.MaxHistoryEvents = int(pick(int64(l.MaxHistoryEvents), int64(def.MaxHistoryEvents)))
	l.IdleTimeout = time.Duration(pick(int64(l.IdleTimeout), int64(def.IdleTimeout)))
	return l
}

// DefaultLimits returns the Default limits (IdleTimeout stays unset: it
// follows the step timeout).
func DefaultLimits() Limits {
	return Limits{
		MaxFrameBytes:        DefaultMaxFrameBytes,
		MaxMessagesPerSecond: DefaultMaxMessagesPerSecond,
		MaxMessagesPerCall:   DefaultMaxMessagesPerCall,
		MaxEventTextBytes:    DefaultMaxEventTextBytes,
		MaxCallTextBytes:     DefaultMaxCallTextBytes,
		MaxHistoryBytes:      DefaultMaxHistoryBytes,
		MaxHistoryEvents:     DefaultMaxHistoryEvents,
	}
}

// Call is one call to run.
type Call struct {
	ID               string
	AgentURL         string
	Script           trace.Script
	Tools            native.Tools
	TimeScale        float64 // offered to the agent; 0 means 1.0
	CustomParameters map[string]string
	// CallDate (YYYY-MM-DD) and TimeZone (IANA) go to the agent in start;
	// empty ones are left out.
	CallDate  string
	TimeZone  string
	Recorder  *trace.Recorder
	Backend   Backend // may be nil when the script has no backend steps
	Transport Transport
	// Limits overrides the Simulator's limits for this call (per-scenario
	// budgets); zero fields keep the Simulator's.
	Limits Limits
	// Abort, when set, ends the call early as agent_error: the first
	// string received is the reason (ReasonAborted if the channel is
	// closed or the string empty). The harness uses it for what only it
	// sees, such as the mock backend's tool request budget. An ending
	// already settled wins.
	Abort <-chan string
}

// Result is what the simulator saw. Outcome is "" when the call ran to its
// end (script done, caller or agent hung up); otherwise agent_error,
// harness_error or excluded, with Reason.
type Result struct {
	Outcome   trace.Outcome
	Reason    string
	TimeScale float64 // the scale actually used
	// Diagnostics, real durations (zero when not observed).
	ResponseLatency time.Duration
	YieldLatency    time.Duration
	// Lateness of the caller's frames, for dialects that pace them in
	// real time (nil otherwise).
	Lateness *Lateness
	// Harness is how late the caller's own timers fired against the
	// script: Triggers and Speech (the caller's frames included); the
	// backend's are the backend's to add.
	Harness trace.HarnessLateness
	// Wire is when the caller sent each frame and read each of the
	// agent's, for an agent in the same process to measure how late it
	// read and how late it was heard (trace.WireTimes).
	Wire trace.WireTimes
	// Turns, for audio dialects: turn-taking as the audio showed it.
	Turns *TurnTaking
	// Recording is the file the call's audio went to, if any.
	Recording string
}

// Options bound and tune the simulator. Zero values take the defaults.
type Options struct {
	Clock trace.Clock // flood metering; default the system clock
	// Limits for every call; a Call's own Limits override them field by
	// field.
	Limits
	AckWait      time.Duration // real time to wait for ack; default 300ms
	DialTimeout  time.Duration // default 5s
	StopTimeout  time.Duration // real time for the final stop frame; default 1s
	CloseTimeout time.Duration // real time to wait for the connection to close and its reader to stop; default 2s
	FlushTimeout time.Duration // real time a Flusher gets to deliver derived agent events at the end; default 10s
}

// Defaults for Options and Limits, and for unset script bounds (script
// time).
const (
	// DefaultMaxFrameBytes bounds one agent frame (1 MiB).
	DefaultMaxFrameBytes = 1 << 20
	// DefaultMaxMessagesPerSecond is the sustained agent frame rate; bursts
	// of one second's worth are allowed.
	DefaultMaxMessagesPerSecond = 500
	// DefaultMaxMessagesPerCall bounds the agent frames of one call.
	DefaultMaxMessagesPerCall = 20000
	// DefaultMaxEventTextBytes bounds the agent text kept per recorded
	// event (4 KiB). The reference agents' longest phrase is under 100
	// bytes; a spoken minute is about 1 KiB of text.
	DefaultMaxEventTextBytes = 4 << 10
	// DefaultMaxCallTextBytes bounds the agent text of one call as sent
	// (256 KiB): a reference call sends under 1 KiB, and even an agent
	// resending its whole utterance on every word stays far below it.
	DefaultMaxCallTextBytes = 256 << 10
	// DefaultMaxHistoryBytes bounds one call's history as JSONL (2 MiB): a
	// reference call's history is 15–20 KiB, start event included.
	DefaultMaxHistoryBytes = 2 << 20
	// DefaultMaxHistoryEvents bounds the events of one call's history: a
	// reference call has under 300, and it stays above
	// DefaultMaxMessagesPerCall so frame floods are reported as flood.
	DefaultMaxHistoryEvents = 25000
	// DefaultMinIdleTimeout is the least IdleTimeout (real time) when it
	// follows a scaled step timeout: a live agent answers a ping in
	// milliseconds, so only a stopped or deaf one comes near it.
	DefaultMinIdleTimeout = 2 * time.Second
	// DefaultAckWait is how long (real time) the caller waits for ack
	// after start when it offers a time scale other than 1.
	DefaultAckWait = 300 * time.Millisecond
	// DefaultDialTimeout bounds the connection and the WebSocket
	// handshake (real time).
	DefaultDialTimeout = 5 * time.Second
	// DefaultStopTimeout bounds the write of the final stop frame (real
	// time).
	DefaultStopTimeout = time.Second
	// DefaultFlushTimeout bounds the wait for an audio dialect's last
	// derived agent events (transcripts) when the script is over (real
	// time): a recognizer pass over the longest utterance takes seconds.
	DefaultFlushTimeout = 10 * time.Second
	// DefaultCloseTimeout bounds the wait for the connection's Close and
	// its reader's exit when a call ends (real time).
	DefaultCloseTimeout = 2 * time.Second
	// DefaultStepTimeout (script time) is a script's step timeout when it
	// sets none: how long a trigger waits, and how long the agent has to
	// speak after the caller's first final (no response).
	DefaultStepTimeout = 10 * time.Second
	// DefaultCallTimeout (script time) bounds a call whose script sets no
	// call timeout.
	DefaultCallTimeout = 2 * time.Minute
	// DefaultQuiet (script time) is how long wait_quiet wants the agent
	// quiet when the script sets no quiet period.
	DefaultQuiet = time.Second
	// DefaultNoise (script time) is the length of a noise step without a
	// duration.
	DefaultNoise = 500 * time.Millisecond
	// Speech without a Duration lasts WordDuration per word, at least
	// MinSpeech.
	WordDuration = 300 * time.Millisecond
	MinSpeech    = 600 * time.Millisecond
)

// Simulator runs calls. It holds only configuration, so one Simulator may
// run many calls at once.
type Simulator struct {
	opts Options
}

// New returns a Simulator with opts, defaults filled in.
func New(opts Options) *Simulator {
	if opts.Clock == nil {
		opts.Clock = trace.SystemClock{}
	}
	opts.Limits = opts.Limits.or(DefaultLimits())
	if opts.AckWait <= 0 {
		opts.AckWait = DefaultAckWait
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = DefaultDialTimeout
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = DefaultStopTimeout
	}
	if opts.FlushTimeout <= 0 {
		opts.FlushTimeout = DefaultFlushTimeout
	}
	if opts.CloseTimeout <= 0 {
		opts.CloseTimeout = DefaultCloseTimeout
	}
	return &Simulator{opts: opts}
}

// ending is why a call ended; it travels as a context cause.
type ending struct {
	outcome trace.Outcome
	reason  string
}

func (e *ending) Error() string {
	if e.outcome == "" {
		return e.reason
	}
	return string(e.outcome) + ": " + e.reason
}

// AgentFault is a cause to cancel the context a call runs under (Run's
// ctx) with: the call then ends as agent_error with reason, as with
// Call.Abort but without a goroutine watching a channel. For what only the
// caller of Run sees, such as the mock backend's tool request budget.
func AgentFault(reason string) error { return agentError(reason) }

func agentError(reason string) *ending {
	return &ending{outcome: trace.OutcomeAgentError, reason: reason}
}
