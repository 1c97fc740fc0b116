package realtime_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/callproof/callproof/agents/realtime"
)

// rtClient is a bare Realtime client for testing the fake without Node.
type rtClient struct {
	t  *testing.T
	ws *websocket.Conn
}

func dialFake(t *testing.T, s *realtime.Server) *rtClient {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer k"}}
	ws, _, err := (&websocket.Dialer{HandshakeTimeout: 5 * time.Second}).Dial(s.URL(), h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	c := &rtClient{t: t, ws: ws}
	c.expect("session.created")
	return c
}

func (c *rtClient) send(ev map[string]any) {
	c.t.Helper()
	b, _ := json.Marshal(ev)
	if err := c.ws.WriteMessage(websocket.TextMessage, b); err != nil {
		c.t.Fatal(err)
	}
}

// next reads the next event, skipping audio deltas unless asked for.
func (c *rtClient) next() map[string]any {
	c.t.Helper()
	_ = c.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, b, err := c.ws.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatal(err)
	}
	if _, ok := m["event_id"].(string); !ok {
		c.t.Errorf("event without event_id: %s", b)
	}
	return m
}

// expect reads until an event of type typ, returning it.
func (c *rtClient) expect(typ string) map[string]any {
	c.t.Helper()
	for {
		m := c.next()
		if m["type"] == typ {
			return m
		}
	}
}

func (c *rtClient) audio(ulaw []byte) {
	c.t.Helper()
	// 20 ms appends, as the Twilio transport forwards them.
	for i := 0; i < len(ulaw); i += 160 {
		c.send(map[string]any{"type": "input_audio_buffer.append", "audio": base64.StdEncoding.EncodeToString(ulaw[i:min(len(ulaw), i+160)])})
	}
}

func (c *rtClient) pcmu() {
	c.t.Helper()
	c.send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime", "audio": map[string]any{
		"input":  map[string]any{"format": map[string]any{"type": "audio/pcmu"}, "turn_detection": map[string]any{"type": "semantic_vad"}},
		"output": map[string]any{"format": map[string]any{"type": "audio/pcmu"}},
	}}})
	upd := c.expect("session.updated")
	td := upd["session"].(map[string]any)["audio"].(map[string]any)["input"].(map[string]any)["turn_detection"].(map[string]any)
	if td["type"] != "semantic_vad" || td["interrupt_response"] != true || td["create_response"] != true {
		c.t.Errorf("turn_detection after update = %v, want semantic_vad with the server's defaults", td)
	}
}

func num(m map[string]any, k string) int { f, _ := m[k].(float64); return int(f) }

// speech is quiet, loud for d, quiet again long enough to end the speech.
func speech(lead, d time.Duration) []byte {
	b := realtime.Silence(lead)
	b = append(b, realtime.Tone(300, d, 8000)...)
	return append(b, realtime.Silence(600*time.Millisecond)...)
}

func TestFakeFunctionCallTurn(t *testing.T) {
	reply := realtime.Tone(440, 500*time.Millisecond, 6000)
	s := realtime.NewServer(realtime.Script{Speed: 100, Turns: []realtime.Turn{{
		Calls: []realtime.FunctionCall{{Name: "update_order", Arguments: `{"order_number":"5590"}`}},
		Reply: realtime.Reply{Audio: reply, Transcript: "Order updated."},
	}}})
	defer s.Close()
	c := dialFake(t, s)
	c.pcmu()
	c.audio(speech(200*time.Millisecond, 400*time.Millisecond))

	// Onset and offset come from the audio: speech from 200 ms to 600 ms,
	// then DefaultSilence of quiet.
	if st := c.expect("input_audio_buffer.speech_started"); num(st, "audio_start_ms") != 200 {
		t.Errorf("audio_start_ms = %v, want 200", st["audio_start_ms"])
	}
	if sp := c.expect("input_audio_buffer.speech_stopped"); num(sp, "audio_end_ms") != 600+int(realtime.DefaultSilence/time.Millisecond) {
		t.Errorf("audio_end_ms = %v, want %d", sp["audio_end_ms"], 600+int(realtime.DefaultSilence/time.Millisecond))
	}
	added := c.expect("response.output_item.added")["item"].(map[string]any)
	if added["status"] != "in_progress" {
		t.Errorf("function call added with status %v: the SDK would run it twice", added["status"])
	}
	done := c.expect("response.output_item.done")["item"].(map[string]any)
	if done["type"] != "function_call" || done["status"] != "completed" || done["arguments"] != `{"order_number":"5590"}` {
		t.Fatalf("output_item.done item = %v", done)
	}
	if r := c.expect("response.done")["response"].(map[string]any); r["status"] != "completed" {
		t.Errorf("function call response status %v", r["status"])
	}

	c.send(map[string]any{"type": "conversation.item.create", "item": map[string]any{
		"type": "function_call_output", "call_id": done["call_id"], "output": "ok",
	}})
	c.expect("conversation.item.added")
	c.send(map[string]any{"type": "response.create"})
	got := 0
	for {
		m := c.next()
		if m["type"] == "response.output_audio.delta" {
			b, _ := base64.StdEncoding.DecodeString(m["delta"].(string))
			got += len(b)
		}
		if m["type"] == "response.output_audio_transcript.done" && m["transcript"] != "Order updated." {
			t.Errorf("transcript %q", m["transcript"])
		}
		if m["type"] == "response.done" {
			if r := m["response"].(map[string]any); r["status"] != "completed" {
				t.Errorf("reply status %v", r["status"])
			}
			break
		}
	}
	if got != len(reply) {
		t.Errorf("reply audio %d bytes of μ-law, want %d", got, len(reply))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.WaitFor(ctx, realtime.Is(realtime.FromClient, "response.create")); err != nil {
		t.Error("response.create not recorded")
	}
}

func TestFakeBargeInCancelsAndTruncates(t *testing.T) {
	// Slow: the reply is still being generated when the caller talks.
	s := realtime.NewServer(realtime.Script{Speed: 1, Turns: []realtime.Turn{
		{Reply: realtime.Reply{Audio: realtime.Tone(440, 5*time.Second, 6000), Transcript: "a long answer"}},
	}})
	defer s.Close()
	c := dialFake(t, s)
	c.pcmu()
	c.audio(speech(0, 300*time.Millisecond))
	item := c.expect("response.output_item.added")["item"].(map[string]any)
	c.expect("response.output_audio.delta")
	c.audio(speech(0, 300*time.Millisecond))
	c.expect("input_audio_buffer.speech_started")
	r := c.expect("response.done")["response"].(map[string]any)
	if r["status"] != "cancelled" || r["status_details"].(map[string]any)["reason"] != "turn_detected" {
		t.Errorf("response after barge-in: status %v, details %v; want cancelled, turn_detected", r["status"], r["status_details"])
	}

	// Past the audio sent: refused, as the real server does.
	c.send(map[string]any{"type": "conversation.item.truncate", "item_id": item["id"], "content_index": 0, "audio_end_ms": 60000})
	if e := c.expect("error"); e["error"].(map[string]any)["code"] != "invalid_value" {
		t.Errorf("error %v", e)
	}
	c.send(map[string]any{"type": "conversation.item.truncate", "item_id": item["id"], "content_index": 0, "audio_end_ms": 50})
	if tr := c.expect("conversation.item.truncated"); num(tr, "audio_end_ms") != 50 || tr["item_id"] != item["id"] {
		t.Errorf("truncated %v", tr)
	}
	c.send(map[string]any{"type": "response.cancel"})
	if e := c.expect("error"); e["error"].(map[string]any)["code"] != "response_cancel_not_active" {
		t.Errorf("cancel with no response: %v", e)
	}
	trs := realtime.Truncates(s.Events())
	if len(trs) != 2 || trs[1].AudioEndMs != 50 || trs[1].ItemID != item["id"] {
		t.Errorf("recorded truncates %+v", trs)
	}
}

func TestFakeToolTimeoutIsNoted(t *testing.T) {
	s := realtime.NewServer(realtime.Script{ToolTimeout: 100 * time.Millisecond, Turns: []realtime.Turn{{
		Calls: []realtime.FunctionCall{{Name: "f", Arguments: "{}", CallID: "c1"}},
		Reply: realtime.Reply{Transcript: "never said"},
	}}})
	defer s.Close()
	c := dialFake(t, s)
	c.pcmu()
	c.audio(speech(0, 200*time.Millisecond))
	c.expect("response.done")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e, err := s.WaitFor(ctx, realtime.Is(realtime.Note, "script timeout"))
	if err != nil {
		t.Fatal("no script timeout note")
	}
	t.Log(e.Text)
}

func TestFakePCM16Session(t *testing.T) {
	// The GA default, 24 kHz PCM16 both ways: the VAD works at 24 kHz and
	// the μ-law reply is converted (three samples per μ-law byte, two bytes
	// each).
	reply := realtime.Tone(440, 200*time.Millisecond, 6000)
	s := realtime.NewServer(realtime.Script{Speed: 100, Turns: []realtime.Turn{{Reply: realtime.Reply{Audio: reply}}}})
	defer s.Close()
	c := dialFake(t, s)
	pcm := make([]byte, 0)
	for _, x := range pcm24(speech(100*time.Millisecond, 300*time.Millisecond)) {
		pcm = append(pcm, byte(x), byte(x>>8))
	}
	for i := 0; i < len(pcm); i += 960 {
		c.send(map[string]any{"type": "input_audio_buffer.append", "audio": base64.StdEncoding.EncodeToString(pcm[i:min(len(pcm), i+960)])})
	}
	if st := c.expect("input_audio_buffer.speech_started"); num(st, "audio_start_ms") != 100 {
		t.Errorf("audio_start_ms = %v, want 100", st["audio_start_ms"])
	}
	got := 0
	for {
		m := c.next()
		if m["type"] == "response.output_audio.delta" {
			b, _ := base64.StdEncoding.DecodeString(m["delta"].(string))
			got += len(b)
		}
		if m["type"] == "response.done" {
			break
		}
	}
	if got != 6*len(reply) {
		t.Errorf("reply %d bytes of PCM16, want %d", got, 6*len(reply))
	}
}

// pcm24 decodes μ-law and repeats each sample three times: 24 kHz.
func pcm24(ulaw []byte) []int16 {
	var out []int16
	for _, b := range ulaw {
		v := ulawDecode(b)
		out = append(out, v, v, v)
	}
	return out
}

// ulawDecode is G.711 μ-law decoding, written out so the test does not
// share the fake's decoder.
func ulawDecode(u byte) int16 {
	u = ^u
	t := (int(u&0x0f) << 3) + 0x84
	t <<= (u & 0x70) >> 4
	if u&0x80 != 0 {
		return int16(0x84 - t)
	}
	return int16(t - 0x84)
}
