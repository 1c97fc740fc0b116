package agents

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// handClock fires its timers only when the test says so.
type handClock struct {
	mu sync.Mutex
	fs []func()
}

func (c *handClock) AfterFunc(_ time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fs = append(c.fs, f)
	return func() bool { return false }
}

func (c *handClock) Now() time.Time { return time.Time{} }

// fireLast runs the newest timer, as the runtime would when it is due.
func (c *handClock) fireLast() {
	c.mu.Lock()
	f := c.fs[len(c.fs)-1]
	c.mu.Unlock()
	f()
}

// A tool request's timeout gives up only when nothing has come back: an
// answer already in the socket when it runs out (the transport's reader
// not yet scheduled on a loaded machine) gets one more period, once.
func TestToolDeadlineKeyedToWhatArrived(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no socket peek on " + runtime.GOOS)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer client.Close()
	server, err := ln.Accept()
	require.NoError(t, err)
	defer server.Close()

	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	clock := &handClock{}
	dl := &deadline{clock: clock, d: time.Second, cancel: cancel}
	dl.arm()
	dl.mu.Lock()
	dl.conn = client
	dl.mu.Unlock()

	_, err = server.Write([]byte("HTTP/1.1 202 Accepted\r\n"))
	require.NoError(t, err)
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if data, _ := dl.peek(); data {
			break
		}
	}
	clock.fireLast()
	assert.NoError(t, ctx.Err(), "an answer in the socket at the deadline is waited for")
	clock.fireLast()
	require.Error(t, ctx.Err(), "but only one period more")
	assert.True(t, errors.Is(context.Cause(ctx), errToolTimeout))

	// Nothing back at all: the first deadline gives up.
	ctx2, cancel2 := context.WithCancelCause(context.Background())
	defer cancel2(nil)
	silent := &deadline{clock: clock, d: time.Second, cancel: cancel2}
	silent.arm()
	clock.fireLast()
	assert.True(t, errors.Is(context.Cause(ctx2), errToolTimeout), "no answer: a timeout")
}

// A worker's cancel closes its open tool connection on the cancelling
// goroutine: by the time it returns, the close is on its way to the
// backend's socket, not left to net/http's goroutines.
func TestWithdrawalClosesOnTheCancellingGoroutine(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no socket peek on " + runtime.GOOS)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c // read nothing, answer nothing: a held request
		}
	}()
	client := &toolClient{http: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
		clock: SystemClock{}, baseURL: "http://" + ln.Addr().String(), token: "t", timeout: time.Minute}
	open := &withdrawals{}
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), withdrawalsKey{}, open))
	res := make(chan toolResult, 1)
	go func() { res <- client.post(ctx, "update_order", map[string]string{"order_number": "5590"}, "", 1) }()
	var server net.Conn
	select {
	case server = <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never connected")
	}
	defer server.Close()
	// Wait until the request is tracked (its connection is got).
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		open.mu.Lock()
		n := len(open.conns)
		open.mu.Unlock()
		if n == 1 || time.Now().After(end) {
			require.Equal(t, 1, n, "the open request is tracked")
			break
		}
	}
	cancel()
	open.closeAll()
	closed := false
	for end := time.Now().Add(10 * time.Second); !closed && time.Now().Before(end); time.Sleep(time.Millisecond) {
		// Skip the request bytes the server never read; look for the FIN.
		_ = server.SetReadDeadline(time.Now().Add(time.Millisecond))
		buf := make([]byte, 4096)
		_, err := server.Read(buf)
		closed = errors.Is(err, io.EOF)
	}
	assert.True(t, closed, "the backend's socket has the close")
	select {
	case r := <-res:
		assert.Equal(t, resCancelled, r.kind)
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not end")
	}
	// A connection opened after the withdrawal is closed at once.
	a, b := net.Pipe()
	defer b.Close()
	open.add(a)()
	_, err = a.Write([]byte("x"))
	assert.Error(t, err, "closed on add")
}
