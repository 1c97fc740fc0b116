package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/harness/conformance"
	"github.com/callproof/callproof/protocol/native"
)

// scale keeps the check's calls short.
const scale = 0.05

func newEnv(t *testing.T) *harness.Env {
	t.Helper()
	env, err := harness.NewEnv(harness.EnvOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Close() })
	return env
}

func check(t *testing.T, url string) conformance.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := conformance.Run(ctx, newEnv(t), url, conformance.Options{TimeScale: scale})
	require.NoError(t, err)
	assert.Equal(t, url, rep.Agent)
	return rep
}

// items returns the report's items of one level, as "call/message".
func items(rep conformance.Report, lv conformance.Level) []string {
	var out []string
	for _, it := range rep.Items {
		if it.Level == lv {
			out = append(out, it.Call+"/"+it.Message)
		}
	}
	return out
}

func find(rep conformance.Report, call, msg string) (conformance.Item, bool) {
	for _, it := range rep.Items {
		if it.Call == call && it.Message == msg {
			return it, true
		}
	}
	return conformance.Item{}, false
}

func TestCheckCarefulAgent(t *testing.T) {
	running, err := agents.Start(context.Background(), agents.Careful(), "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = running.Close() })

	rep := check(t, running.URL)
	assert.Empty(t, items(rep, conformance.Fail), "%+v", rep.Items)
	assert.False(t, rep.Failed())
	// Every call was placed and judged message by message.
	for _, call := range []string{"plain-request", "barge-in", "noise"} {
		for _, msg := range []string{"connect", "ack", "agent_speech", "tool calls", "Idempotency-Key"} {
			it, ok := find(rep, call, msg)
			if assert.True(t, ok, "%s/%s missing", call, msg) {
				assert.Equal(t, conformance.OK, it.Level, "%s/%s: %s", call, msg, it.Detail)
			}
		}
	}
	it, ok := find(rep, "barge-in", "clear (barge-in)")
	require.True(t, ok)
	assert.Equal(t, conformance.OK, it.Level, it.Detail)
	it, ok = find(rep, "noise", "sound")
	require.True(t, ok)
	assert.Equal(t, conformance.OK, it.Level, it.Detail)

	var b strings.Builder
	rep.Write(&b)
	assert.Contains(t, b.String(), "0 to fix")
}

// sloppyAgent stands in for a broken agent. On the caller's first final it
// calls update_order once without the Authorization header and once with
// it but without an Idempotency-Key, then starts a read-back. On the
// barge-in call it talks straight over the caller, never sending clear:
// with lateEnd 0 it never ends that utterance and hangs up once the caller
// is done; otherwise it ends the utterance lateEnd (real time) after the
// caller's barge-in is over. On the other calls it ends its read-back
// normally.
func sloppyAgent(t *testing.T, lateEnd time.Duration) string {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	var wg sync.WaitGroup
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wg.Add(1)
		defer wg.Done()
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		send := func(s string) { _ = ws.WriteMessage(websocket.TextMessage, []byte(s)) }
		var start native.Start
		finals := 0
		for {
			_, b, err := ws.ReadMessage()
			if err != nil {
				return
			}
			var m native.Message
			if json.Unmarshal(b, &m) != nil {
				return
			}
			switch {
			case m.Event == native.EventStart && m.Start != nil:
				start = *m.Start
				send(`{"event":"ack","ack":{"timeScale":0.05,"agent":"sloppy"}}`)
			case m.Event == native.EventSpeech && m.Speech != nil && m.Speech.Phase == native.PhaseFinal:
				finals++
				bargeIn := strings.Contains(start.CallID, "barge-in")
				if finals > 1 {
					if bargeIn && lateEnd > 0 {
						time.Sleep(lateEnd)
						send(`{"event":"agent_speech","agentSpeech":{"id":"a1","phase":"end","text":"Okay, updating order 5590: delivery date December 3."}}`)
					} else if bargeIn {
						send(`{"event":"hangup","hangup":{"reason":"done"}}`)
					}
					continue
				}
				body := []byte(`{"order_number":"5590","delivery_date":"2026-12-03"}`)
				for _, auth := range []bool{false, true} {
					req, err := http.NewRequest(http.MethodPost, start.Tools.BaseURL+"/update_order", bytes.NewReader(body))
					if err != nil {
						t.Error(err)
						return
					}
					req.Header.Set("Content-Type", "application/json")
					if auth {
						req.Header.Set("Authorization", "Bearer "+start.Tools.Token)
					}
					if resp, err := client.Do(req); err == nil {
						resp.Body.Close()
					}
				}
				send(`{"event":"agent_speech","agentSpeech":{"id":"a1","phase":"start"}}`)
				send(`{"event":"agent_speech","agentSpeech":{"id":"a1","phase":"text","text":"Okay, updating order 5590:"}}`)
				if !bargeIn {
					time.Sleep(60 * time.Millisecond)
					send(`{"event":"agent_speech","agentSpeech":{"id":"a1","phase":"end","text":"Okay, updating order 5590: delivery date December 3."}}`)
				}
			case m.Event == native.EventStop:
				return
			}
		}
	}))
	t.Cleanup(func() {
		srv.Close()
		wg.Wait()
		client.CloseIdleConnections()
	})
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/"
}

func TestCheckBrokenAgent(t *testing.T) {
	rep := check(t, sloppyAgent(t, 0))
	require.True(t, rep.Failed())
	fails := items(rep, conformance.Fail)
	for _, call := range []string{"plain-request", "barge-in", "noise"} {
		it, ok := find(rep, call, "tool auth")
		if assert.True(t, ok, "%s: missing Authorization not flagged; fails %v", call, fails) {
			assert.Equal(t, conformance.Fail, it.Level)
			assert.Contains(t, it.Detail, "401")
			assert.Contains(t, it.Detail, "Authorization: Bearer")
		}
		it, ok = find(rep, call, "Idempotency-Key")
		if assert.True(t, ok, "%s: missing Idempotency-Key not flagged; fails %v", call, fails) {
			assert.Equal(t, conformance.Fail, it.Level)
			assert.Contains(t, it.Detail, "1 of 1")
		}
		// The calls themselves ran: the agent connected and was judged.
		it, ok = find(rep, call, "connect")
		if assert.True(t, ok) {
			assert.Equal(t, conformance.OK, it.Level, it.Detail)
		}
	}
	it, ok := find(rep, "barge-in", "clear (barge-in)")
	require.True(t, ok, "fails %v", fails)
	assert.Equal(t, conformance.Fail, it.Level, it.Detail)
	assert.Contains(t, it.Detail, "send clear")
	// Nothing else is charged to this agent.
	assert.ElementsMatch(t, []string{
		"plain-request/tool auth", "plain-request/Idempotency-Key",
		"barge-in/tool auth", "barge-in/Idempotency-Key", "barge-in/clear (barge-in)",
		"noise/tool auth", "noise/Idempotency-Key",
	}, fails)

	var b strings.Builder
	rep.Write(&b)
	assert.Contains(t, b.String(), "FAIL clear (barge-in)")
	assert.Contains(t, b.String(), "7 to fix")
}

// An agent that talks on over the caller and only ends its sentence long
// after the barge-in (here 8 s of script time; the scorer's yield bound is
// 1.5 s) has not yielded. The judge currently counts any later
// agent_speech end as yielding (harness/conformance/check.go, judge), so
// this check reports OK for it.
func TestCheckLateEndIsNotYield(t *testing.T) {
	rep := check(t, sloppyAgent(t, 400*time.Millisecond))
	it, ok := find(rep, "barge-in", "clear (barge-in)")
	require.True(t, ok, "%+v", rep.Items)
	assert.Equal(t, conformance.Fail, it.Level, it.Detail)
}

func TestCheckNothingListening(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "ws://" + l.Addr().String() + "/"
	require.NoError(t, l.Close())

	rep := check(t, url)
	require.True(t, rep.Failed())
	require.Len(t, rep.Items, 3, "one connect failure per call, nothing judged beyond it: %+v", rep.Items)
	for _, it := range rep.Items {
		assert.Equal(t, "connect", it.Message)
		assert.Equal(t, conformance.Fail, it.Level)
		assert.Contains(t, it.Detail, "dial")
	}
}
