package payments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/callproof/callproof/protocol/native"
)

// DefaultCallDate is the call's date when the start frame carries none.
const DefaultCallDate = "2026-11-30"

// Pacing in script time, multiplied by the call's time scale.
const (
	reaction    = 250 * time.Millisecond // before answering the caller
	wordTime    = 220 * time.Millisecond // speaking pace per word
	lookupLimit = 2 * time.Second        // a read's timeout
	writeLimit  = 4 * time.Second        // a write's timeout
	retryAfter  = 250 * time.Millisecond
	attempts    = 3 // tries of one request before giving up
	// minLimit bounds a tool timeout from below in real time, so that a
	// loaded machine does not turn a slow answer into a lost one.
	minLimit = 1500 * time.Millisecond
)

// call is one phone call. mu guards everything below it; every handler,
// timer and tool answer takes it.
type call struct {
	line *Line
	v    Variant
	ws   *websocket.Conn
	ctx  context.Context
	end  context.CancelFunc
	out  chan native.Message

	mu      sync.Mutex
	id      string
	scale   float64
	today   time.Time
	baseURL string
	token   string
	lines   int
	talking *line
	queue   []*line
	version int
	keys    int
	job     *job
}

// line is one thing the agent says; after runs once it was fully said.
type line struct {
	id    string
	text  string
	after func()
	timer *time.Timer
}

func newCall(l *Line, v Variant, ws *websocket.Conn) *call {
	ctx, end := context.WithCancel(l.base)
	return &call{line: l, v: v, ws: ws, ctx: ctx, end: end, out: make(chan native.Message, 512), scale: 1}
}

// serve reads caller frames until the call ends.
func (c *call) serve() {
	defer c.ws.Close()
	defer c.end()
	go c.send()
	go func() { <-c.ctx.Done(); _ = c.ws.Close() }()
	for {
		_, data, err := c.ws.ReadMessage()
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
		c.mu.Lock()
		c.frame(m, data)
		c.mu.Unlock()
	}
}

// send writes queued frames in order.
func (c *call) send() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case m := <-c.out:
			b, err := json.Marshal(m)
			if err != nil {
				continue
			}
			_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if c.ws.WriteMessage(websocket.TextMessage, b) != nil {
				c.end()
				return
			}
		}
	}
}

func (c *call) emit(m native.Message) {
	select {
	case c.out <- m:
	case <-c.ctx.Done():
	}
}

// after runs fn under the lock after d of script time, unless the call ended.
func (c *call) after(d time.Duration, fn func()) *time.Timer {
	return time.AfterFunc(time.Duration(float64(d)*c.scale), func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.ctx.Err() == nil {
			fn()
		}
	})
}

// frame handles one caller frame (under the lock).
func (c *call) frame(m native.Message, raw []byte) {
	switch m.Event {
	case native.EventStart:
		if m.Start != nil {
			c.begin(m.Start, raw)
		}
	case native.EventSpeech:
		if m.Speech == nil {
			return
		}
		switch m.Speech.Phase {
		case native.PhaseOnset:
			c.hush()
		case native.PhaseFinal:
			text := m.Speech.Text
			c.after(reaction, func() { c.heard(text) })
		}
	}
}

func (c *call) begin(st *native.Start, raw []byte) {
	if name := st.CustomParameters["variant"]; name != "" {
		if v, err := VariantByName(name); err == nil {
			c.v = v
		}
	}
	c.id, c.baseURL, c.token = st.CallID, st.Tools.BaseURL, st.Tools.Token
	if st.TimeScale > 0 {
		c.scale = st.TimeScale
	}
	c.today = callDate(raw)
	c.emit(native.Message{Event: native.EventAck, Ack: &native.Ack{TimeScale: c.scale, Agent: "payments-line/" + c.v.Name}})
	c.say(sayHello, nil)
}

// callDate reads start.callDate from the raw start frame, else the default.
func callDate(raw []byte) time.Time {
	var f struct {
		Start struct {
			CallDate string `json:"callDate"`
		} `json:"start"`
	}
	_ = json.Unmarshal(raw, &f)
	if t, err := time.Parse(time.DateOnly, f.Start.CallDate); err == nil {
		return t
	}
	t, _ := time.Parse(time.DateOnly, DefaultCallDate)
	return t
}

// say queues text; after runs when it was fully said (never if cut off).
func (c *call) say(text string, after func()) {
	c.lines++
	l := &line{id: "p" + strconv.Itoa(c.lines), text: text, after: after}
	if c.talking != nil {
		c.queue = append(c.queue, l)
		return
	}
	c.speak(l)
}

func (c *call) speak(l *line) {
	c.talking = l
	c.emit(native.Message{Event: native.EventAgentSpeech, AgentSpeech: &native.AgentSpeech{ID: l.id, Phase: native.PhaseStart}})
	c.emit(native.Message{Event: native.EventAgentSpeech, AgentSpeech: &native.AgentSpeech{ID: l.id, Phase: native.PhaseText, Text: l.text}})
	l.timer = c.after(time.Duration(len(strings.Fields(l.text)))*wordTime, func() {
		if c.talking != l {
			return
		}
		c.emit(native.Message{Event: native.EventAgentSpeech, AgentSpeech: &native.AgentSpeech{ID: l.id, Phase: native.PhaseEnd, Text: l.text}})
		c.talking = nil
		if l.after != nil {
			l.after()
		}
		if c.talking == nil && len(c.queue) > 0 {
			next := c.queue[0]
			c.queue = c.queue[1:]
			c.speak(next)
		}
	})
}

// hush stops talking when the caller starts; queued lines are dropped,
// and what they would have led to with them.
func (c *call) hush() {
	if c.talking == nil {
		return
	}
	c.talking.timer.Stop()
	c.emit(native.Message{Event: native.EventClear, Clear: &native.Clear{ID: c.talking.id}})
	c.talking, c.queue = nil, nil
}

// selfReport sends the working slots and the action in progress.
func (c *call) selfReport(slots map[string]string, pending string) {
	c.version++
	cp := make(map[string]string, len(slots))
	for k, v := range slots {
		cp[k] = v
	}
	c.emit(native.Message{Event: native.EventState, State: &native.State{Version: c.version, Slots: cp, Pending: pending}})
}

// freshKey is a new idempotency key ("" for keyless).
func (c *call) freshKey() string {
	if c.v.NoKey {
		return ""
	}
	c.keys++
	return fmt.Sprintf("pay-%s-%d", c.id, c.keys)
}

// reply is a tool request's outcome.
type reply struct {
	status  int
	key     string            // the record's key
	fields  map[string]string // the record's fields
	lost    bool              // no answer (timeout, dropped connection, unreadable)
	aborted bool              // we cancelled it
	errType string
}

func (r reply) ok() bool { return r.status == http.StatusOK && r.fields != nil }
func (r reply) transient() bool {
	return r.lost || r.status >= 500 || r.status == http.StatusTooManyRequests
}

// request posts a tool request, announced by a tool_intent frame, and
// hands its reply to done under the lock. It returns the abort function.
func (c *call) request(tool string, args map[string]string, key string, limit time.Duration, done func(reply)) func() {
	cp := make(map[string]string, len(args))
	for k, v := range args {
		cp[k] = v
	}
	c.emit(native.Message{Event: native.EventToolIntent, ToolIntent: &native.ToolIntent{Tool: tool, Args: cp}})
	ctx, abort := context.WithCancel(c.line.base)
	url, token, version := strings.TrimRight(c.baseURL, "/")+"/"+tool, c.token, c.version
	real := max(time.Duration(float64(limit)*c.scale), minLimit)
	started := c.line.track(func() {
		defer abort()
		r := c.post(ctx, url, token, version, cp, key, real)
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.ctx.Err() == nil {
			done(r)
		}
	})
	if !started {
		abort()
	}
	return abort
}

func (c *call) post(ctx context.Context, url, token string, version int, args map[string]string, key string, limit time.Duration) reply {
	body, _ := json.Marshal(args)
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return reply{lost: true}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set(native.HeaderStateVersion, strconv.Itoa(version))
	if key != "" {
		req.Header.Set(native.HeaderIdempotencyKey, key)
	}
	resp, err := c.line.client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return reply{aborted: true}
		}
		return reply{lost: true}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	r := reply{status: resp.StatusCode}
	var env struct {
		Record *struct {
			Key    string            `json:"key"`
			Fields map[string]string `json:"fields"`
		} `json:"record"`
		Error *struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	if err != nil || json.Unmarshal(raw, &env) != nil {
		r.lost = resp.StatusCode < 300
		return r
	}
	if env.Error != nil {
		r.errType = env.Error.Type
	}
	if env.Record != nil {
		r.key, r.fields = env.Record.Key, env.Record.Fields
		if r.fields == nil {
			r.fields = map[string]string{}
		}
	}
	return r
}
