package mockbackend

import (
	"context"
	"crypto/tls"
	"net"
	"slices"

	"github.com/callproof/callproof/internal/sockpeek"
)

// An agent withdraws a request by closing its connection (docs/PROTOCOL.md).
// net/http notices that on a goroutine of its own, some time after the
// close has reached the socket, so a request the agent sends next can be
// received before the withdrawal is: the order of the two in the ledger was
// a scheduling coin toss. The call therefore reads the socket itself at the
// two moments the order matters: before it records a new request, and
// before it lets a held request go. A client whose close is already in the
// socket is then cancelled first, by construction.

// connKey is the context key under which the server keeps a request's
// connection (the ConnContext of Server.Start's and of each call's
// listener).
type connKey struct{}

func withConn(ctx context.Context, conn net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, conn)
}

// requestConn is the connection a request came in on, or nil (a Handler
// mounted on a server of one's own).
func requestConn(ctx context.Context) net.Conn {
	conn, _ := ctx.Value(connKey{}).(net.Conn)
	// The socket itself: a call's own listener wraps it in its bounds.
	if bc, ok := conn.(*boundedConn); ok {
		conn = bc.Conn
	}
	if tc, ok := conn.(*tls.Conn); ok {
		return tc.NetConn()
	}
	return conn
}

// clientGone reports whether x's client has closed its connection. Without
// a connection to read it answers false: net/http will still tell, later.
func (x *exchange) clientGone() bool {
	if x.ctx.Err() != nil {
		return true
	}
	if x.conn == nil {
		return false
	}
	_, closed := sockpeek.Peek(x.conn)
	return closed
}

// settle cancels every request of the call waiting before its commit whose
// client has already closed its connection, and returns once each has
// recorded its end. Called before a new request is recorded, it puts a
// withdrawal ahead of the request that replaces it.
func (c *Call) settle() {
	c.mu.Lock()
	var gone []*exchange
	for _, w := range c.waiting {
		if w.clientGone() {
			gone = append(gone, w)
		}
	}
	c.mu.Unlock()
	for _, w := range gone {
		w.stop()
		// Bounded: a waiting request selects on its context, which stop
		// has just cancelled, and the call's.
		select {
		case <-w.settled:
		case <-c.ctx.Done():
		}
	}
}

// enterWait registers x as waiting before its commit, for settle; the
// returned func ends that.
func (c *Call) enterWait(x *exchange) func() {
	x.settled = make(chan struct{})
	c.mu.Lock()
	c.waiting = append(c.waiting, x)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.waiting = slices.DeleteFunc(c.waiting, func(w *exchange) bool { return w == x })
		c.mu.Unlock()
		close(x.settled)
	}
}
