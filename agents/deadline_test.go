package agents

import (
	"context"
	"errors"
	"net"
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
