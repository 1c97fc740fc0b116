package rtvi

import (
	"encoding/json"
	"strings"

	"github.com/callproof/callproof/callsim/twilio"
	"github.com/callproof/callproof/protocol/native"
)

// Wire facts of RTVI as pipecat-ai 1.14 speaks it.
const (
	// Label is every RTVI message's label.
	Label = "rtvi-ai"
	// Version is the protocol version client-ready announces (the 1.14
	// server's own).
	Version = "2.2.0"
	// StartType is the client-message type ("t") carrying the call's data.
	StartType = "start"
)

// Message is one RTVI message.
type Message struct {
	Label string          `json:"label"`
	Type  string          `json:"type"`
	ID    string          `json:"id,omitempty"`
	Data  json.RawMessage `json:"data,omitempty"`
}

// Encode is one RTVI message from the caller; nil data is left out.
func Encode(typ, id string, data any) ([]byte, error) {
	m := map[string]any{"label": Label, "type": typ, "id": id}
	if data != nil {
		m["data"] = data
	}
	return json.Marshal(m)
}

// Parse reads an RTVI message; ok is false for anything else.
func Parse(b []byte) (Message, bool) {
	var m Message
	if err := json.Unmarshal(b, &m); err != nil || m.Label != Label || m.Type == "" {
		return Message{}, false
	}
	return m, true
}

// ClientMessage is the data of a client-message: its type t and data d.
func ClientMessage(t string, d any) map[string]any { return map[string]any{"t": t, "d": d} }

// ClientReady is the data of client-ready.
func ClientReady() map[string]any {
	return map[string]any{"version": Version, "about": map[string]any{"library": "callproof"}}
}

// DTMF is the data of a dtmf message, one button per key; nil for no keys.
func DTMF(digits string) map[string]any {
	buttons := make([]string, 0, len(digits))
	for _, r := range digits {
		buttons = append(buttons, string(r))
	}
	if len(buttons) == 0 {
		return nil
	}
	return map[string]any{"buttons": buttons}
}

// StartParams are the call's data as flat string keys, those of Twilio's
// customParameters: the start client-message's data, and WebRTC's
// request_data.
func StartParams(s *native.Start) (map[string]string, error) {
	cat, err := json.Marshal(s.Tools.Catalog)
	if err != nil {
		return nil, err
	}
	p := map[string]string{}
	for k, v := range s.CustomParameters {
		p[k] = v
	}
	p[twilio.ParamCallID] = s.CallID
	p[twilio.ParamToolsBaseURL] = s.Tools.BaseURL
	p[twilio.ParamToolsToken] = s.Tools.Token
	p[twilio.ParamToolsCatalog] = string(cat)
	for k, v := range map[string]string{twilio.ParamCallDate: s.CallDate, twilio.ParamTimeZone: s.TimeZone,
		twilio.ParamToolsMCPURL: s.Tools.MCPURL} {
		if v != "" {
			p[k] = v
		}
	}
	return p, nil
}

// Kind is what a bot event means to a caller.
type Kind int

// The meanings of bot events.
const (
	// Drop: nothing the history needs (metrics, LLM and TTS markers,
	// audio levels, word and token outputs).
	Drop Kind = iota
	// Ready: bot-ready.
	Ready
	// StartedSpeaking, StoppedSpeaking: the bot's speaking time.
	StartedSpeaking
	StoppedSpeaking
	// Interrupted: the bot's output was cut off (a barge-in).
	Interrupted
	// Words: the bot's own words (Event.Text); Event.Unspoken when it
	// will not speak them (text mode).
	Words
	// Tool: a function call the bot runs, named, with its arguments
	// (Event.Tool).
	Tool
	// Note: an event that tells what the bot did but has no native
	// meaning (function calls by id, what it heard, errors): kept
	// verbatim.
	Note
)

// Event is one bot event's meaning.
type Event struct {
	Kind     Kind
	Text     string
	Unspoken bool
	Tool     *native.ToolIntent
}

// Decoder reads a bot's events in order. One per call.
type Decoder struct {
	sawOutput bool // bot-output arrived: bot-tts-text repeats it
}

// botOutput is the data of bot-output (RTVI 2.x).
type botOutput struct {
	Text         string `json:"text"`
	WillBeSpoken *bool  `json:"will_be_spoken"`
	SpokenStatus string `json:"spoken_status"`
	OutputType   string `json:"output_type"`
}

// functionCall is the data of llm-function-call-in-progress.
type functionCall struct {
	FunctionName string         `json:"function_name"`
	Arguments    map[string]any `json:"arguments"`
}

// Decode says what one bot message means.
func (d *Decoder) Decode(m Message) Event {
	switch m.Type {
	case "bot-ready":
		return Event{Kind: Ready}
	case "bot-started-speaking":
		return Event{Kind: StartedSpeaking}
	case "bot-stopped-speaking":
		return Event{Kind: StoppedSpeaking}
	case "bot-interrupted":
		return Event{Kind: Interrupted}
	case "bot-output":
		var o botOutput
		if json.Unmarshal(m.Data, &o) != nil || o.OutputType == "word" || o.OutputType == "token" {
			return Event{}
		}
		d.sawOutput = true
		text := strings.TrimSpace(o.Text)
		if o.WillBeSpoken != nil && !*o.WillBeSpoken {
			return Event{Kind: Words, Text: text, Unspoken: true}
		}
		// Spoken text: once, when its segment is spoken in full.
		if o.SpokenStatus == "" || o.SpokenStatus == "completed" {
			return Event{Kind: Words, Text: text}
		}
		return Event{}
	case "bot-tts-text":
		// The older event of the same words: read only from a bot that
		// sends no bot-output.
		var t struct {
			Text string `json:"text"`
		}
		if d.sawOutput || json.Unmarshal(m.Data, &t) != nil {
			return Event{}
		}
		return Event{Kind: Words, Text: strings.TrimSpace(t.Text)}
	case "llm-function-call-in-progress":
		var f functionCall
		if json.Unmarshal(m.Data, &f) != nil || f.FunctionName == "" {
			return Event{Kind: Note}
		}
		args := make(map[string]string, len(f.Arguments))
		for k, v := range f.Arguments {
			if s, ok := v.(string); ok {
				args[k] = s
			} else if b, err := json.Marshal(v); err == nil {
				args[k] = string(b)
			}
		}
		return Event{Kind: Tool, Tool: &native.ToolIntent{Tool: f.FunctionName, Args: args}}
	case "llm-function-call-started", "llm-function-call-stopped", "user-transcription", "user-input",
		"error", "error-response", "server-message":
		return Event{Kind: Note}
	}
	return Event{}
}
