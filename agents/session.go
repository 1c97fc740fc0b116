package agents

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/callproof/callproof/protocol/native"
)

const writeWait = 5 * time.Second

// Inbox events: everything the engine loop reacts to arrives here, so the
// engine's state has one owner and needs no locks.
type (
	frameEvent  struct{ msg native.Message }
	closedEvent struct{}
	timerEvent  struct {
		kind timerKind
		id   int
	}
	acceptedEvent struct {
		job    int
		values map[string]string // a 200's record values; nil for a 202
	}
	doneEvent struct {
		job int
		out outcome
	}
	// gateEvent: a worker is about to send a consequential write and asks
	// whether it still may (reply is buffered; the engine never blocks).
	gateEvent struct {
		job   int
		reply chan bool
	}
)

type timerKind int

const (
	timerEOT timerKind = iota
	timerPrepare
	timerWord
	timerConfirm // the caller's chance to answer a read-back is over
)

// session is one call: a reader and a writer goroutine around the engine,
// which runs in the handler goroutine, plus at most one tool worker.
type session struct {
	ctx    context.Context
	cancel context.CancelFunc
	// ws is the call's WebSocket (native text and Twilio wires); nil over
	// WebRTC.
	ws     *websocket.Conn
	inbox  chan any
	outbox chan any // the wire's frames: native.Message in text mode
	jobs   sync.WaitGroup
	eng    *engine
	// tw is the call's wire (named for the first one, Twilio): textWire
	// for the native protocol, *twilioCall, *rtcCall.
	tw    wire
	ended atomic.Bool // the engine has stopped
}

// wire is what a session needs of its connection. The engine speaks native
// messages; a wire carries them in its own form.
type wire interface {
	// read is the reader goroutine: what arrives goes to the engine
	// (s.post); closedEvent when the connection is gone.
	read(s *session)
	// write is the writer goroutine: it drains s.outbox until it closes.
	write(s *session)
	// frames turns one engine message into what goes to the writer (none
	// when the wire has no form for it).
	frames(m native.Message) []any
	// speak turns an utterance's text into audio on the wire and returns
	// its length; 0 when the wire has no audio (the engine then times
	// words itself).
	speak(s *session, id, text string) time.Duration
	// close tears the connection down so the reader returns; called once
	// the writer is done.
	close(s *session)
	// finish runs after the reader has returned.
	finish()
}

// textWire is the native protocol: JSON text frames over s.ws.
type textWire struct{}

func (textWire) read(s *session)                              { s.read() }
func (textWire) write(s *session)                             { s.write() }
func (textWire) frames(m native.Message) []any                { return []any{m} }
func (textWire) speak(*session, string, string) time.Duration { return 0 }
func (textWire) close(s *session)                             { _ = s.ws.Close() }
func (textWire) finish()                                      {}

// runSession runs one call over ws; tw nil is the native protocol.
func runSession(parent context.Context, cfg Config, client *http.Client, ws *websocket.Conn, tw wire) {
	if tw == nil {
		tw = textWire{}
	}
	newSession(parent, cfg, client, ws, tw).run()
}

// newSession makes a call's session; nothing runs until run.
func newSession(parent context.Context, cfg Config, client *http.Client, ws *websocket.Conn, tw wire) *session {
	ctx, cancel := context.WithCancel(parent)
	s := &session{
		ctx:    ctx,
		cancel: cancel,
		ws:     ws,
		inbox:  make(chan any, 64),
		outbox: make(chan any, 256),
		tw:     tw,
	}
	s.eng = newEngine(cfg, client, s)
	return s
}

// run runs the call until it ends and everything it started but the tool
// worker is over; then it waits for the worker (each of its requests is
// bounded by the tool timeout).
func (s *session) run() {
	readerDone := make(chan struct{})
	writerDone := make(chan struct{})
	go func() { defer close(readerDone); s.tw.read(s) }()
	go func() { defer close(writerDone); s.tw.write(s) }()

	s.loop()
	s.eng.stopTimers()
	s.ended.Store(true)
	close(s.outbox) // the engine was the only sender; the writer drains it
	<-writerDone
	s.cancel() // cancels the worker's requests and unblocks the reader's posts
	s.tw.close(s)
	<-readerDone
	s.tw.finish()
	s.jobs.Wait()
}

// post hands an event to the engine unless the call is over.
func (s *session) post(ev any) {
	select {
	case s.inbox <- ev:
	case <-s.ctx.Done():
	}
}

// send queues one engine message for the writer, in the wire's form (in
// text mode, as it is).
func (s *session) send(m native.Message) {
	fs := s.tw.frames(m)
	if _, text := s.tw.(textWire); text {
		for range fs {
			s.eng.pace.wireAt(&s.eng.pace.sends)
		}
	}
	for _, f := range fs {
		s.queue(f)
	}
}

// queue queues a frame as it is for the writer.
func (s *session) queue(f any) {
	select {
	case s.outbox <- f:
	case <-s.ctx.Done():
	}
}

// speak plays an utterance's text as audio (audio mode) and returns its
// length; text mode has no audio and returns 0.
func (s *session) speak(id, text string) time.Duration {
	return s.tw.speak(s, id, text)
}

func (s *session) read() {
	for {
		_, data, err := s.ws.ReadMessage()
		if err != nil {
			s.post(closedEvent{})
			return
		}
		var m native.Message
		if json.Unmarshal(data, &m) != nil {
			continue // not a frame of ours: ignored, like an unknown event
		}
		s.post(frameEvent{msg: m})
	}
}

func (s *session) write() {
	for m := range s.outbox {
		_ = s.ws.SetWriteDeadline(time.Now().Add(writeWait))
		if err := s.ws.WriteJSON(m); err != nil {
			s.cancel() // peer gone: the engine stops at its next select
			for range s.outbox {
			}
			return
		}
	}
	_ = s.ws.WriteControl(websocket.CloseMessage,
		websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(writeWait))
}

func (s *session) loop() {
	for {
		select {
		case ev := <-s.inbox:
			if s.eng.handle(ev) {
				return
			}
		case <-s.ctx.Done():
			return
		}
	}
}

// spawn runs a tool worker.
//
// The worker outlives the call: a caller hanging up is not a withdrawal,
// so a write already on its way finishes (each request is bounded by the
// tool timeout) instead of being cut off mid-flight, which would leave its
// outcome unknown. Corrections still cancel it through the returned func,
// which also closes the worker's open connections before it returns (see
// withdrawals).
func (s *session) spawn(parent context.Context, w *worker, p plan) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	open := &withdrawals{}
	ctx = context.WithValue(ctx, withdrawalsKey{}, open)
	s.jobs.Add(1)
	go func() {
		defer s.jobs.Done()
		defer cancel()
		out := w.run(ctx, p)
		s.post(doneEvent{job: p.id, out: out})
	}()
	return func() {
		cancel()
		open.closeAll()
	}
}
