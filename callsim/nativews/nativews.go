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
	// InboxFrames is how many decoded frames the reader may hold ahead of
	// Recv: at most InboxFrames+1 frames of the frame limit are in memory.
	InboxFrames = 4
)

// Transport dials agents speaking the native protocol. The zero value is
// ready to use.
type Transport struct {
	Dialer        *websocket.Dialer // default websocket.DefaultDialer
	Header        http.Header       // extra handshake headers
	MaxFrameBytes int64             // until SetFrameLimit; default 1 MiB
	WriteTimeout  time.Duration     // per frame; default 5s
}

var _ callsim.Transport = (*Transport)(nil)

// Dial opens the WebSocket. ctx bounds the handshake only.
func (t *Transport) Dial(ctx context.Context, agentURL string) (callsim.Conn, error) {
	d := t.Dialer
	if d == nil {
		d = websocket.DefaultDialer
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
		out:          make(chan outgoing),
		in:           make(chan callsim.Frame, InboxFrames),
		done:         make(chan struct{}),
		writerDone:   make(chan struct{}),
		readerDone:   make(chan struct{}),
		pingEvery:    make(chan time.Duration, 1),
	}
	c.rd = readdeadline.New(ws)
	c.limit.Store(limit)
	// Any frame or control frame from the agent shows it is alive.
	ws.SetPongHandler(func(string) error { c.rd.Alive(); return nil })
	ping := ws.PingHandler()
	ws.SetPingHandler(func(data string) error { c.rd.Alive(); return ping(data) })
	go c.writer()
	return c, nil
}

type outgoing struct {
	data     []byte
	deadline time.Time // the sender's context deadline, if any
	result   chan error
}

// Conn is one native-protocol connection.
type Conn struct {
	ws           *websocket.Conn
	writeTimeout time.Duration
	limit        atomic.Int64

	out  chan outgoing
	in   chan callsim.Frame // closed by the reader when it stops; then readErr
	done chan struct{}      // closed by Close

	readOnce   sync.Once
	readErr    error // set before in is closed
	readerDone chan struct{}
	writerDone chan struct{}

	closeOnce sync.Once
	closeErr  error

	// rd keeps the read deadline: the earlier of the last sign of life
	// plus idle and the call deadline.
	rd *readdeadline.Keeper

	pingEvery chan time.Duration // to the writer: a new ping interval (0: none)
}

var (
	_ callsim.FrameLimiter = (*Conn)(nil)
	_ callsim.Deadliner    = (*Conn)(nil)
)

// SetCallDeadline makes reads and writes fail after t.
func (c *Conn) SetCallDeadline(t time.Time) { c.rd.SetCallDeadline(t) }

// SetIdleTimeout makes Recv fail with callsim.ErrUnresponsive when the
// agent sends nothing for d; the writer pings PingsPerIdle times per d, so
// an agent that reads its socket always answers.
func (c *Conn) SetIdleTimeout(d time.Duration) {
	c.rd.SetIdleTimeout(d)
	every := time.Duration(0)
	if d > 0 {
		every = max(d/PingsPerIdle, MinPingInterval)
	}
	for {
		select {
		case c.pingEvery <- every:
			return
		default:
		}
		select { // replace a value the writer has not taken yet
		case <-c.pingEvery:
		default:
		}
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

// Send writes one message and waits until it is on the wire.
func (c *Conn) Send(ctx context.Context, m native.Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	o := outgoing{data: b, result: make(chan error, 1)}
	o.deadline, _ = ctx.Deadline()
	select {
	case c.out <- o:
	case <-c.writerDone:
		return errClosed
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	select {
	case err := <-o.result:
		return err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

var errClosed = errors.New("connection closed")

// writer owns every data write and the keepalive pings. It stops at the
// first failed write: the connection is unusable after it.
func (c *Conn) writer() {
	defer close(c.writerDone)
	ticker := time.NewTicker(time.Hour)
	ticker.Stop()
	defer ticker.Stop()
	for {
		select {
		case <-c.done:
			return
		case every := <-c.pingEvery:
			ticker.Stop()
			if every > 0 {
				ticker.Reset(every)
			}
		case <-ticker.C:
			// A ping the agent cannot take (it does not read) fails
			// here at the write deadline; the reader's idle timeout then
			// reports it.
			if err := c.ws.WriteControl(websocket.PingMessage, nil, c.writeDeadline(time.Time{})); err != nil {
				return
			}
		case o := <-c.out:
			_ = c.ws.SetWriteDeadline(c.writeDeadline(o.deadline))
			err := c.ws.WriteMessage(websocket.TextMessage, o.data)
			o.result <- err
			if err != nil {
				return
			}
		}
	}
}

// Recv returns the next frame from the agent.
func (c *Conn) Recv(ctx context.Context) (callsim.Frame, error) {
	// Reading starts here, not at Dial, so SetFrameLimit applies from the
	// first frame without racing the reader.
	c.readOnce.Do(func() { go c.reader() })
	select {
	case f, ok := <-c.in:
		if !ok {
			return callsim.Frame{}, c.readErr
		}
		return f, nil
	case <-c.done:
		return callsim.Frame{}, errClosed
	case <-ctx.Done():
		return callsim.Frame{}, context.Cause(ctx)
	}
}

// reader owns every read. It stops at the first error or violation.
func (c *Conn) reader() {
	defer close(c.readerDone)
	defer close(c.in)
	for {
		c.ws.SetReadLimit(c.limit.Load())
		typ, b, err := c.ws.ReadMessage()
		if err != nil {
			switch {
			case errors.Is(err, websocket.ErrReadLimit):
				err = fmt.Errorf("%w: over %d bytes", callsim.ErrOversizedFrame, c.limit.Load())
			case readdeadline.IsTimeout(err):
				err = c.rd.TimedOut()
			}
			c.readErr = err
			return
		}
		c.rd.Alive()
		if typ != websocket.TextMessage {
			c.readErr = fmt.Errorf("%w: binary frame", callsim.ErrGarbageFrame)
			return
		}
		f, err := callsim.DecodeFrame(b)
		if err != nil {
			c.readErr = err
			return
		}
		select {
		case c.in <- f:
		case <-c.done:
			c.readErr = errClosed
			return
		}
	}
}

// Close says goodbye, closes the socket and waits for both goroutines. It
// is safe to call more than once.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		close(c.done)
		// WriteControl may run beside a blocked write; its deadline keeps a
		// stuck peer from holding us.
		_ = c.ws.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(CloseGrace))
		c.closeErr = c.ws.Close()
		<-c.writerDone
		c.readOnce.Do(func() { close(c.readerDone) })
		<-c.readerDone
	})
	return c.closeErr
}
