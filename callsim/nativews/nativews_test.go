package nativews_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
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
