package agents

import (
	"context"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/protocol/native"
)

// Odd input is ignored; the call still works; a dropped connection ends it.
func TestOddInputAndAbruptClose(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		b := newFakeBackend(t, nil)
		defer b.srv.Close()
		agent := NewServer(Careful())
		srv := httptest.NewServer(agent)
		defer srv.Close()
		defer func() { assert.NoError(t, agent.Close()); assert.NoError(t, agent.Close()) }()

		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/any/path", nil)
		require.NoError(t, err)
		for _, raw := range []string{
			`not json`, `{"event":"speech"}`, `{"event":"weird","foo":1}`,
			`{"event":"speech","speech":{"id":"x","phase":"final","text":"ship order 5590"}}`, // before start
			`{"event":"start"}`, // no payload
			`[1,2,3]`,
		} {
			require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(raw)))
		}
		require.NoError(t, ws.WriteMessage(websocket.BinaryMessage, []byte{0, 1, 2}))
		require.NoError(t, ws.WriteJSON(native.Message{Event: native.EventStart, Start: &native.Start{
			CallID: "odd", TimeScale: testScale, Tools: native.Tools{BaseURL: b.srv.URL, Token: "tok"},
		}}))
		for _, raw := range []string{
			`{"event":"dtmf","dtmf":{"digits":"1"}}`,
			`{"event":"sound","sound":{"id":"n","phase":"onset"}}`,
			`{"event":"speech","speech":{"id":"y","phase":"final","text":"🙂 99999999999999999999 order make that"}}`,
			`{"event":"speech","speech":{"id":"z","phase":"partial"}}`,
		} {
			require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(raw)))
		}
		var ack native.Message
		require.NoError(t, ws.ReadJSON(&ack))
		assert.Equal(t, native.EventAck, ack.Event)
		assert.InDelta(t, testScale, ack.Ack.TimeScale, 1e-9)
		// Hang up without a stop frame, mid-call.
		require.NoError(t, ws.Close())
	}()
	noLeak(t, before)
}

// Stop during an in-flight call ends the session and abandons the request.
func TestStopDuringInFlightCall(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		cfg := Careful()
		cfg.ToolTimeout = 100 * time.Second
		b := newFakeBackend(t, func(tool string, n int) answer { return answer{hold: tool == "update_order"} })
		r, err := Start(context.Background(), cfg, "127.0.0.1:0")
		require.NoError(t, err)
		c := dialCaller(t, r.URL, b)
		c.greeted()
		c.say(reqDec3)
		b.waitRequest(t, "update_order")
		c.hangUp()
		require.NoError(t, r.Close())
		require.NoError(t, r.Close())
		assert.Eventually(t, func() bool { return b.requests("update_order")[0].Cancelled }, 2*time.Second, 10*time.Millisecond)
		b.srv.Close()
	}()
	noLeak(t, before)
}

func TestStartStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r, err := Start(ctx, Naive(), "127.0.0.1:0")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(r.URL, "ws://127.0.0.1:"))
	cancel()
	assert.Eventually(t, func() bool {
		_, _, err := websocket.DefaultDialer.Dial(r.URL, nil)
		return err != nil
	}, 2*time.Second, 10*time.Millisecond)
	assert.NoError(t, r.Close())

	_, err = Start(context.Background(), Careful(), "256.0.0.1:bad")
	assert.Error(t, err)
}

// noLeak waits for the goroutine count to fall back to before.
func noLeak(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines leaked: %d > %d\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
