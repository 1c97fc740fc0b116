package pipecateval

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/internal/rtvi"
	"github.com/callproof/callproof/callsim/internal/wsprobe"
	"github.com/callproof/callproof/protocol/native"
)

// Wire facts of Pipecat's eval dialect (pipecat-ai 1.14; docs/PROTOCOL.md,
// "Pipecat eval dialect").
const (
	// Label is every RTVI message's label.
	Label = rtvi.Label
	// RTVIVersion is the protocol version client-ready announces.
	RTVIVersion = rtvi.Version
	// StartType is the client-message type ("t") carrying the call's data.
	StartType = rtvi.StartType
	// ReasonClosedCleanly is the hang-up's reason when the bot closes the
	// socket with a normal closure (1000) before the caller's stop.
	ReasonClosedCleanly = "bot closed the connection (normal closure)"
	// DefaultMaxFrameBytes bounds a frame until SetFrameLimit (1 MiB).
	DefaultMaxFrameBytes = 1 << 20
	// DefaultWriteTimeout bounds each write.
	DefaultWriteTimeout = 5 * time.Second
	// CloseGrace bounds the close frame Close sends.
	CloseGrace = 500 * time.Millisecond
)

// Transport dials Pipecat bots over the eval wire. The zero value is ready
// to use.
type Transport struct {
	Dialer        *websocket.Dialer // nil: websocket.DefaultDialer
	Header        http.Header       // extra handshake headers
	MaxFrameBytes int64             // until SetFrameLimit; default 1 MiB
	WriteTimeout  time.Duration     // per message; default 5s
}

var (
	_ callsim.Transport = (*Transport)(nil)
	_ callsim.Prober    = (*Transport)(nil)
)

// Dial opens the WebSocket. ctx bounds the handshake only; nothing is
// sent until the simulator's start.
func (t *Transport) Dial(ctx context.Context, agentURL string) (callsim.Conn, error) {
	ws, err := wsprobe.Dial(ctx, t.Dialer, agentURL, t.Header)
	if err != nil {
		return nil, err
	}
	c := &Conn{ws: ws, writeTimeout: t.WriteTimeout}
	if c.writeTimeout <= 0 {
		c.writeTimeout = DefaultWriteTimeout
	}
	limit := t.MaxFrameBytes
	if limit <= 0 {
		limit = DefaultMaxFrameBytes
	}
	c.limit.Store(limit)
	return c, nil
}

// Probe upgrades the WebSocket as Dial does and closes it before any
// message: the bot sees a connection that never said eval-connect.
func (t *Transport) Probe(ctx context.Context, agentURL string) error {
	return wsprobe.Probe(ctx, t.Dialer, agentURL, t.Header)
}

// Conn is one call over the eval wire. Send writes on the caller's
// goroutine; Recv reads and translates on its own (callsim's pump).
type Conn struct {
	ws           *websocket.Conn
	writeTimeout time.Duration
	limit        atomic.Int64

	wmu    sync.Mutex // serializes writes
	nextID int        // guarded by wmu: RTVI message ids

	stopped   atomic.Bool // the caller sent its stop: a close is no hang-up
	closeOnce sync.Once
	closeErr  error

	// Recv's goroutine only.
	pending   []callsim.Frame
	readErr   error
	dec       rtvi.Decoder
	utterance int    // utterances opened so far
	open      string // the utterance being spoken ("" none)
	spoken    string // its words so far
}

var _ callsim.FrameLimiter = (*Conn)(nil)

// SetFrameLimit sets the largest frame accepted, from the next read.
func (c *Conn) SetFrameLimit(n int64) { c.limit.Store(n) }

// Send translates one native message into the RTVI messages it stands for.
func (c *Conn) Send(ctx context.Context, m native.Message) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	switch {
	case m.Event == native.EventStart && m.Start != nil:
		return c.start(ctx, m.Start)
	case m.Event == native.EventSpeech && m.Speech != nil:
		// A whole utterance is one send-text, as Pipecat's own harness sends
		// it; run_immediately interrupts the bot as a barge-in would.
		if m.Speech.Phase != native.PhaseFinal || strings.TrimSpace(m.Speech.Text) == "" {
			return nil
		}
		return c.write(ctx, "send-text", map[string]any{"content": m.Speech.Text,
			"options": map[string]any{"run_immediately": true, "audio_response": false}})
	case m.Event == native.EventDTMF && m.DTMF != nil:
		d := rtvi.DTMF(m.DTMF.Digits)
		if d == nil {
			return nil
		}
		return c.write(ctx, "dtmf", d)
	case m.Event == native.EventStop:
		c.stopped.Store(true)
		return c.write(ctx, "disconnect-bot", nil)
	}
	// Sound has no text form; nothing else goes to the bot.
	return nil
}

// start opens the call: the eval's connection flags first (text mode),
// the call's data, the function-call report level that names tools and
// their arguments, then client-ready.
func (c *Conn) start(ctx context.Context, s *native.Start) error {
	params, err := rtvi.StartParams(s)
	if err != nil {
		return err
	}
	steps := []struct {
		typ  string
		data any
	}{
		{"client-message", rtvi.ClientMessage("eval-connect", map[string]any{"skip_tts": true})},
		{"client-message", rtvi.ClientMessage(StartType, params)},
		{"client-message", rtvi.ClientMessage("eval-configure", map[string]any{
			"function_call_report_level": map[string]string{"*": "full"}})},
		{"client-ready", rtvi.ClientReady()},
	}
	for _, st := range steps {
		if err := c.write(ctx, st.typ, st.data); err != nil {
			return err
		}
	}
	return nil
}

// write sends one RTVI message, bounded by the write timeout and ctx.
func (c *Conn) write(ctx context.Context, typ string, data any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.nextID++
	b, err := rtvi.Encode(typ, "callproof-"+strconv.Itoa(c.nextID), data)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(c.writeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.ws.SetWriteDeadline(deadline)
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

// Recv returns the next native frame the bot's RTVI events stand for.
// Events with no native meaning that tell what the bot did (function-call
// start and stop, what it heard, errors) are passed on verbatim, so the
// history keeps them as notes; the rest (metrics, LLM and TTS markers) are
// dropped.
func (c *Conn) Recv(ctx context.Context) (callsim.Frame, error) {
	for len(c.pending) == 0 {
		if c.readErr != nil {
			return callsim.Frame{}, c.readErr
		}
		if err := ctx.Err(); err != nil {
			return callsim.Frame{}, context.Cause(ctx)
		}
		stop := context.AfterFunc(ctx, func() { _ = c.ws.SetReadDeadline(time.Unix(1, 0)) })
		err := c.readOne()
		stop()
		if err != nil {
			if ctx.Err() != nil {
				err = context.Cause(ctx)
			}
			c.readErr = err
		}
	}
	f := c.pending[0]
	c.pending = c.pending[1:]
	return f, nil
}

// readOne reads one message and queues what it stands for.
func (c *Conn) readOne() error {
	c.ws.SetReadLimit(c.limit.Load())
	typ, b, err := c.ws.ReadMessage()
	if err != nil {
		switch {
		case errors.Is(err, websocket.ErrReadLimit):
			return fmt.Errorf("%w: over %d bytes", callsim.ErrOversizedFrame, c.limit.Load())
		case websocket.IsCloseError(err, websocket.CloseNormalClosure) && !c.stopped.Load():
			// A bot ends the call by ending its pipeline, which closes
			// the socket: its hang-up, after its last words.
			c.endUtterance()
			c.emit(native.Message{Event: native.EventHangup, Hangup: &native.Hangup{Reason: ReasonClosedCleanly}}, nil)
		}
		return err
	}
	if typ != websocket.TextMessage {
		return fmt.Errorf("%w: binary frame", callsim.ErrGarbageFrame)
	}
	m, ok := rtvi.Parse(b)
	if !ok {
		return fmt.Errorf("%w: not an RTVI message", callsim.ErrGarbageFrame)
	}
	c.translate(m, b)
	return nil
}

func (c *Conn) emit(m native.Message, raw []byte) {
	c.pending = append(c.pending, callsim.Frame{Message: m, Raw: raw})
}

func (c *Conn) speech(phase, text string, raw []byte) {
	c.emit(native.Message{Event: native.EventAgentSpeech, AgentSpeech: &native.AgentSpeech{ID: c.open, Phase: phase, Text: text}}, raw)
}

func (c *Conn) beginUtterance(raw []byte) {
	if c.open != "" {
		return
	}
	c.utterance++
	c.open, c.spoken = "u"+strconv.Itoa(c.utterance), ""
	c.speech(native.PhaseStart, "", raw)
}

func (c *Conn) endUtterance() {
	if c.open == "" {
		return
	}
	c.speech(native.PhaseEnd, "", nil)
	c.open = ""
}

// say adds words to the open utterance: its text event carries all of
// them so far.
func (c *Conn) say(text string, raw []byte) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	if c.spoken != "" {
		text = c.spoken + " " + text
	}
	c.spoken = text
	c.speech(native.PhaseText, text, raw)
}

func (c *Conn) translate(m rtvi.Message, raw []byte) {
	e := c.dec.Decode(m)
	switch e.Kind {
	case rtvi.Ready:
		c.emit(native.Message{Event: native.EventAck, Ack: &native.Ack{TimeScale: 1, Agent: "pipecat"}}, raw)
	case rtvi.StartedSpeaking:
		c.beginUtterance(raw)
	case rtvi.StoppedSpeaking:
		c.endUtterance()
	case rtvi.Interrupted:
		if c.open != "" {
			c.emit(native.Message{Event: native.EventClear, Clear: &native.Clear{ID: c.open}}, raw)
			c.open = ""
		}
	case rtvi.Words:
		if e.Unspoken && c.open == "" {
			// Text the bot will not speak (text mode) is an utterance of
			// its own: it has no speaking time to belong to.
			c.beginUtterance(raw)
			c.say(e.Text, raw)
			c.endUtterance()
			return
		}
		c.beginUtterance(raw)
		c.say(e.Text, raw)
	case rtvi.Tool:
		c.emit(native.Message{Event: native.EventToolIntent, ToolIntent: e.Tool}, raw)
	case rtvi.Note:
		c.emit(native.Message{Event: "rtvi." + m.Type}, raw)
	}
}

// Close says goodbye and closes the socket, which ends a blocked Recv.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.stopped.Store(true)
		_ = c.ws.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(CloseGrace))
		c.closeErr = c.ws.Close()
	})
	return c.closeErr
}
