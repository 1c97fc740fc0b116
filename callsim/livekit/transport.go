package livekit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/livekit/protocol/livekit"
	"github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audiocall"
	"github.com/callproof/callproof/callsim/twilio"
	"github.com/callproof/callproof/protocol/native"
)

// Defaults and names of the LiveKit dialect.
const (
	// DefaultJoinTimeout bounds, once the call starts, the wait for the
	// agent to join the room and publish its audio track.
	DefaultJoinTimeout = 20 * time.Second
	// DefaultMaxAhead bounds the agent audio waiting to be played: the
	// agent publishes in real time, so more than this is a flood.
	DefaultMaxAhead = 10 * time.Second
	// RoomPrefix starts the name of each call's room; the call id ends it.
	RoomPrefix = "callproof-"
	// CallerIdentity is the caller's participant identity in the room.
	CallerIdentity = "callproof-caller"
	// TopicTranscription is the text-stream topic an agent publishes
	// its words on.
	TopicTranscription = "lk.transcription"
	// AttrAgentState is the agent's participant attribute holding its
	// state (listening, thinking, speaking).
	AttrAgentState = "lk.agent.state"
	// AttrTranscribedTrack is set on a transcription stream of the
	// caller's own speech (the agent's STT of it): not the agent's words.
	AttrTranscribedTrack = "lk.transcribed_track_id"
	// The caller's participant attributes carrying the call's data.
	AttrCallID   = "callproof.call_id"
	AttrToolsURL = "callproof.tools_url"
	AttrMCPURL   = "callproof.mcp_url"
	AttrToken    = "callproof.token"
	AttrCallDate = "callproof.call_date"
	AttrTimeZone = "callproof.time_zone"
	AttrCatalog  = "callproof.catalog"
	// AttrParamPrefix starts the attribute of each custom parameter.
	AttrParamPrefix = "callproof.param."
	// HangupTimeout bounds deleting the room at the end of a call.
	HangupTimeout = 2 * time.Second
	// EnvURL, EnvAPIKey and EnvAPISecret are where LiveKit's own tools
	// read the server and its credentials.
	EnvURL       = "LIVEKIT_URL"
	EnvAPIKey    = "LIVEKIT_API_KEY"
	EnvAPISecret = "LIVEKIT_API_SECRET"
)

// Dispatcher puts an agent into a call's room; a test's stands in for the
// server's agent dispatch.
type Dispatcher func(ctx context.Context, room, metadata string) error

// Transport calls an agent in a LiveKit room. Speech (in Config), APIKey
// and APISecret are required; the rest have defaults.
type Transport struct {
	audiocall.Config

	APIKey    string
	APISecret string
	// AgentName, when set, dispatches that agent explicitly into each
	// room; empty: the server dispatches its automatic agents when the
	// room is created.
	AgentName string
	// Dispatch, when set, replaces the server's dispatch (tests).
	Dispatch Dispatcher

	JoinTimeout time.Duration // 0: DefaultJoinTimeout
	MaxAhead    time.Duration // 0: DefaultMaxAhead

	// Per call (see ForCall).
	CallID     string
	RecordDir  string
	HearingFor func(c callsim.CallSetup) audiocall.Hearer
}

var (
	_ callsim.Transport = (*Transport)(nil)
	_ callsim.PerCall   = (*Transport)(nil)
	_ callsim.Prober    = (*Transport)(nil)
)

// ForCall returns a transport set up for one call: its id, its recording
// in RecordDir, its recognizer from HearingFor, its own noise seed.
func (t *Transport) ForCall(c callsim.CallSetup) callsim.Transport {
	cp := *t
	cp.CallID = c.ID
	if t.RecordDir != "" {
		cp.RecordTo = filepath.Join(t.RecordDir, twilio.RecordingName(c.ID))
	}
	if t.HearingFor != nil {
		cp.Hearing = t.HearingFor(c)
	}
	cp.Seed = twilio.CallSeed(t.Seed, c.ID)
	return &cp
}

// httpURL is the server's API address for a ws(s):// or http(s):// URL.
func httpURL(server string) (string, error) {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("livekit: server URL %q: want ws://host:port or http://host:port", server)
	}
	switch u.Scheme {
	case "ws", "http":
		u.Scheme = "http"
	case "wss", "https":
		u.Scheme = "https"
	default:
		return "", fmt.Errorf("livekit: server URL %q: want ws://host:port or http://host:port", server)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u.String(), nil
}

// Probe asks the server for its rooms with the transport's credentials:
// it fails when nothing answers or the key is refused.
func (t *Transport) Probe(ctx context.Context, server string) error {
	api, err := httpURL(server)
	if err != nil {
		return err
	}
	rs := lksdk.NewRoomServiceClient(api, t.APIKey, t.APISecret)
	if _, err := rs.ListRooms(ctx, &livekit.ListRoomsRequest{Names: []string{RoomPrefix + "probe"}}); err != nil {
		return fmt.Errorf("livekit: the server at %s: %w", server, err)
	}
	return nil
}

// Dial checks the server answers and returns the call; the room is made,
// the agent dispatched and the caller joined when the call starts (its
// start message carries the tools the agent is told of).
func (t *Transport) Dial(ctx context.Context, server string) (callsim.Conn, error) {
	if t.Speech == nil {
		return nil, errors.New("livekit: no caller voice (Transport.Speech)")
	}
	if t.APIKey == "" || t.APISecret == "" {
		return nil, fmt.Errorf("livekit: no API key and secret (%s, %s)", EnvAPIKey, EnvAPISecret)
	}
	if err := t.Probe(ctx, server); err != nil {
		return nil, err
	}
	api, _ := httpURL(server)
	return newConn(t, server, api), nil
}

// callData is the call's data as the agent reads it from the job
// metadata (and the room's): the native start message's fields.
func callData(st native.Start) string {
	st.TimeScale = 1
	b, _ := json.Marshal(st)
	return string(b)
}

// callAttributes is the call's data as the caller's participant
// attributes.
func callAttributes(st native.Start) map[string]string {
	a := map[string]string{AttrCallID: st.CallID, AttrToolsURL: st.Tools.BaseURL, AttrToken: st.Tools.Token}
	if st.Tools.MCPURL != "" {
		a[AttrMCPURL] = st.Tools.MCPURL
	}
	if st.CallDate != "" {
		a[AttrCallDate] = st.CallDate
	}
	if st.TimeZone != "" {
		a[AttrTimeZone] = st.TimeZone
	}
	if st.Tools.Catalog != nil {
		b, _ := json.Marshal(st.Tools.Catalog)
		a[AttrCatalog] = string(b)
	}
	for k, v := range st.CustomParameters {
		a[AttrParamPrefix+k] = v
	}
	return a
}

// QuietSDK silences the LiveKit SDK's process-wide logger, which prints
// every WebRTC state change of every call. It is the SDK's own global:
// the process that owns stderr (the CLI, a test's main) decides.
func QuietSDK() { lksdk.SetLogger(logger.GetDiscardLogger()) }
