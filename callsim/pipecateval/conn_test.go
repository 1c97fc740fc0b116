package pipecateval

import (
	"context"
	"encoding/json"
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
	"github.com/callproof/callproof/callsim/internal/rtvi"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// bot is the server side of one eval connection, on loopback.
type bot struct {
	ws *websocket.Conn
}

// dial starts a WebSocket server, dials it with a Transport and returns
// both ends.
func dial(t *testing.T) (*Conn, *bot) {
	t.Helper()
	got := make(chan *websocket.Conn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		got <- ws
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := (&Transport{}).Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws")
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	b := &bot{ws: <-got}
	t.Cleanup(func() { _ = b.ws.Close() })
	return c.(*Conn), b
}

// read is the next RTVI message the caller sent.
func (b *bot) read(t *testing.T) map[string]any {
	t.Helper()
	require.NoError(t, b.ws.SetReadDeadline(time.Now().Add(5*time.Second)))
	var m map[string]any
	require.NoError(t, b.ws.ReadJSON(&m))
	assert.Equal(t, Label, m["label"])
	return m
}

func (b *bot) send(t *testing.T, typ string, data any) {
	t.Helper()
	m := map[string]any{"label": Label, "type": typ}
	if data != nil {
		m["data"] = data
	}
	require.NoError(t, b.ws.WriteJSON(m))
}

func recv(t *testing.T, c *Conn) callsim.Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f, err := c.Recv(ctx)
	require.NoError(t, err)
	return f
}

func send(t *testing.T, c *Conn, m native.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, c.Send(ctx, m))
}

// The start goes out as eval-connect (text mode: skip_tts), the call's
// data as a client-message "start", the full function-call report level,
// then client-ready; speech finals as send-text, DTMF as buttons, the
// stop as disconnect-bot. Onsets, partials and sounds send nothing.
func TestCallerMessages(t *testing.T) {
	c, b := dial(t)
	send(t, c, native.Message{Event: native.EventStart, Start: &native.Start{
		CallID: "call-1", CallDate: "2026-12-02", TimeZone: "Europe/Paris",
		CustomParameters: map[string]string{"tier": "gold"},
		Tools: native.Tools{BaseURL: "http://127.0.0.1:1/tools", Token: "tok", MCPURL: "http://127.0.0.1:1/mcp",
			Catalog: []trace.ToolSpec{{Name: "update_order"}}},
	}})
	m := b.read(t)
	assert.Equal(t, "client-message", m["type"])
	assert.Equal(t, map[string]any{"t": "eval-connect", "d": map[string]any{"skip_tts": true}}, m["data"])
	m = b.read(t)
	d := m["data"].(map[string]any)
	assert.Equal(t, StartType, d["t"])
	params := d["d"].(map[string]any)
	for k, v := range map[string]string{"callproofCallId": "call-1", "toolsBaseUrl": "http://127.0.0.1:1/tools",
		"toolsToken": "tok", "toolsMcpUrl": "http://127.0.0.1:1/mcp", "callDate": "2026-12-02",
		"timeZone": "Europe/Paris", "tier": "gold"} {
		assert.Equal(t, v, params[k], k)
	}
	assert.Contains(t, params["toolsCatalog"], `"update_order"`)
	m = b.read(t)
	assert.Equal(t, map[string]any{"t": "eval-configure", "d": map[string]any{
		"function_call_report_level": map[string]any{"*": "full"}}}, m["data"])
	m = b.read(t)
	assert.Equal(t, "client-ready", m["type"])
	assert.Equal(t, RTVIVersion, m["data"].(map[string]any)["version"])

	send(t, c, native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: "s1", Phase: native.PhaseOnset}})
	send(t, c, native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: "s1", Phase: native.PhasePartial, Text: "Hi"}})
	send(t, c, native.Message{Event: native.EventSound, Sound: &native.Sound{ID: "n1", Phase: native.PhaseOnset, Kind: "cough"}})
	send(t, c, native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: "s1", Phase: native.PhaseFinal, Text: "Hi there."}})
	m = b.read(t)
	assert.Equal(t, "send-text", m["type"])
	assert.Equal(t, map[string]any{"content": "Hi there.", "options": map[string]any{
		"run_immediately": true, "audio_response": false}}, m["data"])
	send(t, c, native.Message{Event: native.EventDTMF, DTMF: &native.DTMF{Digits: "12#"}})
	m = b.read(t)
	assert.Equal(t, "dtmf", m["type"])
	assert.Equal(t, map[string]any{"buttons": []any{"1", "2", "#"}}, m["data"])
	send(t, c, native.Message{Event: native.EventStop, Stop: &native.Stop{}})
	m = b.read(t)
	assert.Equal(t, "disconnect-bot", m["type"])

	// A close after the caller's stop is no hang-up.
	require.NoError(t, b.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.Recv(ctx)
	assert.Error(t, err)
}

// What each RTVI event of the bot becomes.
func TestBotEvents(t *testing.T) {
	c, b := dial(t)
	b.send(t, "bot-ready", map[string]any{"version": "2.2.0"})
	f := recv(t, c)
	assert.Equal(t, native.EventAck, f.Message.Event)
	assert.Equal(t, 1.0, f.Message.Ack.TimeScale)

	// Dropped: no native meaning and nothing the bot did.
	b.send(t, "metrics", map[string]any{})
	b.send(t, "bot-llm-started", nil)
	// Text the bot will not speak is an utterance of its own.
	b.send(t, "bot-output", map[string]any{"text": "Hello.", "will_be_spoken": false, "spoken_status": "new", "output_type": "sentence"})
	speech := func(phase, id, text string) {
		t.Helper()
		f := recv(t, c)
		require.Equal(t, native.EventAgentSpeech, f.Message.Event, string(f.Raw))
		assert.Equal(t, native.AgentSpeech{ID: id, Phase: phase, Text: text}, *f.Message.AgentSpeech)
	}
	speech(native.PhaseStart, "u1", "")
	speech(native.PhaseText, "u1", "Hello.")
	speech(native.PhaseEnd, "u1", "")

	// Spoken text: its segment's words once spoken, within the speaking
	// events; bot-tts-text repeats them and is not read again.
	b.send(t, "bot-started-speaking", nil)
	b.send(t, "bot-output", map[string]any{"text": "Done.", "will_be_spoken": true, "spoken_status": "completed", "output_type": "sentence"})
	b.send(t, "bot-tts-text", map[string]any{"text": "Done."})
	b.send(t, "bot-output", map[string]any{"text": "It is", "will_be_spoken": true, "spoken_status": "in-progress", "output_type": "sentence"})
	b.send(t, "bot-output", map[string]any{"text": "It is set.", "will_be_spoken": true, "spoken_status": "completed", "output_type": "sentence"})
	b.send(t, "bot-stopped-speaking", nil)
	speech(native.PhaseStart, "u2", "")
	speech(native.PhaseText, "u2", "Done.")
	speech(native.PhaseText, "u2", "Done. It is set.")
	speech(native.PhaseEnd, "u2", "")

	// A barge-in clears the utterance being spoken.
	b.send(t, "bot-started-speaking", nil)
	b.send(t, "bot-interrupted", nil)
	speech(native.PhaseStart, "u3", "")
	f = recv(t, c)
	assert.Equal(t, native.EventClear, f.Message.Event)
	assert.Equal(t, "u3", f.Message.Clear.ID)

	// Tool lifecycle: in-progress with its name is the tool intent; the
	// rest is kept verbatim.
	b.send(t, "llm-function-call-started", map[string]any{"function_name": "update_order"})
	b.send(t, "llm-function-call-in-progress", map[string]any{"tool_call_id": "c1", "function_name": "update_order",
		"arguments": map[string]any{"order_number": "5590", "quantity": 2}})
	b.send(t, "llm-function-call-stopped", map[string]any{"tool_call_id": "c1", "cancelled": true})
	f = recv(t, c)
	assert.Equal(t, "rtvi.llm-function-call-started", f.Message.Event)
	f = recv(t, c)
	require.Equal(t, native.EventToolIntent, f.Message.Event)
	assert.Equal(t, native.ToolIntent{Tool: "update_order", Args: map[string]string{"order_number": "5590", "quantity": "2"}}, *f.Message.ToolIntent)
	f = recv(t, c)
	assert.Equal(t, "rtvi.llm-function-call-stopped", f.Message.Event)
	var stopped rtvi.Message
	require.NoError(t, json.Unmarshal(f.Raw, &stopped))
	assert.JSONEq(t, `{"tool_call_id": "c1", "cancelled": true}`, string(stopped.Data))

	// The bot's clean close, its words over, is its hang-up.
	b.send(t, "bot-started-speaking", nil)
	require.NoError(t, b.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")))
	speech(native.PhaseStart, "u4", "")
	speech(native.PhaseEnd, "u4", "")
	f = recv(t, c)
	require.Equal(t, native.EventHangup, f.Message.Event)
	assert.Equal(t, ReasonClosedCleanly, f.Message.Hangup.Reason)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.Recv(ctx)
	assert.Error(t, err)
}

// A message that is not RTVI JSON breaks the protocol.
func TestGarbage(t *testing.T) {
	for name, frame := range map[string][]byte{
		"not JSON":    []byte("hello"),
		"not RTVI":    []byte(`{"event":"media"}`),
		"no type":     []byte(`{"label":"rtvi-ai"}`),
		"binary data": nil,
	} {
		t.Run(name, func(t *testing.T) {
			c, b := dial(t)
			typ := websocket.TextMessage
			if frame == nil {
				typ, frame = websocket.BinaryMessage, []byte{1, 2}
			}
			require.NoError(t, b.ws.WriteMessage(typ, frame))
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := c.Recv(ctx)
			assert.True(t, errors.Is(err, callsim.ErrGarbageFrame), "%v", err)
		})
	}
}

// A frame over the limit is refused.
func TestFrameLimit(t *testing.T) {
	c, b := dial(t)
	c.SetFrameLimit(64)
	b.send(t, "bot-output", map[string]any{"text": strings.Repeat("x", 100)})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.Recv(ctx)
	assert.True(t, errors.Is(err, callsim.ErrOversizedFrame), "%v", err)
}

// A Recv's context ends a blocked read.
func TestRecvContext(t *testing.T) {
	c, _ := dial(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Recv(ctx)
		done <- err
	}()
	why := errors.New("call over")
	cancel(why)
	select {
	case err := <-done:
		assert.ErrorIs(t, err, why)
	case <-time.After(5 * time.Second):
		t.Fatal("Recv outlived its context")
	}
}
