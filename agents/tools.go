package agents

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/callproof/callproof/internal/sockpeek"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// resultKind classifies one tool response the way an agent experiences it.
type resultKind int

const (
	resOK        resultKind = iota // 200 with a record
	resPending                     // 202: accepted, commit lands later
	resError                       // 4xx/5xx
	resEmpty                       // 200 with an empty or unreadable body
	resDropped                     // connection dropped
	resTimeout                     // our ToolTimeout ran out
	resCancelled                   // we cancelled it (correction, hang-up)
)

type toolResult struct {
	kind   resultKind
	status int
	record *trace.Record
}

// broken reports a result that looks broken even to a trusting agent.
func (r toolResult) broken() bool { return r.kind >= resError && r.kind <= resTimeout }

// retryable is a failure where trying again can help.
func (r toolResult) retryable() bool {
	if r.kind != resError {
		return r.broken()
	}
	return r.status >= 500 || r.status == http.StatusConflict || r.status == http.StatusTooManyRequests
}

var errToolTimeout = errors.New("tool timeout")

// toolClient is one call's view of the tool API.
type toolClient struct {
	http    *http.Client
	clock   Clock
	pace    *pace // records each request's departure; nil: not measured
	baseURL string
	token   string
	timeout time.Duration
}

// post sends one tool request. The timeout runs on the injected clock and
// is told apart from a cancellation by the context's cause.
func (c *toolClient) post(ctx context.Context, tool string, args map[string]string, key string, version int) toolResult {
	body, err := json.Marshal(args)
	if err != nil {
		return toolResult{kind: resError}
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	dl := &deadline{clock: c.clock, d: c.timeout, cancel: cancel}
	dl.arm()
	defer dl.stop()
	if w, ok := ctx.Value(withdrawalsKey{}).(*withdrawals); ok {
		dl.open = w
		defer dl.forget()
	}
	ct := dl.trace()
	start := time.Now()
	if p := c.pace; p != nil {
		wrote := ct.WroteRequest
		ct.WroteRequest = func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				p.departed(start)
			}
			wrote(info)
		}
	}
	rctx = httptrace.WithClientTrace(rctx, ct)

	req, err := http.NewRequestWithContext(rctx, http.MethodPost, strings.TrimRight(c.baseURL, "/")+"/"+tool, bytes.NewReader(body))
	if err != nil {
		return toolResult{kind: resError}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set(native.HeaderStateVersion, strconv.Itoa(version))
	if key != "" {
		req.Header.Set(native.HeaderIdempotencyKey, key)
	}
	fail := func() toolResult {
		switch {
		case ctx.Err() != nil:
			return toolResult{kind: resCancelled}
		case errors.Is(context.Cause(rctx), errToolTimeout):
			return toolResult{kind: resTimeout}
		}
		return toolResult{kind: resDropped}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fail()
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		r := fail()
		if r.kind == resDropped && len(data) == 0 && resp.StatusCode < 300 {
			r.kind = resEmpty
		}
		r.status = resp.StatusCode
		return r
	}
	var parsed struct {
		OK     bool          `json:"ok"`
		Record *trace.Record `json:"record"`
	}
	jsonErr := json.Unmarshal(data, &parsed)
	switch {
	case resp.StatusCode == http.StatusAccepted:
		return toolResult{kind: resPending, status: resp.StatusCode}
	case resp.StatusCode == http.StatusOK:
		if jsonErr != nil || !parsed.OK || parsed.Record == nil {
			return toolResult{kind: resEmpty, status: resp.StatusCode}
		}
		return toolResult{kind: resOK, status: resp.StatusCode, record: parsed.Record}
	}
	return toolResult{kind: resError, status: resp.StatusCode}
}

// withdrawals are a worker's open tool connections. Cancelling a request's
// context makes net/http close its connection on the transport's own
// goroutine, some time later; a worker's cancel closes them at once
// instead, on the goroutine that cancels. The close is then in the
// backend's socket before anything the agent sends after the cancel (its
// state report, which can release a held write) has left it: the
// withdrawal comes first by construction.
type withdrawals struct {
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

type withdrawalsKey struct{}

// add tracks conn until the returned func; a conn opened after the
// withdrawal is closed at once.
func (w *withdrawals) add(conn net.Conn) func() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		_ = conn.Close()
		return func() {}
	}
	if w.conns == nil {
		w.conns = map[net.Conn]bool{}
	}
	w.conns[conn] = true
	return func() {
		w.mu.Lock()
		delete(w.conns, conn)
		w.mu.Unlock()
	}
}

func (w *withdrawals) closeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	for c := range w.conns {
		_ = c.Close()
	}
	w.conns = nil
}

// deadline is a tool request's timeout, keyed to what the agent has
// sent and received rather than to when its goroutines ran. On a loaded
// machine the dial and the write can take longer than the whole timeout
// at a small time scale, and an answer can sit in the socket while the
// transport's reader waits for the CPU; a timer counted from the call to
// Do would give up on a request the backend had answered. So the timeout
// starts again once the request is written, and when it runs out with an
// answer (or the backend's close) already in the socket it waits one
// more period for the transport to read it instead of giving up. Bounded:
// at most three periods in all.
type deadline struct {
	clock  Clock
	d      time.Duration
	cancel context.CancelCauseFunc

	open    *withdrawals // the worker's, or nil
	untrack func()

	mu       sync.Mutex
	stopT    func() bool
	conn     net.Conn
	answered bool // the transport has read the answer's first byte
	extended bool
	done     bool
}

func (t *deadline) arm() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	if t.stopT != nil {
		t.stopT()
	}
	t.stopT = t.clock.AfterFunc(t.d, t.fire)
}

func (t *deadline) fire() {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return
	}
	if !t.extended && (t.answered || t.conn != nil) {
		if data, closed := t.peek(); data || closed {
			t.extended = true
			t.mu.Unlock()
			t.arm()
			return
		}
	}
	t.done = true
	t.mu.Unlock()
	t.cancel(errToolTimeout)
}

// forget stops tracking the request's connection for its withdrawal.
func (t *deadline) forget() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.untrack != nil {
		t.untrack()
		t.untrack = nil
	}
}

// peek reports an answer read or waiting; t.mu must be held.
func (t *deadline) peek() (data, closed bool) {
	if t.answered {
		return true, false
	}
	return sockpeek.Peek(t.conn)
}

func (t *deadline) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	if t.stopT != nil {
		t.stopT()
	}
}

// trace follows the request: its connection (to peek at), the moment it
// is written (to start the timeout again) and its answer's first byte.
func (t *deadline) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.conn = info.Conn
			if t.open != nil {
				t.untrack = t.open.add(info.Conn)
			}
		},
		GotFirstResponseByte: func() {
			t.mu.Lock()
			t.answered = true
			t.mu.Unlock()
		},
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				t.arm()
			}
		},
	}
}

// idempotencyKey is derived from the call, the action and the slot version
// it was built from, so every retry of the same call carries the same key
// and a call built from a new version never replays an old one.
func idempotencyKey(callID, action string, version int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s|%s|%d", callID, action, version)))
	return "cp-" + hex.EncodeToString(sum[:16])
}

// plan is an immutable description of one job, handed to its worker.
type plan struct {
	id      int
	callID  string
	version int
	negate  bool              // only restore touched records
	tool    trace.ToolSpec    // the write (zero when negate)
	args    map[string]string // its arguments
	key     string            // the argument naming the record it acts on ("" for none)
	lookups []lookup          // reads of the records its arguments name, before the write
	undo    []undo            // records this call created that the negation takes back
	// awaitLanding: records whose write was accepted (202) and not seen
	// to land; restore waits for it before putting the record back.
	awaitLanding map[string]bool
	reRead       bool // read the target again when the first read fails
	// checkAnswer (generic careful): a create's answer must hold what was
	// asked, and a write no read can check is settled by its answers.
	checkAnswer bool
	read        trace.ToolSpec // read tool for the orders table (Name "" if none)
	update      trace.ToolSpec // update tool used to restore fields
	created     trace.ToolSpec // read tool for the write's table when it creates records
	preRead     bool           // read the target before the first write to it
	// restore: records earlier writes touched, with the value of each
	// touched field before the agent's first write.
	restore map[string]map[string]string
}

type outcomeKind int

const (
	outDone outcomeKind = iota
	outFailed
	outUnconfirmed
	outCancelled
)

// outcome is what a worker reports back to the engine loop.
type outcome struct {
	kind     outcomeKind
	values   map[string]string            // values to confirm; nil: the plan's
	orig     map[string]map[string]string // pre-reads made: order -> fields
	touched  map[string][]string          // writes sent: order -> fields
	clean    []string                     // orders verified back to their original values
	created  []string                     // keys of records the write created
	undone   []string                     // keys of created records taken back
	accepted []string                     // records a write was accepted for (202)
}

// undo takes back one record this call created: args for tool.
type undo struct {
	tool trace.ToolSpec
	key  string
	args map[string]string
}

// worker runs one plan: sequential code, cancelled by its context.
type worker struct {
	cfg      Config // scaled durations
	client   *toolClient
	accepted func(values map[string]string) // the first 200/202 of the main write
	// gate, when set, is asked before every consequential write is sent;
	// false means the write must not go out.
	gate func(ctx context.Context) bool
}

func (w *worker) has(f Flaw) bool { return w.cfg.Has(f) }

func (w *worker) run(ctx context.Context, p plan) outcome {
	out := outcome{orig: map[string]map[string]string{}, touched: map[string][]string{}}
	if k, ok := w.restore(ctx, p, &out); !ok {
		out.kind = k
		return out
	}
	if p.negate {
		out.kind = outDone
		return out
	}
	if w.has(SkipsWrite) {
		w.accepted(nil)
		out.kind = outDone
		return out
	}
	order := p.args[p.key]
	if p.preRead && p.read.Name != "" {
		rec, ok := w.read(ctx, p, order)
		if !ok && p.reRead && ctx.Err() == nil {
			rec, ok = w.read(ctx, p, order) // another record, or none: look again
		}
		if ok {
			out.orig[order] = copyMap(rec.Fields)
		}
	}
	for _, l := range p.lookups {
		w.client.post(ctx, l.tool.Name, map[string]string{l.tool.KeyArg: l.key}, "", p.version)
		if ctx.Err() != nil {
			out.kind = outCancelled
			return out
		}
	}
	out.kind, out.values = w.commit(ctx, p, p.tool, p.args, idempotencyKey(p.callID, p.tool.Name, p.version), &out, true)
	return out
}

// restore puts fields that earlier writes changed back to the values read
// before those writes, unless this plan's write sets them anyway. It reads
// first, so a cancelled write that never landed costs no write at all.
func (w *worker) restore(ctx context.Context, p plan, out *outcome) (outcomeKind, bool) {
	for _, order := range trace.SortedKeys(p.restore) {
		want := map[string]string{}
		for f, v := range p.restore[order] {
			if !declares(p.update, f) {
				continue // no tool here puts it back
			}
			if !p.negate && order == p.args[p.key] && p.tool.Effect == trace.EffectUpdate {
				if _, set := p.args[f]; set {
					continue
				}
			}
			want[f] = v
		}
		if len(want) == 0 || p.read.Name == "" || p.update.Name == "" {
			continue
		}
		rec, ok := w.read(ctx, p, order)
		// A write accepted (202) and not yet seen may still land: wait
		// for it, bounded, so there is something to put back.
		for i := 0; ok && p.awaitLanding[order] && i < w.cfg.MaxPolls && !differs(rec, want); i++ {
			if !sleep(ctx, w.cfg.Clock, w.cfg.PollEvery) {
				return outCancelled, false
			}
			rec, ok = w.read(ctx, p, order)
		}
		if !ok {
			if ctx.Err() != nil {
				return outCancelled, false
			}
			return outFailed, false
		}
		args := map[string]string{keyName(p.update, p.key): order}
		for f, v := range want {
			if rec.Fields[f] != v {
				args[f] = v
			}
		}
		if len(args) > 1 {
			key := idempotencyKey(p.callID, "restore:"+order, p.version)
			if k, _ := w.commit(ctx, p, p.update, args, key, out, false); k != outDone {
				return k, false
			}
		}
		out.clean = append(out.clean, order)
	}
	for _, u := range p.undo {
		key := idempotencyKey(p.callID, "undo:"+u.key, p.version)
		if k, _ := w.commit(ctx, p, u.tool, u.args, key, out, false); k != outDone {
			return k, false
		}
		out.undone = append(out.undone, u.key)
	}
	return outDone, true
}

// commit sends one write and settles it: the values returned are those the
// backend verifiably holds (or, trusting, those the response claims).
func (w *worker) commit(ctx context.Context, p plan, spec trace.ToolSpec, args map[string]string, key string, out *outcome, main bool) (outcomeKind, map[string]string) {
	if w.has(UnkeyedRetries) {
		key = ""
	}
	kn := keyName(spec, p.key)
	order := args[kn]
	if spec.Effect == trace.EffectUpdate {
		for f := range args {
			if f != kn {
				out.touched[order] = append(out.touched[order], f)
			}
		}
	}
	announced := false
	unkeyedRetried := false
	for try := 0; ; try++ {
		if w.gate != nil && !w.gate(ctx) {
			return outCancelled, nil
		}
		res := w.client.post(ctx, spec.Name, args, key, p.version)
		if res.kind == resCancelled {
			return outCancelled, nil
		}
		// A create answered with another record than it asked for is as
		// broken as no answer: whether it landed is checked below.
		wrongMade := res.kind == resOK && p.checkAnswer && (spec.Effect == trace.EffectCreate || targets(spec) && p.read.Name == "") &&
			(res.record.Table != spec.Table || !holds(*res.record, spec, kn, args) || targets(spec) && res.record.Key != args[kn])
		if res.kind == resOK && spec.Effect == trace.EffectCreate && main && !wrongMade {
			out.created = append(out.created, res.record.Key)
		}
		if res.kind == resPending && targets(spec) {
			out.accepted = append(out.accepted, order)
		}
		if (res.kind == resOK && !wrongMade) || res.kind == resPending {
			if main && !announced && res.kind == resPending {
				announced = true
				w.accepted(nil)
			}
			if w.has(TrustsToolResults) && res.kind == resOK {
				return outDone, recordValues(spec, kn, args, res.record)
			}
			if res.kind == resPending {
				if main && w.has(ConfirmsOnAccept) {
					// Its claim (accepted) is its answer: it reads nothing
					// back after it. A read here raced the claim, the
					// read's poll timer against the engine loop's turn,
					// and whichever the recorder saw first decided axis 1
					// (tf-05). The outcome stays open: the record is
					// pending (done).
					return outUnconfirmed, nil
				}
				return w.settle(ctx, p, spec, args)
			}
			return w.verify(ctx, p, spec, args, res.record)
		}
		if w.has(UnkeyedRetries) {
			if !unkeyedRetried {
				unkeyedRetried = true
				continue
			}
			return outFailed, nil
		}
		// Careful: did the write land before it broke? seen: the read
		// answered, so "not landed" is known rather than a read that
		// failed too (a loaded backend times both out).
		landed, vals, seen := w.landedSeen(ctx, p, spec, kn, args)
		if landed {
			return outDone, vals
		}
		// A write with no record to read back (a create, or a table no
		// tool reads by key) is settled by retrying under the same key:
		// a replay returns the first answer if it was stored (a dropped
		// 200 comes back), and a request abandoned before it committed
		// left the key free, so it runs once (docs/PROTOCOL.md,
		// "Idempotency"). Only a 503 or 429, which say the request was
		// not handled, makes a new key safe: a 500 may come after the
		// write landed, so it is reported as the failure it says, not
		// retried under a new key; an open outcome is reported as
		// unknown.
		blind := spec.Effect == trace.EffectCreate || p.read.Name == "" // no record to read back
		if ctx.Err() != nil {
			return outCancelled, nil
		}
		limit := w.cfg.MaxRetries
		if blind && p.checkAnswer {
			limit++ // the first retry only replays the stored answer
		}
		if !(res.retryable() || wrongMade) || try >= limit {
			if blind && p.checkAnswer && mayHaveLanded(res, wrongMade) {
				return outUnconfirmed, nil
			}
			return outFailed, nil
		}
		if res.kind == resError && key != "" && (targets(spec) && !blind && seen || blind && p.checkAnswer && unhandled(res.status)) {
			// A definite error answer, and the read shows nothing landed
			// (or the status says nothing was handled): the backend
			// stored that answer under this key and would replay it, so
			// the retry is a new request with a new key. After an
			// unknown outcome (timeout, dropped, empty) the key stays: a
			// replay is exactly what protects us then.
			key = fmt.Sprintf("%s-r%d", baseKey(key), try+1)
		}
		if !sleep(ctx, w.cfg.Clock, w.cfg.RetryBackoff) {
			return outCancelled, nil
		}
	}
}

// verify checks a 200 against the backend rather than the response.
func (w *worker) verify(ctx context.Context, p plan, spec trace.ToolSpec, args map[string]string, rec *trace.Record) (outcomeKind, map[string]string) {
	kn := keyName(spec, p.key)
	if spec.Effect == trace.EffectCreate {
		if rec == nil || rec.Table != spec.Table || !holds(*rec, spec, kn, args) {
			return outUnconfirmed, nil
		}
		if p.created.Name == "" || !keyFits(p.created, rec.Key) {
			// No read tool for created records (or none that takes the
			// new key): the created record itself is the only evidence
			// there is.
			return outDone, copyMap(args)
		}
		res := w.client.post(ctx, p.created.Name, map[string]string{p.created.KeyArg: rec.Key}, "", p.version)
		if res.kind == resOK && res.record.Key == rec.Key && holds(*res.record, spec, kn, args) {
			return outDone, copyMap(args)
		}
		if ctx.Err() != nil {
			return outCancelled, nil
		}
		return outUnconfirmed, nil
	}
	if p.read.Name == "" && p.checkAnswer {
		// No read tool for this table: the record answered is the only
		// evidence there is, if it is the one asked for.
		if rec != nil && rec.Key == args[kn] && (spec.Table == "" || rec.Table == spec.Table) && holds(*rec, spec, kn, args) {
			return outDone, recordValues(spec, kn, args, rec)
		}
		return outUnconfirmed, nil
	}
	for i := 0; i < 3; i++ {
		if i > 0 && !sleep(ctx, w.cfg.Clock, w.cfg.PollEvery) {
			return outCancelled, nil
		}
		if landed, vals := w.landed(ctx, p, spec, kn, args); landed {
			return outDone, vals
		}
		if ctx.Err() != nil {
			return outCancelled, nil
		}
	}
	return outFailed, nil
}

// landed reads the record a write targets and reports whether the write
// shows there (a deleted record shows as gone), with the values to confirm.
func (w *worker) landed(ctx context.Context, p plan, spec trace.ToolSpec, kn string, args map[string]string) (bool, map[string]string) {
	ok, vals, _ := w.landedSeen(ctx, p, spec, kn, args)
	return ok, vals
}

// landedSeen is landed, and whether the read answered at all.
func (w *worker) landedSeen(ctx context.Context, p plan, spec trace.ToolSpec, kn string, args map[string]string) (bool, map[string]string, bool) {
	if !targets(spec) {
		return false, nil, false
	}
	if spec.Effect == trace.EffectDelete {
		if p.read.Name == "" {
			return false, nil, false
		}
		res := w.client.post(ctx, p.read.Name, map[string]string{keyName(p.read, kn): args[kn]}, "", p.version)
		gone := res.kind == resError && res.status == http.StatusNotFound
		return gone, copyMap(args), gone || res.kind == resOK
	}
	got, ok := w.read(ctx, p, args[kn])
	if ok && holds(got, spec, kn, args) {
		return true, recordValues(spec, kn, args, &got), true
	}
	return false, nil, ok
}

// settle polls after a 202 until the change shows, bounded.
func (w *worker) settle(ctx context.Context, p plan, spec trace.ToolSpec, args map[string]string) (outcomeKind, map[string]string) {
	if !targets(spec) || p.read.Name == "" {
		return outUnconfirmed, nil
	}
	kn := keyName(spec, p.key)
	for i := 0; i < w.cfg.MaxPolls; i++ {
		if !sleep(ctx, w.cfg.Clock, w.cfg.PollEvery) {
			return outCancelled, nil
		}
		if landed, vals := w.landed(ctx, p, spec, kn, args); landed {
			return outDone, vals
		}
	}
	if ctx.Err() != nil {
		return outCancelled, nil
	}
	return outUnconfirmed, nil
}

// read fetches one record of the write's table, refusing a response that
// carries another record.
func (w *worker) read(ctx context.Context, p plan, key string) (trace.Record, bool) {
	if p.read.Name == "" {
		return trace.Record{}, false
	}
	res := w.client.post(ctx, p.read.Name, map[string]string{keyName(p.read, p.key): key}, "", p.version)
	if res.kind != resOK || res.record.Key != key || (p.read.Table != "" && res.record.Table != p.read.Table) {
		return trace.Record{}, false
	}
	return res.record.Clone(), true
}

// mayHaveLanded reports a failed write whose outcome is open: an answer
// showing another record, or none at all. An error status is taken at its
// word: nothing was written (docs/SCORING.md, a definite failure).
func mayHaveLanded(res toolResult, wrongMade bool) bool {
	return wrongMade || res.broken() && res.kind != resError
}

// unhandled reports a status that says the request was refused before it
// was handled (503 Service Unavailable, 429 Too Many Requests), so a new
// request cannot double it.
func unhandled(status int) bool {
	return status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests
}

// keyFits reports whether a read tool accepts key as its key argument.
func keyFits(read trace.ToolSpec, key string) bool {
	for _, a := range read.Args {
		if a.Name == read.KeyArg {
			return matches(a, key)
		}
	}
	return true
}

// differs reports a record holding another value than want in some field.
func differs(rec trace.Record, want map[string]string) bool {
	for f, v := range want {
		if rec.Fields[f] != v {
			return true
		}
	}
	return false
}

// targets reports a write to an existing record named by its key.
func targets(spec trace.ToolSpec) bool {
	switch spec.Effect {
	case trace.EffectUpdate, trace.EffectCancel, trace.EffectDelete:
		return true
	}
	return false
}

// keyName is the argument naming spec's record: its key_arg, else the
// domain's (the order desk's order_number).
func keyName(spec trace.ToolSpec, fallback string) string {
	if spec.KeyArg != "" {
		return spec.KeyArg
	}
	if fallback == "" {
		return slotOrder
	}
	return fallback
}

// holds reports whether rec carries every non-key argument value (and, for
// a cancel, its status).
func holds(rec trace.Record, spec trace.ToolSpec, kn string, args map[string]string) bool {
	if spec.Effect == trace.EffectCancel && spec.StatusField != "" && rec.Fields[spec.StatusField] != spec.StatusValue {
		return false
	}
	for f, v := range args {
		if f == kn && rec.Key == v {
			continue
		}
		if rec.Fields[f] != v {
			return false
		}
	}
	return true
}

// recordValues reads the values to confirm from a record: the record's own
// key and fields, wrong record or not.
func recordValues(spec trace.ToolSpec, kn string, args map[string]string, rec *trace.Record) map[string]string {
	if rec == nil {
		return copyMap(args)
	}
	v := map[string]string{}
	if spec.Effect == trace.EffectCreate {
		if _, ok := args[kn]; ok {
			v[kn] = rec.Fields[kn]
		}
	} else {
		v[kn] = rec.Key
	}
	for f := range args {
		if f != kn {
			v[f] = rec.Fields[f]
		}
	}
	return v
}

// baseKey strips a retry suffix added by commit.
func baseKey(k string) string {
	if i := strings.LastIndex(k, "-r"); i > 0 {
		return k[:i]
	}
	return k
}

// sleep waits d on the clock; false if ctx ended first.
func sleep(ctx context.Context, clock Clock, d time.Duration) bool {
	done := make(chan struct{})
	stop := clock.AfterFunc(d, func() { close(done) })
	select {
	case <-done:
		return true
	case <-ctx.Done():
		stop()
		return false
	}
}
