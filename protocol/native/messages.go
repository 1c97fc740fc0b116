package native

import "github.com/callproof/callproof/trace"

// Event names, caller to agent.
const (
	EventStart  = "start"  // first frame: call id, tools, time scale
	EventSpeech = "speech" // caller speech: onset, partial, final
	EventSound  = "sound"  // non-speech sound: onset, offset
	EventDTMF   = "dtmf"   // keypad digit(s)
	EventStop   = "stop"   // last frame: the caller hung up or the call ended
)

// Event names, agent to caller.
const (
	EventAck         = "ack"          // agent accepts start (and the time scale it will use)
	EventAgentSpeech = "agent_speech" // agent speech: start, text, end
	EventClear       = "clear"        // agent stopped speaking for a barge-in
	EventToolIntent  = "tool_intent"  // agent started preparing a tool call
	EventState       = "state"        // self-report of the agent's working state
	EventHangup      = "hangup"       // agent ends the call
	EventTransfer    = "transfer"     // agent hands the call to someone else
)

// Speech and sound phases.
const (
	PhaseOnset   = "onset"
	PhasePartial = "partial"
	PhaseFinal   = "final"
	PhaseOffset  = "offset"
	PhaseStart   = "start"
	PhaseText    = "text"
	PhaseEnd     = "end"
)

// Message is every frame of the protocol. Event says which one it is and
// which one of the payload fields is set.
type Message struct {
	Event          string `json:"event"`
	SequenceNumber string `json:"sequenceNumber,omitempty"`

	Start       *Start       `json:"start,omitempty"`
	Speech      *Speech      `json:"speech,omitempty"`
	Sound       *Sound       `json:"sound,omitempty"`
	DTMF        *DTMF        `json:"dtmf,omitempty"`
	Stop        *Stop        `json:"stop,omitempty"`
	Ack         *Ack         `json:"ack,omitempty"`
	AgentSpeech *AgentSpeech `json:"agentSpeech,omitempty"`
	Clear       *Clear       `json:"clear,omitempty"`
	ToolIntent  *ToolIntent  `json:"toolIntent,omitempty"`
	State       *State       `json:"state,omitempty"`
	Hangup      *Hangup      `json:"hangup,omitempty"`
	Transfer    *Transfer    `json:"transfer,omitempty"`
}

// Start opens the call.
type Start struct {
	CallID           string            `json:"callId"`
	Tools            Tools             `json:"tools"`
	TimeScale        float64           `json:"timeScale"`
	CustomParameters map[string]string `json:"customParameters,omitempty"`
	// CallDate (YYYY-MM-DD) and TimeZone (IANA name) are the call's
	// calendar: "tomorrow" is the day after CallDate in TimeZone.
	CallDate string `json:"callDate,omitempty"`
	TimeZone string `json:"timeZone,omitempty"`
}

// Tools tells the agent where its tools are for this call.
type Tools struct {
	BaseURL string           `json:"baseUrl"` // POST {baseUrl}/{tool} with a JSON object of arguments
	Token   string           `json:"token"`   // Authorization: Bearer <token>
	Catalog []trace.ToolSpec `json:"catalog"`
	// MCPURL is the same tools as an MCP server (streamable HTTP, same
	// token); empty when the backend serves none.
	MCPURL string `json:"mcpUrl,omitempty"`
}

// Speech is caller speech. ID ties onset, partials and final together.
type Speech struct {
	ID    string `json:"id"`
	Phase string `json:"phase"`
	Text  string `json:"text,omitempty"`
}

// Sound is a non-speech sound the caller side makes (cough, door, tv).
type Sound struct {
	ID    string `json:"id"`
	Phase string `json:"phase"`
	Kind  string `json:"kind,omitempty"`
}

// DTMF is keypad input.
type DTMF struct {
	Digits string `json:"digits"`
}

// Stop ends the call.
type Stop struct {
	Reason string `json:"reason,omitempty"`
}

// Ack answers start. TimeScale is the scale the agent will run at; an
// agent that omits it (or sends no ack) is run at 1.0. ToolIntents says
// the agent sends tool_intent before each tool job it starts: a step
// triggered on agent.tool_intent then waits for it, with no fallback.
type Ack struct {
	TimeScale   float64 `json:"timeScale,omitempty"`
	Agent       string  `json:"agent,omitempty"`
	ToolIntents bool    `json:"toolIntents,omitempty"`
}

// AgentSpeech is one agent utterance: start, then text (the words so far or
// all of them), then end. Its speaking time runs from start to end or clear.
type AgentSpeech struct {
	ID    string `json:"id"`
	Phase string `json:"phase"`
	Text  string `json:"text,omitempty"`
}

// Clear says the agent stopped the utterance ID for a barge-in.
type Clear struct {
	ID string `json:"id,omitempty"`
}

// ToolIntent says the agent started preparing a tool call.
type ToolIntent struct {
	Tool string            `json:"tool"`
	Args map[string]string `json:"args,omitempty"`
}

// State is the agent's self-report: its slot values and their version.
type State struct {
	Version int               `json:"version"`
	Slots   map[string]string `json:"slots"`
	Pending string            `json:"pending,omitempty"`
}

// Hangup ends the call from the agent's side.
type Hangup struct {
	Reason string `json:"reason,omitempty"`
}

// Transfer hands the call over.
type Transfer struct {
	To string `json:"to,omitempty"`
}

// Tool request headers.
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderStateVersion   = "X-State-Version" // the slot version the call was built from
)
