package callsim_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/nativews"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// slowFlushTransport dials native WebSocket calls whose Flush takes a
// while, as recognizing an audio-only agent's speech in a busy run does.
type slowFlushTransport struct{ wait time.Duration }

func (t slowFlushTransport) Dial(ctx context.Context, url string) (callsim.Conn, error) {
	return wrapNative(func(c callsim.Conn) callsim.Conn { return &slowFlushConn{Conn: c, wait: t.wait} }).Dial(ctx, url)
}

// wrapNative dials native WebSocket calls, each connection wrapped.
type wrapNative func(callsim.Conn) callsim.Conn

func (w wrapNative) Dial(ctx context.Context, url string) (callsim.Conn, error) {
	c, err := (&nativews.Transport{}).Dial(ctx, url)
	if err != nil {
		return nil, err
	}
	return w(c), nil
}

type slowFlushConn struct {
	callsim.Conn
	wait time.Duration
}

func (c *slowFlushConn) SetCallDeadline(t time.Time) { c.Conn.(callsim.Deadliner).SetCallDeadline(t) }
func (c *slowFlushConn) SetIdleTimeout(d time.Duration) {
	c.Conn.(callsim.Deadliner).SetIdleTimeout(d)
}

func (c *slowFlushConn) Flush(ctx context.Context) error {
	select {
	case <-time.After(c.wait):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// The harness's own work after the script (recognition queued behind a
// whole run's) does not make an agent that has gone quiet unresponsive:
// the idle timeout and the call's deadline stop at the script's end.
func TestSlowFlushIsNotTheAgentsSilence(t *testing.T) {
	o := runCall(t, setup{
		script: trace.Script{Steps: []trace.Step{say("s1", "Hi, please ship order 5590 today.", 100*time.Millisecond, trace.Trigger{})}},
		call: func(c *callsim.Call) {
			c.Limits.IdleTimeout = time.Second
			c.Transport = slowFlushTransport{wait: 2500 * time.Millisecond}
		},
		agent: func(a *fakeAgent) {
			a.untilFinal()
			a.speak("a1", native.PhaseStart, "")
			a.speak("a1", native.PhaseEnd, "Okay.")
			<-a.ended // stops reading: no answer to pings
		},
	})
	assert.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
}
