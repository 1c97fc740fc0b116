package nativews

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/internal/readdeadline"
	"github.com/callproof/callproof/protocol/native"
)

// Defaults for Transport.
const (
	// DefaultMaxFrameBytes bounds a frame until SetFrameLimit (1 MiB).
	DefaultMaxFrameBytes = 1 << 20
	// DefaultWriteTimeout bounds each write, frame or ping.
	DefaultWriteTimeout = 5 * time.Second
	// CloseGrace bounds the close handshake frame Close sends; Close
	// returns within about this long whatever the agent does.
	CloseGrace = 500 * time.Millisecond
	// PingsPerIdle is how many keepalive pings go out per idle timeout,
	// so a live agent has several chances to answer before it runs out.
	PingsPerIdle = 4
	// MinPingInterval bounds how often pings go out.
	MinPingInterval = 50 * time.Millisecond
)

// Buffer sizes of the default dialer. Thousands of calls share a process,
// so an idle connection should hold little: a larger frame still works,
// it only takes more reads.
const (
	// readBufferSize is each connection's read buffer, held for its life:
	// the agents' frames are small JSON, well under 1 KiB.
	readBufferSize = 1024
	// writeBufferSize is gorilla's default, so a frame up to 4 KiB still
	// goes out unfragmented (the start frame with a tool catalogue can pass
	// 1 KiB). It costs an idle connection nothing: the buffer comes from
	// the Transport's pool for one write only.
	writeBufferSize = 4096
)

// Transport dials agents speaking the native protocol. The zero value is
// ready to use; do not copy one after first use.
type Transport struct {
	// Dialer is used as given when set. The default is
	// websocket.DefaultDialer with a 1 KiB read buffer and 4 KiB write
	// buffers pooled by the Transport, so an idle connection holds none.
	Dialer        *websocket.Dialer
	Header        http.Header   // extra handshake headers
	MaxFrameBytes int64         // until SetFrameLimit; default 1 MiB
	WriteTimeout  time.Duration // per frame; default 5s

	dialerOnce sync.Once
	dialer     *websocket.Dialer // the default, made once
	writeBufs  sync.Pool         // the default dialer's write buffers
}

var _ callsim.Transport = (*Transport)(nil)

// defaultDialer is DefaultDialer with this package's buffer sizes.
func (t *Transport) defaultDialer() *websocket.Dialer {
	t.dialerOnce.Do(func() {
		d := *websocket.DefaultDialer
		d.ReadBufferSize = readBufferSize
		d.WriteBufferSize = writeBufferSize
		d.WriteBufferPool = &t.writeBufs
		t.dialer = &d
	})
	return t.dialer
}

// Dial opens the WebSocket. ctx bounds the handshake only.
func (t *Transport) Dial(ctx context.Context, agentURL string) (callsim.Conn, error) {
	d := t.Dialer
	if d == nil {
		d = t.defaultDialer()
	}
	ws, resp, err := d.DialContext(ctx, agentURL, t.Header)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("%w (HTTP %d)", err, resp.StatusCode)
		}
		return nil, err
	}
	limit := t.MaxFrameBytes
	if limit <= 0 {
		limit = DefaultMaxFrameBytes
	}
	wt := t.WriteTimeout
	if wt <= 0 {
		wt = DefaultWriteTimeout
	}
	c := &Conn{
		ws:           ws,
		writeTimeout: wt,
		wslot:        make(chan struct{}, 1),
	}
	c.rcut.ws = ws
	c.rd = readdeadline.New(&c.rcut)
	c.limit.Store(limit)
	// Any frame or control frame from the agent shows it is alive.
	ws.SetPongHandler(func(string) error { c.rd.Alive(); return nil })
	ping := ws.PingHandler()
	ws.SetPingHandler(func(data string) error { c.rd.Alive(); return ping(data) })
	return c, nil
}

// Conn is one native-protocol connection. It runs no goroutine of its
// own: Send writes and Recv reads on the caller's goroutine, and keepalive
// pings go out from a timer.
type Conn struct {
	ws           *websocket.Conn
	writeTimeout time.Duration
	limit        atomic.Int64

	// wslot is held by the one write (frame or ping) on the socket, so a
	// Send's cancelled context can end that write and no other.
	wslot  chan struct{}
	closed atomic.Bool // Close was called
	broken atomic.Bool // a write failed: the socket is unusable for writes

	mu        sync.Mutex // guards the fields below
	writeSeq  uint64     // the latest Send's number, so a late cut spares the next
	writing   bool       // a Send is inside WriteMessage
	pingEvery time.Duration
	pinger    *time.Timer // armed while pings are on

	// readErr is the first failed Recv's error, returned by every later
	// Recv (gorilla's reads do not survive an error). Recv's goroutine only.
	readErr error
	rcut    readCut

	closeOnce sync.Once
	closeErr  error

	// rd keeps the read deadline: the earlier of the last sign of life
	// plus idle and the call deadline.
	rd *readdeadline.Keeper
}

var (
	_ callsim.FrameLimiter = (*Conn)(nil)
	_ callsim.Deadliner    = (*Conn)(nil)
)

// SetCallDeadline makes reads and writes fail after t.
func (c *Conn) SetCallDeadline(t time.Time) { c.rd.SetCallDeadline(t) }

// SetIdleTimeout makes Recv fail with callsim.ErrUnresponsive when the
// agent sends nothing for d; pings go out PingsPerIdle times per d, so an
// agent that reads its socket always answers.
func (c *Conn) SetIdleTimeout(d time.Duration) {
	c.rd.SetIdleTimeout(d)
	every := time.Duration(0)
	if d > 0 {
		every = max(d/PingsPerIdle, MinPingInterval)
	}
	c.mu.Lock()
	c.pingEvery = every
	c.armPingLocked()
	c.mu.Unlock()
}

// armPingLocked schedules the next ping a full interval from now, or stops
// pinging when pings are off or the connection cannot write any more.
func (c *Conn) armPingLocked() {
	if c.pingEvery <= 0 || c.closed.Load() || c.broken.Load() {
		if c.pinger != nil {
			c.pinger.Stop()
		}
		return
	}
	if c.pinger == nil {
		c.pinger = time.AfterFunc(c.pingEvery, c.ping)
		return
	}
	c.pinger.Reset(c.pingEvery)
}

// ping sends one keepalive and arms the next; it runs on the timer's
// goroutine. A ping the agent cannot take (it does not read) fails at the
// write deadline, and Recv's idle timeout then reports the agent.
func (c *Conn) ping() {
	deadline := c.writeDeadline(time.Time{})
	if c.takeSlotBy(deadline) {
		if !c.closed.Load() && !c.broken.Load() {
			if err := c.ws.WriteControl(websocket.PingMessage, nil, deadline); err != nil {
				c.broken.Store(true)
			}
		}
		<-c.wslot
	}
	// Not having the slot by the deadline means a frame's write is stuck
	// past it, and that write's failure stops the pings.
	c.mu.Lock()
	c.armPingLocked()
	c.mu.Unlock()
}

// takeSlotBy takes the write slot for a ping, waiting until deadline.
func (c *Conn) takeSlotBy(deadline time.Time) bool {
	select {
	case c.wslot <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case c.wslot <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}

// writeDeadline is the deadline for one write: the write timeout, cut
// short by the sender's and the call's deadlines.
func (c *Conn) writeDeadline(sender time.Time) time.Time {
	t := time.Now().Add(c.writeTimeout)
	call := c.rd.Deadline()
	for _, d := range []time.Time{sender, call} {
		if !d.IsZero() && d.Before(t) {
			t = d
		}
	}
	return t
}

// SetFrameLimit sets the largest frame accepted. It takes effect from the
// next frame read, so call it before the first Recv.
func (c *Conn) SetFrameLimit(n int64) { c.limit.Store(n) }

// Send writes one message and returns once it is on the wire. Sends are
// serialized; one whose ctx ends mid-write ends that write, which leaves
// the connection unusable for writes like any failed write.
func (c *Conn) Send(ctx context.Context, m native.Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	select {
	case c.wslot <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-c.wslot }()
	if c.closed.Load() || c.broken.Load() {
		return errClosed
	}
	sender, _ := ctx.Deadline()
	_ = c.ws.SetWriteDeadline(c.writeDeadline(sender))

	c.mu.Lock()
	c.writeSeq++
	seq := c.writeSeq
	c.writing = true
	c.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { c.cutWrite(seq) })
	err = c.ws.WriteMessage(websocket.TextMessage, b)
	cut := !stop()
	c.mu.Lock()
	c.writing = false
	c.mu.Unlock()

	if err == nil {
		return nil
	}
	c.broken.Store(true)
	c.mu.Lock()
	c.armPingLocked() // stops the pings
	c.mu.Unlock()
	switch {
	case c.closed.Load():
		return errClosed
	case cut && ctx.Err() != nil:
		return context.Cause(ctx)
	}
	return err
}

// cutWrite ends Send seq's write if it is still on the socket. gorilla's
// SetWriteDeadline only applies to the next frame, so the deadline goes on
// the network connection, which unblocks the write in progress. gorilla
// sets it again for each frame of a message over the write buffer, so a
// cut that lands between two of them is lost; the write deadline still
// bounds that write.
func (c *Conn) cutWrite(seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writing && c.writeSeq == seq {
		_ = c.ws.NetConn().SetWriteDeadline(time.Now())
	}
}

var errClosed = errors.New("connection closed")

// Recv returns the next frame from the agent. It reads the socket itself,
// so it must not be called concurrently with itself (callsim's pump is
// its only caller). A ctx that ends during the read ends the read, and the
// connection is then done reading: later calls return the same cause.
func (c *Conn) Recv(ctx context.Context) (callsim.Frame, error) {
	if c.readErr != nil {
		return callsim.Frame{}, c.readErr
	}
	if c.closed.Load() {
		return callsim.Frame{}, errClosed
	}
	if ctx.Err() != nil {
		return callsim.Frame{}, context.Cause(ctx)
	}
	seq := c.rcut.begin()
	stop := context.AfterFunc(ctx, func() { c.rcut.cut(seq, context.Cause(ctx)) })
	f, err := c.read()
	stop()
	cause := c.rcut.end()
	switch {
	case err == nil && cause == nil:
		return f, nil
	case err == nil:
		// The frame arrived as ctx ended: keep it, but the deadline is
		// pinned in the past now and the next read fails.
		c.readErr = cause
		return f, nil
	case c.closed.Load():
		err = errClosed
	case cause != nil && readdeadline.IsTimeout(err):
		err = cause
	case readdeadline.IsTimeout(err):
		err = c.rd.TimedOut()
	}
	c.readErr = err
	return callsim.Frame{}, err
}

// read reads and decodes one frame; errors but timeouts are final.
func (c *Conn) read() (callsim.Frame, error) {
	c.ws.SetReadLimit(c.limit.Load())
	typ, b, err := c.ws.ReadMessage()
	if err != nil {
		if errors.Is(err, websocket.ErrReadLimit) {
			err = fmt.Errorf("%w: over %d bytes", callsim.ErrOversizedFrame, c.limit.Load())
		}
		return callsim.Frame{}, err
	}
	c.rd.Alive()
	if typ != websocket.TextMessage {
		return callsim.Frame{}, fmt.Errorf("%w: binary frame", callsim.ErrGarbageFrame)
	}
	return callsim.DecodeFrame(b)
}

// readCut is the read deadline's setter for the deadline keeper, with a
// way for a Recv's context to end a blocked read: it pins the deadline in
// the past, over whatever the keeper sets later (a pong handled by the
// read, or a new idle timeout, would otherwise move it on again).
type readCut struct {
	ws      *websocket.Conn
	mu      sync.Mutex
	seq     uint64 // the Recv in progress or last
	reading bool
	cause   error // the cut's cause; nil: none
}

func (r *readCut) SetReadDeadline(t time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cause != nil {
		return nil // pinned in the past
	}
	return r.ws.SetReadDeadline(t)
}

// begin marks a Recv's read as started and names it for cut.
func (r *readCut) begin() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	r.reading = true
	return r.seq
}

// end marks the read as over and says whether it was cut, and why.
func (r *readCut) end() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reading = false
	return r.cause
}

// cut ends read seq if it is still in progress; a late call for a read
// that is over does nothing.
func (r *readCut) cut(seq uint64, cause error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reading && r.seq == seq && r.cause == nil {
		r.cause = cause
		_ = r.ws.SetReadDeadline(time.Unix(1, 0))
	}
}

// Close says goodbye and closes the socket, which ends a blocked Recv or
// Send. It is safe to call more than once and concurrently with them.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.mu.Lock()
		c.armPingLocked() // stops the pings
		c.mu.Unlock()
		// WriteControl may run beside a blocked write; its deadline keeps a
		// stuck peer from holding us.
		_ = c.ws.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(CloseGrace))
		c.closeErr = c.ws.Close()
	})
	return c.closeErr
}
