package callsim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// inbox carries recorder events to the runner. The recorder calls push
// under its lock, so push only appends and nudges.
type inbox struct {
	mu   sync.Mutex
	evs  []trace.Event
	wake chan struct{}
}

func (b *inbox) push(e trace.Event) {
	b.mu.Lock()
	b.evs = append(b.evs, e)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *inbox) take() []trace.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	evs := b.evs
	b.evs = nil
	return evs
}

// run is the state of one call. Everything but the fields marked otherwise
// belongs to the runner goroutine (the caller of Run).
type run struct {
	s     *Simulator
	c     Call
	lim   Limits // the call's: c.Limits over the Simulator's
	rec   *trace.Recorder
	in    *inbox
	conn  Conn
	base  context.Context // call context, shared with the pump; cancelled with an *ending
	stop  context.CancelCauseFunc
	ctx   context.Context // the runner's: base bounded by the call timeout
	scale float64

	// Shared with the pump and the recorder's subscription.
	ackCh     chan native.Ack // first ack only
	intents   atomic.Bool     // the first ack says the agent sends tool_intent
	connDown  atomic.Bool     // the pump saw the connection go
	truncated atomic.Int64    // agent events whose text was cut

	textSent int64 // agent text the call has sent; the pump's

	sendSeq  int
	wireMu   sync.Mutex
	wire     trace.WireTimes // the sender's and the pump's
	utt, snd int
	opened   *utterance // the next step's utterance, opened inside this one's turn (say)

	seen     int                      // seq of the last event drained
	last     trace.Event              // the current step's latest caller event
	marks    map[string]int           // step id -> last seq seen when it finished
	doneAt   map[string]time.Duration // step id -> call time it finished
	prevID   string
	scriptAt time.Duration // call time the first step began waiting
	timeout  time.Duration // scaled step timeout

	speaking   map[string]bool
	open       map[string]bool
	quietSince time.Duration

	firstFinal    time.Duration // -1 until the first caller final
	lastFinalSeq  int
	lastFinalAt   time.Duration
	agentAfterFin bool // the agent spoke after the first final
	// answered: the agent has acted (spoken or called a tool) since the
	// caller's last words; wait_quiet counts silence only after that.
	answered bool
	// preparing: a tool_intent not yet followed by new agent speech.
	preparing bool
	// trigCause is the event that fired the current step's trigger with no
	// delay (zero Event otherwise).
	trigCause trace.Event

	// late is how late the caller's own timers fired (Triggers, Speech);
	// woke is the call time waitUntil last returned at.
	late trace.HarnessLateness
	woke time.Duration
	// writes are the call times of the writes to the agent since the last
	// measured wait (waitLate): the time an agent took to accept a write
	// is its own, not the harness's lateness.
	writes []span
}

// span is a stretch of call time.
type span struct{ begin, end time.Duration }

// maxWrites bounds the writes remembered between two measured waits.
const maxWrites = 16

// Run plays c.Script against the agent at c.AgentURL and returns when the
// call has ended. Every wait is bounded: the connection's Close and its
// reader's exit by Options.CloseTimeout, after which the call ends anyway.
func (s *Simulator) Run(ctx context.Context, c Call) Result {
	if c.Recorder == nil || c.Transport == nil {
		return Result{Outcome: trace.OutcomeHarnessError, Reason: "callsim: call needs a Recorder and a Transport", TimeScale: 1}
	}
	r, unsub := s.newRun(ctx, c)
	defer unsub()
	defer r.stop(nil)
	if c.Abort != nil {
		go r.watchAbort(c.Abort)
	}

	dctx, dcancel := context.WithTimeout(ctx, s.opts.DialTimeout)
	conn, err := c.Transport.Dial(dctx, c.AgentURL)
	dcancel()
	if err != nil {
		reason := ReasonDial + ": " + err.Error()
		r.note(reason)
		return Result{Outcome: trace.OutcomeAgentError, Reason: reason, TimeScale: 1}
	}
	r.conn = conn
	if l, ok := conn.(FrameLimiter); ok {
		l.SetFrameLimit(r.lim.MaxFrameBytes)
	}
	// Until the scale is settled, bound the connection as if the call ran
	// at the slower of the offered scale and 1.
	r.scale = max(r.c.TimeScale, 1)
	r.bound(s.opts.AckWait)
	r.scale = 1

	pumpDone := make(chan struct{})
	go func() {
		defer close(pumpDone)
		r.pump()
	}()

	end := r.play()
	r.flush(ctx, end)

	// Settle the ending before the stop frame goes out: an agent that
	// drops the connection on stop must not turn a finished call into an
	// agent error. The first cause wins.
	r.stop(end)
	if e, ok := context.Cause(r.base).(*ending); ok {
		end = e
	}
	if !r.connDown.Load() {
		reason := end.reason
		if end.outcome != "" {
			reason = end.Error()
		}
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.StopTimeout)
		stop := r.frame(native.Message{Event: native.EventStop, Stop: &native.Stop{Reason: reason}})
		r.wireAt(&r.wire.Sent)
		_ = conn.Send(sctx, stop)
		scancel()
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = conn.Close()
		<-pumpDone
	}()
	t := time.NewTimer(s.opts.CloseTimeout)
	select {
	case <-closed:
	case <-t.C:
		r.note(fmt.Sprintf("the connection did not close within %s; left behind", s.opts.CloseTimeout))
	}
	t.Stop()

	if n := r.truncated.Load(); n > 0 {
		r.note(fmt.Sprintf("agent text cut to %d bytes in %d events (MaxEventTextBytes)", r.lim.MaxEventTextBytes, n))
	}
	if end.reason == ReasonHistoryBudget {
		bytes, events := r.rec.Size()
		r.note(fmt.Sprintf("history reached %d bytes in %d events; budget %d bytes, %d events (MaxHistoryBytes, MaxHistoryEvents)",
			bytes, events, r.lim.MaxHistoryBytes, r.lim.MaxHistoryEvents))
	}
	res := Result{Outcome: end.outcome, Reason: end.reason, TimeScale: r.scale}
	res.ResponseLatency, res.YieldLatency = Latencies(r.rec.Events())
	if rc, ok := conn.(Recorded); ok {
		res.Recording = rc.Recording()
	}
	if tt, ok := conn.(TurnTaker); ok {
		t := tt.TurnTaking()
		res.Turns = &t
	}
	if p, ok := conn.(Pacer); ok {
		l := p.Lateness()
		res.Lateness = &l
		r.late.Speech.Merge(trace.LatenessStat{N: l.Frames, Max: l.Max})
		r.note(fmt.Sprintf("caller frames: %d sent, lateness p50 %s p99 %s max %s", l.Frames, l.P50, l.P99, l.Max))
		switch {
		case !l.Behind() || res.Outcome == trace.OutcomeHarnessError:
		case res.Outcome == trace.OutcomeAgentError && PacingIndependent(res.Reason):
			// What the agent sent broke the protocol whatever the
			// caller's pacing: the call stays the agent's.
			r.note(fmt.Sprintf("the caller fell behind real time (%s), but %s does not depend on its pacing", l.Why(), res.Reason))
		default:
			if res.Outcome != "" {
				r.note(fmt.Sprintf("the call would have ended as %s: %s", res.Outcome, res.Reason))
			}
			res.Outcome = trace.OutcomeHarnessError
			res.Reason = ReasonBehind + ": " + l.Why()
		}
	}
	res.Harness = r.late
	r.wireMu.Lock()
	res.Wire = trace.WireTimes{Sent: slices.Clone(r.wire.Sent), Received: slices.Clone(r.wire.Received)}
	r.wireMu.Unlock()
	return res
}

// flush lets a dialect that derives agent events after the fact deliver
// them while the pump still records, unless the call already ended on the
// connection or was cancelled.
func (r *run) flush(ctx context.Context, end *ending) {
	f, ok := r.conn.(Flusher)
	if !ok || r.connDown.Load() || r.base.Err() != nil {
		return
	}
	// The script is over: what is left is the harness's own work (the
	// agent's speech recognized, queued behind the whole run's), so the
	// agent is held to neither the idle timeout nor the call's deadline
	// meanwhile; FlushTimeout bounds the wait instead.
	if d, ok := r.conn.(Deadliner); ok {
		d.SetIdleTimeout(0)
		d.SetCallDeadline(time.Now().Add(r.s.opts.FlushTimeout + r.s.opts.StopTimeout + CallDeadlineSlack))
	}
	fctx, cancel := context.WithTimeout(ctx, r.s.opts.FlushTimeout)
	defer cancel()
	// The call may end meanwhile (an agent's hang-up handed on by the
	// flush itself): the pump then stops taking events, so stop waiting.
	defer context.AfterFunc(r.base, cancel)()
	if err := f.Flush(fctx); err != nil && r.base.Err() == nil {
		r.note(fmt.Sprintf("agent events still pending after %s (%s): %v", r.s.opts.FlushTimeout, end.reason, err))
	}
}

// watchAbort ends the call with the reason Call.Abort delivers; it
// returns when the call ends (Run cancels base on its way out).
func (r *run) watchAbort(abort <-chan string) {
	select {
	case reason := <-abort:
		if reason == "" {
			reason = ReasonAborted
		}
		r.stop(agentError(reason))
	case <-r.base.Done():
	}
}

// LimitsFor returns the limits c runs under: c.Limits over the
// Simulator's, field by field.
func (s *Simulator) LimitsFor(c Call) Limits { return c.Limits.or(s.opts.Limits) }

// newRun sets up one call: its limits, its context and the recorder
// subscription that feeds the runner and keeps the history's size. The
// returned func unsubscribes.
func (s *Simulator) newRun(ctx context.Context, c Call) (*run, func()) {
	r := &run{
		s: s, c: c, rec: c.Recorder,
		lim:      s.LimitsFor(c),
		in:       &inbox{wake: make(chan struct{}, 1)},
		ackCh:    make(chan native.Ack, 1),
		marks:    map[string]int{},
		doneAt:   map[string]time.Duration{},
		speaking: map[string]bool{},
		open:     map[string]bool{},
		scale:    1,

		firstFinal: -1,
	}
	r.base, r.stop = context.WithCancelCause(ctx)
	r.ctx = r.base
	over := agentError(ReasonHistoryBudget)
	unsub := r.rec.Subscribe(func(e trace.Event) {
		r.in.push(e)
		// Under the recorder's lock: cancelling records nothing.
		if overHistory(r.rec, r.lim) {
			r.stop(over)
		}
	})
	return r, unsub
}

// bound passes the call's deadlines to a connection that can keep them:
// the call timeout (scaled) from now plus pre, plus the time for the stop
// frame, and the idle timeout.
func (r *run) bound(pre time.Duration) {
	d, ok := r.conn.(Deadliner)
	if !ok {
		return
	}
	sc := r.c.Script
	call := r.waitBound(orDefault(sc.CallTimeout, DefaultCallTimeout))
	d.SetCallDeadline(time.Now().Add(pre + call + r.s.opts.StopTimeout + CallDeadlineSlack))
	idle := r.lim.IdleTimeout
	if idle <= 0 {
		idle = max(r.waitBound(orDefault(sc.StepTimeout, DefaultStepTimeout)), DefaultMinIdleTimeout)
	}
	d.SetIdleTimeout(idle)
}

// CallDeadlineSlack (real time) keeps the connection's own deadline (see
// Deadliner) this far behind the call timeout and the stop frame, so the
// runner, not a failed read, reports a call that ran out.
const CallDeadlineSlack = time.Second

// play runs the call from start frame to script end and says why it ended.
func (r *run) play() *ending {
	offered := r.c.TimeScale
	if offered <= 0 {
		offered = 1
	}
	id := r.c.ID
	if id == "" {
		id = r.rec.Call()
	}
	err := r.send(native.Message{Event: native.EventStart, Start: &native.Start{
		CallID: id, Tools: r.c.Tools, TimeScale: offered, CustomParameters: r.c.CustomParameters,
		CallDate: r.c.CallDate, TimeZone: r.c.TimeZone,
	}})
	if err != nil {
		return r.cause(err)
	}
	if e := r.settleScale(offered); e != nil {
		return e
	}

	sc := r.c.Script
	r.scriptAt = r.rec.Since()
	r.timeout = r.waitBound(orDefault(sc.StepTimeout, DefaultStepTimeout))
	callTimeout := r.waitBound(orDefault(sc.CallTimeout, DefaultCallTimeout))
	ctx, cancel := context.WithTimeoutCause(r.ctx, callTimeout, agentError(ReasonCallTimeout))
	defer cancel()
	r.ctx = ctx

	for i := range sc.Steps {
		end, err := r.step(i)
		if err != nil {
			return r.cause(err)
		}
		if end != nil {
			return end
		}
	}
	return &ending{reason: "script complete"}
}

// settleScale waits briefly for the agent's ack: only an agent that
// accepts exactly the offered scale runs faster than real time.
func (r *run) settleScale(offered float64) *ending {
	r.scale = 1
	if offered != 1 {
		t := time.NewTimer(r.s.opts.AckWait)
		defer t.Stop()
		select {
		case a := <-r.ackCh:
			if a.TimeScale == offered {
				r.scale = offered
			} else {
				r.note(fmt.Sprintf("agent acked time scale %g, offered %g: running at 1", a.TimeScale, offered))
			}
		case <-t.C:
			r.note(fmt.Sprintf("no ack within %s: running at time scale 1", r.s.opts.AckWait))
		case <-r.ctx.Done():
			return r.cause(context.Cause(r.ctx))
		}
	}
	if r.c.Backend != nil {
		r.c.Backend.SetTimeScale(r.scale)
	}
	r.bound(0)
	return nil
}

// cause turns an error from a wait or a send into the call's ending: the
// context's cause when there is one (the pump or a timeout got there
// first), else a lost connection.
func (r *run) cause(err error) *ending {
	var e *ending
	if errors.As(context.Cause(r.ctx), &e) {
		return e
	}
	if errors.As(err, &e) {
		return e
	}
	if r.ctx.Err() != nil {
		return &ending{outcome: trace.OutcomeHarnessError, reason: "cancelled: " + context.Cause(r.ctx).Error()}
	}
	// A write fails once the connection is going; the pump usually knows
	// why (an oversized or garbage frame the transport closed on) and
	// says so a moment later: its reason wins.
	t := time.NewTimer(connLostGrace)
	defer t.Stop()
	select {
	case <-r.ctx.Done():
		if errors.As(context.Cause(r.ctx), &e) {
			return e
		}
	case <-t.C:
	}
	r.connDown.Store(true)
	return agentError(ReasonConnLost + ": " + err.Error())
}

// connLostGrace is how long a failed write waits for the pump's reason.
const connLostGrace = 200 * time.Millisecond

func (r *run) frame(m native.Message) native.Message {
	r.sendSeq++
	m.SequenceNumber = strconv.Itoa(r.sendSeq)
	return m
}

func (r *run) send(m native.Message) error {
	f := r.frame(m)
	r.wireAt(&r.wire.Sent)
	began := r.rec.Since()
	err := r.conn.Send(r.ctx, f)
	if len(r.writes) == maxWrites {
		r.writes = append(r.writes[:0], r.writes[1:]...)
	}
	r.writes = append(r.writes, span{began, r.rec.Since()})
	return err
}

// wireAt notes now as the next of a wire's times (trace.WireTimes).
func (r *run) wireAt(l *[]time.Time) {
	r.wireMu.Lock()
	defer r.wireMu.Unlock()
	if len(*l) < trace.MaxWireTimes {
		*l = append(*l, time.Now())
	}
}

func (r *run) note(text string) {
	r.rec.Record(trace.SourceHarness, trace.KindNote, &trace.Note{Text: text})
}

func (r *run) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * r.scale)
}

// waitBound scales a bound on waiting (a timeout, never a delay or a
// duration) and stretches it for a dialect whose speech runs slower than
// the script's word timing (see Stretcher).
func (r *run) waitBound(d time.Duration) time.Duration {
	if st, ok := r.conn.(Stretcher); ok && st.WaitStretch() > 1 {
		return time.Duration(float64(r.scaled(d)) * st.WaitStretch())
	}
	return r.scaled(d)
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// drain moves queued events into the runner's view of the call. The
// events themselves stay in the recorder: triggers read them there, up to
// the last one drained.
func (r *run) drain() {
	for _, e := range r.in.take() {
		r.seen = e.Seq
		r.observe(e)
	}
}

// lastSeq is the seq of the last event the runner has seen.
func (r *run) lastSeq() int { return r.seen }

// quiet: not speaking, no tool call open, no tool job under way.
func (r *run) quiet() bool { return len(r.speaking) == 0 && len(r.open) == 0 && !r.preparing }

// observe keeps the state wait_quiet and the no-response rule need.
func (r *run) observe(e trace.Event) {
	wasQuiet := r.quiet()
	switch e.Kind {
	case trace.KindAgentSpeechStart:
		if d, ok := e.Data.(*trace.AgentSpeech); ok {
			r.speaking[d.Utterance] = true
		}
	case trace.KindAgentSpeechEnd:
		if d, ok := e.Data.(*trace.AgentSpeech); ok {
			delete(r.speaking, d.Utterance)
		}
	case trace.KindAgentClear:
		// A clear without an id stops everything the agent was saying.
		if d, ok := e.Data.(*trace.AgentSpeech); ok && d.Utterance != "" {
			delete(r.speaking, d.Utterance)
		} else {
			clear(r.speaking)
		}
	case trace.KindToolReceived:
		if d, ok := e.Data.(*trace.ToolEvent); ok {
			r.open[d.Ref] = true
		}
	case trace.KindToolResponded, trace.KindToolCancelled, trace.KindToolRejected:
		if d, ok := e.Data.(*trace.ToolEvent); ok {
			delete(r.open, d.Ref)
		}
	case trace.KindCallerSpeechFinal:
		if r.firstFinal < 0 {
			r.firstFinal = e.At
		}
		r.lastFinalSeq, r.lastFinalAt = e.Seq, e.At
		r.answered = false
	case trace.KindCallerDTMF:
		r.answered = false
	}
	if e.Kind == trace.KindAgentSpeechStart || e.Kind == trace.KindToolReceived {
		r.answered = true
	}
	// Only speech answers the caller: tool requests, self-reports and
	// extensions do not, so an agent that floods them still meets the
	// no-response rule.
	if r.firstFinal >= 0 && e.At > r.firstFinal && isAgentSpeech(e.Kind) {
		r.agentAfterFin = true
	}
	// A tool_intent says a tool job has begun: the agent is busy with it
	// (reads, the write, retries, the verification — with silent gaps in
	// between) until it speaks again, which it does to report the outcome
	// or to say it dropped the job.
	if e.Kind == trace.KindAgentSpeechStart {
		r.preparing = false
	}
	if e.Kind == trace.KindAgentToolIntent {
		r.preparing = true
	}
	if !wasQuiet && r.quiet() {
		r.quietSince = e.At
	}
}

func isAgentSpeech(k trace.Kind) bool {
	return k == trace.KindAgentSpeechStart || k == trace.KindAgentSpeechText || k == trace.KindAgentSpeechEnd
}

// waitUntil blocks until call time t, or until done reports true, keeping
// the log current and enforcing the no-response rule. It returns whether
// done fired.
func (r *run) waitUntil(t time.Duration, done func() bool) (bool, error) {
	for {
		r.drain()
		now := r.rec.Since()
		noResp := time.Duration(-1)
		if r.firstFinal >= 0 && !r.agentAfterFin {
			noResp = r.firstFinal + r.timeout
			if now >= noResp {
				e := agentError(ReasonNoResponse)
				r.stop(e)
				return false, e
			}
		}
		r.woke = now
		if done != nil && done() {
			return true, nil
		}
		if now >= t {
			return false, nil
		}
		next := t
		if noResp >= 0 && noResp < next {
			next = noResp
		}
		timer := time.NewTimer(next - now)
		select {
		case <-r.ctx.Done():
			timer.Stop()
			return false, context.Cause(r.ctx)
		case <-r.in.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

func (r *run) sleep(d time.Duration) error {
	now := r.rec.Since()
	return r.waitLate(&r.late.Speech, now+d, now)
}

// waitLate waits until call time t, like waitUntil, and adds how late the
// wait ended to st, counting from t or floor, whichever is later: floor is
// when the wait became the harness's to keep (a trigger's, when its step
// began: a time another step used up is the script's). A wait that begins
// after that was held up, by the harness's own work or a stall of its
// process, which counts, or by writes the agent was slow to accept, which
// do not: the time spent writing after it is taken off. A stall that falls
// inside a write is the one this cannot see.
func (r *run) waitLate(st *trace.LatenessStat, t, floor time.Duration) error {
	from := max(t, floor)
	base := from
	for _, w := range r.writes {
		if w.end > base {
			from += w.end - max(w.begin, base)
		}
	}
	r.writes = r.writes[:0]
	if _, err := r.waitUntil(t, nil); err != nil {
		return err
	}
	st.Add(max(r.woke-from, 0))
	return nil
}
