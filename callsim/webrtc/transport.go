package webrtc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	pion "github.com/pion/webrtc/v4"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audiocall"
	"github.com/callproof/callproof/callsim/internal/rtvi"
	"github.com/callproof/callproof/callsim/twilio"
	"github.com/callproof/callproof/internal/rtcpeer"
	"github.com/callproof/callproof/protocol/native"
)

// Defaults for Transport.
const (
	// DefaultMaxFrameBytes bounds one data-channel message from the agent
	// until the simulator sets its own limit.
	DefaultMaxFrameBytes = 1 << 20
	// DefaultMaxAhead bounds the agent audio waiting to be played: a
	// WebRTC peer sends in real time, so more than this is a flood.
	DefaultMaxAhead = 10 * time.Second
	// PingEvery is the caller's data-channel keepalive period.
	PingEvery = time.Second
	// Label is the data channel's label, as Pipecat's client names it.
	Label = "chat"
	// SignallingType is the type of SmallWebRTC's own data-channel
	// messages, {"type":"signalling","message":{"type":…}}.
	SignallingType = "signalling"
	// PeerLeft is the signalling message a Pipecat bot sends as it ends
	// the call.
	PeerLeft = "peerLeft"
	// ReasonPeerLeft is the agent's hang-up when it sends peerLeft before
	// the caller's stop.
	ReasonPeerLeft = "the agent left the call (peerLeft)"
	// ReasonClosedCleanly is the agent's hang-up when it closes the
	// connection (data channel or DTLS, not a failure) after the caller's
	// start and before its stop, without peerLeft.
	ReasonClosedCleanly = "the agent closed the connection cleanly"
	// RTVILinger is how long the caller, its script done, stays on the
	// line for an RTVI bot (one that sent bot-ready: Pipecat) to leave
	// first: Pipecat's output transport plays 2 s of silence
	// (audio_out_end_silence_secs) after its pipeline ends, then sends
	// peerLeft; the caller's quiet period is shorter.
	RTVILinger = 3 * time.Second
)

// Transport dials agents over WebRTC. Speech (in Config) is required; the
// rest have defaults.
type Transport struct {
	audiocall.Config

	// Signaling is SignalingSmallWebRTC (the default), SignalingWHIP or
	// SignalingPipecatStart.
	Signaling string
	// Signaler, when set, makes each call's signaling instead (another
	// server's API; tests).
	Signaler func(agentURL, callID string) Signaler
	// Trickle sends the offer before candidate gathering ends and the
	// candidates after it; without it the offer carries them all.
	Trickle bool
	// HTTPClient makes the signaling requests; nil: a client without
	// proxies.
	HTTPClient *http.Client
	// AnyAddress lets candidates use every interface; by default they are
	// kept to loopback, where the harness's agents are.
	AnyAddress bool

	MaxFrameBytes int64         // until SetFrameLimit
	MaxAhead      time.Duration // 0: DefaultMaxAhead

	// Per call (see ForCall): CallID names the call to the agent;
	// RecordDir, when set, holds one recording per call; HearingFor
	// builds the call's recognizer from its catalogue and records.
	// CallID, the calendar, Access and CustomParameters are the call's
	// data, sent as SmallWebRTC's request_data.
	CallID           string
	CallDate         string
	TimeZone         string
	Access           native.Tools
	CustomParameters map[string]string
	RecordDir        string
	HearingFor       func(c callsim.CallSetup) audiocall.Hearer

	apiOnce sync.Once
	api     *pion.API
	apiErr  error
}

var (
	_ callsim.Transport = (*Transport)(nil)
	_ callsim.PerCall   = (*Transport)(nil)
)

// ForCall returns a transport set up for one call: its id, its recording
// in RecordDir, its recognizer from HearingFor, its own noise seed.
func (t *Transport) ForCall(c callsim.CallSetup) callsim.Transport {
	api, err := t.pionAPI()
	cp := &Transport{Config: t.Config, Signaling: t.Signaling, Signaler: t.Signaler, Trickle: t.Trickle,
		HTTPClient: t.HTTPClient, AnyAddress: t.AnyAddress, MaxFrameBytes: t.MaxFrameBytes, MaxAhead: t.MaxAhead,
		CallID: c.ID, CallDate: c.CallDate, TimeZone: c.TimeZone, Access: c.Access, CustomParameters: c.CustomParameters,
		RecordDir: t.RecordDir, HearingFor: t.HearingFor}
	// One pion API for every call of the run.
	cp.apiOnce.Do(func() { cp.api, cp.apiErr = api, err })
	if t.RecordDir != "" {
		cp.RecordTo = filepath.Join(t.RecordDir, twilio.RecordingName(c.ID))
	}
	if t.HearingFor != nil {
		cp.Hearing = t.HearingFor(c)
	}
	cp.Seed = twilio.CallSeed(t.Seed, c.ID)
	return cp
}

func (t *Transport) pionAPI() (*pion.API, error) {
	t.apiOnce.Do(func() { t.api, t.apiErr = rtcpeer.NewAPI(rtcpeer.Options{LoopbackOnly: !t.AnyAddress}) })
	return t.api, t.apiErr
}

func (t *Transport) signaler(agentURL string) (Signaler, error) {
	if t.Signaler != nil {
		return t.Signaler(agentURL, t.CallID), nil
	}
	client := t.HTTPClient
	if client == nil {
		client = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	}
	if err := CheckSignaling(t.Signaling); err != nil {
		return nil, fmt.Errorf("webrtc: %w", err)
	}
	if t.Signaling == SignalingWHIP {
		return &whip{client: client, url: agentURL}, nil
	}
	data, err := rtvi.StartParams(t.start())
	if err != nil {
		return nil, fmt.Errorf("webrtc: %w", err)
	}
	sw := smallWebRTC{client: client, url: agentURL, data: data}
	if t.Signaling == SignalingPipecatStart {
		return &pipecatStart{smallWebRTC: sw, start: agentURL}, nil
	}
	return &sw, nil
}

// start is the call's data as its native start would carry it.
func (t *Transport) start() *native.Start {
	return &native.Start{CallID: t.CallID, Tools: t.Access, CustomParameters: t.CustomParameters,
		CallDate: t.CallDate, TimeZone: t.TimeZone}
}

// Dial offers a call to the agent and returns once ICE is connected, DTLS
// is done and the data channel is open; ctx bounds all of it. Any failure
// tears the peer connection down and says which step failed.
func (t *Transport) Dial(ctx context.Context, agentURL string) (callsim.Conn, error) {
	if t.Speech == nil {
		return nil, errors.New("webrtc: no caller voice (Transport.Speech)")
	}
	sig, err := t.signaler(agentURL)
	if err != nil {
		return nil, err
	}
	api, err := t.pionAPI()
	if err != nil {
		return nil, err
	}
	pc, err := api.NewPeerConnection(pion.Configuration{})
	if err != nil {
		return nil, fmt.Errorf("webrtc: %w", err)
	}
	c := newConn(t, pc, sig)
	if err := c.connect(ctx); err != nil {
		_ = pc.Close()
		c.stopWatchers()
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			err = fmt.Errorf("%w (%s)", err, c.stage())
		}
		return nil, err
	}
	return c, nil
}
