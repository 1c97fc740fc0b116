package harness

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/mockbackend"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// Runner places calls: one isolated call per compiled scenario, at most
// Concurrency at once, each with its own backend namespace and recorder.
type Runner struct {
	Backend     *mockbackend.Server
	Simulator   *callsim.Simulator
	Transport   callsim.Transport
	Clock       trace.Clock
	Concurrency int // default 8
	// OverloadBound (script time) marks a call whose harness lateness is
	// over it as harness_error (ReasonOverloaded); 0 means
	// DefaultOverloadBound, negative turns the check off.
	OverloadBound time.Duration
	// AgentLateness, for an agent this process runs itself (a reference
	// agent: agents.Server.Lateness), reports how late the agent's own
	// timers, speech and tool requests ran in the call with this id, and,
	// from when the caller sent and read each frame (wire), how late the
	// agent read the caller's frames and its own were read. The call records it
	// (trace.CallEnd.AgentLateness), and a call whose agent ran later than
	// OverloadBound is marked overloaded as if the harness had: its agent
	// was starved of the CPU the two share, so the call did not run at its
	// script's pace. nil: the agent's pace is not known (an agent in
	// another process is never asked over the wire).
	AgentLateness func(callID string, wire trace.WireTimes) (trace.AgentLateness, bool)
	TimeScale     float64 // offered to the agent; default 1.0
	Seed          int64   // non-zero: overrides every scenario's seed
	Suite         string  // label recorded in call.start
	Agent         string  // label recorded in call.start
	TransportName string
	// Results, when set, receives every call as it completes.
	Results *Results
	// DropHistories makes Place return each call's score without its
	// history (Results, when set, has it): a run of thousands of calls
	// then does not hold every finished call's history in memory.
	DropHistories bool
	// Ramp spreads the starts of the first Concurrency calls evenly over
	// this long (real time); 0 starts them at once.
	Ramp time.Duration
	// Stall reads the machine's cumulative CPU stall time for each call's
	// CPU pressure (default CPUStall; a test injects its own).
	Stall func() (time.Duration, bool)
	// Progress, when set, is called after each call (from one goroutine at a time).
	Progress func(done, total int, s scorer.CallScore)
	// Warm tunes how an audio transport's caller speech is made ready
	// before the first dial (PrepareSpeech).
	Warm Prewarm
	// Replace is how many more times a call is placed, at once and in
	// its own slot, when it ended with no verdict because callproof
	// itself ran late (RanLate): a moment's stall of the machine must not
	// break a run, and such a call says nothing of the agent. Each
	// earlier attempt goes to the results' attempts file. 0: none.
	Replace int
	// Replaced, when set, is told of each attempt placed again (its
	// score and its number, from 1), from one goroutine at a time.
	Replaced func(s scorer.CallScore, attempt int)
}

// run --place-again: a call callproof itself ran late in (RanLate) is
// placed again at once, by default once and at most MaxPlaceAgain times.
// One more placing rides out a moment's stall of a shared machine; a
// machine too busy for the calls stays too busy, and more placings would
// only make the run take longer before it says so.
const (
	DefaultPlaceAgain = 1
	MaxPlaceAgain     = 5
)

// RanLate reports whether a call ended harness_error because callproof
// itself ran late: its caller fell behind real time, or its timers (or
// its in-process agent's) ran past the overload bound. Placing such a call
// again can give it a verdict; a dead backend or a cancelled run cannot.
func RanLate(s scorer.CallScore) bool {
	return s.Outcome == trace.OutcomeHarnessError &&
		(strings.HasPrefix(s.Reason, callsim.ReasonBehind) || strings.HasPrefix(s.Reason, ReasonOverloaded))
}

// CallResult is one finished call.
type CallResult struct {
	History *trace.History
	Score   scorer.CallScore
}

// Run places one call per scenario against the agent at agentURL and
// returns the results in the scenarios' order. The error is for a run that
// could not happen at all; per-call failures are outcomes.
func (r *Runner) Run(ctx context.Context, agentURL string, cases []*scenarios.Compiled) ([]CallResult, error) {
	return r.Place(ctx, agentURL, Placements(cases, 1))
}

// Place places the calls ps against the agent at agentURL (a run of
// several trials, a resume, a replay) and returns the results in ps's
// order. Errors are as Run's.
func (r *Runner) Place(ctx context.Context, agentURL string, ps []Placement) ([]CallResult, error) {
	if r.Backend == nil || r.Simulator == nil || r.Transport == nil {
		return nil, fmt.Errorf("harness: runner needs a backend, a simulator and a transport")
	}
	conc := r.Concurrency
	if conc <= 0 {
		conc = 8
	}
	// No synthesizer may run while calls keep real time.
	if err := PrepareSpeech(ctx, TransportSpeech(r.Transport), SpeechTexts(ps), r.Warm); err != nil {
		return nil, fmt.Errorf("harness: before the first dial: %w", err)
	}
	// A failed write cancels the run: a results directory that cannot
	// take more calls must not keep an agent busy for nothing.
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	out := make([]CallResult, len(ps))
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	var writeErr error
	var cancelled []string
	first := min(conc, len(ps))
	began := time.Now()
	for i, p := range ps {
		if r.Ramp > 0 && i < first && i > 0 {
			t := time.NewTimer(time.Until(began.Add(r.Ramp * time.Duration(i) / time.Duration(first))))
			select {
			case <-t.C:
			case <-runCtx.Done():
			}
			t.Stop()
		}
		// Once cancelled, calls no longer wait for a slot: each is
		// recorded at once as cancelled.
		acquired := false
		select {
		case sem <- struct{}{}:
			acquired = true
		case <-runCtx.Done():
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if acquired {
				defer func() { <-sem }()
			}
			h := r.call(runCtx, agentURL, p)
			s := scorer.Score(h)
			for attempt := 1; attempt <= r.Replace && RanLate(s) && runCtx.Err() == nil; attempt++ {
				if err := r.keepAttempt(h, s, attempt, &mu); err != nil {
					mu.Lock()
					if writeErr == nil {
						writeErr = err
						cancel(err)
					}
					mu.Unlock()
					break
				}
				h = r.call(runCtx, agentURL, p)
				s = scorer.Score(h)
			}
			out[i] = CallResult{History: h, Score: s}
			if r.DropHistories {
				out[i].History = nil
			}
			mu.Lock()
			defer mu.Unlock()
			if s.Outcome == trace.OutcomeHarnessError && s.Reason == ReasonCancelled {
				cancelled = append(cancelled, s.Call)
			}
			if r.Results != nil {
				if err := r.Results.Add(h, s); err != nil && writeErr == nil {
					writeErr = err
					cancel(err)
				}
			}
			done++
			if r.Progress != nil {
				r.Progress(done, len(ps), s)
			}
		}()
	}
	wg.Wait()
	if writeErr == nil && r.Results != nil {
		sort.Strings(cancelled)
		writeErr = r.Results.Finish(cancelled)
	}
	return out, writeErr
}

// keepAttempt files an attempt about to be placed again: in the results'
// attempts file, and with Replaced (under mu, as Progress).
func (r *Runner) keepAttempt(h *trace.History, s scorer.CallScore, attempt int, mu *sync.Mutex) error {
	if r.Results != nil {
		if err := r.Results.AddAttempt(h); err != nil {
			return err
		}
	}
	if r.Replaced != nil {
		mu.Lock()
		r.Replaced(s, attempt)
		mu.Unlock()
	}
	return nil
}

// Plan lists the call ids of cases, in order: a run's manifest.
func Plan(cases []*scenarios.Compiled) []string {
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = c.Scenario.ID
	}
	return ids
}

// CheckAgentURL says whether u can be dialled as an agent: a ws or wss URL
// with a host.
func CheckAgentURL(u string) error { return CheckAgentURLFor("", u) }

// CheckAgentURLFor is CheckAgentURL for a wire dialect: WebRTC agents are
// reached through an http or https signaling URL, the others over a
// WebSocket.
func CheckAgentURLFor(transport, u string) error {
	schemes, want := []string{"ws", "wss"}, "want a ws:// or wss:// URL"
	if transport == "webrtc" {
		schemes, want = []string{"http", "https"}, "want the http:// or https:// signaling URL of a WebRTC agent"
	}
	p, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("agent URL %q: %s (%w)", u, want, err)
	}
	if !slices.Contains(schemes, p.Scheme) {
		return fmt.Errorf("agent URL %q: %s", u, want)
	}
	if p.Host == "" || p.Hostname() == "" {
		return fmt.Errorf("agent URL %q: no host", u)
	}
	return nil
}

// call runs one scenario and always returns a complete history: our own
// failures end it as harness_error, never as a verdict on the agent.
func (r *Runner) call(ctx context.Context, agentURL string, p Placement) *trace.History {
	c := p.Case
	scale := r.TimeScale
	if scale <= 0 {
		scale = 1
	}
	seed := c.Seed
	if r.Seed != 0 {
		seed = r.Seed
	}
	id := p.CallID()
	stallRead := r.Stall
	if stallRead == nil {
		stallRead = CPUStall
	}
	wall0 := time.Now()
	stall0, stallOK := stallRead()
	rec := trace.NewRecorder(id, r.Clock)
	rec.Record(trace.SourceHarness, trace.KindCallStart, &trace.CallStart{
		Schema: trace.SchemaVersion, ScenarioID: c.Scenario.ID, Trial: p.Trial, Category: string(c.Scenario.Category), Suite: r.Suite,
		Agent: r.Agent, Transport: r.TransportName, Seed: seed, TimeScale: scale,
		Script: c.Script, Tools: c.Tools, Records: c.Records, Faults: c.Faults,
		CallDate: c.CallDate, TimeZone: c.TimeZone,
	})
	var agentLate *trace.AgentLateness
	end := func(o trace.Outcome, reason string, res *callsim.Result) *trace.History {
		ce := &trace.CallEnd{Outcome: o, Reason: reason}
		if res != nil {
			ce.ResponseLatency, ce.YieldLatency, ce.TimeScale = res.ResponseLatency, res.YieldLatency, res.TimeScale
			ce.Audio = audioDiag(res)
			l := res.Harness
			ce.Lateness = &l
			ce.AgentLateness = agentLate
		}
		rec.Record(trace.SourceHarness, trace.KindCallEnd, ce)
		return rec.Close()
	}
	if ctx.Err() != nil {
		return end(trace.OutcomeHarnessError, ReasonCancelled, nil)
	}
	// The backend alone sees the tool request budget break: it ends the
	// call there and then, with the backend's reason.
	callCtx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	bc, err := r.Backend.Open(mockbackend.CallConfig{
		ID: id, Tools: c.Tools, Records: c.Records, Faults: c.Faults, Seed: seed, TimeScale: scale, Recorder: rec,
		Budget:     mockbackend.Budget{PerSecond: c.Limits.MaxToolRequestsPerSecond, PerCall: c.Limits.MaxToolRequestsPerCall},
		OnExceeded: func(violation string) { abort(callsim.AgentFault(violation)) },
		Conns: mockbackend.ConnLimits{MaxConns: c.Limits.MaxToolConnections, MaxHeaderBytes: c.Limits.MaxToolHeaderBytes,
			HeaderTimeout: c.Limits.ToolHeaderTimeout, MaxIdle: c.Limits.MaxIdleToolConnections},
	})
	if err != nil {
		return end(trace.OutcomeHarnessError, "mock backend: "+err.Error(), nil)
	}
	access := native.Tools{BaseURL: bc.BaseURL(), Token: bc.Token(), Catalog: c.Tools, MCPURL: bc.MCPURL()}
	tr := r.Transport
	if pc, ok := tr.(callsim.PerCall); ok {
		tr = pc.ForCall(callsim.CallSetup{ID: id, Tools: c.Tools, Records: c.Records, CallDate: c.CallDate, TimeZone: c.TimeZone,
			Access: access, CustomParameters: c.CustomParameters})
	}
	sc := callsim.Call{
		ID: id, AgentURL: agentURL, Script: c.Script, TimeScale: scale, Recorder: rec, Backend: bc, Transport: tr,
		Tools:            access,
		CustomParameters: c.CustomParameters, CallDate: c.CallDate, TimeZone: c.TimeZone,
		Limits: callsim.Limits{
			MaxEventTextBytes: c.Limits.MaxEventTextBytes, MaxCallTextBytes: c.Limits.MaxCallTextBytes,
			MaxHistoryBytes: c.Limits.MaxHistoryBytes, MaxHistoryEvents: c.Limits.MaxHistoryEvents,
			IdleTimeout: c.Limits.IdleTimeout,
		},
	}
	// The history's size, kept from here to the end, so the wait for tool
	// requests after the script (settle) stops at the same budget the
	// simulator enforces during the call.
	meter := newHistoryMeter(r.Simulator.LimitsFor(sc), rec)
	defer meter.stop()
	res := r.Simulator.Run(callCtx, sc)
	// A hang-up is not a withdrawal: let tool requests already on their way
	// finish (a held write auto-releases, a slow one answers), bounded by
	// the step timeout, so the snapshot shows where they landed. An agent
	// over its tool request or history budget gets no such wait. Then
	// Close stops timers, fails whatever is still held and refuses every
	// later request (410, kept only in the server's Rejected log), so
	// nothing more enters the history.
	settle(ctx, rec, r.clock(), time.Duration(float64(c.Script.StepTimeout)*effectiveScale(res.TimeScale, scale)), bc.Exceeded(), meter.over)
	bc.Close()
	outcome, reason := res.Outcome, res.Reason
	// The budget broken after the script was done (while settling) is the
	// agent's fault all the same.
	if v := bc.Violation(); v != "" && (outcome == "" || outcome == trace.OutcomeExcluded) {
		outcome, reason = trace.OutcomeAgentError, v
	}
	// A request left with its body half sent until the call closed: the
	// agent stalled it (the backend recorded it as cancelled).
	if n := bc.StalledBodies(); n > 0 && outcome == "" {
		outcome, reason = trace.OutcomeAgentError, fmt.Sprintf("%s: %d request body(ies) never finished arriving", mockbackend.ReasonStalledBody, n)
	}
	// A dead backend explains whatever the call saw, an exclusion included
	// (a trigger on a tool event misses when no tool call can land): the
	// call proves nothing and must be re-run, so it is never excluded.
	if alive := r.backendAlive(); alive != nil {
		outcome, reason = trace.OutcomeHarnessError, "mock backend unreachable: "+alive.Error()
	}
	// A cancelled run (Ctrl-C, a deadline) cuts calls short or fails their
	// dial: that is ours, not an agent error.
	if ctx.Err() != nil && outcome != trace.OutcomeScored && outcome != trace.OutcomeExcluded {
		outcome, reason = trace.OutcomeHarnessError, ReasonCancelled
	}
	// A call whose own timers fired too late tested other timing than
	// its script's: whatever it shows, it is ours to re-run.
	res.Harness.Backend = bc.Lateness()
	res.Harness.Settle(effectiveScale(res.TimeScale, scale))
	res.Harness.CPUPressure = pressureSince(stallRead, wall0, stall0, stallOK)
	if r.AgentLateness != nil {
		// Settled at the agent's own scale: the one it acknowledged and
		// ran its timers at, even if its ack came too late for the
		// caller to use it.
		if al, ok := r.AgentLateness(id, res.Wire); ok {
			agentLate = &al
		}
	}
	// An agent_error no timing shapes (callsim.PacingIndependent: the
	// agent's junk, which may be what made the harness late) stays the
	// agent's.
	junk := outcome == trace.OutcomeAgentError && callsim.PacingIndependent(reason)
	if why := overloaded(res.Harness, agentLate, effectiveScale(res.TimeScale, scale), r.OverloadBound); why != "" && outcome != trace.OutcomeHarnessError && !junk {
		rec.Record(trace.SourceHarness, trace.KindNote, &trace.Note{Text: fmt.Sprintf("the call would have ended as %s", describeOutcome(outcome, reason))})
		outcome, reason = trace.OutcomeHarnessError, why
	}
	rec.Record(trace.SourceHarness, trace.KindSnapshot, &trace.Snapshot{Records: bc.Snapshot()})
	return end(outcome, reason, &res)
}

func (r *Runner) clock() trace.Clock {
	if r.Clock == nil {
		return trace.SystemClock{}
	}
	return r.Clock
}

func effectiveScale(used, offered float64) float64 {
	if used > 0 {
		return used
	}
	return offered
}

// settle waits until no tool request of the call is open, or bound, or
// the run is cancelled (a cancelled call proves nothing: no need to wait),
// or either of stop closes. It reads each new event once.
func settle(ctx context.Context, rec *trace.Recorder, clock trace.Clock, bound time.Duration, stop ...<-chan struct{}) {
	deadline := clock.Now().Add(bound)
	open := map[string]bool{}
	next := 1 // the next seq to read
	for ctx.Err() == nil {
		for _, s := range stop {
			select {
			case <-s:
				return
			default:
			}
		}
		for e, ok := rec.Event(next); ok; e, ok = rec.Event(next) {
			next++
			d, isTool := e.Data.(*trace.ToolEvent)
			if !isTool {
				continue
			}
			switch e.Kind {
			case trace.KindToolReceived:
				open[d.Ref] = true
			case trace.KindToolResponded, trace.KindToolCancelled, trace.KindToolRejected:
				delete(open, d.Ref)
			}
		}
		if len(open) == 0 || !clock.Now().Before(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// backendAlive checks that the mock backend still accepts connections: a
// backend that died mid-call makes every tool call fail, which must never
// read as the agent's fault.
func (r *Runner) backendAlive() error {
	u, err := url.Parse(r.Backend.URL())
	if err != nil {
		return err
	}
	conn, err := net.DialTimeout("tcp", u.Host, 2*time.Second)
	if err != nil {
		return err
	}
	return conn.Close()
}

// Failed returns the call ids of calls that did not reach end-to-end
// integrity (any outcome), sorted: in a run of one trial per scenario, the
// scenario ids.
func Failed(scores []scorer.CallScore) []string {
	var ids []string
	for _, s := range scores {
		if !s.Integrity && s.Outcome != trace.OutcomeExcluded {
			ids = append(ids, s.Call)
		}
	}
	sort.Strings(ids)
	return ids
}

// RecordingsDir is the folder of a results directory that holds the
// calls' stereo recordings (audio dialects, with recording on).
const RecordingsDir = "audio"

// audioDiag turns what an audio dialect measured into the history's
// record of it (nil for text calls).
func audioDiag(res *callsim.Result) *trace.AudioDiag {
	if res.Lateness == nil && res.Turns == nil {
		return nil
	}
	d := &trace.AudioDiag{}
	if l := res.Lateness; l != nil {
		d.Frames, d.LatenessP50, d.LatenessP99, d.LatenessMax = l.Frames, l.P50, l.P99, l.Max
	}
	if t := res.Turns; t != nil {
		d.Responses, d.Yields, d.BargeIns, d.FalseYields = t.Responses, t.Yields, t.BargeIns, t.FalseYields
	}
	if res.Recording != "" {
		d.Recording = filepath.Join(RecordingsDir, filepath.Base(res.Recording))
	}
	return d
}
