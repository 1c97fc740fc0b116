package twilio

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/callsim/audiocall"
	"github.com/callproof/callproof/callsim/internal/readdeadline"
	"github.com/callproof/callproof/callsim/internal/wsprobe"
	"github.com/callproof/callproof/protocol/native"
)

// Speech gives the caller's words as audio; *audio.Cache is one.
type Speech = audiocall.Speech

// Hearer turns one agent utterance, as played out, into text
// (audiocall.Hearer).
type Hearer = audiocall.Hearer

// UncertainMarker starts the recorded text of an utterance the recognizer
// could not vouch for (trace.UnclearText).
const UncertainMarker = audiocall.UncertainMarker

// RecognizedMarker starts the recorded text of an utterance the recognizer
// vouched for (trace.RecognizedText).
const RecognizedMarker = audiocall.RecognizedMarker

// Defaults for Transport.
const (
	// DefaultMaxFrameBytes bounds one frame from the agent (1 MiB: about
	// 90 s of μ-law in base64).
	DefaultMaxFrameBytes = 1 << 20
	// DefaultMaxQueuedAudio bounds the agent audio waiting to be played
	// (real time); more is a flood.
	DefaultMaxQueuedAudio = audiocall.DefaultMaxQueuedAudio
	// DefaultNoiseDBFS is the level background noise is mixed in at.
	DefaultNoiseDBFS = audiocall.DefaultNoiseDBFS
	// DefaultWriteTimeout bounds each write.
	DefaultWriteTimeout = 5 * time.Second
	// WaitStretch multiplies the script's bounds on waiting for an audio
	// call (callsim.Stretcher).
	WaitStretch = audiocall.WaitStretch
	// DefaultMaxMarkNameBytes bounds a mark's name: the caller keeps it
	// and echoes it back, so it is text like any other (the per-event
	// text cap, callsim.DefaultMaxEventTextBytes). A longer one is an
	// oversized frame.
	DefaultMaxMarkNameBytes = callsim.DefaultMaxEventTextBytes
	// DefaultMaxPendingMarks bounds the marks waiting for playout to
	// reach them; more is a flood. Each is echoed on the call's frame
	// clock, so their number bounds that work.
	DefaultMaxPendingMarks = 1000
	// MaxTranscriptBytes bounds the text kept of one transcript; the rest
	// is cut (audiocall.MaxTranscriptBytes).
	MaxTranscriptBytes = audiocall.MaxTranscriptBytes
	// MaxPendingTranscripts bounds the transcripts waiting for their
	// utterance; more is a flood (audiocall.MaxPendingTranscripts).
	MaxPendingTranscripts = audiocall.MaxPendingTranscripts
	// EventForeignStream is the event recorded on the call for each frame
	// from the agent that names another stream (or none): Twilio ignores
	// such frames, and so does the caller. Its payload is the frame's
	// event and streamSid, each cut to MaxForeignFieldBytes. It does not
	// by itself change the call's outcome.
	EventForeignStream = "twilio.foreign_stream"
	// MaxForeignFieldBytes bounds each field an EventForeignStream keeps.
	MaxForeignFieldBytes = 64
	// ReasonClosedCleanly is the hang-up's reason when the agent closes
	// the WebSocket with a normal closure (1000): its hang-up. Audio it
	// queued that was not played yet is never heard.
	ReasonClosedCleanly = "agent closed the stream (normal closure)"
	// DryFrames is how many frames the agent's audio may run out before
	// its utterance counts as over (100 ms).
	DryFrames = audiocall.DryFrames
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
	MaxUtterance   time.Duration // 0: audiocall.DefaultMaxUtterance
	HearTimeout    time.Duration // 0: audiocall.DefaultHearTimeout
	WriteTimeout   time.Duration // 0: DefaultWriteTimeout
	MaxMarkName    int           // bytes; 0: DefaultMaxMarkNameBytes
	MaxMarks       int           // pending; 0: DefaultMaxPendingMarks

	// RecordTo, when set, is where the call is written as a stereo WAV
	// (caller left, agent right) when the connection closes.
	RecordTo string

	// Per call (see ForCall): RecordDir, when set, holds one recording per
	// call, named after it; HearingFor builds the call's recognizer from
	// its catalogue and records.
	RecordDir  string
	HearingFor func(c callsim.CallSetup) Hearer

	// REST, when set, is the stub of Twilio's REST API the calls are
	// registered with while they run: an agent ends its call there.
	REST *REST
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
	cp.Seed = CallSeed(t.Seed, c.ID)
	return &cp
}

// CallSeed is a call's own noise seed, from the transport's and its id.
func CallSeed(seed int64, callID string) int64 {
	h := fnv.New64a()
	h.Write([]byte(callID))
	return seed ^ int64(h.Sum64())
}

// Config is the audio call the transport sets up.
func (t *Transport) Config() audiocall.Config {
	return audiocall.Config{Speech: t.Speech, Hearing: t.Hearing, VAD: t.VAD, NoiseDBFS: t.NoiseDBFS, Seed: t.Seed,
		MaxQueuedAudio: t.MaxQueuedAudio, MaxUtterance: t.MaxUtterance, HearTimeout: t.HearTimeout, RecordTo: t.RecordTo,
		// A Media Streams agent hears a pause in the media as the caller
		// keeping quiet; the WebSocket stays open.
		PauseToHear: true}
}

// ErrFlood is returned by Recv when the agent queued more audio than
// MaxQueuedAudio.
var ErrFlood = audiocall.ErrFlood

// Dial opens the WebSocket as Twilio does. ctx bounds the handshake only.
func (t *Transport) Dial(ctx context.Context, agentURL string) (callsim.Conn, error) {
	if t.Speech == nil {
		return nil, errors.New("twilio: no caller voice (Transport.Speech)")
	}
	ws, err := wsprobe.Dial(ctx, t.Dialer, agentURL, t.Header)
	if err != nil {
		return nil, err
	}
	c := &Conn{t: t, ws: ws}
	c.Call = audiocall.New(t.Config(), c, c.reader)
	c.rd = readdeadline.New(ws)
	c.limit.Store(orInt(t.MaxFrameBytes, DefaultMaxFrameBytes))
	ws.SetPongHandler(func(string) error { c.rd.Alive(); return nil })
	ping := ws.PingHandler()
	ws.SetPingHandler(func(s string) error { c.rd.Alive(); return ping(s) })
	return c, nil
}

// Conn is one Twilio Media Streams call, seen by the simulator as native
// messages (audiocall.Call): what it sends becomes Twilio frames and
// sound; what the agent plays becomes agent_speech start/text/end and
// clear.
type Conn struct {
	*audiocall.Call
	t     *Transport
	ws    *websocket.Conn
	limit atomic.Int64

	wmu      sync.Mutex // one writer at a time; seq and sids under it
	seq      int
	sids     struct{ account, call, stream string }
	mediaBuf []byte
	// readBuf holds the message being read, reused (up to
	// maxKeptReadBuf): an agent that sends each reply whole sends
	// messages of tens of kilobytes, and 200 calls' greetings read into
	// fresh, repeatedly grown buffers within the ramp kept the collector
	// busy at the moment every call's clock starts.
	readBuf  bytes.Buffer
	lastPing time.Time // the frame clock's only

	rd *readdeadline.Keeper // the read deadline: call deadline and idle timeout

	foreign atomic.Int64           // frames ignored for naming another stream
	stream  atomic.Pointer[string] // sids.stream, for the reader
}

var (
	_ callsim.FrameLimiter = (*Conn)(nil)
	_ callsim.Deadliner    = (*Conn)(nil)
	_ callsim.Voice        = (*Conn)(nil)
	_ callsim.Flusher      = (*Conn)(nil)
	_ callsim.Pacer        = (*Conn)(nil)
	_ callsim.TurnTaker    = (*Conn)(nil)
	_ callsim.Stretcher    = (*Conn)(nil)
	_ audiocall.Wire       = (*Conn)(nil)
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

// Send turns one native message into Twilio frames or sound.
func (c *Conn) Send(ctx context.Context, m native.Message) error {
	switch m.Event {
	case native.EventStart:
		if m.Start == nil {
			return errors.New("twilio: start without payload")
		}
		return c.start(*m.Start)
	case native.EventSpeech, native.EventSound:
		return c.Play(m)
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
		c.StopClock()
		c.wmu.Lock()
		defer c.wmu.Unlock()
		return c.writeLocked(stopMsg{Event: EventStop, SequenceNumber: c.nextSeq(), StreamSid: c.sids.stream,
			Stop: stopBody{AccountSid: c.sids.account, CallSid: c.sids.call}})
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
	if s.CallDate != "" {
		params[ParamCallDate] = s.CallDate
	}
	if s.TimeZone != "" {
		params[ParamTimeZone] = s.TimeZone
	}
	if s.Tools.MCPURL != "" {
		params[ParamToolsMCPURL] = s.Tools.MCPURL
	}
	c.wmu.Lock()
	c.sids.account = sid(AccountPrefix, s.CallID)
	c.sids.call = sid(CallPrefix, s.CallID)
	c.sids.stream = sid(StreamPrefix, s.CallID)
	c.stream.Store(&c.sids.stream)
	err = c.writeLocked(connectedMsg{Event: EventConnect, Protocol: Protocol, Version: Version})
	if err == nil {
		err = c.writeLocked(startMsg{Event: EventStart, SequenceNumber: c.nextSeq(), StreamSid: c.sids.stream, Start: startBody{
			AccountSid: c.sids.account, StreamSid: c.sids.stream, CallSid: c.sids.call,
			Tracks: []string{TrackInbound}, CustomParameters: params,
			MediaFormat: mediaFormat{Encoding: Encoding, SampleRate: audio.SampleRate, Channels: 1},
		}})
	}
	c.lastPing = time.Now()
	call := c.sids.call
	c.wmu.Unlock()
	if err != nil {
		return err
	}
	if c.t.REST != nil {
		c.t.REST.add(call, c)
	}
	c.StartClock()
	return nil
}

// reader owns every read: media is queued for playout, marks are placed
// at the queue's end, clear drops the queue.
func (c *Conn) reader() error {
	for {
		c.ws.SetReadLimit(c.limit.Load())
		typ, b, err := c.readMessage()
		if err != nil {
			switch {
			case errors.Is(err, websocket.ErrReadLimit):
				err = fmt.Errorf("%w: over %d bytes", callsim.ErrOversizedFrame, c.limit.Load())
			case readdeadline.IsTimeout(err):
				err = c.rd.TimedOut()
			case websocket.IsCloseError(err, websocket.CloseNormalClosure):
				// Twilio has no hang-up event: an agent ends the call
				// by closing its stream.
				c.HangUp(ReasonClosedCleanly)
			}
			return err
		}
		c.rd.Alive()
		if typ != websocket.TextMessage {
			return fmt.Errorf("%w: binary frame", callsim.ErrGarbageFrame)
		}
		var m inbound
		if err := json.Unmarshal(b, &m); err != nil || m.Event == "" {
			return fmt.Errorf("%w: not a Twilio Media Streams message", callsim.ErrGarbageFrame)
		}
		if m.StreamSid != c.streamSid() {
			c.foreign.Add(1)
			raw, _ := json.Marshal(foreignFrame{Event: clipRunes(m.Event, MaxForeignFieldBytes), StreamSid: clipRunes(m.StreamSid, MaxForeignFieldBytes)})
			c.Emit(callsim.Frame{Message: native.Message{Event: EventForeignStream}, Raw: raw})
			continue
		}
		switch {
		case m.Event == EventMedia && m.Media != nil:
			ulaw, err := base64.StdEncoding.DecodeString(m.Media.Payload)
			if err != nil {
				return fmt.Errorf("%w: media payload is not base64", callsim.ErrGarbageFrame)
			}
			if err := c.Enqueue(ulaw); err != nil {
				return err
			}
		case m.Event == EventMark && m.Mark != nil:
			if n := orInt(int64(c.t.MaxMarkName), DefaultMaxMarkNameBytes); int64(len(m.Mark.Name)) > n {
				return fmt.Errorf("%w: mark name over %d bytes", callsim.ErrOversizedFrame, n)
			}
			if err := c.PlaceMark(m.Mark.Name, int(orInt(int64(c.t.MaxMarks), DefaultMaxPendingMarks))); err != nil {
				return err
			}
		case m.Event == EventClear:
			c.Clear()
		case m.Event == EventTranscript && m.Transcript != nil:
			if err := c.Transcript(m.Transcript.Text); err != nil {
				return err
			}
		default:
			raw := append([]byte(nil), b...)
			c.Emit(callsim.Frame{Message: native.Message{Event: "twilio." + m.Event}, Raw: raw})
		}
	}
}

// maxKeptReadBuf bounds the read buffer a call keeps between messages.
const maxKeptReadBuf = 256 << 10

// readMessage reads the next message into readBuf; the bytes are valid
// until the next call.
func (c *Conn) readMessage() (int, []byte, error) {
	if c.readBuf.Cap() > maxKeptReadBuf {
		c.readBuf = bytes.Buffer{}
	}
	c.readBuf.Reset()
	typ, r, err := c.ws.NextReader()
	if err != nil {
		return 0, nil, err
	}
	if _, err := c.readBuf.ReadFrom(r); err != nil {
		return 0, nil, err
	}
	return typ, c.readBuf.Bytes(), nil
}

// ForeignFrames counts the frames ignored for naming another stream
// (EventForeignStream).
func (c *Conn) ForeignFrames() int64 { return c.foreign.Load() }

// streamSid is the stream's id, read without wmu: a writer stalled on an
// agent that does not read must not stall the reader.
func (c *Conn) streamSid() string {
	if p := c.stream.Load(); p != nil {
		return *p
	}
	return ""
}

// foreignFrame is what EventForeignStream records of an ignored frame.
type foreignFrame struct {
	Event     string `json:"event"`
	StreamSid string `json:"streamSid"`
}

// clipRunes cuts s to at most n bytes without splitting a rune.
func clipRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Echo sends the agent a mark frame per name (audiocall.Wire).
func (c *Conn) Echo(names []string) {
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

// SendFrame sends the caller's frame n as a media frame (audiocall.Wire).
func (c *Conn) SendFrame(n int, at time.Duration, ulaw []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mediaBuf = appendMedia(c.mediaBuf[:0], c.nextSeq(), c.sids.stream, n+1, int(at/time.Millisecond), ulaw)
	_ = c.ws.SetWriteDeadline(time.Now().Add(orDur(c.t.WriteTimeout, DefaultWriteTimeout)))
	return c.ws.WriteMessage(websocket.TextMessage, c.mediaBuf)
}

// Tick pings the agent four times per idle timeout (audiocall.Wire).
func (c *Conn) Tick(now time.Time) {
	if every := c.pingEvery(); every > 0 && now.Sub(c.lastPing) >= every {
		c.lastPing = now
		_ = c.ws.WriteControl(websocket.PingMessage, nil, now.Add(orDur(c.t.WriteTimeout, DefaultWriteTimeout)))
	}
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

// Close stops the pacer, closes the socket, waits for the reader, and
// writes the recording if one was asked for. Safe to call more than once.
func (c *Conn) Close() error {
	if c.t.REST != nil {
		c.wmu.Lock()
		call := c.sids.call
		c.wmu.Unlock()
		c.t.REST.remove(call, c)
	}
	return c.Shutdown(func() error {
		_ = c.ws.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(500*time.Millisecond))
		return c.ws.Close()
	})
}
