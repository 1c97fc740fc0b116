package livekit

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/livekit/protocol/auth"
	"github.com/livekit/protocol/livekit"
	"github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"
	pion "github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/callsim/livekit/lkserver"
	"github.com/callproof/callproof/protocol/native"
)

// toneSpeech is the caller's voice in these tests: a tone as long as the
// text has words.
type toneSpeech struct{}

func (toneSpeech) Speech(_ context.Context, text string) (audio.PCM, error) {
	return audio.Tone(440, time.Duration(len(strings.Fields(text)))*300*time.Millisecond, -12), nil
}

// fakeAgent is a Go participant standing in for a LiveKit agent: it joins
// the room it is dispatched into as an agent, publishes PCMU, says its
// words as a tone with their lk.transcription stream, then leaves.
type fakeAgent struct {
	server   *lkserver.Server
	words    string
	leave    bool                   // leave the room after speaking
	metadata chan string            // the job metadata it was dispatched with
	attrs    chan map[string]string // the caller's attributes it saw
}

func (a *fakeAgent) dispatch(_ context.Context, room, metadata string) error {
	a.metadata <- metadata
	go a.run(room)
	return nil
}

func (a *fakeAgent) run(room string) {
	// An agent's token: it may set its own attributes (lk.agent.state).
	grant := &auth.VideoGrant{RoomJoin: true, Room: room}
	grant.SetCanUpdateOwnMetadata(true)
	token, err := auth.NewAccessToken(lkserver.APIKey, lkserver.APISecret).SetIdentity("agent-fake").
		SetKind(livekit.ParticipantInfo_AGENT).SetVideoGrant(grant).ToJWT()
	if err != nil {
		return
	}
	r, err := lksdk.ConnectToRoomWithToken(a.server.URL, token, lksdk.NewRoomCallback(), lksdk.WithLogger(logger.GetDiscardLogger()))
	if err != nil {
		return
	}
	defer r.Disconnect()
	track, err := lksdk.NewLocalSampleTrack(pion.RTPCodecCapability{MimeType: pion.MimeTypePCMU, ClockRate: 8000, Channels: 1})
	if err != nil {
		return
	}
	if _, err := r.LocalParticipant.PublishTrack(track, &lksdk.TrackPublicationOptions{Name: "agent"}); err != nil {
		return
	}
	for range 100 {
		if p := r.GetParticipantByIdentity(CallerIdentity); p != nil {
			a.attrs <- p.Attributes()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.LocalParticipant.SetAttributes(map[string]string{AttrAgentState: "speaking"})
	silence := audio.EncodeMulaw(make(audio.PCM, audio.FrameSamples))
	tick := time.NewTicker(audio.FrameDuration)
	defer tick.Stop()
	send := func(frames [][]byte) {
		for _, f := range frames {
			<-tick.C
			_ = track.WriteSample(media.Sample{Data: f, Duration: audio.FrameDuration}, nil)
		}
	}
	quiet := make([][]byte, 25)
	for i := range quiet {
		quiet[i] = silence
	}
	send(quiet)
	send(audio.MulawFrames(audio.Tone(300, time.Second, -10)))
	r.LocalParticipant.SendText(a.words, lksdk.StreamTextOptions{Topic: TopicTranscription})
	send(quiet)
	send(quiet)
	r.LocalParticipant.SetAttributes(map[string]string{AttrAgentState: "listening"})
	if !a.leave {
		time.Sleep(5 * time.Second)
	}
}

func newAgent(s *lkserver.Server, words string, leave bool) *fakeAgent {
	return &fakeAgent{server: s, words: words, leave: leave, metadata: make(chan string, 1), attrs: make(chan map[string]string, 1)}
}

func transport(s *lkserver.Server, d Dispatcher) *Transport {
	tr := &Transport{APIKey: lkserver.APIKey, APISecret: lkserver.APISecret, Dispatch: d, JoinTimeout: 10 * time.Second}
	tr.Speech = toneSpeech{}
	return tr
}

func start(id string) native.Message {
	return native.Message{Event: native.EventStart, Start: &native.Start{CallID: id, TimeScale: 1,
		Tools:            native.Tools{BaseURL: "http://127.0.0.1:1/tools", Token: "tok", MCPURL: "http://127.0.0.1:1/mcp"},
		CustomParameters: map[string]string{"tier": "gold"}, CallDate: "2026-12-07", TimeZone: "Europe/Paris"}}
}

// One call: the agent is dispatched with the call's data, sees it in the
// caller's attributes, its audio becomes an utterance carrying its
// transcription's words, its state is recorded, and its leaving is the
// hang-up.
func TestCallWithAGoAgent(t *testing.T) {
	if !lkserver.InNamespace(t) {
		return
	}
	s := lkserver.Start(t)
	agent := newAgent(s, "your table is booked", true)
	tr := transport(s, agent.dispatch).ForCall(callSetup("c1")).(*Transport)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := tr.Dial(ctx, s.URL)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.Send(ctx, start("c1")))
	var md native.Start
	require.NoError(t, json.Unmarshal([]byte(<-agent.metadata), &md))
	assert.Equal(t, "c1", md.CallID)
	assert.Equal(t, "tok", md.Tools.Token)
	attrs := <-agent.attrs
	assert.Equal(t, "http://127.0.0.1:1/tools", attrs[AttrToolsURL])
	assert.Equal(t, "gold", attrs[AttrParamPrefix+"tier"])
	var events []string
	var text string
	for {
		f, err := conn.Recv(ctx)
		if err != nil {
			break
		}
		m := f.Message
		ev := m.Event
		if m.AgentSpeech != nil {
			ev += "." + m.AgentSpeech.Phase
			if m.AgentSpeech.Phase == native.PhaseText {
				text = m.AgentSpeech.Text
			}
		}
		events = append(events, ev)
		if m.Event == native.EventHangup {
			assert.Equal(t, ReasonAgentLeft, m.Hangup.Reason)
			break
		}
	}
	assert.Equal(t, "your table is booked", text, "events %v", events)
	assert.Contains(t, events, EventAgentState)
	assert.Contains(t, events, native.EventAgentSpeech+"."+native.PhaseStart)
	assert.Equal(t, native.EventHangup, events[len(events)-1])
}

// An agent that is never dispatched ends the start, naming the step.
func TestAgentNeverJoins(t *testing.T) {
	if !lkserver.InNamespace(t) {
		return
	}
	s := lkserver.Start(t)
	tr := transport(s, func(context.Context, string, string) error { return nil })
	tr.JoinTimeout = 2 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := tr.Dial(ctx, s.URL)
	require.NoError(t, err)
	defer conn.Close()
	err = conn.Send(ctx, start("c2"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no agent joined room "+RoomPrefix)
	assert.Contains(t, err.Error(), "the server's automatic dispatch brought no agent")
	assert.Contains(t, err.Error(), NoAgentBusy)
}

// The "no agent joined" reason names the agent dispatched by name, and a
// busy worker as a reason it may not have been.
func TestNoAgentWhy(t *testing.T) {
	why := noAgentWhy("callproof-stock")
	assert.Contains(t, why, `no worker registered as agent "callproof-stock" took the job`)
	assert.Contains(t, why, "load of 1")
	assert.Contains(t, noAgentWhy(""), "automatic dispatch")
}

// A server that is down fails the dial (and the probe).
func TestServerDown(t *testing.T) {
	tr := transport(nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := tr.Dial(ctx, "ws://127.0.0.1:1")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "livekit: the server at ws://127.0.0.1:1")
}

func callSetup(id string) callsim.CallSetup { return callsim.CallSetup{ID: id} }
