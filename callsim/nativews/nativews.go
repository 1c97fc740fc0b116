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
	"github.com/callproof/callproof/protocol/native"
)

// Defaults for Transport.
const (
	DefaultMaxFrameBytes = 1 << 20
	DefaultWriteTimeout  = 5 * time.Second
	closeGrace           = 500 * time.Millisecond
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
		in:           make(chan callsim.Frame, 16),
		done:         make(chan struct{}),
		writerDone:   make(chan struct{}),
		readerDone:   make(chan struct{}),
	}
	c.limit.Store(limit)
	go c.writer()
	return c, nil
}

type outgoing struct {
	data   []byte
	result chan error
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
}

var _ callsim.FrameLimiter = (*Conn)(nil)

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

// writer owns every data write. It stops at the first failed write: the
// connection is unusable after it.
func (c *Conn) writer() {
	defer close(c.writerDone)
	for {
		select {
		case <-c.done:
			return
		case o := <-c.out:
			_ = c.ws.SetWriteDeadline(time.Now().Add(c.writeTimeout))
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
			if errors.Is(err, websocket.ErrReadLimit) {
				err = fmt.Errorf("%w: over %d bytes", callsim.ErrOversizedFrame, c.limit.Load())
			}
			c.readErr = err
			return
		}
		var f callsim.Frame
		if typ != websocket.TextMessage {
			c.readErr = fmt.Errorf("%w: binary frame", callsim.ErrGarbageFrame)
			return
		}
		if err := json.Unmarshal(b, &f.Message); err != nil {
			c.readErr = fmt.Errorf("%w: %v", callsim.ErrGarbageFrame, err)
			return
		}
		f.Raw = b
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
			websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(closeGrace))
		c.closeErr = c.ws.Close()
		<-c.writerDone
		c.readOnce.Do(func() { close(c.readerDone) })
		<-c.readerDone
	})
	return c.closeErr
}
