package agents

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/callproof/callproof/trace"
)

// Flaw names one failure mode of the engine. Each can be switched on alone.
type Flaw string

// The flaws of the naive agent (seed 001's known-bad mock pipeline).
const (
	// KeepsBuiltCalls never discards a tool call once built: a correction or
	// stop during preparation does not stop it being sent with the old args.
	KeepsBuiltCalls Flaw = "keeps_built_calls"
	// KeepsSentCalls never cancels an in-flight call on a correction or
	// interruption; it waits for the old call and takes its result as the
	// answer. It therefore never undoes a write either.
	KeepsSentCalls Flaw = "keeps_sent_calls"
	// TrustsToolResults never re-checks a result unless it looks broken: a
	// 200's record is taken as truth and confirmed. (A 202 is not a result
	// yet; what it does with one is ConfirmsOnAccept's business.)
	TrustsToolResults Flaw = "trusts_tool_results"
	// AnySoundBargesIn treats any sound onset as a barge-in: it clears and
	// abandons the rest of its utterance.
	AnySoundBargesIn Flaw = "any_sound_barges_in"
	// UnkeyedRetries sends no Idempotency-Key and retries a failed or broken
	// write once, at once, without checking whether it landed.
	UnkeyedRetries Flaw = "unkeyed_retries"
	// ConfirmsOnAccept says "Done" as soon as an asynchronous write is
	// accepted (202 pending), from its slot values, instead of when the
	// write has landed, and takes that claim as the write's outcome: it
	// reads nothing back after it, so the claim is always its first act
	// after the 202 however its goroutines are scheduled. The two flaws
	// are orthogonal, so switching either off alone removes exactly its
	// own root cause.
	ConfirmsOnAccept Flaw = "confirms_on_accept"
)

// Extra flaws, off in both reference agents, used by the flaw-matrix tests
// to show the harness catches each failure class.
const (
	IgnoresCorrections Flaw = "ignores_corrections"  // keeps the first value it heard
	IgnoresNegation    Flaw = "ignores_negation"     // "don't" changes nothing
	IgnoresBargeIn     Flaw = "ignores_barge_in"     // keeps talking over the caller
	SkipsWrite         Flaw = "skips_write"          // claims done without calling the tool
	ConfirmsWrongValue Flaw = "confirms_wrong_value" // confirms a value it did not write
)

// AllFlaws lists every flaw in a fixed order.
func AllFlaws() []Flaw {
	return []Flaw{
		KeepsBuiltCalls, KeepsSentCalls, TrustsToolResults, AnySoundBargesIn,
		UnkeyedRetries, ConfirmsOnAccept,
		IgnoresCorrections, IgnoresNegation, IgnoresBargeIn, SkipsWrite, ConfirmsWrongValue,
	}
}

// Clock schedules the engine's timers and tells the time they are
// measured against (how late each fired: Server.Lateness). Inject one to
// control timing in tests; the zero Config uses the machine clock.
type Clock interface {
	// AfterFunc calls f in its own goroutine after d; the returned func
	// stops the timer and reports whether it did so before f ran.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
	// Now is the clock's time.
	Now() time.Time
}

// SystemClock is the machine clock.
type SystemClock struct{}

// AfterFunc wraps time.AfterFunc.
func (SystemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// Now is time.Now.
func (SystemClock) Now() time.Time { return time.Now() }

// Default timing at time scale 1.0. Every duration is multiplied by the time
// scale the harness offers in start.
const (
	DefaultEndOfTurn    = 300 * time.Millisecond
	DefaultPrepare      = 2 * time.Second
	DefaultWordTime     = 120 * time.Millisecond
	DefaultToolTimeout  = 4 * time.Second
	DefaultRetryBackoff = 200 * time.Millisecond
	DefaultPollEvery    = 150 * time.Millisecond
	DefaultConfirm      = 600 * time.Millisecond
	DefaultMaxRetries   = 2  // careful: retries after the first try
	DefaultMaxPolls     = 40 // careful: reads while a 202 settles
)

// Config is one agent. Zero durations and counts take the defaults.
type Config struct {
	Name  string
	Flaws map[Flaw]bool
	Clock Clock // nil: SystemClock
	// HTTPClient calls the tools; nil: a client without keep-alives, so
	// net/http never silently replays a keyed request on a reused
	// connection (the ledger must show only the agent's own retries).
	HTTPClient *http.Client

	EndOfTurn    time.Duration // silence after a caller's final before acting
	Prepare      time.Duration // time to build a tool call
	WordTime     time.Duration // speaking time per word
	ToolTimeout  time.Duration // client timeout per tool request
	RetryBackoff time.Duration // careful: pause before a retry
	PollEvery    time.Duration // careful: read interval while a 202 settles
	// Confirm is how long the generic careful agent waits after its
	// read-back for the caller to answer before it acts.
	Confirm    time.Duration
	MaxRetries int
	MaxPolls   int

	// Generic reads every call through its catalogue (generic.go), even
	// the order desk's; without it, a catalogue that is not the order
	// desk's is read so anyway.
	Generic bool
	// Catalogue is the tools a call uses when its start carries none.
	Catalogue []trace.ToolSpec

	// paces is the server's record of its calls' timer lateness
	// (Server.Lateness); nil outside a Server.
	paces *paceLog

	// Audio, when set, serves the agent in audio mode: a Twilio Media
	// Streams bot (twilio.go), or with Audio.Wire WireWebRTC a WebRTC bot
	// (webrtc.go), instead of the native protocol. nil: text mode.
	Audio *AudioConfig
}

// Has reports whether flaw f is on.
func (c Config) Has(f Flaw) bool { return c.Flaws[f] }

// With returns a copy of c with flaw f switched on or off.
func (c Config) With(f Flaw, on bool) Config {
	m := make(map[Flaw]bool, len(c.Flaws)+1)
	for k, v := range c.Flaws {
		m[k] = v
	}
	if on {
		m[f] = true
	} else {
		delete(m, f)
	}
	c.Flaws = m
	return c
}

// FlawList returns the flaws that are on, sorted.
func (c Config) FlawList() []Flaw {
	var out []Flaw
	for f, on := range c.Flaws {
		if on {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Naive is seed 001's known-bad mock pipeline: it hears perfectly and keeps
// turn order, but never invalidates a built or sent call and never checks a
// result unless it looks broken.
func Naive() Config {
	return Config{Name: "naive", Flaws: map[Flaw]bool{
		KeepsBuiltCalls: true, KeepsSentCalls: true, TrustsToolResults: true,
		AnySoundBargesIn: true, UnkeyedRetries: true, ConfirmsOnAccept: true,
	}}
}

// Careful has no flaws.
func Careful() Config { return Config{Name: "careful", Flaws: map[Flaw]bool{}} }

// Named returns a reference agent by name: "naive" or "careful".
func Named(name string) (Config, error) {
	switch name {
	case "naive":
		return Naive(), nil
	case "careful":
		return Careful(), nil
	}
	return Config{}, fmt.Errorf("agents: unknown agent %q (want naive or careful)", name)
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.EndOfTurn, DefaultEndOfTurn)
	def(&c.Prepare, DefaultPrepare)
	def(&c.WordTime, DefaultWordTime)
	def(&c.ToolTimeout, DefaultToolTimeout)
	def(&c.RetryBackoff, DefaultRetryBackoff)
	def(&c.PollEvery, DefaultPollEvery)
	def(&c.Confirm, DefaultConfirm)
	if c.MaxRetries <= 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.MaxPolls <= 0 {
		c.MaxPolls = DefaultMaxPolls
	}
	if c.Clock == nil {
		c.Clock = SystemClock{}
	}
	if c.Name == "" {
		c.Name = "agent"
	}
	return c
}
