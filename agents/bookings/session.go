package bookings

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/callproof/callproof/protocol/native"
)

// Timings in script time (multiplied by the call's time scale).
const (
	thinkMin     = 150 * time.Millisecond // before the desk reacts to words
	thinkSpread  = 250 * time.Millisecond // think is thinkMin + [0, thinkSpread)
	perWord      = 230 * time.Millisecond // speaking pace
	readTimeout  = 2 * time.Second
	writeTimeout = 4 * time.Second
	retryPause   = 200 * time.Millisecond
	breath       = 60 * time.Millisecond // between a read-back and its write
	pollEvery    = 250 * time.Millisecond
	pollMax      = 20 // polls of a pending write before giving up on it
	writeTries   = 3  // attempts of one write before reporting failure
	readTries    = 3
	// toolFloor bounds a tool timeout from below in real time: a loaded
	// machine must not turn a slow answer into a lost one at a small scale.
	toolFloor = 1500 * time.Millisecond
)

// session is one call. Everything but the reader, the writer and the tool
// requests runs on the loop goroutine, which owns all fields below.
type session struct {
	srv *Server
	v   Variant
	ws  *websocket.Conn

	ctx    context.Context
	cancel context.CancelFunc
	in     chan func() // work for the loop
	out    chan native.Message

	callID string
	api    toolAPI
	scale  float64
	rng    *rand.Rand

	said    int        // agent utterance counter
	cur     *utterance // being spoken
	queue   []*utterance
	resume  []func() // continuations of speech cut by a barge-in
	version int      // self-report version
	keyN    int
	task    *task
}

// utterance is one thing the desk says; then runs when it was fully said.
type utterance struct {
	id    string
	text  string
	then  func()
	timer *time.Timer
}

func newSession(srv *Server, v Variant, ws *websocket.Conn) *session {
	ctx, cancel := context.WithCancel(srv.base)
	return &session{
		srv: srv, v: v, ws: ws, ctx: ctx, cancel: cancel,
		in:  make(chan func(), 256),
		out: make(chan native.Message, 1024),
	}
}

// run serves the call until stop, a broken connection or Close.
func (s *session) run() {
	defer s.ws.Close()
	defer s.cancel()
	go s.writer()
	go s.reader()
	for {
		select {
		case <-s.ctx.Done():
			s.silence()
			return
		case fn := <-s.in:
			fn()
		}
	}
}

// silence stops speech timers when the call ends.
func (s *session) silence() {
	if s.cur != nil && s.cur.timer != nil {
		s.cur.timer.Stop()
	}
	s.cur, s.queue = nil, nil
}

func (s *session) reader() {
	defer s.cancel()
	for {
		_, data, err := s.ws.ReadMessage()
		if err != nil {
			return
		}
		var m native.Message
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		if m.Event == native.EventStop {
			return
		}
		if !s.post(func() { s.frame(m) }) {
			return
		}
	}
}

func (s *session) writer() {
	for {
		select {
		case <-s.ctx.Done():
			return
		case m := <-s.out:
			b, err := json.Marshal(m)
			if err != nil {
				continue
			}
			_ = s.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if s.ws.WriteMessage(websocket.TextMessage, b) != nil {
				s.cancel()
				return
			}
		}
	}
}

// post hands fn to the loop; false once the call is over.
func (s *session) post(fn func()) bool {
	select {
	case s.in <- fn:
		return true
	case <-s.ctx.Done():
		return false
	}
}

func (s *session) send(m native.Message) {
	select {
	case s.out <- m:
	case <-s.ctx.Done():
	}
}

// scaled converts script time to real time for this call.
func (s *session) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * s.scale)
}

// later runs fn on the loop after d of script time.
func (s *session) later(d time.Duration, fn func()) *time.Timer {
	return time.AfterFunc(s.scaled(d), func() { s.post(fn) })
}

// think runs fn after the desk's reaction time.
func (s *session) think(fn func()) {
	d := thinkMin + time.Duration(s.rng.Int64N(int64(thinkSpread)))
	s.later(d, fn)
}

// frame handles one caller frame on the loop.
func (s *session) frame(m native.Message) {
	switch m.Event {
	case native.EventStart:
		if m.Start != nil {
			s.start(m.Start)
		}
	case native.EventSpeech:
		if m.Speech == nil {
			return
		}
		switch m.Speech.Phase {
		case native.PhaseOnset:
			s.bargeIn()
		case native.PhaseFinal:
			s.hear(m.Speech.Text)
		}
	case native.EventSound:
		if m.Sound != nil && m.Sound.Phase == native.PhaseOnset && s.v.NoiseBargeIn && s.cur != nil {
			s.bargeIn()
			s.dropTask()
		}
	}
}

func (s *session) start(st *native.Start) {
	if name := st.CustomParameters["variant"]; name != "" {
		if v, err := VariantByName(name); err == nil {
			s.v = v
		}
	}
	s.callID = st.CallID
	s.scale = st.TimeScale
	if s.scale <= 0 {
		s.scale = 1
	}
	h := fnv.New64a()
	h.Write([]byte(st.CallID + "/" + s.v.Name))
	s.rng = rand.New(rand.NewPCG(h.Sum64(), 0x6b6f))
	s.api = toolAPI{client: s.srv.client, base: s.srv.base, baseURL: st.Tools.BaseURL, token: st.Tools.Token}
	s.send(native.Message{Event: native.EventAck, Ack: &native.Ack{TimeScale: s.scale, Agent: "bookings-desk/" + s.v.Name}})
	s.say(lineGreeting, nil)
}

// say speaks text after whatever is being said; then runs once it was
// fully said (not when it is cut off).
func (s *session) say(text string, then func()) {
	s.said++
	u := &utterance{id: "b" + strconv.Itoa(s.said), text: text, then: then}
	if s.cur != nil {
		s.queue = append(s.queue, u)
		return
	}
	s.speak(u)
}

func (s *session) speak(u *utterance) {
	s.cur = u
	s.send(native.Message{Event: native.EventAgentSpeech, AgentSpeech: &native.AgentSpeech{ID: u.id, Phase: native.PhaseStart}})
	s.send(native.Message{Event: native.EventAgentSpeech, AgentSpeech: &native.AgentSpeech{ID: u.id, Phase: native.PhaseText, Text: u.text}})
	words := len(strings.Fields(u.text))
	u.timer = s.later(time.Duration(words)*perWord, func() { s.spoken(u) })
}

func (s *session) spoken(u *utterance) {
	if s.cur != u {
		return // cut off meanwhile
	}
	s.send(native.Message{Event: native.EventAgentSpeech, AgentSpeech: &native.AgentSpeech{ID: u.id, Phase: native.PhaseEnd, Text: u.text}})
	s.cur = nil
	if u.then != nil {
		u.then()
	}
	if s.cur == nil && len(s.queue) > 0 {
		next := s.queue[0]
		s.queue = s.queue[1:]
		s.speak(next)
	}
}

// bargeIn stops speaking at once; what the cut speech would have led to is
// kept in resume for an utterance that changes nothing.
func (s *session) bargeIn() {
	if s.cur == nil {
		return
	}
	s.cur.timer.Stop()
	s.send(native.Message{Event: native.EventClear, Clear: &native.Clear{ID: s.cur.id}})
	for _, u := range append([]*utterance{s.cur}, s.queue...) {
		if u.then != nil {
			s.resume = append(s.resume, u.then)
		}
	}
	s.cur, s.queue = nil, nil
}

// report sends the self-report of the working slots.
func (s *session) report(slots map[string]string, pending string) {
	s.version++
	cp := make(map[string]string, len(slots))
	for k, v := range slots {
		cp[k] = v
	}
	s.send(native.Message{Event: native.EventState, State: &native.State{Version: s.version, Slots: cp, Pending: pending}})
}

// newKey is a fresh idempotency key for this call.
func (s *session) newKey() string {
	if s.v.NoKeys {
		return ""
	}
	s.keyN++
	return fmt.Sprintf("desk-%s-w%d", s.callID, s.keyN)
}

// call sends a tool request with a tool_intent notice first, and hands the
// answer to done on the loop. The returned function aborts the request.
func (s *session) call(tool string, args map[string]string, key string, timeout time.Duration, done func(answer)) func() {
	cp := make(map[string]string, len(args))
	for k, v := range args {
		cp[k] = v
	}
	s.send(native.Message{Event: native.EventToolIntent, ToolIntent: &native.ToolIntent{Tool: tool, Args: cp}})
	ctx, cancel := context.WithCancel(s.api.base)
	w := &withdrawal{cancel: cancel}
	version := s.version
	api, real := s.api, max(s.scaled(timeout), toolFloor)
	if !s.srv.spawn(func() {
		defer cancel()
		a := api.post(ctx, w, tool, cp, key, version, real)
		s.post(func() { done(a) })
	}) {
		cancel()
	}
	// The abort closes the request's connection before it returns, so a
	// state report sent after it cannot overtake the withdrawal.
	return w.abort
}
