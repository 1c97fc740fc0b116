package webrtc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pion "github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/callsim/audiocall"
	"github.com/callproof/callproof/callsim/internal/readdeadline"
	"github.com/callproof/callproof/callsim/internal/rtvi"
	"github.com/callproof/callproof/internal/rtcpeer"
	"github.com/callproof/callproof/protocol/native"
)

// Conn is one WebRTC call, seen by the simulator as native messages
// (audiocall.Call): the caller's frames go out as PCMU RTP, the agent's
// RTP is played out, and native events travel on the data channel.
type Conn struct {
	*audiocall.Call
	t     *Transport
	pc    *pion.PeerConnection
	sig   Signaler
	track *pion.TrackLocalStaticSample
	dc    *pion.DataChannel
	limit atomic.Int64

	// Dial's progress, for its errors.
	stageMu sync.Mutex
	stageAt string

	opened    chan struct{} // the data channel is open
	connected chan struct{} // ICE and DTLS are done
	openOnce  sync.Once
	connOnce  sync.Once

	failed   chan error // the first reason the call's connection ended
	failOnce sync.Once
	quit     chan struct{} // closed when the call is over: watchers stop
	quitOnce sync.Once
	watchers sync.WaitGroup

	deadline *timerDeadline
	rd       *readdeadline.Keeper
	lastPing time.Time // the frame clock's only; zero: the first tick pings

	stopped     atomic.Bool // the caller sent its stop: the agent leaving is no hang-up
	started     atomic.Bool // the caller's start went out
	left        atomic.Bool // the agent is leaving: its hang-up follows its audio
	rtviBot     atomic.Bool // the agent sent RTVI's bot-ready: it leaves RTVILinger after its words at most
	leaveReason atomic.Pointer[string]
	leaveOnce   sync.Once
	idMu        sync.Mutex
	nextID      int // RTVI message ids

	// The data channel's goroutine only: the bot's RTVI events.
	dec      rtvi.Decoder
	speaking bool     // between bot-started-speaking and bot-stopped-speaking
	words    []string // its words since its last transcript
}

var (
	_ callsim.FrameLimiter = (*Conn)(nil)
	_ callsim.Deadliner    = (*Conn)(nil)
	_ callsim.Voice        = (*Conn)(nil)
	_ callsim.Flusher      = (*Conn)(nil)
	_ callsim.Pacer        = (*Conn)(nil)
	_ callsim.TurnTaker    = (*Conn)(nil)
	_ callsim.Stretcher    = (*Conn)(nil)
	_ callsim.Lingerer     = (*Conn)(nil)
	_ audiocall.Wire       = (*Conn)(nil)
)

func newConn(t *Transport, pc *pion.PeerConnection, sig Signaler) *Conn {
	c := &Conn{t: t, pc: pc, sig: sig, stageAt: "signaling",
		opened: make(chan struct{}), connected: make(chan struct{}),
		failed: make(chan error, 1), quit: make(chan struct{})}
	cfg := t.Config
	cfg.MaxQueuedAudio = t.MaxAhead
	if cfg.MaxQueuedAudio <= 0 {
		cfg.MaxQueuedAudio = DefaultMaxAhead
	}
	c.Call = audiocall.New(cfg, c, c.reader)
	c.deadline = newTimerDeadline()
	c.rd = readdeadline.New(c.deadline)
	lim := t.MaxFrameBytes
	if lim <= 0 {
		lim = DefaultMaxFrameBytes
	}
	c.limit.Store(lim)
	return c
}

func (c *Conn) stage() string {
	c.stageMu.Lock()
	defer c.stageMu.Unlock()
	return c.stageAt
}

func (c *Conn) setStage(s string) {
	c.stageMu.Lock()
	c.stageAt = s
	c.stageMu.Unlock()
}

// fail records why the connection ended; the first reason wins.
func (c *Conn) fail(err error) {
	c.failOnce.Do(func() { c.failed <- err })
}

// connect makes the call: tracks and channel, offer, answer, candidates,
// then waits for ICE, DTLS and the channel.
func (c *Conn) connect(ctx context.Context) error {
	track, err := pion.NewTrackLocalStaticSample(rtcpeer.PCMU, "audio", "callproof")
	if err != nil {
		return fmt.Errorf("webrtc: %w", err)
	}
	c.track = track
	// The audio transceiver first, as Pipecat expects.
	tr, err := c.pc.AddTransceiverFromTrack(track, pion.RTPTransceiverInit{Direction: pion.RTPTransceiverDirectionSendrecv})
	if err != nil {
		return fmt.Errorf("webrtc: %w", err)
	}
	ordered := true
	dc, err := c.pc.CreateDataChannel(Label, &pion.DataChannelInit{Ordered: &ordered})
	if err != nil {
		return fmt.Errorf("webrtc: %w", err)
	}
	c.dc = dc
	dc.OnOpen(func() { c.openOnce.Do(func() { close(c.opened) }) })
	dc.OnClose(func() { c.closedByAgent("the data channel closed") })
	dc.OnMessage(c.message)
	var iceUp atomic.Bool // ICE got through: a failure now is the DTLS handshake's
	c.pc.OnICEConnectionStateChange(func(s pion.ICEConnectionState) {
		if s == pion.ICEConnectionStateConnected || s == pion.ICEConnectionStateCompleted {
			iceUp.Store(true)
		}
	})
	ended := func(what string) {
		select {
		case <-c.connected:
			c.fail(errors.New(what))
		default:
			if iceUp.Load() {
				c.fail(fmt.Errorf("DTLS failed (%s)", what))
			} else {
				c.fail(fmt.Errorf("ICE failed (%s)", what))
			}
		}
	}
	c.pc.OnConnectionStateChange(func(s pion.PeerConnectionState) {
		switch s {
		case pion.PeerConnectionStateConnected:
			c.connOnce.Do(func() { close(c.connected) })
		case pion.PeerConnectionStateFailed:
			ended("the peer connection failed")
		case pion.PeerConnectionStateClosed:
			select {
			case <-c.connected:
				c.closedByAgent("the peer connection closed")
			default:
				ended("the peer connection closed")
			}
		}
	})
	c.pc.OnTrack(func(r *pion.TrackRemote, _ *pion.RTPReceiver) { c.watch(func() { c.readAudio(r) }) })
	c.watch(func() { c.readRTCP(tr.Sender()) })

	var cands chan pion.ICECandidateInit
	if c.t.Trickle {
		cands = make(chan pion.ICECandidateInit, 64)
		var mu sync.Mutex
		done := false
		c.pc.OnICECandidate(func(ic *pion.ICECandidate) {
			mu.Lock()
			defer mu.Unlock()
			if done {
				return
			}
			if ic == nil {
				done = true
				close(cands)
				return
			}
			select {
			case cands <- ic.ToJSON():
			default: // more than a host can have; the rest are not needed
			}
		})
	}
	offer, err := c.pc.CreateOffer(nil)
	if err != nil {
		return fmt.Errorf("webrtc: %w", err)
	}
	gathered := pion.GatheringCompletePromise(c.pc)
	if err := c.pc.SetLocalDescription(offer); err != nil {
		return fmt.Errorf("webrtc: %w", err)
	}
	if !c.t.Trickle {
		c.setStage("gathering candidates")
		select {
		case <-gathered:
		case <-ctx.Done():
			return fmt.Errorf("gathering candidates: %w", context.Cause(ctx))
		}
	}
	c.setStage("signaling")
	// A trickled offer is the bare one, its candidates all to follow; a
	// full one carries every candidate gathered.
	sdp := offer.SDP
	if !c.t.Trickle {
		sdp = c.pc.LocalDescription().SDP
	}
	answer, err := c.sig.Offer(ctx, sdp)
	if err != nil {
		return err
	}
	ad := pion.SessionDescription{Type: pion.SDPTypeAnswer, SDP: answer}
	if !rtcpeer.HasPCMU(&ad) {
		return signalErr("the agent's answer has no PCMU audio")
	}
	if err := c.pc.SetRemoteDescription(ad); err != nil {
		return signalErr("the agent's answer: %v", err)
	}
	if cands != nil {
		c.setStage("trickling candidates")
		if err := c.trickle(ctx, cands); err != nil {
			return err
		}
	}
	c.setStage("connecting (ICE, DTLS)")
	select {
	case <-c.connected:
	case err := <-c.failed:
		return fmt.Errorf("connecting: %w", err)
	case <-ctx.Done():
		return fmt.Errorf("connecting: ICE %s, peer connection %s: %w", c.pc.ICEConnectionState(), c.pc.ConnectionState(), context.Cause(ctx))
	}
	c.setStage("opening the data channel")
	select {
	case <-c.opened:
	case err := <-c.failed:
		return fmt.Errorf("opening the data channel: %w", err)
	case <-ctx.Done():
		return fmt.Errorf("opening the data channel: %w", context.Cause(ctx))
	}
	c.setStage("connected")
	c.rd.Alive()
	return c.sendRTVI("client-ready", rtvi.ClientReady())
}

// trickle sends the candidates gathered so far in one request, then each
// batch that follows until gathering ends.
func (c *Conn) trickle(ctx context.Context, cands <-chan pion.ICECandidateInit) error {
	for {
		var batch []pion.ICECandidateInit
		select {
		case ic, ok := <-cands:
			if !ok {
				return nil
			}
			batch = append(batch, ic)
		case <-ctx.Done():
			return fmt.Errorf("trickling candidates: %w", context.Cause(ctx))
		}
	more:
		for {
			select {
			case ic, ok := <-cands:
				if !ok {
					break more
				}
				batch = append(batch, ic)
			default:
				break more
			}
		}
		if err := c.sig.Trickle(ctx, batch); err != nil {
			return err
		}
	}
}

// watch runs f until the call is over; Close waits for it.
func (c *Conn) watch(f func()) {
	c.watchers.Add(1)
	go func() {
		defer c.watchers.Done()
		f()
	}()
}

func (c *Conn) stopWatchers() {
	c.quitOnce.Do(func() { close(c.quit) })
	c.watchers.Wait()
	c.deadline.stop()
}

// readAudio queues the agent's PCMU for playout; other payload types are
// not audio the caller can play and are left out.
func (c *Conn) readAudio(r *pion.TrackRemote) {
	for {
		p, _, err := r.ReadRTP()
		if err != nil {
			return // the peer connection closed
		}
		c.rd.Alive()
		if p.PayloadType != rtcpeer.PCMUPayloadType || len(p.Payload) == 0 {
			continue
		}
		if err := c.Enqueue(p.Payload); err != nil {
			c.fail(err)
			return
		}
	}
}

// readRTCP drains the agent's RTCP (the interceptors need it read) and
// counts it as a sign of life.
func (c *Conn) readRTCP(s *pion.RTPSender) {
	for {
		if _, _, err := s.ReadRTCP(); err != nil {
			return
		}
		c.rd.Alive()
	}
}

// message takes one data-channel message from the agent.
func (c *Conn) message(m pion.DataChannelMessage) {
	c.rd.Alive()
	if !m.IsString {
		c.fail(fmt.Errorf("%w: binary data-channel message", callsim.ErrGarbageFrame))
		return
	}
	if n := c.limit.Load(); int64(len(m.Data)) > n {
		c.fail(fmt.Errorf("%w: over %d bytes", callsim.ErrOversizedFrame, n))
		return
	}
	// Read in place: a message may be a MiB, and copying it whole
	// (a string, a map of its fields) only multiplies what one call's
	// agent makes the harness hold.
	text := bytes.TrimSpace(m.Data)
	if bytes.HasPrefix(text, []byte("ping")) || bytes.HasPrefix(text, []byte("pong")) {
		return // a keepalive (or ours, echoed)
	}
	var obj struct {
		Type json.RawMessage `json:"type"`
	}
	if len(text) == 0 || text[0] != '{' || json.Unmarshal(text, &obj) != nil {
		c.fail(fmt.Errorf("%w: a data-channel message that is not a JSON object", callsim.ErrGarbageFrame))
		return
	}
	raw := append([]byte(nil), m.Data...)
	if r, ok := rtvi.Parse(raw); ok {
		var inner struct {
			Event string `json:"event"`
		}
		if r.Type == "server-message" && json.Unmarshal(r.Data, &inner) == nil && inner.Event != "" {
			c.native(r.Data)
			return
		}
		c.bot(r, raw)
		return
	}
	if string(obj.Type) == `"`+SignallingType+`"` {
		c.signalling(raw)
		return
	}
	c.native(raw)
}

// bot takes one RTVI event: the bot's words are its transcript, given
// when it stops speaking (or is cut off); its interruption is a clear;
// a named function call is its tool intent.
func (c *Conn) bot(m rtvi.Message, raw []byte) {
	e := c.dec.Decode(m)
	switch e.Kind {
	case rtvi.Ready, rtvi.Note:
		if e.Kind == rtvi.Ready {
			c.rtviBot.Store(true)
		}
		c.Emit(callsim.Frame{Message: native.Message{Event: "rtvi." + m.Type}, Raw: raw})
	case rtvi.StartedSpeaking:
		c.giveWords()
		c.speaking = true
	case rtvi.StoppedSpeaking:
		c.speaking = false
		c.giveWords()
	case rtvi.Interrupted:
		if c.speaking {
			c.speaking = false
			c.giveWords()
			c.Clear()
		}
	case rtvi.Words:
		if e.Unspoken {
			// Text it will not speak has no audio to belong to.
			c.Emit(callsim.Frame{Message: native.Message{Event: "rtvi." + m.Type}, Raw: raw})
			return
		}
		if e.Text != "" {
			c.words = append(c.words, e.Text)
		}
		if !c.speaking {
			c.giveWords()
		}
	case rtvi.Tool:
		c.Emit(callsim.Frame{Message: native.Message{Event: native.EventToolIntent, ToolIntent: e.Tool}, Raw: raw})
	}
}

// giveWords hands the words so far to the call as the agent's transcript.
func (c *Conn) giveWords() {
	if len(c.words) == 0 {
		return
	}
	text := strings.Join(c.words, " ")
	c.words = c.words[:0]
	if err := c.Transcript(text); err != nil {
		c.fail(err)
	}
}

// signalling takes one of SmallWebRTC's own messages: peerLeft before the
// caller's stop is the agent's hang-up (its last words first); the others
// (renegotiate, trackStatus) are kept as notes.
func (c *Conn) signalling(raw []byte) {
	var s struct {
		Message struct {
			Type string `json:"type"`
		} `json:"message"`
	}
	_ = json.Unmarshal(raw, &s)
	if s.Message.Type != PeerLeft {
		c.Emit(callsim.Frame{Message: native.Message{Event: "webrtc." + SignallingType}, Raw: raw})
		return
	}
	if c.stopped.Load() {
		return
	}
	c.left.Store(true)
	c.speaking = false
	c.giveWords()
	c.hangUpAfterAudio(ReasonPeerLeft)
}

// closedByAgent takes the agent closing the call's connection cleanly
// (its data channel, or DTLS): after the caller's stop it is nothing,
// after peerLeft the hang-up already under way; otherwise, once the
// caller's script has started, it is the agent's hang-up after its last
// audio (a bot whose peerLeft was lost in its close), and before that
// the connection lost.
func (c *Conn) closedByAgent(what string) {
	switch {
	case c.stopped.Load() || c.left.Load():
		return
	case c.started.Load():
		c.left.Store(true)
		c.hangUpAfterAudio(ReasonClosedCleanly)
	default:
		c.fail(errors.New(what))
	}
}

// hangUpAfterAudio is the agent's hang-up once the audio it sent before
// leaving has played.
func (c *Conn) hangUpAfterAudio(reason string) {
	c.leaveReason.Store(&reason)
	// The bot leaves once its audio is sent; what reached us may still be
	// waiting to be played (a peer that stalled sends in bursts): the
	// hang-up comes once it is played, or DefaultMaxAhead later at most.
	if err := c.PlaceMark(peerLeftMark, 0); err != nil {
		c.leave()
		return
	}
	go func() {
		t := time.NewTimer(DefaultMaxAhead)
		defer t.Stop()
		select {
		case <-t.C:
			c.leave()
		case <-c.Done():
		}
	}()
}

// peerLeftMark is the mark placed after the audio queued when the agent
// left.
const peerLeftMark = "callproof-peer-left"

// leave is the agent's hang-up, once.
func (c *Conn) leave() {
	c.leaveOnce.Do(func() {
		reason := ReasonPeerLeft
		if r := c.leaveReason.Load(); r != nil {
			reason = *r
		}
		go func() {
			c.HangUp(reason)
			c.fail(errors.New(reason))
		}()
	})
}

// native takes one native message from the agent.
func (c *Conn) native(raw []byte) {
	var m native.Message
	if err := json.Unmarshal(raw, &m); err != nil {
		// A known event with a payload of the wrong shape: recorded as
		// unknown, like any message this version cannot read.
		c.Emit(callsim.Frame{Message: native.Message{Event: "webrtc.unreadable"}, Raw: raw})
		return
	}
	switch m.Event {
	case "transcript":
		var t struct {
			Transcript *struct {
				Text string `json:"text"`
			} `json:"transcript"`
		}
		if json.Unmarshal(raw, &t) == nil && t.Transcript != nil {
			if err := c.Transcript(t.Transcript.Text); err != nil {
				c.fail(err)
			}
			return
		}
	case native.EventClear:
		c.Clear()
		return
	case native.EventAgentSpeech:
		// The agent's speech is what its audio says: a claim on the data
		// channel is kept, but only as an unknown message.
		m = native.Message{Event: "webrtc." + native.EventAgentSpeech}
	}
	c.Emit(callsim.Frame{Message: m, Raw: raw})
}

// sendRTVI sends one RTVI message; nil data is left out.
func (c *Conn) sendRTVI(typ string, data any) error {
	c.idMu.Lock()
	c.nextID++
	id := "callproof-" + strconv.Itoa(c.nextID)
	c.idMu.Unlock()
	b, err := rtvi.Encode(typ, id, data)
	if err != nil {
		return err
	}
	return c.dc.SendText(string(b))
}

// reader waits for the connection to end: the reason the first watcher
// gave, the deadline, or Close.
func (c *Conn) reader() error {
	select {
	case err := <-c.failed:
		return err
	case <-c.deadline.fired:
		return c.rd.TimedOut()
	case <-c.Done():
		return errors.New("connection closed")
	}
}

// SetFrameLimit bounds one data-channel message from the agent.
func (c *Conn) SetFrameLimit(n int64) { c.limit.Store(n) }

// SetCallDeadline makes Recv fail after t.
func (c *Conn) SetCallDeadline(t time.Time) { c.rd.SetCallDeadline(t) }

// SetIdleTimeout makes Recv fail with callsim.ErrUnresponsive when the
// agent sends nothing (RTP, RTCP or a data-channel message) for d.
func (c *Conn) SetIdleTimeout(d time.Duration) { c.rd.SetIdleTimeout(d) }

// Send turns one native message into RTVI messages or sound: the start
// is a client-message with the call's data, DTMF is dtmf with its
// buttons, the stop is disconnect-bot.
func (c *Conn) Send(_ context.Context, m native.Message) error {
	switch m.Event {
	case native.EventStart:
		if m.Start == nil {
			return errors.New("webrtc: start without payload")
		}
		params, err := rtvi.StartParams(m.Start)
		if err != nil {
			return err
		}
		if err := c.sendRTVI("client-message", rtvi.ClientMessage(rtvi.StartType, params)); err != nil {
			return err
		}
		c.started.Store(true)
		c.StartClock()
		return nil
	case native.EventSpeech, native.EventSound:
		return c.Play(m)
	case native.EventDTMF:
		if m.DTMF == nil {
			return nil
		}
		if d := rtvi.DTMF(m.DTMF.Digits); d != nil {
			return c.sendRTVI("dtmf", d)
		}
		return nil
	case native.EventStop:
		c.stopped.Store(true)
		c.StopClock()
		return c.sendRTVI("disconnect-bot", nil)
	}
	return nil
}

// SendFrame sends the caller's frame as one PCMU packet (audiocall.Wire).
func (c *Conn) SendFrame(_ int, _ time.Duration, ulaw []byte) error {
	return c.track.WriteSample(media.Sample{Data: ulaw, Duration: audio.FrameDuration})
}

// Tick sends the keepalive every PingEvery (audiocall.Wire).
func (c *Conn) Tick(now time.Time) {
	if now.Sub(c.lastPing) >= PingEvery {
		c.lastPing = now
		_ = c.dc.SendText("ping: " + strconv.FormatInt(now.UnixMilli(), 10))
	}
}

// Linger keeps the caller on the line RTVILinger at its script's end when
// the agent is an RTVI bot, so that its leaving is seen as its hang-up
// (callsim.Lingerer).
func (c *Conn) Linger() time.Duration {
	if c.rtviBot.Load() {
		return RTVILinger
	}
	return 0
}

// Echo: WebRTC has no marks; the one callproof places itself is the
// bot's leaving (audiocall.Wire).
func (c *Conn) Echo(names []string) {
	if slices.Contains(names, peerLeftMark) {
		c.leave()
	}
}

// Close stops the frame clock, hangs up where the signaling can, closes
// the peer connection, and writes the recording if one was asked for.
// Safe to call more than once.
func (c *Conn) Close() error {
	return c.Shutdown(func() error {
		c.drain()
		ctx, cancel := context.WithTimeout(context.Background(), HangupTimeout)
		herr := c.sig.Hangup(ctx)
		cancel()
		err := c.pc.Close()
		c.stopWatchers()
		if err == nil && herr != nil {
			err = herr
		}
		return err
	})
}

// drainWait bounds waiting, at Close, for the data channel's last
// messages (stop) to leave.
const drainWait = 500 * time.Millisecond

// drain waits until the data channel has sent what it holds, or
// drainWait: closing the peer connection drops what is still queued.
func (c *Conn) drain() {
	if c.dc == nil || c.dc.ReadyState() != pion.DataChannelStateOpen {
		return
	}
	until := time.Now().Add(drainWait)
	for c.dc.BufferedAmount() > 0 && time.Now().Before(until) {
		time.Sleep(5 * time.Millisecond)
	}
}

// timerDeadline is a read deadline without a socket: a timer that fires
// once the deadline passes (readdeadline.Conn).
type timerDeadline struct {
	mu    sync.Mutex
	at    time.Time
	timer *time.Timer
	fired chan struct{}
}

func newTimerDeadline() *timerDeadline {
	d := &timerDeadline{fired: make(chan struct{}, 1)}
	d.timer = time.AfterFunc(time.Hour, d.check)
	d.timer.Stop()
	return d
}

// SetReadDeadline moves the deadline; zero removes it.
func (d *timerDeadline) SetReadDeadline(t time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.at = t
	d.timer.Stop()
	if !t.IsZero() {
		d.timer.Reset(max(time.Until(t), 0))
	}
	return nil
}

// check fires if the deadline (which may have moved since the timer was
// set) has passed.
func (d *timerDeadline) check() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.at.IsZero() || time.Now().Before(d.at) {
		return
	}
	select {
	case d.fired <- struct{}{}:
	default:
	}
}

func (d *timerDeadline) stop() {
	d.mu.Lock()
	d.timer.Stop()
	d.at = time.Time{}
	d.mu.Unlock()
}
