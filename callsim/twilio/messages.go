package twilio

import (
	"crypto/sha256"
	"encoding/hex"
)

// Frames as Twilio Media Streams sends them to a bot (DESIGN.md §4):
// every counter is a decimal string, the media format's rate and channel
// count are numbers, and each frame after connected names the stream.

type connectedMsg struct {
	Event    string `json:"event"`
	Protocol string `json:"protocol"`
	Version  string `json:"version"`
}

type startMsg struct {
	Event          string    `json:"event"`
	SequenceNumber string    `json:"sequenceNumber"`
	Start          startBody `json:"start"`
	StreamSid      string    `json:"streamSid"`
}

type startBody struct {
	AccountSid       string            `json:"accountSid"`
	StreamSid        string            `json:"streamSid"`
	CallSid          string            `json:"callSid"`
	Tracks           []string          `json:"tracks"`
	CustomParameters map[string]string `json:"customParameters"`
	MediaFormat      mediaFormat       `json:"mediaFormat"`
}

type mediaFormat struct {
	Encoding   string `json:"encoding"`
	SampleRate int    `json:"sampleRate"`
	Channels   int    `json:"channels"`
}

type mediaMsg struct {
	Event          string    `json:"event"`
	SequenceNumber string    `json:"sequenceNumber"`
	Media          mediaBody `json:"media"`
	StreamSid      string    `json:"streamSid"`
}

type mediaBody struct {
	Track     string `json:"track"`
	Chunk     string `json:"chunk"`
	Timestamp string `json:"timestamp"`
	Payload   string `json:"payload"`
}

type dtmfMsg struct {
	Event          string   `json:"event"`
	StreamSid      string   `json:"streamSid"`
	SequenceNumber string   `json:"sequenceNumber"`
	DTMF           dtmfBody `json:"dtmf"`
}

type dtmfBody struct {
	Track string `json:"track"`
	Digit string `json:"digit"`
}

type markMsg struct {
	Event          string   `json:"event"`
	SequenceNumber string   `json:"sequenceNumber,omitempty"`
	StreamSid      string   `json:"streamSid"`
	Mark           markBody `json:"mark"`
}

type markBody struct {
	Name string `json:"name"`
}

type stopMsg struct {
	Event          string   `json:"event"`
	SequenceNumber string   `json:"sequenceNumber"`
	StreamSid      string   `json:"streamSid"`
	Stop           stopBody `json:"stop"`
}

type stopBody struct {
	AccountSid string `json:"accountSid"`
	CallSid    string `json:"callSid"`
}

// inbound is every frame a bot may send: media (any length of μ-law,
// base64), mark, clear. Unknown events are recorded, not refused.
type inbound struct {
	Event     string `json:"event"`
	StreamSid string `json:"streamSid"`
	Media     *struct {
		Payload string `json:"payload"`
	} `json:"media"`
	Mark       *markBody `json:"mark"`
	Transcript *struct {
		Text string `json:"text"`
	} `json:"transcript"`
}

// EventTranscript is callproof's one extension to the dialect: an agent
// that knows its own words may send them after an utterance's audio,
// {"event":"transcript","streamSid":…,"transcript":{"text":…}}; the
// caller then takes them instead of recognizing the audio. Twilio never
// sends or expects it.
const EventTranscript = "transcript"

// Values fixed by the Twilio dialect.
const (
	Protocol      = "Call"
	Version       = "1.0.0"
	Encoding      = "audio/x-mulaw"
	TrackInbound  = "inbound"
	TrackDTMF     = "inbound_track"
	EventConnect  = "connected"
	EventStart    = "start"
	EventMedia    = "media"
	EventDTMF     = "dtmf"
	EventMark     = "mark"
	EventStop     = "stop"
	EventClear    = "clear"
	AccountPrefix = "AC"
	CallPrefix    = "CA"
	StreamPrefix  = "MZ"
)

// sid makes a Twilio-shaped id (two letters, 32 hex digits) from the call
// id, so a rerun of a call carries the same ids.
func sid(prefix, callID string) string {
	h := sha256.Sum256([]byte(prefix + "\x00" + callID))
	return prefix + hex.EncodeToString(h[:16])
}
