package mockbackend

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/callproof/callproof/trace"
)

// Connection bounds of a call. Every call that Start's server opens gets
// a listener of its own (its tools URL names that port), so each
// connection belongs to one call before a byte of it is read: the token
// sits in headers a flood never finishes, and one call's flood must not
// take another call's connections, memory or file descriptors.
const (
	// DefaultMaxConnsPerCall bounds a call's open connections to the tools
	// server. An agent needs one or two; 64 leaves room for bursts of concurrent
	// requests (the tests send 32 at once).
	DefaultMaxConnsPerCall = 64
	// DefaultMaxHeaderBytes bounds one request's headers (a bearer token,
	// an idempotency key of at most 255 bytes and a few more): the memory a
	// connection can hold is this, not net/http's 1 MiB.
	DefaultMaxHeaderBytes = 16 << 10
	// DefaultHeaderTimeout bounds reading one request's headers (real
	// time): on loopback they arrive in microseconds.
	DefaultHeaderTimeout = 2 * time.Second
	// DefaultMaxIdleConnsPerCall bounds a call's idle keep-alive
	// connections (Go's client keeps 2 per host by default).
	DefaultMaxIdleConnsPerCall = 8
	// ClosedLinger is how long (real time) a closed call's listener stays
	// open, answering 410 to the call's own late requests, before it is
	// closed and connecting is refused.
	ClosedLinger = 5 * time.Second
	// ReasonConnBound is the agent_error reason (a prefix: ": " and the
	// bound follow) for a call whose agent passed a connection bound.
	ReasonConnBound = "tool connections"
)

// ConnLimits bounds one call's connections. A zero field takes its
// default; a negative one means no limit of the call's own (the server's
// ServerReadHeaderTimeout still applies to headers, net/http's 1 MiB to
// header bytes).
//
// Passing one ends the call: the connection that passed it is closed (a
// 431 for headers), one harness.note (source backend) starting "tool
// connection bound passed" is recorded, CallConfig.OnExceeded is called
// with the reason, and what was recorded is kept.
type ConnLimits struct {
	MaxConns       int           // open at once; DefaultMaxConnsPerCall
	MaxHeaderBytes int           // one request's headers; DefaultMaxHeaderBytes
	HeaderTimeout  time.Duration // real time; DefaultHeaderTimeout
	MaxIdle        int           // idle keep-alive; DefaultMaxIdleConnsPerCall
}

func (l ConnLimits) resolved() ConnLimits {
	pick := func(v, d int) int {
		switch {
		case v == 0:
			return d
		case v < 0:
			return 0
		}
		return v
	}
	l.MaxConns = pick(l.MaxConns, DefaultMaxConnsPerCall)
	l.MaxHeaderBytes = pick(l.MaxHeaderBytes, DefaultMaxHeaderBytes)
	l.MaxIdle = pick(l.MaxIdle, DefaultMaxIdleConnsPerCall)
	switch {
	case l.HeaderTimeout == 0:
		l.HeaderTimeout = DefaultHeaderTimeout
	case l.HeaderTimeout < 0:
		l.HeaderTimeout = ServerReadHeaderTimeout
	}
	return l
}

// callListener is one call's own listener and HTTP server.
type callListener struct {
	c      *Call
	lim    ConnLimits
	ln     net.Listener
	hs     *http.Server
	url    string
	prefix string // the paths this listener serves: the call's own

	mu     sync.Mutex
	open   int
	idle   map[net.Conn]bool // keep-alive connections waiting for a request
	kept   map[net.Conn]bool // serving a request, to be kept alive after it
	passed bool              // a bound was passed: the call is ending
}

// listen gives c a listener of its own on the server's host.
func (s *Server) listen(c *Call, lim ConnLimits) error {
	host, _, err := net.SplitHostPort(s.ln.Addr().String())
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return fmt.Errorf("mockbackend: listen for call %q: %w", c.id, err)
	}
	l := &callListener{c: c, lim: lim.resolved(), idle: map[net.Conn]bool{}, kept: map[net.Conn]bool{},
		url: "http://" + ln.Addr().String(), prefix: "/calls/" + url.PathEscape(c.id) + "/"}
	l.ln = &boundedListener{Listener: ln, l: l}
	l.hs = &http.Server{
		Handler:           l,
		ReadHeaderTimeout: l.lim.HeaderTimeout,
		ReadTimeout:       ServerReadTimeout,
		IdleTimeout:       ServerIdleTimeout,
		MaxHeaderBytes:    l.lim.MaxHeaderBytes,
		ConnState:         l.state,
		ConnContext:       withConn,
		ErrorLog:          log.New(io.Discard, "", 0), // a flood's errors are its call's, not the run's log
	}
	c.listener = l
	s.listeners[l] = true
	go l.hs.Serve(l.ln) //nolint:errcheck // returns ErrServerClosed on close
	return nil
}

// ServeHTTP serves the call's own paths; another call's are refused, so
// a connection is only ever charged to the call it serves.
func (l *callListener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.EscapedPath(), l.prefix) {
		l.c.srv.refuse(w, r, "", http.StatusNotFound, "not_found", "no such endpoint on this call's listener", "")
		return
	}
	// A closed call's lingering listener answers only "over", even once
	// a new call of the same id is open: its requests are never served
	// to (or charged to) that other call.
	if !l.c.srv.current(l.c) {
		l.c.srv.refuse(w, r, "", http.StatusGone, "call_closed", "the call is over", "")
		return
	}
	if cc, ok := r.Context().Value(connKey{}).(*boundedConn); ok {
		if !l.keep(cc) {
			w.Header().Set("Connection", "close")
		}
		cc.busy.Store(true)
		defer func() { cc.read.Store(0); cc.busy.Store(false) }()
	}
	l.c.srv.mux.ServeHTTP(w, r)
}

// keep reports whether nc may stay open after the request it serves:
// only while the call's idle and to-be-kept connections stay within
// MaxIdle. Past it the response says "Connection: close", so the client
// drops the connection itself; closing an idle one instead would race a
// client that is just reusing it (its POST then fails, not retried).
func (l *callListener) keep(nc net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lim.MaxIdle > 0 && len(l.idle)+len(l.kept) >= l.lim.MaxIdle {
		return false
	}
	l.kept[nc] = true
	return true
}

// state follows idle keep-alive connections.
func (l *callListener) state(nc net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.kept, nc)
	if st == http.StateIdle {
		l.idle[nc] = true
		return
	}
	delete(l.idle, nc)
}

// pass ends the call once for a bound passed.
func (l *callListener) pass(bound string) {
	l.mu.Lock()
	first := !l.passed
	l.passed = true
	l.mu.Unlock()
	if !first {
		return
	}
	reason := ReasonConnBound + ": " + bound
	l.c.rec.Record(trace.SourceBackend, trace.KindNote, &trace.Note{Text: "tool connection bound passed: " + reason})
	l.c.mu.Lock()
	on := l.c.onExceed
	l.c.mu.Unlock()
	if on != nil {
		on(reason)
	}
}

// close stops the call's listener and closes its connections.
func (l *callListener) close() {
	_ = l.hs.Close()
	l.c.srv.mu.Lock()
	delete(l.c.srv.listeners, l)
	l.c.srv.mu.Unlock()
}

// boundedListener admits at most MaxConns open connections of the call.
type boundedListener struct {
	net.Listener
	l *callListener
}

func (b *boundedListener) Accept() (net.Conn, error) {
	for {
		nc, err := b.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l := b.l
		l.mu.Lock()
		over := l.lim.MaxConns > 0 && l.open >= l.lim.MaxConns
		ending := l.passed // the call is ending: take no more
		if !over && !ending {
			l.open++
		}
		l.mu.Unlock()
		if ending {
			_ = nc.Close()
			continue
		}
		if over {
			_ = nc.Close()
			l.pass(fmt.Sprintf("more than %d connections open at once", l.lim.MaxConns))
			continue
		}
		return &boundedConn{Conn: nc, l: l}, nil
	}
}

// boundedConn counts itself out when closed and sees the header bounds
// net/http enforces: a 431 it writes, a read timing out while a
// request's headers were arriving.
type boundedConn struct {
	net.Conn
	l      *callListener
	closed atomic.Bool
	busy   atomic.Bool  // in a handler: its timeouts are the body's
	read   atomic.Int64 // bytes read since the last request was served
	span   atomic.Int64 // the last read deadline, as a time from when it was set
}

// SetReadDeadline notes how far off the deadline is: net/http sets the
// header deadline ReadHeaderTimeout ahead, the idle and body ones
// further, and a deadline in the past to abort its background read.
func (c *boundedConn) SetReadDeadline(t time.Time) error {
	c.span.Store(int64(time.Until(t)))
	return c.Conn.SetReadDeadline(t)
}

func (c *boundedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	if err != nil && !c.busy.Load() && c.read.Load() > 0 && c.headerDeadline() && errors.Is(err, os.ErrDeadlineExceeded) {
		c.l.pass(fmt.Sprintf("request headers not read within %s", c.l.lim.HeaderTimeout))
	}
	return n, err
}

// headerDeadline says whether the read deadline that passed was the
// header timeout's.
func (c *boundedConn) headerDeadline() bool {
	span := time.Duration(c.span.Load())
	return span > 0 && span <= c.l.lim.HeaderTimeout
}

var status431 = []byte("HTTP/1.1 431 ")

func (c *boundedConn) Write(p []byte) (int, error) {
	if !c.busy.Load() && bytes.HasPrefix(p, status431) {
		c.l.pass(fmt.Sprintf("request headers over %d bytes", c.l.lim.MaxHeaderBytes))
	}
	return c.Conn.Write(p)
}

func (c *boundedConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.l.mu.Lock()
		c.l.open--
		c.l.mu.Unlock()
	}
	return c.Conn.Close()
}

// origin is the scheme and host of the call's tools URL: its own
// listener's, or the server's.
func (c *Call) origin() string {
	if c.listener != nil {
		return c.listener.url
	}
	return c.srv.URL()
}

// closeListener closes the call's listener and connections ClosedLinger
// after its requests are answered (Close): until then the
// agent's late requests are answered 410 (the call is over). Server.Close
// closes it at once.
func (c *Call) closeListener() {
	l := c.listener
	if l == nil {
		return
	}
	time.AfterFunc(ClosedLinger, l.close)
}
