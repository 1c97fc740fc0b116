package nativews_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/nativews"
	"github.com/callproof/callproof/protocol/native"
)

// serve runs agent on the server side of a loopback WebSocket and returns
// a connection dialled to it.
func serve(t *testing.T, agent func(ws *websocket.Conn)) callsim.Conn {
	return dialWith(t, &nativews.Transport{}, agent)
}

// dialWith is serve with a Transport of the test's choosing.
func dialWith(t *testing.T, tr *nativews.Transport, agent func(ws *websocket.Conn)) *nativews.Conn {
	t.Helper()
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		agent(ws)
	}))
	t.Cleanup(srv.Close)
	c, err := tr.Dial(ctx(t), "ws"+strings.TrimPrefix(srv.URL, "http"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c.(*nativews.Conn)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestRoundTrip(t *testing.T) {
	c := serve(t, func(ws *websocket.Conn) {
		_, b, err := ws.ReadMessage()
		if err != nil {
			return
		}
		_ = ws.WriteMessage(websocket.TextMessage, b) // echo
		_, _, _ = ws.ReadMessage()
	})
	sent := native.Message{Event: native.EventDTMF, SequenceNumber: "7", DTMF: &native.DTMF{Digits: "42"}}
	require.NoError(t, c.Send(ctx(t), sent))
	f, err := c.Recv(ctx(t))
	require.NoError(t, err)
	assert.Equal(t, sent, f.Message)
	assert.JSONEq(t, `{"event":"dtmf","sequenceNumber":"7","dtmf":{"digits":"42"}}`, string(f.Raw))
}

func TestViolations(t *testing.T) {
	cases := []struct {
		name string
		typ  int
		data string
		want error
	}{
		{"invalid JSON", websocket.TextMessage, `{"event":`, callsim.ErrGarbageFrame},
		{"not an object", websocket.TextMessage, `[1,2]`, callsim.ErrGarbageFrame},
		{"binary", websocket.BinaryMessage, `{}`, callsim.ErrGarbageFrame},
		// Fields that do not decode as their types (docs/PROTOCOL.md,
		// garbage frame): numbers that do not fit, numbers where strings go.
		{"version with a fraction", websocket.TextMessage, `{"event":"state","state":{"version":1.5,"slots":{}}}`, callsim.ErrGarbageFrame},
		{"version over 64 bits", websocket.TextMessage, `{"event":"state","state":{"version":18446744073709551616,"slots":{}}}`, callsim.ErrGarbageFrame},
		{"1e400", websocket.TextMessage, `{"event":"state","state":{"version":1e400,"slots":{}}}`, callsim.ErrGarbageFrame},
		{"number slot", websocket.TextMessage, `{"event":"state","state":{"version":1,"slots":{"order_number":5590}}}`, callsim.ErrGarbageFrame},
		{"object pending", websocket.TextMessage, `{"event":"state","state":{"version":1,"slots":{},"pending":{}}}`, callsim.ErrGarbageFrame},
		{"number tool arg", websocket.TextMessage, `{"event":"tool_intent","toolIntent":{"tool":"update_order","args":{"quantity":2}}}`, callsim.ErrGarbageFrame},
		{"number clear id", websocket.TextMessage, `{"event":"clear","clear":{"id":7}}`, callsim.ErrGarbageFrame},
		{"oversized", websocket.TextMessage, `{"event":"x","pad":"` + strings.Repeat("y", 2048) + `"}`, callsim.ErrOversizedFrame},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := serve(t, func(ws *websocket.Conn) {
				_ = ws.WriteMessage(tc.typ, []byte(tc.data))
				_, _, _ = ws.ReadMessage()
			})
			c.(callsim.FrameLimiter).SetFrameLimit(1024)
			_, err := c.Recv(ctx(t))
			assert.True(t, errors.Is(err, tc.want), "got %v", err)
		})
	}
}

func TestPeerGoneAndCloseTwice(t *testing.T) {
	c := serve(t, func(ws *websocket.Conn) {})
	_, err := c.Recv(ctx(t))
	require.Error(t, err)
	assert.False(t, errors.Is(err, callsim.ErrGarbageFrame))
	assert.NoError(t, c.Close())
	assert.NotPanics(t, func() { _ = c.Close() })
	_, err = c.Recv(ctx(t))
	assert.Error(t, err)
	assert.Error(t, c.Send(ctx(t), native.Message{Event: native.EventStop}))
}

func TestCloseUnblocksRecv(t *testing.T) {
	c := serve(t, func(ws *websocket.Conn) { _, _, _ = ws.ReadMessage() })
	done := make(chan error, 1)
	go func() {
		_, err := c.Recv(context.Background())
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // let Recv block; the test holds either way
	require.NoError(t, c.Close())
	select {
	case err := <-done:
		assert.Error(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Recv still blocked after Close")
	}
}

// hung returns an agent that accepts the WebSocket and then neither reads
// nor writes until the test ends.
func hung(t *testing.T) func(*websocket.Conn) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return func(*websocket.Conn) { <-release }
}

func TestIdleTimeoutEndsAHungAgent(t *testing.T) {
	c := dialWith(t, &nativews.Transport{}, hung(t))
	c.SetIdleTimeout(200 * time.Millisecond)
	start := time.Now()
	_, err := c.Recv(ctx(t))
	assert.ErrorIs(t, err, callsim.ErrUnresponsive)
	assert.Less(t, time.Since(start), 2*time.Second)
}

func TestPingsKeepALiveAgentAlive(t *testing.T) {
	// The agent reads (so gorilla answers every ping) and never writes.
	c := dialWith(t, &nativews.Transport{}, func(ws *websocket.Conn) {
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
		}
	})
	c.SetIdleTimeout(150 * time.Millisecond)
	rctx, cancel := context.WithTimeout(context.Background(), 800*time.Millisecond)
	defer cancel()
	_, err := c.Recv(rctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "alive for 5 idle timeouts")
}

func TestCallDeadlineBoundsReads(t *testing.T) {
	c := dialWith(t, &nativews.Transport{}, func(ws *websocket.Conn) {
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
		}
	})
	c.SetIdleTimeout(time.Minute)
	c.SetCallDeadline(time.Now().Add(200 * time.Millisecond))
	_, err := c.Recv(ctx(t))
	require.ErrorIs(t, err, callsim.ErrUnresponsive)
	assert.Contains(t, err.Error(), "call deadline")
}

// An agent that never reads fills the socket: each write gives up at the
// write timeout, and Close returns promptly.
func TestWritesToAnAgentThatNeverReadsAreBounded(t *testing.T) {
	c := dialWith(t, &nativews.Transport{WriteTimeout: 200 * time.Millisecond}, hung(t))
	big := native.Message{Event: native.EventStop, Stop: &native.Stop{Reason: strings.Repeat("x", 1<<20)}}
	var err error
	for i := 0; i < 200 && err == nil; i++ {
		start := time.Now()
		err = c.Send(context.Background(), big)
		assert.Less(t, time.Since(start), 2*time.Second)
	}
	require.Error(t, err, "the socket buffers filled")
	start := time.Now()
	assert.NotPanics(t, func() { _ = c.Close() })
	assert.Less(t, time.Since(start), nativews.CloseGrace+time.Second)
}

// A write is cut short by the sender's context deadline too.
func TestSendHonoursTheContextDeadline(t *testing.T) {
	c := dialWith(t, &nativews.Transport{WriteTimeout: time.Minute}, hung(t))
	big := native.Message{Event: native.EventStop, Stop: &native.Stop{Reason: strings.Repeat("x", 1<<20)}}
	sctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	var err error
	for err == nil {
		err = c.Send(sctx, big)
	}
	assert.Less(t, time.Since(start), 2*time.Second)
	start = time.Now()
	_ = c.Close()
	assert.Less(t, time.Since(start), nativews.CloseGrace+time.Second)
}

// A frame far over the small read and write buffers still goes both ways.
func TestBigFrameRoundTrip(t *testing.T) {
	c := serve(t, func(ws *websocket.Conn) {
		_, b, err := ws.ReadMessage()
		if err != nil {
			return
		}
		_ = ws.WriteMessage(websocket.TextMessage, b)
		_, _, _ = ws.ReadMessage()
	})
	sent := native.Message{Event: native.EventStop, Stop: &native.Stop{Reason: strings.Repeat("x", 64<<10)}}
	require.NoError(t, c.Send(ctx(t), sent))
	f, err := c.Recv(ctx(t))
	require.NoError(t, err)
	assert.Equal(t, sent, f.Message)
}

// A Dialer set on the Transport is the one that dials.
func TestTheTransportsDialerIsUsed(t *testing.T) {
	var dials atomic.Int64
	d := &websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		var nd net.Dialer
		return nd.DialContext(ctx, network, addr)
	}}
	c := dialWith(t, &nativews.Transport{Dialer: d}, func(ws *websocket.Conn) { _, _, _ = ws.ReadMessage() })
	require.NoError(t, c.Send(ctx(t), native.Message{Event: native.EventStop}))
	assert.Equal(t, int64(1), dials.Load())
}

// readingAgent reads until the connection ends, so gorilla answers every
// ping, and counts the pings.
func readingAgent(pings *atomic.Int64) func(*websocket.Conn) {
	return func(ws *websocket.Conn) {
		pong := ws.PingHandler()
		ws.SetPingHandler(func(data string) error { pings.Add(1); return pong(data) })
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
		}
	}
}

// A Recv's context ends its read with the context's cause, even while
// pongs keep moving the idle deadline on; the connection is then done
// reading.
func TestRecvEndsWithItsContext(t *testing.T) {
	var pings atomic.Int64
	c := dialWith(t, &nativews.Transport{}, readingAgent(&pings))
	c.SetIdleTimeout(200 * time.Millisecond) // a ping every 50ms, each answered
	why := errors.New("call over")
	rctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(300*time.Millisecond, func() { cancel(why) })
	start := time.Now()
	_, err := c.Recv(rctx)
	assert.ErrorIs(t, err, why)
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Greater(t, pings.Load(), int64(2), "pongs came in during the read")
	_, err = c.Recv(ctx(t))
	assert.ErrorIs(t, err, why, "reads stay over")
}

// A context that ends after its Recv returned leaves the next Recv alone.
func TestRecvAfterAnEndedContextStillReads(t *testing.T) {
	c := serve(t, func(ws *websocket.Conn) {
		for _, s := range []string{`{"event":"a"}`, `{"event":"b"}`} {
			_ = ws.WriteMessage(websocket.TextMessage, []byte(s))
			time.Sleep(50 * time.Millisecond)
		}
		_, _, _ = ws.ReadMessage()
	})
	rctx, cancel := context.WithCancel(context.Background())
	f, err := c.Recv(rctx)
	require.NoError(t, err)
	assert.Equal(t, "a", f.Message.Event)
	cancel()
	f, err = c.Recv(ctx(t))
	require.NoError(t, err)
	assert.Equal(t, "b", f.Message.Event)
}

func TestSendWithADoneContextWritesNothing(t *testing.T) {
	got := make(chan string, 1)
	c := serve(t, func(ws *websocket.Conn) {
		_, b, _ := ws.ReadMessage()
		got <- string(b)
	})
	why := errors.New("too late")
	dctx, cancel := context.WithCancelCause(context.Background())
	cancel(why)
	assert.ErrorIs(t, c.Send(dctx, native.Message{Event: "first"}), why)
	require.NoError(t, c.Send(ctx(t), native.Message{Event: "second"}))
	assert.JSONEq(t, `{"event":"second"}`, <-got)
}

// Cancelling a Send blocked on an agent that never reads ends the write at
// once with the cause; the connection is then unusable for writes.
func TestSendEndsWithItsContext(t *testing.T) {
	c := dialWith(t, &nativews.Transport{WriteTimeout: time.Minute}, hung(t))
	big := native.Message{Event: native.EventStop, Stop: &native.Stop{Reason: strings.Repeat("x", 1<<20)}}
	why := errors.New("call over")
	sctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(300*time.Millisecond, func() { cancel(why) })
	start := time.Now()
	var err error
	for err == nil {
		err = c.Send(sctx, big)
	}
	assert.ErrorIs(t, err, why)
	assert.Less(t, time.Since(start), 2*time.Second)
	start = time.Now()
	assert.Error(t, c.Send(ctx(t), native.Message{Event: native.EventStop}))
	assert.Less(t, time.Since(start), 100*time.Millisecond, "later Sends fail fast")
}

// Close ends a Send blocked on a stuck agent and a blocked Recv, within
// about CloseGrace, however many goroutines call it.
func TestCloseUnblocksASendAndARecv(t *testing.T) {
	c := dialWith(t, &nativews.Transport{WriteTimeout: time.Minute}, hung(t))
	big := native.Message{Event: native.EventStop, Stop: &native.Stop{Reason: strings.Repeat("x", 1<<20)}}
	sent := make(chan error, 1)
	go func() {
		var err error
		for err == nil {
			err = c.Send(context.Background(), big)
		}
		sent <- err
	}()
	read := make(chan error, 1)
	go func() {
		_, err := c.Recv(context.Background())
		read <- err
	}()
	time.Sleep(300 * time.Millisecond) // the socket fills; the test holds either way
	start := time.Now()
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.Close()
		}()
	}
	wg.Wait()
	assert.Less(t, time.Since(start), nativews.CloseGrace+time.Second)
	for _, ch := range []chan error{sent, read} {
		select {
		case err := <-ch:
			assert.Error(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("still blocked after Close")
		}
	}
}

// Pings follow SetIdleTimeout: a new interval applies, zero stops them.
func TestSetIdleTimeoutRetimesPings(t *testing.T) {
	var pings atomic.Int64
	c := dialWith(t, &nativews.Transport{}, readingAgent(&pings))
	c.SetIdleTimeout(time.Hour)
	time.Sleep(200 * time.Millisecond)
	assert.Zero(t, pings.Load(), "one every 15 minutes")
	c.SetIdleTimeout(200 * time.Millisecond)
	time.Sleep(400 * time.Millisecond)
	assert.GreaterOrEqual(t, pings.Load(), int64(4), "one every 50ms")
	c.SetIdleTimeout(0)
	time.Sleep(100 * time.Millisecond)
	n := pings.Load()
	time.Sleep(300 * time.Millisecond)
	assert.Equal(t, n, pings.Load(), "none")
}
