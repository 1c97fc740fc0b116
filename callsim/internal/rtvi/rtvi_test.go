package rtvi

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/protocol/native"
)

func msg(t *testing.T, typ, data string) Message {
	t.Helper()
	b := `{"label":"rtvi-ai","type":"` + typ + `"`
	if data != "" {
		b += `,"data":` + data
	}
	m, ok := Parse([]byte(b + "}"))
	require.True(t, ok)
	return m
}

// What each bot event means, as both RTVI dialects read it.
func TestDecode(t *testing.T) {
	var d Decoder
	assert.Equal(t, Event{Kind: Words, Text: "hi"}, d.Decode(msg(t, "bot-tts-text", `{"text":" hi "}`)), "no bot-output yet")
	assert.Equal(t, Event{}, d.Decode(msg(t, "bot-output", `{"text":"a","output_type":"word"}`)), "words are progress")
	assert.Equal(t, Event{}, d.Decode(msg(t, "bot-output", `{"text":"a b","will_be_spoken":true,"spoken_status":"new","output_type":"sentence"}`)))
	assert.Equal(t, Event{Kind: Words, Text: "a b"}, d.Decode(msg(t, "bot-output", `{"text":"a b","will_be_spoken":true,"spoken_status":"completed","output_type":"sentence"}`)))
	assert.Equal(t, Event{}, d.Decode(msg(t, "bot-tts-text", `{"text":"a b"}`)), "bot-output said it")
	assert.Equal(t, Event{Kind: Words, Text: "x", Unspoken: true}, d.Decode(msg(t, "bot-output", `{"text":"x","will_be_spoken":false,"output_type":"sentence"}`)))
	assert.Equal(t, Event{Kind: Tool, Tool: &native.ToolIntent{Tool: "f", Args: map[string]string{"n": "2", "s": "v"}}},
		d.Decode(msg(t, "llm-function-call-in-progress", `{"function_name":"f","arguments":{"n":2,"s":"v"}}`)))
	assert.Equal(t, Event{Kind: Note}, d.Decode(msg(t, "llm-function-call-in-progress", `{"tool_call_id":"1"}`)), "unnamed: a note")
	for typ, k := range map[string]Kind{"bot-ready": Ready, "bot-started-speaking": StartedSpeaking, "bot-stopped-speaking": StoppedSpeaking,
		"bot-interrupted": Interrupted, "llm-function-call-stopped": Note, "user-transcription": Note, "metrics": Drop} {
		assert.Equal(t, k, d.Decode(msg(t, typ, "")).Kind, typ)
	}
	_, ok := Parse([]byte(`{"type":"signalling"}`))
	assert.False(t, ok)
}

func TestCallerMessages(t *testing.T) {
	b, err := Encode("dtmf", "callproof-1", DTMF("1#"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"label":"rtvi-ai","type":"dtmf","id":"callproof-1","data":{"buttons":["1","#"]}}`, string(b))
	assert.Nil(t, DTMF(""))
	p, err := StartParams(&native.Start{CallID: "c", Tools: native.Tools{BaseURL: "u", Token: "t"}, CustomParameters: map[string]string{"k": "v"}})
	require.NoError(t, err)
	raw, _ := json.Marshal(p)
	assert.JSONEq(t, `{"callproofCallId":"c","toolsBaseUrl":"u","toolsToken":"t","toolsCatalog":"null","k":"v"}`, string(raw))
}
