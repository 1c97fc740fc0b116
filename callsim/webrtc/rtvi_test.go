package webrtc

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/protocol/native"
)

// rtviEvent is one RTVI bot event as Pipecat's observer sends it.
func rtviEvent(typ, data string) string {
	if data == "" {
		return `{"label":"rtvi-ai","type":"` + typ + `"}`
	}
	return `{"label":"rtvi-ai","type":"` + typ + `","data":` + data + `}`
}

// A Pipecat bot's RTVI events: its words, spoken between its speaking
// events, are the utterance's text; a named function call is its tool
// intent; an interruption while speaking is a clear; peerLeft is its
// hang-up. The call goes through the runner's /start flow.
func TestPipecatBotEvents(t *testing.T) {
	p := newTestPeer(t)
	tr := &Transport{Signaling: SignalingPipecatStart, CallID: "c9", Access: native.Tools{BaseURL: "http://127.0.0.1:1/t", Token: "tok"}}
	tr.Speech = toneSpeech{}
	c := dial(t, tr, p.url("/start"))
	pc := <-p.newCall
	dc := pc.channel(t)
	require.NoError(t, c.Send(context.Background(), native.Message{Event: native.EventStart, Start: &native.Start{CallID: "c9",
		Tools: native.Tools{BaseURL: "http://127.0.0.1:1/t", Token: "tok"}}}))
	select {
	case st := <-pc.start:
		assert.Equal(t, "http://127.0.0.1:1/t", st["toolsBaseUrl"])
	case <-time.After(3 * time.Second):
		t.Fatal("no start client-message")
	}
	p.mu.Lock()
	require.Len(t, p.starts, 1)
	body, _ := p.starts[0]["body"].(map[string]any)
	assert.Equal(t, "tok", body["toolsToken"], "the call's data rides /start's body")
	require.Len(t, p.requests, 1)
	assert.Equal(t, "c9", p.requests[0]["request_data"].(map[string]any)["callproofCallId"])
	p.mu.Unlock()

	// Words: the spoken, completed segments between the speaking events.
	send := func(m string) { require.NoError(t, dc.SendText(m)) }
	// An RTVI bot (bot-ready) has the caller linger at its script's end.
	assert.Zero(t, c.Linger(), "no bot-ready yet")
	send(rtviEvent("bot-ready", `{"version":"2.2.0","about":{"library":"pipecat-ai"}}`))
	recvUntil(t, c, 3*time.Second, func(m native.Message) bool { return m.Event == "rtvi.bot-ready" })
	assert.Equal(t, RTVILinger, c.Linger())
	send(rtviEvent("bot-started-speaking", ""))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pc.speak(ctx, tone(440, 800*time.Millisecond, -20))
	send(rtviEvent("bot-output", `{"text":"Your order","will_be_spoken":true,"spoken_status":"completed","output_type":"sentence"}`))
	send(rtviEvent("bot-output", `{"text":"is","output_type":"word"}`))
	send(rtviEvent("bot-tts-text", `{"text":"Your order"}`))
	send(rtviEvent("bot-output", `{"text":"is updated.","will_be_spoken":true,"spoken_status":"completed","output_type":"sentence"}`))
	send(rtviEvent("bot-stopped-speaking", ""))
	got := recvUntil(t, c, 5*time.Second, speechPhase(native.PhaseText))
	assert.Equal(t, "Your order is updated.", got[len(got)-1].AgentSpeech.Text, "%v", got)

	// Tool lifecycle: the named call is the intent, the rest notes.
	send(rtviEvent("llm-function-call-started", `{"function_name":"update_order"}`))
	send(rtviEvent("llm-function-call-in-progress", `{"tool_call_id":"x1","function_name":"update_order","arguments":{"order_number":"4471","quantity":2}}`))
	send(rtviEvent("metrics", `{}`))
	send(rtviEvent("llm-function-call-stopped", `{"tool_call_id":"x1","cancelled":true}`))
	got = recvUntil(t, c, 3*time.Second, func(m native.Message) bool { return m.Event == "rtvi.llm-function-call-stopped" })
	var intent *native.ToolIntent
	for _, m := range got {
		assert.NotEqual(t, "rtvi.metrics", m.Event, "metrics are dropped")
		if m.Event == native.EventToolIntent {
			intent = m.ToolIntent
		}
	}
	require.NotNil(t, intent, "%v", got)
	assert.Equal(t, native.ToolIntent{Tool: "update_order", Args: map[string]string{"order_number": "4471", "quantity": "2"}}, *intent)

	// An interruption while speaking: the words so far, then the clear.
	send(rtviEvent("bot-started-speaking", ""))
	speakCtx, stopSpeaking := context.WithCancel(ctx)
	go pc.speak(speakCtx, tone(440, 3*time.Second, -20))
	recvUntil(t, c, 3*time.Second, speechPhase(native.PhaseStart))
	send(rtviEvent("bot-output", `{"text":"Let me check","will_be_spoken":true,"spoken_status":"completed","output_type":"sentence"}`))
	stopSpeaking()
	send(rtviEvent("bot-interrupted", ""))
	got = recvUntil(t, c, 3*time.Second, func(m native.Message) bool { return m.Event == native.EventClear })
	assert.Equal(t, native.EventClear, got[len(got)-1].Event)

	// The caller presses keys: RTVI dtmf with its buttons.
	require.NoError(t, c.Send(context.Background(), native.Message{Event: native.EventDTMF, DTMF: &native.DTMF{Digits: "12"}}))

	// The bot ends the call: peerLeft, then it closes.
	send(rtviEvent("bot-started-speaking", ""))
	pc.speak(ctx, tone(440, 600*time.Millisecond, -20))
	send(rtviEvent("bot-output", `{"text":"Goodbye.","will_be_spoken":true,"spoken_status":"completed","output_type":"sentence"}`))
	send(`{"type":"signalling","message":{"type":"peerLeft"}}`)
	// The close comes once the caller has taken peerLeft, as it does from
	// Pipecat when the network keeps order: this checks the close after
	// it (one that overtakes it is closedByAgent's case).
	require.Eventually(t, c.left.Load, 5*time.Second, 5*time.Millisecond, "peerLeft never taken")
	_ = pc.pc.Close() // as Pipecat does right after it
	got = recvUntil(t, c, 5*time.Second, func(m native.Message) bool { return m.Event == native.EventHangup })
	assert.Equal(t, ReasonPeerLeft, got[len(got)-1].Hangup.Reason, "the close that follows peerLeft is no connection lost")
	var words string
	for _, m := range got {
		if speechPhase(native.PhaseText)(m) {
			words = m.AgentSpeech.Text
		}
	}
	assert.Equal(t, "Goodbye.", words, "its last words before its hang-up: %v", got)

	var dtmf, ready bool
	for len(pc.msgs) > 0 {
		m := <-pc.msgs
		dtmf = dtmf || strings.Contains(m, `"type":"dtmf"`) && strings.Contains(m, `"buttons":["1","2"]`)
		ready = ready || strings.Contains(m, `"type":"client-ready"`) && strings.Contains(m, `"version":"2.2.0"`)
	}
	assert.True(t, dtmf, "dtmf with its buttons")
	assert.True(t, ready, "client-ready 2.2.0")
}

// peerLeft after the caller's stop is the bot following the caller out,
// not a hang-up.
func TestPeerLeftAfterStop(t *testing.T) {
	c, _, dc := startedCall(t)
	require.NoError(t, c.Send(context.Background(), native.Message{Event: native.EventStop, Stop: &native.Stop{Reason: "done"}}))
	require.NoError(t, dc.SendText(`{"type":"signalling","message":{"type":"peerLeft"}}`))
	require.NoError(t, dc.SendText(rtviEvent("bot-ready", `{}`)))
	got := recvUntil(t, c, 3*time.Second, func(m native.Message) bool { return m.Event == "rtvi.bot-ready" })
	for _, m := range got {
		assert.NotEqual(t, native.EventHangup, m.Event)
	}
}

func TestSessionOfferURL(t *testing.T) {
	u, err := sessionOfferURL("http://127.0.0.1:7860/start", "ab-1")
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:7860/sessions/ab-1/api/offer", u)
	u, err = sessionOfferURL("http://127.0.0.1:7860/bot/start?x=1", "ab")
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:7860/bot/sessions/ab/api/offer?x=1", u)
}

// An agent that closes the connection after the caller's start, with no
// peerLeft (lost in its close), hangs up once its audio has played.
func TestCleanCloseIsHangUp(t *testing.T) {
	c, pc, _ := startedCall(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pc.speak(ctx, tone(440, 600*time.Millisecond, -20))
	require.NoError(t, pc.pc.Close())
	got := recvUntil(t, c, 5*time.Second, func(m native.Message) bool { return m.Event == native.EventHangup })
	assert.Equal(t, ReasonClosedCleanly, got[len(got)-1].Hangup.Reason)
	assert.True(t, slices.ContainsFunc(got, speechPhase(native.PhaseStart)), "its last audio first: %v", got)
}
