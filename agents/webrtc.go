package agents

import (
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"

	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/internal/rtcpeer"
	"github.com/callproof/callproof/protocol/native"
)

// WebRTC mode: the reference agents answer a WebRTC call
// (docs/PROTOCOL.md, "WebRTC dialect"). The harness offers, the agent
// answers over HTTP (webrtc_signal.go: SmallWebRTC or WHIP); the audio is
// PCMU RTP and the rest goes over the caller's "chat" data channel. As in
// the Twilio mode, what arrives is adapted to the native messages the
// engine reads:
//
//	RTP (PCMU)           the ear, as in Twilio mode: speech onset/final,
//	                     sound onset/offset
//	ping: <ms>           ignored (the caller's keepalive)
//	RTVI client-ready    answered with RTVI bot-ready
//	RTVI client-message  native start from its flat keys (Twilio's
//	  start              customParameters), time scale 1
//	RTVI dtmf            native dtmf, its buttons the digits
//	RTVI disconnect-bot  native stop
//	start, dtmf, stop    the same, as native messages (older callers)
//
// and what the engine says goes out as:
//
//	agent_speech         the utterance synthesized as in Twilio mode and
//	                     sent in real time, one 20 ms RTP packet every
//	                     20 ms, nothing between utterances; then, unless
//	                     NoTranscript, {"event":"transcript",...} on the
//	                     data channel
//	clear                sending stops at once and what is unsent is
//	                     dropped; the transcript of the words that went
//	                     out, then native clear
//	ack, state,          native JSON on the data channel
//	tool_intent
//	hangup, transfer     native JSON once the audio has gone out; the
//	                     call is closed when the caller closes it, at
//	                     most HangupWait later
//
// The call ends when the peer connection fails or closes, the data
// channel closes, the caller DELETEs it (WHIP), or the server closes.

// WebRTC mode's bounds.
const (
	// rtcConnectWait bounds the time from the answer to the data channel
	// opening (the caller's own bound is 10 s).
	rtcConnectWait = 15 * time.Second
	// rtcCloseWait bounds pion's graceful close of a call's connection.
	rtcCloseWait = 5 * time.Second
)

// RTVI, as Pipecat's clients speak it on the data channel.
const (
	rtviLabel   = "rtvi-ai"
	rtviVersion = "2.2.0"
)

// rtcCall is one call in WebRTC mode: the wire adapter around a session.
type rtcCall struct {
	side  *audioSide
	cfg   AudioConfig
	ear   *ear
	id    string // pc_id, and the WHIP resource's
	pc    *webrtc.PeerConnection
	track *webrtc.TrackLocalStaticSample
	play  *rtcPlayer

	opened   chan struct{} // the data channel is open
	openOnce sync.Once
	gone     chan struct{} // the call must end
	goneOnce sync.Once
	done     chan struct{} // the session is over (closed by the server)

	mu       sync.Mutex
	why      string // why the call ended, for the log
	dc       *webrtc.DataChannel
	started  bool
	callID   string
	hearing  bool // an audio track is being read
	closing  bool // the reader waits for media: no more may start
	spoken   int  // utterances queued
	playEnd  time.Time
	trail    time.Duration
	sendFail bool // a sample could not be written (logged once)

	media sync.WaitGroup // the track reader and the RTCP reader
}

func newRTCCall(side *audioSide, id string, pc *webrtc.PeerConnection, track *webrtc.TrackLocalStaticSample) *rtcCall {
	c := &rtcCall{side: side, cfg: side.cfg, ear: newEar(side.index, side.cfg.VAD), id: id, pc: pc, track: track,
		opened: make(chan struct{}), gone: make(chan struct{}), done: make(chan struct{})}
	c.play = &rtcPlayer{c: c, wake: make(chan struct{}, 1), idle: make(chan struct{}, 1), quit: make(chan struct{})}
	return c
}

// end asks for the call to end (idempotent; the first reason is kept).
func (c *rtcCall) end(why string) {
	c.goneOnce.Do(func() {
		c.mu.Lock()
		c.why = why
		c.mu.Unlock()
		close(c.gone)
	})
}

func (c *rtcCall) label() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.callID != "" {
		return c.callID
	}
	return c.id
}

// attach sets the connection's handlers, which feed s. Called before the
// offer is applied, so nothing is missed.
func (c *rtcCall) attach(s *session) {
	c.pc.OnConnectionStateChange(func(st webrtc.PeerConnectionState) {
		switch st {
		case webrtc.PeerConnectionStateFailed:
			c.end("peer connection failed")
		case webrtc.PeerConnectionStateClosed:
			c.end("peer connection closed")
		}
	})
	c.pc.OnDataChannel(func(dc *webrtc.DataChannel) {
		if dc.Label() != "chat" {
			return // not the dialect's channel
		}
		c.mu.Lock()
		if c.dc != nil {
			c.mu.Unlock()
			return
		}
		c.dc = dc
		c.mu.Unlock()
		dc.OnOpen(func() { c.openOnce.Do(func() { close(c.opened) }) })
		dc.OnClose(func() { c.end("data channel closed") })
		dc.OnMessage(func(m webrtc.DataChannelMessage) { c.message(s, m) })
	})
	c.pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		if tr.Kind() != webrtc.RTPCodecTypeAudio {
			return
		}
		c.mu.Lock()
		if c.closing || c.hearing {
			c.mu.Unlock()
			return // one caller track is heard; the ear is not shared
		}
		c.hearing = true
		c.media.Add(1)
		c.mu.Unlock()
		defer c.media.Done()
		c.listen(s, tr)
	})
}

// readRTCP reads the RTCP the caller sends about our audio until the
// connection closes, so pion's interceptors (reports, NACK) see it.
func (c *rtcCall) readRTCP(sender *webrtc.RTPSender) {
	c.media.Add(1)
	go func() {
		defer c.media.Done()
		buf := make([]byte, 1500)
		for {
			if _, _, err := sender.Read(buf); err != nil {
				return
			}
		}
	}()
}

// maxLostFrames: a sequence gap up to this many packets is heard as that
// much silence (the ear counts frames on the caller's clock); a longer
// one is a jump, not a loss.
const maxLostFrames = 50

// listen feeds the caller's audio to the ear, 20 ms frame by frame.
func (c *rtcCall) listen(s *session, tr *webrtc.TrackRemote) {
	var pend []byte
	var last uint16
	have := false
	for {
		p, _, err := tr.ReadRTP()
		if err != nil {
			return
		}
		if p.PayloadType != rtcpeer.PCMUPayloadType || len(p.Payload) == 0 || !c.hasStarted() {
			continue
		}
		if have {
			gap := int16(p.SequenceNumber - last)
			if gap <= 0 {
				continue // late or repeated: its place has been heard
			}
			if gap > 1 && gap <= maxLostFrames {
				for i := 0; i < int(gap-1)*len(p.Payload); i++ {
					pend = append(pend, audio.MulawSilence)
				}
			}
		}
		last, have = p.SequenceNumber, true
		pend = append(pend, p.Payload...)
		for len(pend) >= audio.FrameSamples {
			for _, m := range c.ear.push(pend[:audio.FrameSamples]) {
				s.post(frameEvent{msg: m})
			}
			pend = pend[audio.FrameSamples:]
		}
		if len(pend) == 0 {
			pend = nil // let the array go
		}
	}
}

func (c *rtcCall) hasStarted() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started
}

// dcIn is every data channel message the agent reads: RTVI or native.
type dcIn struct {
	Label string          `json:"label"`
	Type  string          `json:"type"`
	ID    any             `json:"id"`
	Data  json.RawMessage `json:"data"`
	Event string          `json:"event"`
}

// rtviIn reads the caller's RTVI messages as the native ones they stand
// for (ok false: none).
func rtviIn(in dcIn) (native.Message, bool) {
	switch in.Type {
	case "client-message":
		var cm struct {
			T string            `json:"t"`
			D map[string]string `json:"d"`
		}
		if json.Unmarshal(in.Data, &cm) != nil || cm.T != "start" {
			return native.Message{}, false
		}
		return native.Message{Event: native.EventStart, Start: startFromParams(cm.D)}, true
	case "dtmf":
		var d struct {
			Buttons []string `json:"buttons"`
		}
		if json.Unmarshal(in.Data, &d) != nil || len(d.Buttons) == 0 {
			return native.Message{}, false
		}
		return native.Message{Event: native.EventDTMF, DTMF: &native.DTMF{Digits: strings.Join(d.Buttons, "")}}, true
	case "disconnect-bot":
		return native.Message{Event: native.EventStop, Stop: &native.Stop{Reason: "disconnect-bot"}}, true
	}
	return native.Message{}, false
}

type rtviOut struct {
	Label string            `json:"label"`
	Type  string            `json:"type"`
	ID    any               `json:"id,omitempty"`
	Data  map[string]string `json:"data"`
}

type rtcTranscript struct {
	Event      string           `json:"event"`
	Transcript twTranscriptBody `json:"transcript"`
}

// message reads one data channel message. Like the other wires, it
// ignores what it cannot parse.
func (c *rtcCall) message(s *session, dm webrtc.DataChannelMessage) {
	if !dm.IsString || strings.HasPrefix(string(dm.Data), "ping") {
		return // binary, or the caller's keepalive
	}
	var in dcIn
	if json.Unmarshal(dm.Data, &in) != nil {
		return
	}
	var m native.Message
	if in.Label == rtviLabel {
		if in.Type == "client-ready" {
			c.sendJSON(rtviOut{Label: rtviLabel, Type: "bot-ready", ID: in.ID, Data: map[string]string{"version": rtviVersion}})
			return
		}
		var ok bool
		if m, ok = rtviIn(in); !ok {
			return
		}
	} else if json.Unmarshal(dm.Data, &m) != nil {
		return
	}
	switch m.Event {
	case native.EventStart:
		if m.Start == nil {
			return
		}
		st := *m.Start
		st.TimeScale = 1 // audio runs in real time
		c.mu.Lock()
		first := !c.started
		c.started = true
		if first && st.CallID != "" {
			c.callID = st.CallID
		}
		c.mu.Unlock()
		if first {
			s.post(frameEvent{msg: native.Message{Event: native.EventStart, Start: &st}})
		}
	case native.EventDTMF:
		if m.DTMF != nil && c.hasStarted() {
			s.post(frameEvent{msg: native.Message{Event: native.EventDTMF, DTMF: m.DTMF}})
		}
	case native.EventStop:
		s.post(frameEvent{msg: native.Message{Event: native.EventStop, Stop: m.Stop}})
	}
}

// sendJSON sends one message on the data channel, if it is open.
func (c *rtcCall) sendJSON(v any) {
	c.mu.Lock()
	dc := c.dc
	c.mu.Unlock()
	if dc == nil || dc.ReadyState() != webrtc.DataChannelStateOpen {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	_ = dc.SendText(string(b)) // a closed channel ends the call by itself
}

// What the engine's messages become for the writer.
type (
	// rtcUtterance is one utterance's audio, in 20 ms frames.
	rtcUtterance struct {
		id     string
		words  []string
		frames [][]byte
	}
	// rtcClear stops the audio, then sends the engine's clear.
	rtcClear struct{ m native.Message }
	// rtcEnd sends hangup or transfer once the audio is out, then ends
	// the call.
	rtcEnd struct{ m native.Message }
)

// read waits for the call to end, then for the media readers (they stop
// once close has closed the connection).
func (c *rtcCall) read(s *session) {
	timer := time.NewTimer(rtcConnectWait)
	select {
	case <-c.opened:
	case <-timer.C:
		c.end("not connected within " + rtcConnectWait.String())
	case <-c.gone:
	case <-s.ctx.Done():
	}
	timer.Stop()
	select {
	case <-c.gone:
	case <-s.ctx.Done():
	}
	s.post(closedEvent{})
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	c.media.Wait()
}

// frames turns one engine message into the writer's work.
func (c *rtcCall) frames(m native.Message) []any {
	switch m.Event {
	case native.EventClear:
		c.mu.Lock()
		c.playEnd, c.trail = time.Now(), 0 // what is unsent is dropped
		c.mu.Unlock()
		return []any{rtcClear{m: m}}
	case native.EventHangup, native.EventTransfer:
		return []any{rtcEnd{m: m}}
	case native.EventAck, native.EventState, native.EventToolIntent:
		if c.cfg.NoSelfReports {
			return nil
		}
		return []any{m}
	}
	return nil // agent_speech: the audio says it
}

// speak synthesizes one utterance in the agent's voice (trimmed and kept
// apart from the one before, as in Twilio mode) and queues it for the
// player. It returns the audio's length (0 when synthesis failed: the
// engine then keeps its text-mode word time).
func (c *rtcCall) speak(s *session, id, text string) time.Duration {
	pcm, err := c.side.voice.Speech(s.ctx, text)
	if err != nil {
		c.cfg.logf("call %s: cannot speak %q: %v", c.label(), text, err)
		return 0
	}
	pcm = trimQuiet(pcm)
	lead, trail := quietEdges(pcm)
	frames := audio.MulawFrames(pcm)
	d := time.Duration(len(frames)) * audio.FrameDuration
	c.mu.Lock()
	now := time.Now()
	if c.spoken > 0 {
		if padded := gapPad(pcm, c.cfg.Gap, c.playEnd, c.trail, lead, now); len(padded) > len(pcm) {
			frames = audio.MulawFrames(padded)
			d = time.Duration(len(frames)) * audio.FrameDuration
		}
	}
	c.trail = trail
	c.spoken++
	if c.playEnd.Before(now) {
		c.playEnd = now
	}
	c.playEnd = c.playEnd.Add(d)
	c.mu.Unlock()
	s.queue(&rtcUtterance{id: id, words: strings.Fields(text), frames: frames})
	return d
}

// write is the call's writer: audio goes to the player, messages straight
// onto the data channel (they do not wait for the audio). After the
// engine has stopped nothing more is sent.
func (c *rtcCall) write(s *session) {
	played := make(chan struct{})
	go func() { defer close(played); c.play.run(s) }()
	defer func() { c.play.stop(); <-played }()
	dead := false
	for f := range s.outbox {
		if dead || s.ended.Load() {
			continue
		}
		switch f := f.(type) {
		case *rtcUtterance:
			c.play.add(f)
		case rtcClear:
			c.play.cut()
			c.sendJSON(f.m)
		case rtcEnd:
			c.hangUp(s, f.m)
			dead = true
		case native.Message:
			c.sendJSON(f)
		}
	}
}

// hangUp lets the audio queued go out, sends m, and ends the call when the
// caller closes it, at most HangupWait later.
func (c *rtcCall) hangUp(s *session, m native.Message) {
	c.mu.Lock()
	deadline := c.playEnd.Add(c.cfg.HangupWait)
	c.mu.Unlock()
	if now := time.Now(); deadline.Before(now) {
		deadline = now.Add(c.cfg.HangupWait)
	}
	c.play.waitIdle(deadline)
	c.sendJSON(m)
	timer := time.NewTimer(c.cfg.HangupWait)
	defer timer.Stop()
	select {
	case <-c.gone:
	case <-s.ctx.Done():
	case <-timer.C:
	}
	c.end("agent " + m.Event)
}

// close ends the peer connection; the media readers then stop.
func (c *rtcCall) close(*session) {
	c.end("call over")
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = c.pc.GracefulClose()
	}()
	timer := time.NewTimer(rtcCloseWait)
	defer timer.Stop()
	select {
	case <-closed:
	case <-timer.C:
		c.cfg.logf("call %s: the peer connection did not close within %v", c.label(), rtcCloseWait)
	}
}

// finish files what the ear heard.
func (c *rtcCall) finish() {
	c.mu.Lock()
	why, callID := c.why, c.callID
	c.mu.Unlock()
	if callID == "" {
		callID = c.id
	}
	c.cfg.logf("call %s: WebRTC call %s ended: %s", callID, c.id, why)
	c.side.file(c.ear, callID)
}

// rtcPlayer sends the agent's audio in real time: one 20 ms sample every
// 20 ms on the wall clock, nothing between utterances. A WebRTC peer
// paces itself; the caller plays what arrives as it arrives.
type rtcPlayer struct {
	c    *rtcCall
	wake chan struct{} // work was added, or stop
	idle chan struct{} // the player ran dry, or was cut
	quit chan struct{}

	mu       sync.Mutex
	queue    []*rtcUtterance
	cur      *rtcUtterance
	off      int // frames of cur sent
	stopped  bool
	stopOnce sync.Once
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (p *rtcPlayer) add(u *rtcUtterance) {
	p.mu.Lock()
	p.queue = append(p.queue, u)
	p.mu.Unlock()
	notify(p.wake)
}

// stop ends the player; what is unsent is dropped.
func (p *rtcPlayer) stop() {
	p.stopOnce.Do(func() {
		p.mu.Lock()
		p.stopped = true
		p.cur, p.queue = nil, nil
		p.mu.Unlock()
		close(p.quit)
	})
}

// cut stops the audio at once (barge-in): what is unsent is dropped, and
// the words of the part that went out are sent as its transcript (words
// spread evenly over the audio, as the caller reckons them).
func (p *rtcPlayer) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	u, off := p.cur, p.off
	p.cur, p.queue, p.off = nil, nil, 0
	if u != nil && off > 0 {
		p.transcriptLocked(u, len(u.words)*off/len(u.frames))
	}
	notify(p.idle)
}

// transcriptLocked sends the first n words of u as its transcript (under
// p.mu, so a cut never comes between an utterance's last packet and its
// transcript, and sends one transcript per utterance).
func (p *rtcPlayer) transcriptLocked(u *rtcUtterance, n int) {
	if p.c.cfg.NoTranscript {
		return
	}
	p.c.sendJSON(rtcTranscript{Event: "transcript", Transcript: twTranscriptBody{Text: strings.Join(u.words[:n], " ")}})
}

// waitIdle waits until everything queued has been sent (or cut), or the
// deadline.
func (p *rtcPlayer) waitIdle(deadline time.Time) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		p.mu.Lock()
		idle := p.stopped || (p.cur == nil && len(p.queue) == 0)
		p.mu.Unlock()
		if idle {
			return
		}
		select {
		case <-p.idle:
		case <-timer.C:
			return
		}
	}
}

// run is the player goroutine.
func (p *rtcPlayer) run(s *session) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var next time.Time // when the next frame is due, while frames follow on
	for {
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			return
		}
		if p.cur == nil && len(p.queue) > 0 {
			p.cur, p.queue, p.off = p.queue[0], p.queue[1:], 0
		}
		if p.cur == nil || len(p.cur.frames) == 0 {
			p.cur = nil
			p.mu.Unlock()
			notify(p.idle)
			select {
			case <-p.wake:
			case <-p.quit:
				return
			}
			continue
		}
		if s.ended.Load() {
			// The caller said stop: nothing more is sent.
			p.cur, p.queue = nil, nil
			p.mu.Unlock()
			continue
		}
		now := time.Now()
		if next.Before(now.Add(-audio.FrameDuration)) {
			next = now // after a pause, the clock starts again
		}
		err := p.c.track.WriteSample(media.Sample{Data: p.cur.frames[p.off], Duration: audio.FrameDuration})
		p.off++
		if p.off == len(p.cur.frames) {
			// The last packet is out: the words follow at once, so the
			// caller has them when the utterance ends.
			p.transcriptLocked(p.cur, len(p.cur.words))
			p.cur = nil
		}
		p.mu.Unlock()
		if err != nil {
			p.c.sendFailed(err)
		}
		next = next.Add(audio.FrameDuration)
		timer.Reset(time.Until(next))
		select {
		case <-timer.C:
		case <-p.quit:
			return
		}
	}
}

func (c *rtcCall) sendFailed(err error) {
	c.mu.Lock()
	first := !c.sendFail
	c.sendFail = true
	c.mu.Unlock()
	if first {
		c.cfg.logf("call %s: cannot send audio: %v", c.label(), err)
	}
}
