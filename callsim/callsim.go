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

// Protocol violations a Conn reports from Recv.
var (
	ErrGarbageFrame   = errors.New("garbage frame")
	ErrOversizedFrame = errors.New("oversized frame")
)

// Call is one call to run.
type Call struct {
	ID               string
	AgentURL         string
	Script           trace.Script
	Tools            native.Tools
	TimeScale        float64 // offered to the agent; 0 means 1.0
	CustomParameters map[string]string
	Recorder         *trace.Recorder
	Backend          Backend // may be nil when the script has no backend steps
	Transport        Transport
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
}

// Options bound and tune the simulator. Zero values take the defaults.
type Options struct {
	Clock                trace.Clock   // flood metering; default the system clock
	MaxFrameBytes        int64         // default 1 MiB
	MaxMessagesPerSecond int           // sustained rate; default 500
	MaxMessagesPerCall   int           // default 20,000
	AckWait              time.Duration // real time to wait for ack; default 300ms
	DialTimeout          time.Duration // default 5s
	StopTimeout          time.Duration // real time for the final stop frame; default 1s
}

// Defaults for Options and for unset script bounds (script time).
const (
	DefaultMaxFrameBytes        = 1 << 20
	DefaultMaxMessagesPerSecond = 500
	DefaultMaxMessagesPerCall   = 20000
	DefaultAckWait              = 300 * time.Millisecond
	DefaultDialTimeout          = 5 * time.Second
	DefaultStopTimeout          = time.Second
	DefaultStepTimeout          = 10 * time.Second
	DefaultCallTimeout          = 2 * time.Minute
	DefaultQuiet                = time.Second
	DefaultNoise                = 500 * time.Millisecond
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
	if opts.MaxFrameBytes <= 0 {
		opts.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if opts.MaxMessagesPerSecond <= 0 {
		opts.MaxMessagesPerSecond = DefaultMaxMessagesPerSecond
	}
	if opts.MaxMessagesPerCall <= 0 {
		opts.MaxMessagesPerCall = DefaultMaxMessagesPerCall
	}
	if opts.AckWait <= 0 {
		opts.AckWait = DefaultAckWait
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = DefaultDialTimeout
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = DefaultStopTimeout
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

func agentError(reason string) *ending {
	return &ending{outcome: trace.OutcomeAgentError, reason: reason}
}
