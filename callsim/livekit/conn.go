package livekit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/livekit/protocol/livekit"
	"github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"
	"github.com/pion/opus"
	pion "github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/callsim/audiocall"
	"github.com/callproof/callproof/protocol/native"
)

// ReasonAgentLeft is the hang-up reason when the agent leaves the room:
// LiveKit has no hang-up message, an agent ends the call by leaving.
const ReasonAgentLeft = "agent left the room"

// Conn is one call in a LiveKit room, seen by the simulator as native
// messages (audiocall.Call).
type Conn struct {
	*audiocall.Call
	t      *Transport
	server string // the signaling URL
	api    string // the server API's URL
	room   string

	mu     sync.Mutex // below
	lkRoom *lksdk.Room
	track  *lksdk.LocalTrack
	agent  string // the agent's identity, once its audio is subscribed

	agentAudio chan struct{} // closed when the agent's audio track is subscribed
	audioOnce  sync.Once
	joined     chan struct{} // closed when another participant joins
	joinOnce   sync.Once

	failed   chan error // the first reason the call ended
	failOnce sync.Once
	left     chan struct{} // the agent left the room
	leftOnce sync.Once
	quit     chan struct{}
	quitOnce sync.Once
	watchers sync.WaitGroup
}

var (
	_ callsim.Voice     = (*Conn)(nil)
	_ callsim.Flusher   = (*Conn)(nil)
	_ callsim.Pacer     = (*Conn)(nil)
	_ callsim.TurnTaker = (*Conn)(nil)
	_ callsim.Stretcher = (*Conn)(nil)
	_ audiocall.Wire    = (*Conn)(nil)
)

func newConn(t *Transport, server, api string) *Conn {
	c := &Conn{t: t, server: server, api: api, room: RoomPrefix + t.CallID,
		agentAudio: make(chan struct{}), joined: make(chan struct{}),
		failed: make(chan error, 1), left: make(chan struct{}), quit: make(chan struct{})}
	if t.CallID == "" {
		c.room = RoomPrefix + fmt.Sprintf("%d", time.Now().UnixNano())
	}
	cfg := t.Config
	cfg.MaxQueuedAudio = t.MaxAhead
	if cfg.MaxQueuedAudio <= 0 {
		cfg.MaxQueuedAudio = DefaultMaxAhead
	}
	c.Call = audiocall.New(cfg, c, c.reader)
	return c
}

// Room is the call's room name.
func (c *Conn) Room() string { return c.room }

func (c *Conn) fail(err error) { c.failOnce.Do(func() { c.failed <- err }) }

// watch runs f until the call is over; Close waits for it.
func (c *Conn) watch(f func()) {
	c.watchers.Add(1)
	go func() {
		defer c.watchers.Done()
		f()
	}()
}

// start makes the room with the call's data, dispatches the agent, joins
// as the caller, publishes the caller's track and waits for the agent's;
// each failure names its step.
func (c *Conn) start(ctx context.Context, st native.Start) error {
	wait := c.t.JoinTimeout
	if wait <= 0 {
		wait = DefaultJoinTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	data := callData(st)
	rs := lksdk.NewRoomServiceClient(c.api, c.t.APIKey, c.t.APISecret)
	if _, err := rs.CreateRoom(ctx, &livekit.CreateRoomRequest{Name: c.room, Metadata: data, EmptyTimeout: 30}); err != nil {
		return fmt.Errorf("livekit: creating room %s: %w", c.room, err)
	}
	switch {
	case c.t.Dispatch != nil:
		if err := c.t.Dispatch(ctx, c.room, data); err != nil {
			return fmt.Errorf("livekit: dispatching the agent into %s: %w", c.room, err)
		}
	case c.t.AgentName != "":
		ds := lksdk.NewAgentDispatchServiceClient(c.api, c.t.APIKey, c.t.APISecret)
		if _, err := ds.CreateDispatch(ctx, &livekit.CreateAgentDispatchRequest{Room: c.room, AgentName: c.t.AgentName, Metadata: data}); err != nil {
			return fmt.Errorf("livekit: dispatching agent %q into %s: %w", c.t.AgentName, c.room, err)
		}
	}
	cb := lksdk.NewRoomCallback()
	cb.OnParticipantConnected = func(*lksdk.RemoteParticipant) { c.joinOnce.Do(func() { close(c.joined) }) }
	cb.OnParticipantDisconnected = c.participantLeft
	cb.OnDisconnected = func() { c.fail(errors.New("livekit: disconnected from the server")) }
	cb.OnTrackSubscribed = c.trackSubscribed
	cb.OnAttributesChanged = c.attributesChanged
	room := lksdk.NewRoom(cb)
	// The SDK logs every WebRTC state change; the call's trace says what
	// matters.
	room.SetLogger(logger.GetDiscardLogger())
	if err := room.RegisterTextStreamHandler(TopicTranscription, c.transcription); err != nil {
		return fmt.Errorf("livekit: %w", err)
	}
	info := lksdk.ConnectInfo{APIKey: c.t.APIKey, APISecret: c.t.APISecret, RoomName: c.room,
		ParticipantIdentity: CallerIdentity, ParticipantName: "caller", ParticipantAttributes: callAttributes(st)}
	if err := room.JoinWithContext(ctx, c.server, info, lksdk.WithAutoSubscribe(true), lksdk.WithLogger(logger.GetDiscardLogger())); err != nil {
		return fmt.Errorf("livekit: joining room %s: %w", c.room, err)
	}
	c.mu.Lock()
	c.lkRoom = room
	c.mu.Unlock()
	if len(room.GetRemoteParticipants()) > 0 {
		c.joinOnce.Do(func() { close(c.joined) })
	}
	track, err := lksdk.NewLocalSampleTrack(pion.RTPCodecCapability{MimeType: pion.MimeTypePCMU, ClockRate: 8000, Channels: 1})
	if err != nil {
		return fmt.Errorf("livekit: %w", err)
	}
	if _, err := room.LocalParticipant.PublishTrack(track, &lksdk.TrackPublicationOptions{Name: "caller", Source: livekit.TrackSource_MICROPHONE}); err != nil {
		return fmt.Errorf("livekit: publishing the caller's track: %w", err)
	}
	c.mu.Lock()
	c.track = track
	c.mu.Unlock()
	select {
	case <-c.agentAudio:
		return nil
	case err := <-c.failed:
		c.fail(err)
		return err
	case <-ctx.Done():
	}
	select {
	case <-c.joined:
		return fmt.Errorf("livekit: the agent joined room %s but published no audio track within %s", c.room, wait)
	default:
		return fmt.Errorf("livekit: no agent joined room %s within %s: %s", c.room, wait, noAgentWhy(c.t.AgentName))
	}
}

// noAgentWhy names what keeps an agent from being dispatched: no worker
// at all, or only workers reporting themselves full. livekit-server
// (v1.13.5, selectWorkerWeightedByLoad) weighs its workers by 1 - load and
// gives no job to one whose load is 1, and LiveKit Agents' default load
// is the machine's CPU use, which a busy machine's always is. The server
// has no API that lists its workers, so preflight cannot tell.
func noAgentWhy(agentName string) string {
	who := "the server's automatic dispatch brought no agent (is an unnamed worker registered?"
	if agentName != "" {
		who = fmt.Sprintf("no worker registered as agent %q took the job (is one registered on this server?", agentName)
	}
	return who + " " + NoAgentBusy + ")"
}

// NoAgentBusy is the part of the "no agent joined" reason that names a busy
// worker: registered, but refused every job.
const NoAgentBusy = "a worker reporting a load of 1 is never dispatched: livekit-server weighs workers by 1 - load, and LiveKit Agents' default load is the machine's CPU use"

// trackSubscribed takes the first audio track subscribed as the agent's.
func (c *Conn) trackSubscribed(tr *pion.TrackRemote, _ *lksdk.RemoteTrackPublication, rp *lksdk.RemoteParticipant) {
	if tr.Kind() != pion.RTPCodecTypeAudio {
		return
	}
	c.mu.Lock()
	if c.agent != "" {
		c.mu.Unlock()
		return
	}
	c.agent = rp.Identity()
	c.mu.Unlock()
	c.watch(func() { c.readAudio(tr) })
	c.audioOnce.Do(func() { close(c.agentAudio) })
}

func (c *Conn) isAgent(identity string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.agent != "" && c.agent == identity
}

// participantLeft: the agent leaving is its hang-up.
func (c *Conn) participantLeft(rp *lksdk.RemoteParticipant) {
	if c.isAgent(rp.Identity()) {
		c.leftOnce.Do(func() { close(c.left) })
	}
}

// attributesChanged records the agent's state changes as events of
// their own (livekit.agent_state), for the trace.
func (c *Conn) attributesChanged(changed map[string]string, p lksdk.Participant) {
	state, ok := changed[AttrAgentState]
	if !ok || p.Identity() == CallerIdentity {
		return
	}
	raw, _ := json.Marshal(map[string]string{"event": EventAgentState, "state": state})
	c.Emit(callsim.Frame{Message: native.Message{Event: EventAgentState}, Raw: raw})
}

// EventAgentState names the events recording the agent's lk.agent.state.
const EventAgentState = "livekit.agent_state"

// transcription takes one lk.transcription text stream from the agent as
// its words; streams of the caller's transcribed speech are left out.
func (c *Conn) transcription(r *lksdk.TextStreamReader, identity string) {
	if identity == CallerIdentity {
		return
	}
	if _, ok := r.Info.Attributes[AttrTranscribedTrack]; ok && !c.isAgentTrack(r.Info.Attributes[AttrTranscribedTrack]) {
		// The agent's transcript of the caller's speech.
		return
	}
	var b strings.Builder
	for {
		ch, _, err := r.ReadRune()
		if err != nil {
			break
		}
		if b.Len() < audiocall.MaxTranscriptBytes+4 {
			b.WriteRune(ch)
		}
	}
	if err := c.Transcript(b.String()); err != nil {
		c.fail(err)
	}
}

// isAgentTrack says whether a transcribed track id is not the caller's
// own track.
func (c *Conn) isAgentTrack(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.track == nil || c.track.ID() != id
}

// readAudio queues the agent's audio for playout as μ-law: PCMU as it
// comes, Opus decoded to 8 kHz.
func (c *Conn) readAudio(tr *pion.TrackRemote) {
	var dec *opus.Decoder
	if strings.EqualFold(tr.Codec().MimeType, pion.MimeTypeOpus) {
		d, err := opus.NewDecoderWithOutput(audio.SampleRate, 1)
		if err != nil {
			c.fail(fmt.Errorf("livekit: opus decoder: %w", err))
			return
		}
		dec = &d
	}
	pcm := make([]int16, audio.SampleRate*120/1000) // the longest Opus packet
	for {
		p, _, err := tr.ReadRTP()
		if err != nil {
			return // the track or the room closed
		}
		if len(p.Payload) == 0 {
			continue
		}
		ulaw := p.Payload
		if dec != nil {
			n, err := dec.DecodeToInt16(p.Payload, pcm)
			if err != nil {
				continue // a packet the decoder cannot read is a lost one
			}
			ulaw = audio.EncodeMulaw(audio.PCM(pcm[:n]))
		} else if !strings.EqualFold(tr.Codec().MimeType, pion.MimeTypePCMU) {
			continue
		}
		if err := c.Enqueue(ulaw); err != nil {
			c.fail(err)
			return
		}
	}
}

// reader waits for the call to end: the agent leaving (its hang-up), a
// failure, or Close.
func (c *Conn) reader() error {
	select {
	case <-c.left:
		c.HangUp(ReasonAgentLeft)
		return errors.New(ReasonAgentLeft)
	case err := <-c.failed:
		return err
	case <-c.Done():
		return errors.New("connection closed")
	}
}

// Send turns one native message into the call's actions: start makes
// the room and starts the clock; speech and sound play.
func (c *Conn) Send(ctx context.Context, m native.Message) error {
	switch m.Event {
	case native.EventStart:
		if m.Start == nil {
			return errors.New("livekit: start without payload")
		}
		if err := c.start(ctx, *m.Start); err != nil {
			return err
		}
		c.StartClock()
		return nil
	case native.EventSpeech, native.EventSound:
		return c.Play(m)
	case native.EventStop:
		c.StopClock()
	}
	return nil
}

// SendFrame sends the caller's frame as one PCMU sample (audiocall.Wire).
func (c *Conn) SendFrame(_ int, _ time.Duration, ulaw []byte) error {
	c.mu.Lock()
	track := c.track
	c.mu.Unlock()
	if track == nil {
		return nil
	}
	return track.WriteSample(media.Sample{Data: ulaw, Duration: audio.FrameDuration}, nil)
}

// Tick: the room needs no keepalive of ours (audiocall.Wire).
func (c *Conn) Tick(time.Time) {}

// Echo: LiveKit has no marks (audiocall.Wire).
func (c *Conn) Echo([]string) {}

// Close stops the clock, leaves and deletes the room, and writes the
// recording if one was asked for. Safe to call more than once.
func (c *Conn) Close() error {
	return c.Shutdown(func() error {
		c.mu.Lock()
		room := c.lkRoom
		c.mu.Unlock()
		if room != nil {
			room.Disconnect()
		}
		ctx, cancel := context.WithTimeout(context.Background(), HangupTimeout)
		_, err := lksdk.NewRoomServiceClient(c.api, c.t.APIKey, c.t.APISecret).DeleteRoom(ctx, &livekit.DeleteRoomRequest{Room: c.room})
		cancel()
		c.quitOnce.Do(func() { close(c.quit) })
		c.watchers.Wait()
		if err != nil && !strings.Contains(err.Error(), "not_found") {
			return fmt.Errorf("livekit: deleting room %s: %w", c.room, err)
		}
		return nil
	})
}
