package mockbackend

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/callproof/callproof/trace"
	"github.com/hashicorp/go-memdb"
)

// CallConfig opens one call.
type CallConfig struct {
	ID      string
	Tools   []trace.ToolSpec
	Records []trace.Record // starting state; versions kept as given (0 becomes 1)
	Faults  []trace.Fault
	// Seed drives fault probabilities (never the token: see Call.Token).
	Seed int64
	// TimeScale multiplies every fault delay and hold bound; 0 means 1.
	TimeScale float64
	// Recorder receives every tool.* and fault.applied event. Nil makes a
	// private one on the server's clock.
	Recorder *trace.Recorder
	// Budget bounds the agent's tool requests; zero fields take the
	// defaults (DefaultRequestsPerSecond, DefaultRequestsPerCall).
	Budget Budget
	// OnExceeded, when set, is called once with Violation when the agent
	// breaks the budget (besides Exceeded closing), from the request's
	// goroutine and with no lock held: the harness ends the call there,
	// with no goroutine of its own waiting on Exceeded.
	OnExceeded func(violation string)
	// BodyTimeout bounds reading one request's body, in script time
	// (scaled like every delay, never below MinBodyTimeout of real time);
	// 0 means DefaultBodyTimeout.
	BodyTimeout time.Duration
	// Conns bounds the call's connections to its own listener (Start's
	// server only); zero fields take the defaults (listener.go).
	Conns ConnLimits
}

// Request limits of a call.
const (
	// MaxBodyBytes bounds a tool request body. Arguments are a handful of
	// short strings; a larger body is refused with 413.
	MaxBodyBytes = 64 << 10
	// DefaultBodyTimeout bounds reading one request's body, in script time:
	// a body that has not fully arrived by then is refused with 408.
	DefaultBodyTimeout = 10 * time.Second
	// MinBodyTimeout is the least real time a body is given, however small
	// the time scale.
	MinBodyTimeout = time.Second
	// CloseWait bounds how long Call.Close waits (real time) for requests
	// in flight to finish once it has cancelled them.
	CloseWait = 2 * time.Second
)

// Call is one call's backend: its tools, state, ledger, faults and holds.
// Its methods are safe for concurrent use.
type Call struct {
	id       string
	srv      *Server
	token    string
	rec      *trace.Recorder
	tools    map[string]*tool
	db       *memdb.MemDB
	mismatch int

	// ctx is cancelled by Close: it wakes every waiting request.
	ctx         context.Context
	cancel      context.CancelFunc
	wg          sync.WaitGroup // requests in flight and late commits
	closeOnce   sync.Once
	bodyTimeout time.Duration // script time

	mu       sync.Mutex // guards the fields below
	closed   bool
	scale    float64
	seed     int64
	rng      *mrand.Rand // made at the first draw (random): most calls never draw
	faults   []*faultSlot
	holds    []*hold
	nextID   int
	nextOp   int
	inflight []servedRequest // requests being served: a call has few at once
	waiting  []*exchange     // requests before their commit (enterWait), for settle
	lates    []*lateCommit   // late_success commits not yet recorded (landLate)
	budget   meter
	stalled  int                // requests whose body was still arriving when the call closed
	late     trace.LatenessStat // how late the call's timers fired (Lateness)
	onExceed func(string)

	listener *callListener // the call's own, when its server was started
	mcp      http.Handler  // its MCP endpoint (Options.MCP), or nil
}

// ReasonStalledBody is the agent_error reason for a call that ended with a
// tool request whose body never finished arriving: the agent started a
// request and left it hanging.
const ReasonStalledBody = "stalled tool request"

// StalledBodies is how many requests were cut because the call closed
// while their body was still arriving.
func (c *Call) StalledBodies() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stalled
}

// tool is a ToolSpec with its argument patterns compiled. Every call
// opened with the same catalogue shares it (Server.catalogue), so nothing
// writes to it once compileTools has returned.
type tool struct {
	spec     trace.ToolSpec
	args     map[string]trace.ArgSpec
	patterns map[string]*regexp.Regexp
}

func newCall(s *Server, cfg CallConfig) (*Call, error) {
	tools, err := s.catalogue(cfg.Tools)
	if err != nil {
		return nil, err
	}
	db, err := s.startStore(cfg.Records)
	if err != nil {
		return nil, err
	}

	rec := cfg.Recorder
	if rec == nil {
		rec = trace.NewRecorder(cfg.ID, s.opts.Clock)
	}
	if cfg.BodyTimeout < 0 {
		return nil, fmt.Errorf("mockbackend: negative body timeout")
	}
	if cfg.BodyTimeout == 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Call{
		id:       cfg.ID,
		srv:      s,
		token:    newToken(),
		rec:      rec,
		tools:    tools,
		db:       db,
		mismatch: s.opts.IdempotencyMismatchStatus,
		ctx:      ctx,
		cancel:   cancel,
		scale:    normScale(cfg.TimeScale),
		seed:     cfg.Seed,
		budget:   newMeter(cfg.Budget),
		onExceed: cfg.OnExceeded,

		bodyTimeout: cfg.BodyTimeout,
	}
	for _, f := range cfg.Faults {
		if err := c.addFault(f); err != nil {
			cancel()
			return nil, err
		}
	}
	return c, nil
}

func compileTools(specs []trace.ToolSpec) (map[string]*tool, error) {
	tools := make(map[string]*tool, len(specs))
	for _, sp := range specs {
		if sp.Name == "" || sp.Table == "" {
			return nil, fmt.Errorf("mockbackend: tool %q needs a name and a table", sp.Name)
		}
		if sp.Name == MCPPath {
			return nil, fmt.Errorf("mockbackend: tool name %q is the MCP endpoint's", sp.Name)
		}
		if _, dup := tools[sp.Name]; dup {
			return nil, fmt.Errorf("mockbackend: tool %q declared twice", sp.Name)
		}
		switch sp.Effect {
		case trace.EffectRead, trace.EffectUpdate, trace.EffectDelete:
			if sp.KeyArg == "" {
				return nil, fmt.Errorf("mockbackend: tool %q: %s needs key_arg", sp.Name, sp.Effect)
			}
		case trace.EffectCancel:
			if sp.KeyArg == "" || sp.StatusField == "" || sp.StatusValue == "" {
				return nil, fmt.Errorf("mockbackend: tool %q: cancel needs key_arg, status_field and status_value", sp.Name)
			}
		case trace.EffectCreate:
		default:
			return nil, fmt.Errorf("mockbackend: tool %q: unknown effect %q", sp.Name, sp.Effect)
		}
		sp = cloneSpec(sp)
		t := &tool{spec: sp, args: make(map[string]trace.ArgSpec, len(sp.Args))}
		for _, a := range sp.Args {
			switch a.Type {
			case "", trace.ArgString, trace.ArgInteger, trace.ArgDate, trace.ArgTime, trace.ArgNumber:
			default:
				return nil, fmt.Errorf("mockbackend: tool %q arg %q: unknown type %q", sp.Name, a.Name, a.Type)
			}
			if a.Pattern != "" {
				re, err := regexp.Compile(a.Pattern)
				if err != nil {
					return nil, fmt.Errorf("mockbackend: tool %q arg %q: %w", sp.Name, a.Name, err)
				}
				if t.patterns == nil {
					t.patterns = map[string]*regexp.Regexp{}
				}
				t.patterns[a.Name] = re
			}
			t.args[a.Name] = a
		}
		tools[sp.Name] = t
	}
	return tools, nil
}

// newToken draws from crypto/rand, not the call's seed: two calls with the
// same seed would otherwise share a token and accept each other's requests.
func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b)
}

func normScale(f float64) float64 {
	if f <= 0 {
		return 1
	}
	return f
}

// ID is the call's id.
func (c *Call) ID() string { return c.id }

// BaseURL is where the agent finds its tools: {server}/calls/{id}/tools.
// It is relative until the server is started.
func (c *Call) BaseURL() string {
	return c.origin() + "/calls/" + url.PathEscape(c.id) + "/tools"
}

// Token is the call's bearer token, random per call.
func (c *Call) Token() string { return c.token }

// Recorder is where the call's events go.
func (c *Call) Recorder() *trace.Recorder { return c.rec }

// SetTimeScale changes the factor applied to delays and hold bounds from
// now on (waits already started keep theirs). f <= 0 means 1.
func (c *Call) SetTimeScale(f float64) {
	c.mu.Lock()
	c.scale = normScale(f)
	c.mu.Unlock()
}

func (c *Call) scaled(d time.Duration) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Duration(float64(d) * c.scale)
}

// Snapshot is the call's state, sorted by table then key.
func (c *Call) Snapshot() []trace.Record {
	txn := c.db.Txn(false)
	defer txn.Abort()
	return allRecords(txn)
}

// Diff lists field-level differences between want and the current state.
func (c *Call) Diff(want []trace.Record) []trace.FieldDiff {
	return trace.Diff(want, c.Snapshot())
}

// Ledger is every request the call has seen, in arrival order.
func (c *Call) Ledger() []LedgerRow {
	txn := c.db.Txn(false)
	defer txn.Abort()
	return ledgerRows(txn)
}

// Inject adds a fault from now on (after the call's configured faults).
func (c *Call) Inject(f trace.Fault) error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return c.addFault(f)
}

// ErrClosed is returned by controls used on a closed call.
var ErrClosed = errors.New("mockbackend: call closed")

// Close fails held requests with 503, stops late commits, cuts bodies
// still arriving (each such request is recorded as tool.received,
// tool.cancelled "call closed while its body was arriving", tool.responded
// 503), rejects later requests (410) and waits for requests in flight to
// finish, at most CloseWait: a request still running then (one whose
// answer cannot be written, say) is named in a harness.note and left to
// end on its own. If any requests were refused over the budget, a note
// gives their count. Snapshot and Ledger keep working. Safe to call twice;
// it never blocks longer than CloseWait.
func (c *Call) Close() {
	c.closeOnce.Do(func() {
		// A late commit past its delay lands before the call closes, as
		// it did when it kept to its delay alone (the agent's hang-up, an
		// act, cannot race it).
		c.landLate()
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.srv.forget(c)
		c.cancel()
		done := make(chan struct{})
		go func() {
			c.wg.Wait()
			close(done)
		}()
		t := time.NewTimer(CloseWait)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			c.mu.Lock()
			served := slices.SortedFunc(slices.Values(c.inflight), func(a, b servedRequest) int { return strings.Compare(a.ref, b.ref) })
			c.mu.Unlock()
			refs := make([]string, 0, len(served))
			for _, r := range served {
				refs = append(refs, r.ref+" "+r.tool)
			}
			c.rec.Record(trace.SourceBackend, trace.KindNote, &trace.Note{Text: fmt.Sprintf(
				"mockbackend: call closed with %d request(s) still in flight after %s: %s",
				len(refs), CloseWait, strings.Join(refs, ", "))})
		}
		if n, v := c.Refused(), c.Violation(); n > 0 {
			c.rec.Record(trace.SourceBackend, trace.KindNote, &trace.Note{Text: fmt.Sprintf(
				"mockbackend: %d tool request(s) refused with 429 over the budget (%s)", n, v)})
		}
		c.closeListener()
	})
}

// servedRequest is a request being served, for Close's report.
type servedRequest struct{ ref, tool string }

// track registers a request being served, for Close's report.
func (c *Call) track(ref, tool string) func() {
	c.mu.Lock()
	c.inflight = append(c.inflight, servedRequest{ref, clip(tool, maxLoggedPath)})
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.inflight = slices.DeleteFunc(c.inflight, func(r servedRequest) bool { return r.ref == ref })
		c.mu.Unlock()
	}
}

// random is the call's source of fault draws, made from its seed at the
// first draw; c.mu must be held. Two streams from one seed: the same seed
// replays the same draws.
func (c *Call) random() *mrand.Rand {
	if c.rng == nil {
		c.rng = mrand.New(mrand.NewPCG(uint64(c.seed), uint64(c.seed)^0x9e3779b97f4a7c15))
	}
	return c.rng
}

// enter registers a request in flight; false once the call is closed.
func (c *Call) enter() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	return true
}

func (c *Call) leave() { c.wg.Done() }

func (c *Call) nextRef() (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	return c.nextID, fmt.Sprintf("r%d", c.nextID)
}

func (c *Call) nextOperation() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextOp++
	return fmt.Sprintf("op-%d", c.nextOp)
}

// amend applies fn to ledger row id in its own transaction.
func (c *Call) amend(id int, fn func(*LedgerRow)) {
	txn := c.db.Txn(true)
	defer txn.Abort()
	amendLedger(txn, id, fn)
	txn.Commit()
}
