// Package hostile holds misbehaving test agents: each speaks the native
// protocol well enough to get a call going, then attacks the harness in
// one way (a stalled tool request body, huge frames, a text or tool
// request flood, requests into other calls, a header flood, terminal
// control text, a frame that does not decode), or in all of them at once
// (Worst), staying under each limit so the call lasts; one (TwilioJunk)
// speaks Twilio Media Streams and one (WebRTCJunk) SmallWebRTC, each
// sending every message kind of its wire at its limit. They serve the
// harness's robustness tests and `callproof agent hostile`; they never
// import scenarios, like any agent under test.
package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/pion/webrtc/v4"

	"github.com/callproof/callproof/protocol/native"
)

// Behaviour names one way of misbehaving.
type Behaviour string

// Behaviours.
const (
	// PartialBody sends a tool request announcing a 100-byte body, sends
	// 10 bytes and keeps the socket open.
	PartialBody Behaviour = "partial-body"
	// SlowBody sends a tool request body one byte a second.
	SlowBody Behaviour = "slow-body"
	// HugeFrames sends Options.Frames agent_speech frames of almost
	// Options.FrameBytes each (a short text and a large unknown field),
	// then ends its utterance and hangs up.
	HugeFrames Behaviour = "huge-frames"
	// TextFlood sends agent_speech text of 4 KiB a frame until the caller
	// hangs up.
	TextFlood Behaviour = "text-flood"
	// ToolFlood sends Options.Requests tool requests from 8 workers,
	// stopping at the server's first answer that the call is over (410):
	// the refusal after the end is what there is to see, thousands more
	// would only load the machine every other call runs on.
	ToolFlood Behaviour = "tool-flood"
	// CrossCall sends requests into other calls: its own token on their
	// paths and their tokens (Options.Peers) on its own path, then speaks
	// and hangs up.
	CrossCall Behaviour = "cross-call"
	// HeaderFlood opens Options.Conns connections to its tools URL, sends
	// up to 1 MB of request headers on each and never finishes them.
	HeaderFlood Behaviour = "header-flood"
	// TerminalText answers with terminal control sequences (TerminalJunk)
	// in every string it sends: speech text, clear id, tool_intent tool and
	// args, state slots and pending, and its ack's agent name; then ends
	// as Options.End says, with the junk in the hangup reason, the
	// transfer target or the WebSocket close reason.
	TerminalText Behaviour = "terminal-text"
	// Garbage answers, then sends a state whose version is a number no
	// integer holds (1e400): a frame that is JSON but does not decode.
	Garbage Behaviour = "garbage"
	// TwilioJunk speaks Twilio Media Streams instead of the native
	// protocol (a caller with --transport twilio): once the caller's start
	// names the stream it sends every message kind at its limit, five
	// rounds of them (a second of audio, an unknown event and a frame of
	// another stream just under the 1 MiB frame limit, a 4 KiB transcript,
	// 50 marks with 4 KiB names, a clear), then a mark whose name is 1 MB.
	TwilioJunk Behaviour = "twilio-junk"
	// WebRTCJunk answers SmallWebRTC offers (POST /api/offer; a caller
	// with --transport webrtc) instead of speaking the native protocol:
	// once the caller's start comes it sends 5 s of audio at once, then
	// one round of every data-channel message kind just under the 1 MiB
	// message limit or at its own (native events, RTVI messages, a 4 KiB
	// transcript, a clear, keepalives), then one message over the limit.
	WebRTCJunk Behaviour = "webrtc-junk"
	// Worst floods huge frames, text, unknown messages and tool requests
	// at once, each just under its default limit, for as long as the call
	// lasts.
	Worst Behaviour = "worst"
)

// Behaviours lists every behaviour.
func Behaviours() []Behaviour {
	return []Behaviour{PartialBody, SlowBody, HugeFrames, TextFlood, ToolFlood, CrossCall, HeaderFlood, TerminalText, Garbage, TwilioJunk, WebRTCJunk, Worst}
}

// The default limits Worst stays under (callsim's and mockbackend's
// defaults, restated: agents never import the harness).
const (
	maxFrameBytes   = 1 << 20
	framesPerSecond = 500
	framesPerCall   = 20000
	eventTextBytes  = 4 << 10
	callTextBytes   = 256 << 10
	historyBytes    = 2 << 20
	toolsPerSecond  = 20
	toolsPerCall    = 500
)

// Options configure an Agent. Zero values take the defaults.
type Options struct {
	Behaviour Behaviour
	// Frames HugeFrames sends; default 64.
	Frames int
	// FrameBytes is the size HugeFrames and Worst aim their big frames at;
	// default 1 MiB less 1 KiB.
	FrameBytes int
	// Requests ToolFlood sends; default 3000.
	Requests int
	// Conns HeaderFlood opens; default 300.
	Conns int
	// End is how TerminalText ends the call: EndHangup (the default),
	// EndTransfer or EndClose.
	End string
	// Rounds of every message kind TwilioJunk and WebRTCJunk send before
	// their last frame; default 5 and 1; negative: none, only the last
	// frame (the same call without the flood, to measure against).
	Rounds int
	// Peers returns other calls' tools, for CrossCall.
	Peers func() []native.Tools
	// Client for tool requests; default one with a 10 s timeout.
	Client *http.Client
}

// Agent serves one behaviour on every connection. Close ends every call
// in progress (and the sockets it holds open) and waits for them.
type Agent struct {
	opts     Options
	up       websocket.Upgrader
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]bool // raw sockets held open (partial and slow bodies)
	finished int
	// longestEcho is the longest mark name echoed to TwilioJunk.
	longestEcho int
	peers       []*webrtc.PeerConnection // WebRTCJunk's, closed with the agent
}

// New makes an agent.
func New(o Options) (*Agent, error) {
	if o.Behaviour == "" {
		o.Behaviour = Worst
	}
	known := false
	for _, b := range Behaviours() {
		known = known || b == o.Behaviour
	}
	if !known {
		return nil, fmt.Errorf("hostile: unknown behaviour %q", o.Behaviour)
	}
	if o.Frames <= 0 {
		o.Frames = 64
	}
	if o.FrameBytes <= 0 {
		o.FrameBytes = maxFrameBytes - 1<<10
	}
	if o.Requests <= 0 {
		o.Requests = 3000
	}
	if o.Conns <= 0 {
		o.Conns = 300
	}
	if o.Rounds == 0 {
		o.Rounds = map[Behaviour]int{TwilioJunk: twilioRounds, WebRTCJunk: webrtcRounds}[o.Behaviour]
	}
	o.Rounds = max(o.Rounds, 0)
	if o.End == "" {
		o.End = EndHangup
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Second}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Agent{opts: o, ctx: ctx, cancel: cancel, conns: map[net.Conn]bool{},
		up: websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 64 << 10}}, nil
}

// ServeHTTP upgrades to a WebSocket, reads start and misbehaves (for
// WebRTCJunk: answers the offer).
func (a *Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if a.opts.Behaviour == WebRTCJunk {
		a.serveOffer(w, r)
		return
	}
	ws, err := a.up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	ws.SetReadLimit(64 << 10)
	if a.opts.Behaviour == TwilioJunk {
		a.serveTwilio(ws)
		return
	}
	var m native.Message
	_, b, err := ws.ReadMessage()
	if err != nil || json.Unmarshal(b, &m) != nil || m.Event != native.EventStart || m.Start == nil {
		return
	}
	a.Serve(ws, *m.Start)
}

// Serve runs the behaviour on a connection whose start frame has been
// read, until the caller is gone. It does not close ws.
func (a *Agent) Serve(ws *websocket.Conn, start native.Start) {
	a.wg.Add(1)
	defer a.wg.Done()
	c := &call{a: a, ws: ws, start: start, finals: make(chan struct{}, 64), gone: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(a.ctx)
	defer c.cancel()
	go c.read()
	name := "hostile/" + string(a.opts.Behaviour)
	if a.opts.Behaviour == TerminalText {
		name += TerminalJunk
	}
	_ = c.send(native.Message{Event: native.EventAck, Ack: &native.Ack{TimeScale: start.TimeScale, Agent: name}})
	switch a.opts.Behaviour {
	case PartialBody:
		c.stalledBody(false)
	case SlowBody:
		c.stalledBody(true)
	case HugeFrames:
		c.hugeFrames()
	case TextFlood:
		c.textFlood()
	case ToolFlood:
		c.toolFlood()
	case CrossCall:
		c.crossCall()
	case HeaderFlood:
		c.headerFlood()
	case TerminalText:
		c.terminalText()
	case Garbage:
		if c.firstFinal() {
			// Inside an utterance, so the caller is still waiting for
			// it when the frame comes, however late.
			_ = c.speak("a1", native.PhaseStart, "")
			_ = c.speak("a1", native.PhaseText, "Okay, updating order 5590.")
			_ = c.sendRaw([]byte(`{"event":"state","state":{"version":1e400,"slots":{"order_number":"5590"}}}`))
		}
	case Worst:
		c.worst()
	}
	<-c.gone
	a.mu.Lock()
	a.finished++
	a.mu.Unlock()
}

// Finished counts the calls served to their end.
func (a *Agent) Finished() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.finished
}

// Close ends every call, closes the sockets held open and waits.
func (a *Agent) Close() {
	a.cancel()
	a.mu.Lock()
	for c := range a.conns {
		_ = c.Close()
	}
	peers := a.peers
	a.peers = nil
	a.mu.Unlock()
	for _, pc := range peers {
		_ = pc.Close()
	}
	a.wg.Wait()
}

func (a *Agent) hold(c net.Conn) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ctx.Err() != nil {
		return false
	}
	a.conns[c] = true
	return true
}

// call is one connection.
type call struct {
	a      *Agent
	ws     *websocket.Conn
	start  native.Start
	ctx    context.Context // ends when the caller is gone or the agent closes
	cancel context.CancelFunc
	finals chan struct{} // one per caller final
	gone   chan struct{} // closed when the caller's side ends
	wmu    sync.Mutex
}

// read takes the caller's frames until stop or the end of the connection.
func (c *call) read() {
	defer close(c.gone)
	defer c.cancel()
	for {
		var m native.Message
		_, b, err := c.ws.ReadMessage()
		if err != nil || json.Unmarshal(b, &m) != nil || m.Event == native.EventStop {
			return
		}
		if m.Event == native.EventSpeech && m.Speech != nil && m.Speech.Phase == native.PhaseFinal {
			select {
			case c.finals <- struct{}{}:
			default:
			}
		}
	}
}

func (c *call) send(m native.Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return c.sendRaw(b)
}

func (c *call) sendRaw(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.ctx.Err() != nil {
		return c.ctx.Err()
	}
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

func (c *call) speak(id, phase, text string) error {
	return c.send(native.Message{Event: native.EventAgentSpeech, AgentSpeech: &native.AgentSpeech{ID: id, Phase: phase, Text: text}})
}

// say speaks one whole utterance.
func (c *call) say(id, text string) {
	_ = c.speak(id, native.PhaseStart, "")
	_ = c.speak(id, native.PhaseText, text)
	_ = c.speak(id, native.PhaseEnd, text)
}

// firstFinal waits for the caller's first final; false if the call ended.
func (c *call) firstFinal() bool {
	select {
	case <-c.finals:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// stallingReply waits for the caller's first final, says it is looking,
// and gives the tools URL to attack; false if the call ended first.
func (c *call) stallingReply() (*url.URL, bool) {
	if !c.firstFinal() {
		return nil, false
	}
	c.say("a1", "One moment, let me look at order 5590.")
	u, err := url.Parse(c.start.Tools.BaseURL)
	return u, err == nil
}

// stalledBody answers, then sends one update_order whose body stalls:
// 10 of 100 bytes (slow false), or one byte a second.
func (c *call) stalledBody(slow bool) {
	u, ok := c.stallingReply()
	if !ok {
		return
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		return
	}
	if !c.a.hold(conn) {
		_ = conn.Close()
		return
	}
	body := `{"order_number":"5590","delivery_date":"2026-12-03"}`
	head := fmt.Sprintf("POST %s/update_order HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		u.Path, u.Host, c.start.Tools.Token, 100)
	if _, err := io.WriteString(conn, head+body[:10]); err != nil || !slow {
		return // the socket stays open until Close
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for i := 10; i < len(body); i++ {
		select {
		case <-t.C:
		case <-c.a.ctx.Done():
			return
		}
		if _, err := conn.Write([]byte{body[i]}); err != nil {
			return
		}
	}
}

// bigFrame is an agent_speech text frame of about n bytes carrying text,
// the rest an unknown field that is read and dropped.
func bigFrame(id, text string, n int) []byte {
	var b bytes.Buffer
	b.Grow(n)
	fmt.Fprintf(&b, `{"event":"agent_speech","agentSpeech":{"id":%q,"phase":"text","text":%q},"pad":"`, id, text)
	for b.Len() < n-2 {
		b.WriteByte('x')
	}
	b.WriteString(`"}`)
	return b.Bytes()
}

func (c *call) hugeFrames() {
	if !c.firstFinal() {
		return
	}
	if c.speak("a1", native.PhaseStart, "") != nil {
		return
	}
	frame := bigFrame("a1", "Okay.", c.a.opts.FrameBytes)
	// Just under the flood limit: bursts of 45 every 100 ms.
	for i := 0; i < c.a.opts.Frames; i++ {
		if i > 0 && i%45 == 0 {
			time.Sleep(100 * time.Millisecond)
		}
		if c.sendRaw(frame) != nil {
			return
		}
	}
	_ = c.speak("a1", native.PhaseEnd, "Okay.")
	_ = c.send(native.Message{Event: native.EventHangup, Hangup: &native.Hangup{Reason: "done"}})
}

func (c *call) textFlood() {
	if !c.firstFinal() {
		return
	}
	if c.speak("a1", native.PhaseStart, "") != nil {
		return
	}
	text := strings.Repeat("blah ", eventTextBytes/5)
	for i := 0; ; i++ {
		if i > 0 && i%45 == 0 {
			time.Sleep(100 * time.Millisecond)
		}
		if c.speak("a1", native.PhaseText, text) != nil {
			return
		}
	}
}

// post sends one tool request; it reports the status (0 on error).
func (c *call) post(baseURL, token, tool, body string) int {
	req, err := http.NewRequestWithContext(c.a.ctx, http.MethodPost, baseURL+"/"+tool, strings.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.a.opts.Client.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	return resp.StatusCode
}

func (c *call) toolFlood() {
	if !c.firstFinal() {
		return
	}
	_ = c.speak("a1", native.PhaseStart, "")
	_ = c.speak("a1", native.PhaseText, "Okay, updating order 5590.")
	jobs := make(chan int)
	over := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range jobs {
				if c.post(c.start.Tools.BaseURL, c.start.Tools.Token, "get_order", `{"order_number":"`+fmt.Sprintf("%04d", i%10000)+`"}`) == http.StatusGone {
					once.Do(func() { close(over) })
				}
			}
		})
	}
feed:
	for i := 0; i < c.a.opts.Requests && c.a.ctx.Err() == nil; i++ {
		select {
		case jobs <- i:
		case <-over:
			break feed
		}
	}
	close(jobs)
	wg.Wait()
}

// CrossCallOrder is the order number CrossCall's requests carry, so a
// test can tell them from any other call's.
const CrossCallOrder = "0001"

func (c *call) crossCall() {
	if !c.firstFinal() {
		return
	}
	// An answer first: the requests below take a while on a busy
	// machine, and the call is to end as the agent's hang-up, not as a
	// caller left without a word.
	c.say("a0", "One moment, let me look at order 5590.")
	body := `{"order_number":"` + CrossCallOrder + `"}`
	own := c.start.Tools
	// Other calls to aim at: wait for one to start (at most 10 s).
	for i := 0; i < 500 && len(c.a.opts.peers()) < 2; i++ {
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	for _, p := range c.a.opts.peers() {
		if p.BaseURL == own.BaseURL {
			continue
		}
		c.post(p.BaseURL, own.Token, "get_order", body) // our token, their call
		c.post(own.BaseURL, p.Token, "get_order", body) // their token, our call
	}
	// A call that never existed, and no token at all.
	if i := strings.LastIndex(own.BaseURL, "/calls/"); i >= 0 {
		c.post(own.BaseURL[:i]+"/calls/no-such-call/tools", own.Token, "get_order", body)
	}
	c.post(own.BaseURL, "", "get_order", body)
	c.say("a1", "Sorry, I couldn't update order 5590. Nothing was changed.")
	_ = c.send(native.Message{Event: native.EventHangup, Hangup: &native.Hangup{Reason: "done"}})
}

// How TerminalText ends its call.
const (
	EndHangup   = "hangup"
	EndTransfer = "transfer"
	EndClose    = "close"
)

// TerminalJunk is what TerminalText puts in every string: a screen
// clear, an OSC 8 hyperlink, colours, bidi overrides and isolates,
// zero-width characters, a C1 control, DEL and a line break.
const TerminalJunk = "\x1b[2J\x1b]8;;http://evil.test\x1b\\click\x1b]8;;\x1b\\\x1b[31mred\x1b[0m" +
	"\u202edesrever\u202c\u2066iso\u2069\u200bzero\u200d\ufeff\u009b\x7f\r\nline"

// closeJunk is TerminalJunk cut to fit a close frame's 123 bytes of
// reason, whole characters only.
const closeJunk = "\x1b[2J\x1b]8;;http://evil.test\x1b\\click\x1b]8;;\x1b\\\x1b[31mred\u202e\u200b\x7f\nline"

// headerFlood opens Options.Conns connections to the tools server, each
// sending about 1 MB of headers that never end, held until Close.
func (c *call) headerFlood() {
	u, ok := c.stallingReply()
	if !ok {
		return
	}
	line := []byte("X-Pad: " + strings.Repeat("p", 8<<10) + "\r\n")
	var wg sync.WaitGroup
	// Dials 2 ms apart: the agent shares a process with the harness in
	// tests, and a burst of 300 dials at once would be its own load on
	// the harness's CPU, not the flood the server must bound.
	pace := time.NewTicker(2 * time.Millisecond)
	defer pace.Stop()
	for range c.a.opts.Conns {
		select {
		case <-pace.C:
		case <-c.ctx.Done():
			wg.Wait()
			return
		}
		wg.Go(func() {
			conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
			if err != nil {
				return
			}
			if !c.a.hold(conn) {
				_ = conn.Close()
				return
			}
			_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
			head := fmt.Sprintf("POST %s/get_order HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n", u.Path, u.Host, c.start.Tools.Token)
			if _, err := io.WriteString(conn, head); err != nil {
				return
			}
			for sent := 0; sent < 1<<20; sent += len(line) {
				if _, err := conn.Write(line); err != nil {
					return // the server gave up on it
				}
			}
		})
	}
	wg.Wait()
}

// terminalText sends TerminalJunk in every field, then ends the call.
func (c *call) terminalText() {
	if !c.firstFinal() {
		return
	}
	j := TerminalJunk
	_ = c.send(native.Message{Event: native.EventState, State: &native.State{Version: 1,
		Slots: map[string]string{"order_number": "5590", "note" + j: j}, Pending: "update_order" + j}})
	_ = c.send(native.Message{Event: native.EventToolIntent, ToolIntent: &native.ToolIntent{Tool: "update_order" + j,
		Args: map[string]string{"order_number": "5590", "x" + j: j}}})
	_ = c.speak("a0"+j, native.PhaseStart, "")
	_ = c.speak("a0"+j, native.PhaseText, "Okay "+j)
	_ = c.send(native.Message{Event: native.EventClear, Clear: &native.Clear{ID: "a0" + j}})
	c.say("a1", "Sorry, I could not change order 5590. "+j)
	switch c.a.opts.End {
	case EndTransfer:
		_ = c.send(native.Message{Event: native.EventTransfer, Transfer: &native.Transfer{To: "+1555" + j}})
	case EndClose:
		c.wmu.Lock()
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bye"+closeJunk), time.Now().Add(time.Second))
		c.wmu.Unlock()
	default:
		_ = c.send(native.Message{Event: native.EventHangup, Hangup: &native.Hangup{Reason: "done" + j}})
	}
}

func (o Options) peers() []native.Tools {
	if o.Peers == nil {
		return nil
	}
	return o.Peers()
}

// worst floods everything at once, each under its default limit, until
// the caller hangs up: huge frames just under the frame size and rate
// limits, agent text just under the call's text budget in 4 KiB events,
// unknown messages cut to 4 KiB in the history, and tool requests just
// under the request rate with the largest body the backend reads,
// keeping the history under its budget.
func (c *call) worst() {
	if c.speak("a1", native.PhaseStart, "") != nil {
		return
	}
	var wg sync.WaitGroup
	wg.Go(c.worstTools)
	defer wg.Wait()

	text := strings.Repeat("blah ", eventTextBytes/5)
	big := bigFrame("a1", "", c.a.opts.FrameBytes)
	unknown := []byte(`{"event":"metrics","pad":"` + strings.Repeat("m", eventTextBytes) + `"}`)
	// The history this connection's frames cost, estimated; the tool
	// requests have their own share (worstTools).
	const share = historyBytes / 2
	var textSent, hist int
	const perSecond = framesPerSecond * 9 / 10
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for sent := 0; sent < framesPerCall*9/10; {
		for range perSecond / 10 {
			var f []byte
			switch {
			case textSent+len(text) < callTextBytes*9/10 && hist+len(text)+200 < share:
				f = bigFrame("a1", text, c.a.opts.FrameBytes)
				textSent += len(text)
				hist += len(text) + 200
			case hist+eventTextBytes+200 < share:
				f = unknown
				hist += eventTextBytes + 200
			case hist+200 < share:
				f = big
				hist += 200
			default:
				f = nil // history share spent: nothing more that records
			}
			if f == nil {
				break
			}
			if c.sendRaw(f) != nil {
				return
			}
			sent++
		}
		select {
		case <-tick.C:
		case <-c.ctx.Done():
			return
		}
	}
	<-c.ctx.Done()
}

// worstTools sends tool requests just under the rate and the per-call
// budget, each with an 8 KiB unknown argument (refused 400, but read,
// parsed and recorded first), within a share of the history.
func (c *call) worstTools() {
	pad := strings.Repeat("p", 8<<10)
	body := `{"order_number":"5590","note":"` + pad + `"}`
	const share = historyBytes / 4
	every := time.Second / (toolsPerSecond - 2)
	t := time.NewTicker(every)
	defer t.Stop()
	hist := 0
	for i := 0; i < toolsPerCall*9/10 && hist+len(body)+600 < share; i++ {
		select {
		case <-t.C:
		case <-c.ctx.Done():
			return
		}
		go c.post(c.start.Tools.BaseURL, c.start.Tools.Token, "update_order", body)
		hist += len(body) + 600
	}
}

// Start serves an agent on addr until ctx ends or Close is called.
func Start(ctx context.Context, o Options, addr string) (*Running, error) {
	a, err := New(o)
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	u := "ws://" + ln.Addr().String() + "/"
	if a.opts.Behaviour == WebRTCJunk {
		u = "http://" + ln.Addr().String() + offerPath
	}
	r := &Running{URL: u, Agent: a,
		srv: &http.Server{Handler: a, ReadHeaderTimeout: 5 * time.Second}}
	r.done = make(chan struct{})
	go func() { _ = r.srv.Serve(ln) }()
	go func() {
		select {
		case <-ctx.Done():
			r.Close()
		case <-r.done:
		}
	}()
	return r, nil
}

// Running is an agent listening on a TCP address.
type Running struct {
	URL   string
	Agent *Agent
	srv   *http.Server
	done  chan struct{}
	once  sync.Once
}

// Close stops listening and ends every call. Safe to call twice.
func (r *Running) Close() {
	r.once.Do(func() {
		close(r.done)
		_ = r.srv.Close()
		r.Agent.Close()
	})
}
