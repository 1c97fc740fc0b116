package mockbackend

import (
	"context"
	"crypto/subtle"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// maxKeyLen is Stripe's limit on idempotency keys.
const maxKeyLen = 255

// reasonDuplicate marks the second delivery of a duplicate fault.
const reasonDuplicate = "duplicate delivery"

// exchange is one delivery of one request as it moves through the call.
type exchange struct {
	c      *Call
	ctx    context.Context    // the client's; the call's for work nobody waits on
	stop   context.CancelFunc // cancels ctx: settle found the client gone
	conn   net.Conn           // the client's connection, when known (gone.go)
	id     int                // ledger row
	ref    string
	name   string // tool name as requested
	tool   *tool  // nil when unknown
	args   map[string]string
	key    string
	fp     string // fingerprint of name and args, once the key is claimed (admit)
	built  *int
	remote string
	via    string // Reason put on this delivery's events ("" or reasonDuplicate)
	dupOf  string // ref of the delivery this one repeats (duplicate fault)

	settled   chan struct{} // closed once a waiting delivery has ended its wait (enterWait)
	ownsKey   bool          // this delivery claimed its idempotency key
	duplicate bool          // a duplicate fault asked for a second delivery
	after     []func()      // run once the response is out (late commits)
}

// reply is what a request answers, or why it answers nothing.
type reply struct {
	status   int
	body     []byte
	errMsg   string
	rejected bool // never reached the tool: recorded as tool.rejected
	gone     bool // the client went away: nothing to send
	// cancelled: tool.cancelled is already recorded (no commit).
	cancelled bool
	drop      bool // answer by dropping the connection
}

func (r reply) succeeded() bool {
	return !r.gone && !r.drop && !r.rejected && r.status >= 200 && r.status < 300
}

func errorReply(status int, typ, msg, param string) reply {
	return reply{status: status, body: errorBody(typ, msg, param), errMsg: msg}
}

func rejectReply(status int, typ, msg, param string) reply {
	r := errorReply(status, typ, msg, param)
	r.rejected = true
	return r
}

// emit records a backend event for this delivery and returns its time on
// the call clock (read from the clock if the recorder is already closed).
func (x *exchange) emit(kind trace.Kind, te trace.ToolEvent) time.Duration {
	te.Ref, te.Tool = x.ref, x.name
	if te.Reason == "" {
		te.Reason = x.via
	}
	te.DuplicateOf = x.dupOf
	e := x.c.rec.Record(trace.SourceBackend, kind, &te)
	if e.Seq == 0 {
		return x.c.rec.Since()
	}
	return e.At
}

func (x *exchange) amend(fn func(*LedgerRow)) { x.c.amend(x.id, fn) }

// abandon ends a request that will not commit because its client went away
// or the call closed.
func (x *exchange) abandon() reply { return x.abandonFor("call closed") }

// abandonFor is abandon with the reason to record if the call closed.
func (x *exchange) abandonFor(closedReason string) reply {
	if x.c.ctx.Err() != nil {
		at := x.emit(trace.KindToolCancelled, trace.ToolEvent{Reason: closedReason, Status: http.StatusServiceUnavailable})
		x.amend(func(r *LedgerRow) { r.Cancelled = ptr(at) })
		rep := errorReply(http.StatusServiceUnavailable, "call_closed", "the call was closed before this request completed", "")
		rep.cancelled = true
		return rep
	}
	// Nothing will be answered, so nothing is stored: free the key before
	// anyone can see the cancellation and retry.
	x.c.freeKey(x)
	at := x.emit(trace.KindToolCancelled, trace.ToolEvent{Reason: "client gave up"})
	x.amend(func(r *LedgerRow) { r.Cancelled = ptr(at) })
	return reply{gone: true, cancelled: true}
}

// wait sleeps d (scaled) unless the client or the call goes first.
func (x *exchange) wait(d time.Duration) bool {
	t := time.NewTimer(x.c.scaled(d))
	defer t.Stop()
	select {
	case due := <-t.C:
		x.c.fired(due)
		return true
	case <-x.ctx.Done():
	case <-x.c.ctx.Done():
	}
	return false
}

// serveTool runs one authenticated HTTP tool request through the budget,
// the body read, then the path every transport shares (Call.handle), and
// answers it.
func (c *Call) serveTool(w http.ResponseWriter, r *http.Request, name string) {
	if violation, ok := c.spend(name); !ok {
		writeJSON(w, http.StatusTooManyRequests, overBudgetBody(violation))
		return
	}
	id, ref := c.nextRef()
	defer c.track(ref, name)()
	ctx, stop := context.WithCancel(r.Context())
	defer stop()
	x := &exchange{c: c, ctx: ctx, stop: stop, conn: requestConn(r.Context()), id: id, ref: ref, name: name, remote: r.RemoteAddr}

	body, how, readErr := c.readBody(w, r)
	switch how {
	case bodyTimeout, bodyTooLarge, bodyBroken:
		w.Header().Set("Connection", "close")
	}
	rep := c.handle(x, body, how, readErr, r.Header.Get(native.HeaderIdempotencyKey), r.Header.Get(native.HeaderStateVersion))
	dropped := c.send(w, x, rep, trace.ToolEvent{})
	for _, fn := range x.after {
		fn()
	}
	if dropped {
		dropConnection(w)
	}
}

// handle is the path every transport shares once a request's body is in
// (how says how reading it ended): parsing, recording, validation,
// idempotency, holds, faults and execution. key and version are the
// Idempotency-Key and X-State-Version as sent ("" for none).
func (c *Call) handle(x *exchange, body []byte, how bodyOutcome, readErr error, key, version string) reply {
	var argErr *argError
	if how == bodyOK {
		x.args, argErr = decodeArgs(body)
	}
	x.key = key
	var verErr *argError
	if version != "" {
		n, err := strconv.Atoi(strings.TrimSpace(version))
		if err != nil {
			verErr = &argError{param: native.HeaderStateVersion, msg: native.HeaderStateVersion + " must be an integer"}
		} else {
			x.built = &n
		}
	}
	// A withdrawal already in a socket is recorded before this request,
	// and so is a late commit whose delay has passed.
	c.settle()
	c.landLate()
	c.receive(x)

	var rep reply
	x.tool = c.tools[x.name]
	switch {
	case how == bodyCallClosed:
		c.mu.Lock()
		c.stalled++
		c.mu.Unlock()
		rep = x.abandonFor("call closed while the request body was arriving")
	case how == bodyClientGone:
		rep = x.abandon()
	case how == bodyTimeout:
		rep = rejectReply(http.StatusRequestTimeout, "request_timeout",
			"the request body did not arrive within "+c.bodyDeadline().String(), "")
	case how == bodyTooLarge:
		rep = rejectReply(http.StatusRequestEntityTooLarge, "request_too_large",
			"the request body is larger than "+strconv.Itoa(MaxBodyBytes)+" bytes", "")
	case how == bodyBroken:
		rep = rejectReply(http.StatusBadRequest, "invalid_request", "could not read the request body: "+readErr.Error(), "")
	case x.tool == nil:
		rep = rejectReply(http.StatusNotFound, "not_found", "unknown tool "+strconv.Quote(clip(x.name, maxLoggedPath)), "")
	case argErr != nil:
		rep = rejectReply(http.StatusBadRequest, "invalid_request", argErr.msg, argErr.param)
	case verErr != nil:
		rep = rejectReply(http.StatusBadRequest, "invalid_request", verErr.msg, verErr.param)
	case len(x.key) > maxKeyLen:
		rep = rejectReply(http.StatusBadRequest, "invalid_request",
			native.HeaderIdempotencyKey+" is longer than 255 characters", native.HeaderIdempotencyKey)
	default:
		if err := x.tool.validate(x.args); err != nil {
			rep = rejectReply(http.StatusBadRequest, "invalid_request", err.msg, err.param)
		} else {
			rep = c.run(x)
		}
	}
	if x.duplicate {
		c.redeliver(x)
	}
	return rep
}

// bodyOutcome says how reading a request body ended.
type bodyOutcome int

const (
	bodyOK         bodyOutcome = iota
	bodyTooLarge               // over MaxBodyBytes
	bodyTimeout                // not all in within the body deadline
	bodyCallClosed             // the call closed first
	bodyClientGone             // the client left first
	bodyBroken                 // bad framing (chunked encoding)
)

// pastDeadline is an instant long gone: as a read deadline it fails a
// blocked read at once.
var pastDeadline = time.Unix(1, 0) //nolint:gochecknoglobals // immutable

// bodyDeadline is the real time a body is given: BodyTimeout scaled, at
// least MinBodyTimeout.
func (c *Call) bodyDeadline() time.Duration {
	return max(c.scaled(c.bodyTimeout), MinBodyTimeout)
}

// readBody reads the request body, at most MaxBodyBytes, until the body
// deadline, the call closing or the client leaving, whichever comes first.
// The read runs on its own goroutine so the handler never waits on a
// stalled client; a read deadline in the past then fails the read itself.
func (c *Call) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bodyOutcome, error) {
	rc := http.NewResponseController(w)
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	body := http.MaxBytesReader(nil, r.Body, MaxBodyBytes)
	go func() {
		b, err := io.ReadAll(body)
		done <- result{b, err}
	}()
	t := time.NewTimer(c.bodyDeadline())
	defer t.Stop()
	var how bodyOutcome
	select {
	case res := <-done:
		// Once a body is read to its end, net/http itself lifts the read
		// deadline (ServerReadTimeout) to watch for the client leaving, so
		// a long hold is never cut by it.
		var tooLarge *http.MaxBytesError
		switch {
		case res.err == nil:
			return res.b, bodyOK, nil
		case errors.As(res.err, &tooLarge):
			return nil, bodyTooLarge, res.err
		case r.Context().Err() != nil || errors.Is(res.err, io.ErrUnexpectedEOF):
			return nil, bodyClientGone, res.err
		}
		return nil, bodyBroken, res.err
	case <-t.C:
		how = bodyTimeout
	case <-c.ctx.Done():
		how = bodyCallClosed
	case <-r.Context().Done():
		how = bodyClientGone
	}
	_ = rc.SetReadDeadline(pastDeadline) // unsupported by some writers: the read then ends with the connection
	return nil, how, nil
}

// receive records tool.received and appends the ledger row.
func (c *Call) receive(x *exchange) {
	at := x.emit(trace.KindToolReceived, trace.ToolEvent{
		Args: cloneFields(x.args), IdempotencyKey: x.key, BuiltFrom: x.built, Remote: x.remote,
	})
	c.insertRow(LedgerRow{
		ID: x.id, Ref: x.ref, Tool: x.name, Args: x.args, IdempotencyKey: x.key, // x.args is never changed once decoded
		BuiltFrom: x.built, Remote: x.remote, Reason: x.via, Received: at,
	})
}

func (c *Call) insertRow(row LedgerRow) {
	txn := c.db.Txn(true)
	defer txn.Abort()
	must(txn.Insert(tabLedger, &row))
	txn.Commit()
}

// run takes a validated delivery through idempotency, holds, faults and
// execution. Duplicate deliveries skip holds and faults: they model the
// network repeating a request, not a new request the scenario aims at.
func (c *Call) run(x *exchange) reply {
	if x.key != "" {
		rep, admitted := c.admit(x)
		if !admitted {
			return rep
		}
		x.ownsKey = true
	}
	var rep reply
	if x.via == "" {
		rep = c.process(x)
	} else {
		rep = c.execute(x)
	}
	if x.ownsKey && !rep.gone {
		c.storeKey(x, rep)
	}
	return rep
}

func (c *Call) process(x *exchange) reply {
	defer c.enterWait(x)()
	if h := c.catch(x); h != nil {
		if rep, proceed := c.await(x, h); !proceed {
			return rep
		}
	}
	st := stage(c.execute)
	units := c.pickFaults(x)
	for i := len(units) - 1; i >= 0; i-- {
		st = units[i].wrap(st)
	}
	return st(x)
}

// redeliver plays the network repeating x: a new request (own ref) with the
// same tool, arguments and headers, whose answer reaches nobody.
func (c *Call) redeliver(orig *exchange) {
	id, ref := c.nextRef()
	x := &exchange{
		c: c, ctx: c.ctx, id: id, ref: ref, name: orig.name, tool: orig.tool,
		args: orig.args, key: orig.key, built: orig.built, remote: orig.remote, via: reasonDuplicate,
		dupOf: orig.ref,
	}
	c.receive(x)
	x.amend(func(r *LedgerRow) { r.DuplicateOf = orig.ref })
	c.send(nil, x, c.run(x), trace.ToolEvent{})
}

// send records and writes the answer. It records before writing so that
// anything the agent does on reading the answer comes later on the clock.
// A nil w means nobody is listening (a duplicate delivery): the answer is
// recorded as dropped. It reports whether the caller must drop the
// connection.
func (c *Call) send(w http.ResponseWriter, x *exchange, rep reply, extra trace.ToolEvent) (drop bool) {
	drop = c.respond(x, rep, extra, w != nil)
	if w == nil || rep.gone {
		return false
	}
	if drop {
		return true
	}
	writeJSON(w, rep.status, rep.body)
	return false
}

// respond records x's answer (tool.responded or tool.rejected, and the
// ledger row) unless it answers nothing; listening is false when nobody
// will read it. It reports whether the answer is dropped.
func (c *Call) respond(x *exchange, rep reply, extra trace.ToolEvent, listening bool) (drop bool) {
	if rep.gone {
		return false
	}
	te := extra
	te.Status, te.Body, te.Error = rep.status, string(rep.body), rep.errMsg
	kind := trace.KindToolResponded
	if rep.rejected {
		kind = trace.KindToolRejected
	}
	drop = rep.drop || !listening
	if kind == trace.KindToolResponded {
		te.Dropped = drop
	}
	at := x.emit(kind, te)
	x.amend(func(r *LedgerRow) {
		r.Responded, r.Status, r.Error, r.Dropped = ptr(at), rep.status, rep.errMsg, te.Dropped
	})
	return drop
}

// dropConnection closes the client's connection without an answer.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler) // HTTP/2 or a wrapped writer: abort the stream
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	if len(body) > 0 {
		w.Header().Set("Content-Type", "application/json")
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body) // a client that left is recorded elsewhere
	// Push it out now: a closing server may cut the connection as soon as
	// the handler's call has finished.
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return strings.TrimSpace(s[len(prefix):]), true
}

func tokenEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
