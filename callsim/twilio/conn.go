package twilio

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/callsim/internal/readdeadline"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// Speech gives the caller's words as audio; *audio.Cache is one.
type Speech interface {
	Speech(ctx context.Context, text string) (audio.PCM, error)
}

// Hearer turns one agent utterance, as played out, into text. Uncertain
// says the words cannot be trusted to carry the agent's claim; the caller
// then records the text with UncertainMarker so the scorer reads it as
// undecided, never as a pass.
type Hearer interface {
	Hear(ctx context.Context, pcm audio.PCM) (text string, uncertain bool, err error)
}

// UncertainMarker starts the recorded text of an utterance the recognizer
// could not vouch for (trace.UnclearText).
const UncertainMarker = trace.UnclearText

// RecognizedMarker starts the recorded text of an utterance the recognizer
// vouched for (trace.RecognizedText): its values are evidence of a match,
// never proof of a mismatch.
const RecognizedMarker = trace.RecognizedText

// Defaults for Transport.
const (
	// DefaultMaxFrameBytes bounds one frame from the agent (1 MiB: about
	// 90 s of μ-law in base64).
	DefaultMaxFrameBytes = 1 << 20
	// DefaultMaxQueuedAudio bounds the agent audio waiting to be played
	// (real time); more is a flood.
	DefaultMaxQueuedAudio = 2 * time.Minute
	// DefaultMaxUtterance bounds the audio kept of one agent utterance
	// for the recognizer; the rest is played but not transcribed.
	DefaultMaxUtterance = time.Minute
	// DefaultNoiseDBFS is the level background noise is mixed in at.
	DefaultNoiseDBFS = -30.0
	// DefaultHearTimeout bounds the transcription of one utterance.
	DefaultHearTimeout = 10 * time.Second
	// DefaultWriteTimeout bounds each write.
	DefaultWriteTimeout = 5 * time.Second
	// WaitStretch multiplies the script's bounds on waiting for an audio
	// call (callsim.Stretcher): real speech runs slower than the text
	// protocol's 300 ms a word.
	WaitStretch = 3.0
	// DryFrames is how many frames the agent's audio may run out before
	// its utterance counts as over (100 ms): the end is recorded that
	// much after the audio stopped.
	DryFrames = 5
	// Inbox is how many derived agent events may wait for Recv.
	Inbox = 256
)

// Transport dials agents that speak Twilio Media Streams. Speech is
// required; the rest have defaults.
type Transport struct {
	Dialer *websocket.Dialer // default websocket.DefaultDialer
	Header http.Header

	Speech  Speech          // the caller's voice
	Hearing Hearer          // nil: agent utterances are timed but not transcribed
	VAD     audio.VADConfig // zero: audio.DefaultVADConfig()

	NoiseDBFS      float64       // 0: DefaultNoiseDBFS
	Seed           int64         // for noise
	MaxFrameBytes  int64         // until SetFrameLimit
	MaxQueuedAudio time.Duration // 0: DefaultMaxQueuedAudio
	MaxUtterance   time.Duration // 0: DefaultMaxUtterance
	HearTimeout    time.Duration // 0: DefaultHearTimeout
	WriteTimeout   time.Duration // 0: DefaultWriteTimeout

	// RecordTo, when set, is where the call is written as a stereo WAV
	// (caller left, agent right) when the connection closes.
	RecordTo string

	// Per call (see ForCall): RecordDir, when set, holds one recording per
	// call, named after it; HearingFor builds the call's recognizer from
	// its catalogue and records.
	RecordDir  string
	HearingFor func(c callsim.CallSetup) Hearer
}

var (
	_ callsim.Transport = (*Transport)(nil)
	_ callsim.PerCall   = (*Transport)(nil)
)

// RecordingName is the file a call's recording gets in RecordDir.
func RecordingName(callID string) string { return callID + ".wav" }

// ForCall returns a copy of t set up for one call: its recording in
// RecordDir, its recognizer from HearingFor, its own noise seed.
func (t *Transport) ForCall(c callsim.CallSetup) callsim.Transport {
	cp := *t
	if t.RecordDir != "" {
		cp.RecordTo = filepath.Join(t.RecordDir, RecordingName(c.ID))
	}
	if t.HearingFor != nil {
		cp.Hearing = t.HearingFor(c)
	}
	h := fnv.New64a()
	h.Write([]byte(c.ID))
	cp.Seed = t.Seed ^ int64(h.Sum64())
	return &cp
}

// ErrFlood is returned by Recv when the agent queued more audio than
// MaxQueuedAudio.
var ErrFlood = errors.New("audio flood")

// Dial opens the WebSocket as Twilio does. ctx bounds the handshake only.
func (t *Transport) Dial(ctx context.Context, agentURL string) (callsim.Conn, error) {
	if t.Speech == nil {
		return nil, errors.New("twilio: no caller voice (Transport.Speech)")
	}
	d := t.Dialer
	if d == nil {
		d = websocket.DefaultDialer
	}
	ws, resp, err := d.DialContext(ctx, agentURL, t.Header)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("%w (HTTP %d)", err, resp.StatusCode)
		}
		return nil, err
	}
	c := &Conn{
		t:        t,
		ws:       ws,
		out:      make(chan callsim.Frame, Inbox),
		done:     make(chan struct{}),
		readDone: make(chan struct{}),
		paceDone: make(chan struct{}),
		paceStop: make(chan struct{}),
		speech:   map[string]audio.PCM{},
		sounds:   map[string]audio.PCM{},
		noises:   map[string]*playing{},
		lat:      newHistogram(),
		turns:    newTurns(),
	}
	vc := t.VAD
	if vc == (audio.VADConfig{}) {
		vc = audio.DefaultVADConfig()
	}
	if t.RecordTo != "" {
		// Only a recorded call keeps its audio: 32 KB a second otherwise
		// wasted on every call of a large run.
		c.rec = audio.NewRecorder()
	}
	c.vad = audio.NewVAD(vc)
	c.vadOnsetDBFS = vc.OnsetDBFS
	c.rd = readdeadline.New(ws)
	c.limit.Store(orInt(t.MaxFrameBytes, DefaultMaxFrameBytes))
	ws.SetPongHandler(func(string) error { c.rd.Alive(); return nil })
	ping := ws.PingHandler()
	ws.SetPingHandler(func(s string) error { c.rd.Alive(); return ping(s) })
	return c, nil
}

// Conn is one Twilio Media Streams call, seen by the simulator as native
// messages: what it sends becomes Twilio frames and sound; what the agent
// plays becomes agent_speech start/text/end and clear.
type Conn struct {
	t     *Transport
	ws    *websocket.Conn
	limit atomic.Int64

	wmu  sync.Mutex // one writer at a time; seq and chunk under it
	seq  int
	sids struct{ account, call, stream string }

	out       chan callsim.Frame
	done      chan struct{} // closed by Close
	closeOnce sync.Once
	closeErr  error
	readOnce  sync.Once
	readDone  chan struct{}
	readErr   atomic.Pointer[error]
	paceOnce  sync.Once // starts the pacer
	stopOnce  sync.Once // stops it
	paced     atomic.Bool
	paceDone  chan struct{}
	paceStop  chan struct{}
	pending   sync.WaitGroup // transcriptions under way
	waiting   atomic.Bool    // Recv is blocked on an empty inbox
	recvs     atomic.Int64   // Recv calls begun
	emitted   atomic.Int64   // events handed to the inbox
	recorded  atomic.Bool
	mediaBuf  []byte // under wmu

	mu sync.Mutex // everything below
	// The caller's side.
	speech  map[string]audio.PCM // prepared utterances by id
	sounds  map[string]audio.PCM // prepared noises by id
	talking []audio.PCM          // utterances started, in order; the first is playing
	talkPos int
	noises  map[string]*playing
	// The agent's side: μ-law not yet played, and marks at byte offsets
	// of everything ever queued.
	queue    []byte
	queued   int64 // bytes ever queued
	played   int64 // bytes ever played
	marks    []mark
	vad      *audio.VAD
	preroll  []audio.PCM
	speaking bool
	utt      int
	heard    audio.PCM // the current utterance so far
	rec      *audio.Recorder
	lat      *histogram
	flood    bool
	dry      int // ticks in a row with no agent audio to play
	// The agent's own words (EventTranscript), each for the audio queued
	// before it since the previous one (from segStart).
	transcripts []transcript
	segStart    int64
	ownWords    bool  // the agent has sent a transcript: no recognizer
	stopAt      int64 // bytes played when the utterance ending now stopped
	tick        int   // the frame clock: the tick being played
	turns       *turns
	toHear      []heardJob // utterances ended whose end is not yet emitted
	echoes      []Echo     // the first maxEchoes marks echoed, for Echoes
	// vadOnsetDBFS: an agent frame this loud counts as sound for timing.
	vadOnsetDBFS float64

	rd *readdeadline.Keeper // the read deadline: call deadline and idle timeout
}

type transcript struct {
	at    int64 // bytes queued when it arrived: the end of its audio
	words []string
}

type playing struct {
	pcm audio.PCM
	pos int
}

type mark struct {
	at   int64
	name string
}

var (
	_ callsim.FrameLimiter = (*Conn)(nil)
	_ callsim.Deadliner    = (*Conn)(nil)
	_ callsim.Voice        = (*Conn)(nil)
	_ callsim.Flusher      = (*Conn)(nil)
	_ callsim.Pacer        = (*Conn)(nil)
	_ callsim.TurnTaker    = (*Conn)(nil)
	_ callsim.Stretcher    = (*Conn)(nil)
)

func orInt(v, d int64) int64 {
	if v <= 0 {
		return d
	}
	return v
}

func orDur(v, d time.Duration) time.Duration {
	if v <= 0 {
		return d
	}
	return v
}

// SetFrameLimit bounds one frame from the agent, from the next read.
func (c *Conn) SetFrameLimit(n int64) { c.limit.Store(n) }

// SetCallDeadline makes reads fail after t.
func (c *Conn) SetCallDeadline(t time.Time) { c.rd.SetCallDeadline(t) }

// SetIdleTimeout makes Recv fail with callsim.ErrUnresponsive when the
// agent sends nothing, not even a pong, for d. The pacer pings four times
// per d: an agent that is silent but reads its socket always answers.
func (c *Conn) SetIdleTimeout(d time.Duration) { c.rd.SetIdleTimeout(d) }

func (c *Conn) pingEvery() time.Duration {
	if idle := c.rd.Idle(); idle > 0 {
		return max(idle/4, 50*time.Millisecond)
	}
	return 0
}

// write sends one frame; the caller holds wmu.
func (c *Conn) writeLocked(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_ = c.ws.SetWriteDeadline(time.Now().Add(orDur(c.t.WriteTimeout, DefaultWriteTimeout)))
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

func (c *Conn) nextSeq() string {
	c.seq++
	return strconv.Itoa(c.seq)
}

// PrepareSpeech synthesizes text (or takes it from the cache) for the
// utterance id and returns its length.
func (c *Conn) PrepareSpeech(ctx context.Context, id, text string) (time.Duration, error) {
	pcm, err := c.t.Speech.Speech(ctx, text)
	if err != nil {
		return 0, err
	}
	// Whole frames: the utterance ends on a frame boundary.
	if n := len(pcm) % audio.FrameSamples; n != 0 {
		pcm = append(pcm[:len(pcm):len(pcm)], make(audio.PCM, audio.FrameSamples-n)...)
	}
	pcm = trimEdges(pcm)
	c.mu.Lock()
	c.speech[id] = pcm
	c.mu.Unlock()
	return pcm.Duration(), nil
}

// PrepareRecording reads a recorded WAV (any PCM rate and channel count,
// made mono 8 kHz) as the utterance or the noise id. A recorded noise is
// mixed at the level it was recorded at.
func (c *Conn) PrepareRecording(_ context.Context, id, path string, noise bool) (time.Duration, error) {
	pcm, err := audio.ReadWAVFile(path)
	if err != nil {
		return 0, err
	}
	if n := len(pcm) % audio.FrameSamples; n != 0 {
		pcm = append(pcm, make(audio.PCM, audio.FrameSamples-n)...)
	}
	c.mu.Lock()
	if noise {
		c.sounds[id] = pcm
	} else {
		c.speech[id] = pcm
	}
	c.mu.Unlock()
	return pcm.Duration(), nil
}

// PrepareSound makes noise of kind, d long, mixed at the transport's level.
func (c *Conn) PrepareSound(_ context.Context, id, kind string, d time.Duration) error {
	pcm, err := audio.Noise(kind, d, c.t.Seed+int64(len(id))*7919)
	if err != nil {
		return err
	}
	level := c.t.NoiseDBFS
	if level == 0 {
		level = DefaultNoiseDBFS
	}
	if l := audio.LevelDBFS(pcm); l > audio.SilenceDBFS {
		audio.Gain(pcm, level-l)
	}
	c.mu.Lock()
	c.sounds[id] = pcm
	c.mu.Unlock()
	return nil
}

// Send turns one native message into Twilio frames or sound.
func (c *Conn) Send(ctx context.Context, m native.Message) error {
	switch m.Event {
	case native.EventStart:
		if m.Start == nil {
			return errors.New("twilio: start without payload")
		}
		return c.start(*m.Start)
	case native.EventSpeech:
		if m.Speech != nil && m.Speech.Phase == native.PhaseOnset {
			c.mu.Lock()
			if p, ok := c.speech[m.Speech.ID]; ok {
				c.talking = append(c.talking, p)
				delete(c.speech, m.Speech.ID)
			}
			c.mu.Unlock()
		}
		return c.err()
	case native.EventSound:
		if m.Sound != nil {
			c.mu.Lock()
			switch m.Sound.Phase {
			case native.PhaseOnset:
				if p, ok := c.sounds[m.Sound.ID]; ok {
					c.noises[m.Sound.ID] = &playing{pcm: p}
					delete(c.sounds, m.Sound.ID)
				}
			case native.PhaseOffset:
				delete(c.noises, m.Sound.ID)
			}
			c.mu.Unlock()
		}
		return c.err()
	case native.EventDTMF:
		if m.DTMF == nil {
			return nil
		}
		c.wmu.Lock()
		defer c.wmu.Unlock()
		for _, d := range m.DTMF.Digits {
			err := c.writeLocked(dtmfMsg{Event: EventDTMF, StreamSid: c.sids.stream, SequenceNumber: c.nextSeq(),
				DTMF: dtmfBody{Track: TrackDTMF, Digit: string(d)}})
			if err != nil {
				return err
			}
		}
		return nil
	case native.EventStop:
		c.stopPacer()
		c.wmu.Lock()
		defer c.wmu.Unlock()
		return c.writeLocked(stopMsg{Event: EventStop, SequenceNumber: c.nextSeq(), StreamSid: c.sids.stream,
			Stop: stopBody{AccountSid: c.sids.account, CallSid: c.sids.call}})
	}
	return nil
}

// err is the reader's error, if it stopped.
func (c *Conn) err() error {
	if p := c.readErr.Load(); p != nil {
		return *p
	}
	return nil
}

func (c *Conn) start(s native.Start) error {
	params := map[string]string{}
	for k, v := range s.CustomParameters {
		params[k] = v
	}
	cat, err := json.Marshal(s.Tools.Catalog)
	if err != nil {
		return err
	}
	params[ParamCallID] = s.CallID
	params[ParamToolsBaseURL] = s.Tools.BaseURL
	params[ParamToolsToken] = s.Tools.Token
	params[ParamToolsCatalog] = string(cat)
	c.wmu.Lock()
	c.sids.account = sid(AccountPrefix, s.CallID)
	c.sids.call = sid(CallPrefix, s.CallID)
	c.sids.stream = sid(StreamPrefix, s.CallID)
	err = c.writeLocked(connectedMsg{Event: EventConnect, Protocol: Protocol, Version: Version})
	if err == nil {
		err = c.writeLocked(startMsg{Event: EventStart, SequenceNumber: c.nextSeq(), StreamSid: c.sids.stream, Start: startBody{
			AccountSid: c.sids.account, StreamSid: c.sids.stream, CallSid: c.sids.call,
			Tracks: []string{TrackInbound}, CustomParameters: params,
			MediaFormat: mediaFormat{Encoding: Encoding, SampleRate: audio.SampleRate, Channels: 1},
		}})
	}
	c.wmu.Unlock()
	if err != nil {
		return err
	}
	c.paceOnce.Do(func() {
		c.paced.Store(true)
		go c.pace(time.Now())
	})
	return nil
}

// stopPacer ends the media stream and waits for the pacer to be gone.
func (c *Conn) stopPacer() {
	c.stopOnce.Do(func() { close(c.paceStop) })
	c.paceOnce.Do(func() {}) // never starts after this
	if c.paced.Load() {
		<-c.paceDone
	}
}

// Recv returns the next agent event.
func (c *Conn) Recv(ctx context.Context) (callsim.Frame, error) {
	c.recvs.Add(1)
	c.readOnce.Do(func() { go c.reader() })
	select {
	case f := <-c.out:
		return f, nil
	default:
	}
	c.waiting.Store(true)
	defer c.waiting.Store(false)
	select {
	case f := <-c.out:
		return f, nil
	case <-c.readDone:
		// Events derived before the reader stopped come first.
		select {
		case f := <-c.out:
			return f, nil
		default:
		}
		return callsim.Frame{}, c.err()
	case <-c.done:
		return callsim.Frame{}, errClosed
	case <-ctx.Done():
		return callsim.Frame{}, context.Cause(ctx)
	}
}

var errClosed = errors.New("connection closed")

// emit hands derived events to Recv; it gives up when the call closes.
func (c *Conn) emit(fs ...callsim.Frame) {
	for _, f := range fs {
		c.emitted.Add(1)
		select {
		case c.out <- f:
		case <-c.done:
			return
		}
	}
}

func speechFrame(phase, id, text string) callsim.Frame {
	m := native.Message{Event: native.EventAgentSpeech, AgentSpeech: &native.AgentSpeech{ID: id, Phase: phase, Text: text}}
	raw, _ := json.Marshal(m)
	return callsim.Frame{Message: m, Raw: raw}
}

// reader owns every read: media is queued for playout, marks are placed
// at the queue's end, clear drops the queue.
func (c *Conn) reader() {
	defer close(c.readDone)
	fail := func(err error) { c.readErr.Store(&err) }
	for {
		c.ws.SetReadLimit(c.limit.Load())
		typ, b, err := c.ws.ReadMessage()
		if err != nil {
			switch {
			case errors.Is(err, websocket.ErrReadLimit):
				err = fmt.Errorf("%w: over %d bytes", callsim.ErrOversizedFrame, c.limit.Load())
			case readdeadline.IsTimeout(err):
				err = c.rd.TimedOut()
			}
			fail(err)
			return
		}
		c.rd.Alive()
		if typ != websocket.TextMessage {
			fail(fmt.Errorf("%w: binary frame", callsim.ErrGarbageFrame))
			return
		}
		var m inbound
		if err := json.Unmarshal(b, &m); err != nil || m.Event == "" {
			fail(fmt.Errorf("%w: not a Twilio Media Streams message", callsim.ErrGarbageFrame))
			return
		}
		switch {
		case m.Event == EventMedia && m.Media != nil:
			ulaw, err := base64.StdEncoding.DecodeString(m.Media.Payload)
			if err != nil {
				fail(fmt.Errorf("%w: media payload is not base64", callsim.ErrGarbageFrame))
				return
			}
			if err := c.enqueue(ulaw); err != nil {
				fail(err)
				return
			}
		case m.Event == EventMark && m.Mark != nil:
			c.placeMark(m.Mark.Name)
		case m.Event == EventClear:
			c.clear()
		case m.Event == EventTranscript && m.Transcript != nil:
			c.mu.Lock()
			c.transcripts = append(c.transcripts, transcript{at: c.queued, words: strings.Fields(m.Transcript.Text)})
			c.mu.Unlock()
		default:
			raw := append([]byte(nil), b...)
			c.emit(callsim.Frame{Message: native.Message{Event: "twilio." + m.Event}, Raw: raw})
		}
	}
}

func (c *Conn) enqueue(ulaw []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	limit := audio.Samples(orDur(c.t.MaxQueuedAudio, DefaultMaxQueuedAudio))
	if len(c.queue)+len(ulaw) > limit {
		c.flood = true
		return fmt.Errorf("%w: over %s of agent audio queued", ErrFlood, orDur(c.t.MaxQueuedAudio, DefaultMaxQueuedAudio))
	}
	c.queue = append(c.queue, ulaw...)
	c.queued += int64(len(ulaw))
	return nil
}

// placeMark puts a mark after everything queued; with nothing queued it
// is reached at once.
func (c *Conn) placeMark(name string) {
	c.mu.Lock()
	if len(c.queue) == 0 {
		c.logEchoLocked(name, c.queued, false)
		c.mu.Unlock()
		c.echo([]string{name})
		return
	}
	c.marks = append(c.marks, mark{at: c.queued, name: name})
	c.mu.Unlock()
}

// clear drops the queued audio and echoes every pending mark at once, as
// Twilio does; the agent's utterance in progress stops here.
func (c *Conn) clear() {
	c.mu.Lock()
	names := make([]string, 0, len(c.marks))
	for _, m := range c.marks {
		names = append(names, m.name)
		c.logEchoLocked(m.name, m.at, true)
	}
	c.stopAt = c.played
	c.queue = c.queue[:0]
	c.played = c.queued
	c.marks = c.marks[:0]
	var fs []callsim.Frame
	id := c.uttID()
	if c.speaking {
		fs = c.endUtteranceLocked(true)
	}
	c.mu.Unlock()
	c.echo(names)
	m := native.Message{Event: native.EventClear, Clear: &native.Clear{ID: id}}
	raw, _ := json.Marshal(m)
	// The clear stands for the end: the scorer reads a cleared utterance
	// as stopped there.
	for i, f := range fs {
		if f.Message.AgentSpeech != nil && f.Message.AgentSpeech.Phase == native.PhaseEnd {
			fs[i] = callsim.Frame{Message: m, Raw: raw}
		}
	}
	if len(fs) == 0 {
		fs = []callsim.Frame{{Message: m, Raw: raw}}
	}
	c.emit(fs...)
	c.startHearing()
}

func (c *Conn) echo(names []string) {
	if len(names) == 0 {
		return
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for _, n := range names {
		if c.writeLocked(markMsg{Event: EventMark, SequenceNumber: c.nextSeq(), StreamSid: c.sids.stream, Mark: markBody{Name: n}}) != nil {
			return
		}
	}
}

func (c *Conn) uttID() string { return "a" + strconv.Itoa(c.utt) }

// pace is the call's 20 ms clock, its phase set by when the call started:
// each tick sends the caller's next frame and plays the agent's next
// frame. A tick that comes late sends at once, so the stream catches up
// and the lateness is measured, never hidden.
func (c *Conn) pace(t0 time.Time) {
	defer close(c.paceDone)
	stop := c.paceStop
	timer := time.NewTimer(0)
	defer timer.Stop()
	lastPing := t0
	for n := 0; ; n++ {
		due := t0.Add(time.Duration(n) * audio.FrameDuration)
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-stop:
				return
			case <-c.done:
				return
			}
		} else {
			select {
			case <-stop:
				return
			case <-c.done:
				return
			default:
			}
		}
		now := time.Now()
		c.mu.Lock()
		c.lat.add(now.Sub(due))
		c.mu.Unlock()
		at := time.Duration(n) * audio.FrameDuration
		if err := c.sendFrame(n, at); err != nil {
			return
		}
		c.playFrame(at)
		if every := c.pingEvery(); every > 0 && now.Sub(lastPing) >= every {
			lastPing = now
			_ = c.ws.WriteControl(websocket.PingMessage, nil, now.Add(orDur(c.t.WriteTimeout, DefaultWriteTimeout)))
		}
	}
}

// sendFrame sends the caller's frame n: the utterance playing (if any)
// with every noise mixed over it.
func (c *Conn) sendFrame(n int, at time.Duration) error {
	frame := make(audio.PCM, audio.FrameSamples)
	c.mu.Lock()
	c.tick = n
	talking, noise := len(c.talking) > 0, len(c.noises) > 0
	if talking {
		cur := c.talking[0]
		k := copy(frame, cur[c.talkPos:])
		c.talkPos += k
		if c.talkPos >= len(cur) {
			c.talking, c.talkPos = c.talking[1:], 0
		}
	}
	c.turns.caller(n, talking, talking && audio.LevelDBFS(frame) >= c.vadOnsetDBFS, noise)
	for id, p := range c.noises {
		k := min(len(p.pcm)-p.pos, audio.FrameSamples)
		audio.Mix(frame[:k], p.pcm[p.pos:p.pos+k], 0)
		p.pos += k
		if p.pos >= len(p.pcm) {
			delete(c.noises, id)
		}
	}
	if c.rec != nil {
		c.rec.Caller(at, frame)
	}
	c.mu.Unlock()
	ulaw := audio.EncodeMulaw(frame)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mediaBuf = appendMedia(c.mediaBuf[:0], c.nextSeq(), c.sids.stream, n+1, int(at/time.Millisecond), ulaw)
	_ = c.ws.SetWriteDeadline(time.Now().Add(orDur(c.t.WriteTimeout, DefaultWriteTimeout)))
	return c.ws.WriteMessage(websocket.TextMessage, c.mediaBuf)
}

// appendMedia writes a media frame exactly as json.Marshal(mediaMsg) would
// (field order, strings for every counter), without reflection: it goes
// out 50 times a second on every call.
func appendMedia(b []byte, seq, stream string, chunk, ms int, ulaw []byte) []byte {
	b = append(b, `{"event":"media","sequenceNumber":"`...)
	b = append(b, seq...)
	b = append(b, `","media":{"track":"inbound","chunk":"`...)
	b = strconv.AppendInt(b, int64(chunk), 10)
	b = append(b, `","timestamp":"`...)
	b = strconv.AppendInt(b, int64(ms), 10)
	b = append(b, `","payload":"`...)
	b = base64.StdEncoding.AppendEncode(b, ulaw)
	b = append(b, `"},"streamSid":"`...)
	b = append(b, stream...)
	return append(b, `"}`...)
}

// playFrame plays the agent's next 20 ms, echoes the marks it reaches and
// follows the agent's utterances: one starts where the detector hears an
// onset, and ends where it hears the offset or the audio runs out.
func (c *Conn) playFrame(at time.Duration) {
	c.mu.Lock()
	var fs []callsim.Frame
	var reached []string
	if len(c.queue) == 0 {
		// The agent's audio ran out. A short gap is a bot streaming
		// slower than real time for a moment, not the end of its turn.
		c.dry++
		if c.speaking && c.dry >= DryFrames {
			fs = c.endUtteranceLocked(false)
		}
		c.mu.Unlock()
		c.emit(fs...)
		c.startHearing()
		return
	}
	c.dry = 0
	k := min(len(c.queue), audio.FrameSamples)
	ulaw := make([]byte, audio.FrameSamples)
	copy(ulaw, c.queue[:k])
	for i := k; i < len(ulaw); i++ {
		ulaw[i] = audio.MulawSilence
	}
	c.queue = c.queue[k:]
	c.played += int64(k)
	for len(c.marks) > 0 && c.marks[0].at <= c.played {
		reached = append(reached, c.marks[0].name)
		c.logEchoLocked(c.marks[0].name, c.marks[0].at, false)
		c.marks = c.marks[1:]
	}
	pcm := audio.DecodeMulaw(ulaw)
	if c.rec != nil {
		c.rec.Agent(at, pcm)
	}
	ev := c.vad.Push(pcm)
	if c.speaking && c.vad.Speaking() && audio.LevelDBFS(pcm) >= c.vadOnsetDBFS {
		c.turns.agentFrame(c.tick)
	}
	switch {
	case !c.speaking && ev == audio.VADOnset:
		c.turns.agentOnset(c.tick - (c.vad.Frames() - 1 - c.vad.OnsetFrame()))
		c.speaking = true
		c.utt++
		c.heard = c.heard[:0]
		for _, p := range c.preroll {
			c.heard = append(c.heard, p...)
		}
		c.heard = append(c.heard, pcm...)
		fs = append(fs, speechFrame(native.PhaseStart, c.uttID(), ""))
	case c.speaking && ev == audio.VADOffset:
		c.keepLocked(pcm)
		fs = c.endUtteranceLocked(false)
	case c.speaking:
		c.keepLocked(pcm)
	}
	// The frames before an onset belong to the utterance it starts.
	c.preroll = append(c.preroll, pcm)
	if len(c.preroll) > 8 {
		c.preroll = c.preroll[1:]
	}
	c.mu.Unlock()
	c.echo(reached)
	c.emit(fs...)
	c.startHearing()
}

func (c *Conn) keepLocked(pcm audio.PCM) {
	if len(c.heard) < audio.Samples(orDur(c.t.MaxUtterance, DefaultMaxUtterance)) {
		c.heard = append(c.heard, pcm...)
	}
}

// endUtteranceLocked closes the utterance in progress; its text follows
// once the recognizer has heard it.
func (c *Conn) endUtteranceLocked(cleared bool) []callsim.Frame {
	if !cleared {
		c.stopAt = c.played
	}
	c.turns.agentStop(c.tick, cleared)
	c.speaking = false
	c.preroll = c.preroll[:0]
	// The detector may still be inside its hangover (the audio ran out or
	// was cleared): the next audio is a new utterance.
	c.vad.Reset()
	id := c.uttID()
	fs := []callsim.Frame{speechFrame(native.PhaseEnd, id, "")}
	if text, ok := c.ownWordsLocked(cleared); ok {
		fs = append(fs, speechFrame(native.PhaseText, id, text))
	} else if c.t.Hearing != nil && len(c.heard) > 0 && !c.ownWords {
		pcm := append(audio.PCM(nil), c.heard...)
		// Started once the end is out (startHearing), so the text never
		// overtakes it.
		c.pending.Add(1)
		c.toHear = append(c.toHear, heardJob{id: id, pcm: pcm})
	}
	c.heard = c.heard[:0]
	return fs
}

// ownWordsLocked gives the words of the utterance ending now from the
// agent's own transcript, if it sent one: all of them when its audio
// played to the end, the share played when it was cleared (words spread
// evenly over the audio, as the text protocol's agents speak them).
func (c *Conn) ownWordsLocked(cleared bool) (string, bool) {
	if len(c.transcripts) == 0 {
		return "", false
	}
	c.ownWords = true
	t := c.transcripts[0]
	n := len(t.words)
	if c.stopAt < t.at {
		if !cleared {
			// The detector heard a pause inside the utterance: its words
			// go with the part that reaches the transcript.
			return "", false
		}
		if span := t.at - c.segStart; span > 0 {
			n = int(int64(len(t.words)) * max(c.stopAt-c.segStart, 0) / span)
		}
	}
	c.transcripts = c.transcripts[1:]
	c.segStart = max(t.at, c.played)
	return strings.Join(t.words[:n], " "), true
}

type heardJob struct {
	id  string
	pcm audio.PCM
}

// startHearing starts the transcriptions of the utterances whose end has
// been emitted.
func (c *Conn) startHearing() {
	c.mu.Lock()
	jobs := c.toHear
	c.toHear = nil
	c.mu.Unlock()
	for _, j := range jobs {
		go c.hear(j.id, j.pcm)
	}
}

func (c *Conn) hear(id string, pcm audio.PCM) {
	defer c.pending.Done()
	ctx, cancel := context.WithTimeout(context.Background(), orDur(c.t.HearTimeout, DefaultHearTimeout))
	defer cancel()
	go func() {
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	text, uncertain, err := c.t.Hearing.Hear(ctx, pcm)
	if err != nil {
		text, uncertain = "", true
	}
	if uncertain {
		text = UncertainMarker + " " + text
	} else {
		text = RecognizedMarker + " " + text
	}
	c.emit(speechFrame(native.PhaseText, id, text))
}

// Flush closes the agent's utterance in progress, waits for every
// transcription, and returns once Recv has handed each derived event on
// and is waiting again.
func (c *Conn) Flush(ctx context.Context) error {
	c.mu.Lock()
	var fs []callsim.Frame
	if c.speaking && len(c.queue) == 0 {
		fs = c.endUtteranceLocked(false)
	}
	c.mu.Unlock()
	c.emit(fs...)
	c.startHearing()
	heard := make(chan struct{})
	go func() {
		c.pending.Wait()
		close(heard)
	}()
	select {
	case <-heard:
	case <-ctx.Done():
		return fmt.Errorf("transcription: %w", context.Cause(ctx))
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	// Taken is not enough: the caller of Recv records an event after
	// Recv returns it, and an inbox handed straight to a blocked Recv is
	// empty before that. Once Recv has been called again after the last
	// event, the caller is done with it.
	for len(c.out) > 0 || !c.waiting.Load() || c.recvs.Load() <= c.emitted.Load() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("%d agent events not taken: %w", len(c.out), context.Cause(ctx))
		}
	}
	return nil
}

// maxEchoes bounds the marks Echoes keeps (the first ones of the call).
const maxEchoes = 10000

// Echo is a mark the caller echoed back to the agent.
type Echo struct {
	Name string
	// Offset is where the mark sat in the agent's audio: bytes of μ-law
	// (8 per ms) the agent had queued before it, counted from the call's
	// first media frame.
	Offset int64
	// Played is where playout was when the mark was echoed, on the same
	// scale: Offset or more when playout reached it; less for a mark
	// flushed by a clear (Cleared), where it is what was heard before the
	// clear dropped the rest (a clear moves playout to the end of what
	// was queued).
	Played  int64
	Cleared bool      // echoed at a clear, before playout reached it
	Tick    int       // the frame clock's tick (20 ms each) it was echoed at
	Time    time.Time // when it was echoed (wall clock)
}

// Echoes lists the marks echoed so far, in order (the first 10,000):
// a read-only record of what the agent was told had been played.
func (c *Conn) Echoes() []Echo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Echo(nil), c.echoes...)
}

func (c *Conn) logEchoLocked(name string, offset int64, cleared bool) {
	if len(c.echoes) < maxEchoes {
		c.echoes = append(c.echoes, Echo{Name: name, Offset: offset, Played: c.played, Cleared: cleared, Tick: c.tick, Time: time.Now()})
	}
}

// WaitStretch says how much longer an audio call's waits may run than the
// script's (callsim.Stretcher).
func (c *Conn) WaitStretch() float64 { return WaitStretch }

// Lateness reports how late the caller's frames went out.
func (c *Conn) Lateness() callsim.Lateness {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lat.summary()
}

// Recording is the stereo WAV written at Close ("" when none was asked
// for or it could not be written).
func (c *Conn) Recording() string {
	if c.recorded.Load() {
		return c.t.RecordTo
	}
	return ""
}

// TurnTaking reports the call's turn-taking as the audio showed it.
func (c *Conn) TurnTaking() callsim.TurnTaking {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.turns.summary()
}

// Close stops the pacer, closes the socket, waits for the reader, and
// writes the recording if one was asked for. Safe to call more than once.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.stopPacer()
		close(c.done)
		_ = c.ws.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(500*time.Millisecond))
		c.closeErr = c.ws.Close()
		c.readOnce.Do(func() { close(c.readDone) })
		<-c.readDone
		c.pending.Wait()
		if c.rec != nil {
			if err := c.writeRecording(c.t.RecordTo); err != nil && c.closeErr == nil {
				c.closeErr = err
			} else if err == nil {
				c.recorded.Store(true)
			}
		}
	})
	return c.closeErr
}

func (c *Conn) writeRecording(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	c.mu.Lock()
	err = c.rec.WriteWAV(f)
	c.mu.Unlock()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Synthesized speech's edges: a synthesizer pads an utterance with a
// quarter to half a second of silence on each side, a pause the script
// never wrote. Two utterances the script puts in one turn (a correction
// straight after the request) would reach the agent with up to 0.7 s of
// silence between them, longer than an agent's end-of-turn wait, and
// become two turns. So the caller plays a synthesized utterance from
// speechEdge before its first frame above edgeFloorDBFS to speechEdge
// after its last, in whole frames: a frame of the cached audio stays a
// frame on the wire.
const (
	speechEdge    = 60 * time.Millisecond
	edgeFloorDBFS = -50.0 // below any frame a listener would call speech
	edgeFrames    = int(speechEdge / audio.FrameDuration)
)

// trimEdges drops the whole silent frames at pcm's ends beyond
// speechEdge. Silence throughout is kept as it is.
func trimEdges(pcm audio.PCM) audio.PCM {
	n := len(pcm) / audio.FrameSamples
	loud := func(i int) bool {
		return audio.LevelDBFS(pcm[i*audio.FrameSamples:(i+1)*audio.FrameSamples]) > edgeFloorDBFS
	}
	first := 0
	for first < n && !loud(first) {
		first++
	}
	if first == n {
		return pcm
	}
	last := n - 1
	for !loud(last) {
		last--
	}
	from, to := max(first-edgeFrames, 0), min(last+1+edgeFrames, n)
	return pcm[from*audio.FrameSamples : to*audio.FrameSamples]
}
