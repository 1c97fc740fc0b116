package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// testScale is the time scale every test call runs at.
const testScale = 0.05

// --- a fake tool server (not mockbackend: agents must not depend on it) ---

type fakeReq struct {
	Tool      string
	Args      map[string]string
	Key       string
	Version   string
	Cancelled bool
	Token     string
}

// answer says how the fake backend treats one request.
type answer struct {
	status500 bool
	pending   time.Duration // 202, and the write lands this much later
	wrong     *trace.Record // respond with this record after a correct write
	hold      bool          // wait for release (or the client going away)
	empty     bool          // 200 with an empty body, after the write
}

type fakeBackend struct {
	srv     *httptest.Server
	mu      sync.Mutex
	orders  map[string]map[string]string
	ships   []string
	reqs    []*fakeReq
	counts  map[string]int
	behave  func(tool string, nth int) answer
	release chan struct{}
	got     chan fakeReq // every request, as it arrives
	applied map[string]bool
}

func newFakeBackend(t *testing.T, behave func(tool string, nth int) answer) *fakeBackend {
	b := &fakeBackend{
		orders: map[string]map[string]string{
			"5590": {"delivery_date": "2026-11-20", "quantity": "1", "item": "lamp", "status": "open"},
			"5599": {"delivery_date": "2026-11-20", "quantity": "1", "item": "desk", "status": "open"},
		},
		counts:  map[string]int{},
		behave:  behave,
		release: make(chan struct{}),
		got:     make(chan fakeReq, 64),
		applied: map[string]bool{},
	}
	if b.behave == nil {
		b.behave = func(string, int) answer { return answer{} }
	}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *fakeBackend) releaseHolds() {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.release:
	default:
		close(b.release)
	}
}

func (b *fakeBackend) serve(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	req := &fakeReq{
		Tool:    strings.TrimPrefix(r.URL.Path, "/"),
		Key:     r.Header.Get(native.HeaderIdempotencyKey),
		Version: r.Header.Get(native.HeaderStateVersion),
		Token:   strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "),
	}
	_ = json.Unmarshal(data, &req.Args)
	b.mu.Lock()
	b.reqs = append(b.reqs, req)
	b.counts[req.Tool]++
	a := b.behave(req.Tool, b.counts[req.Tool])
	b.mu.Unlock()
	b.got <- *req

	if a.hold {
		select {
		case <-b.release:
		case <-r.Context().Done():
			b.mu.Lock()
			req.Cancelled = true
			b.mu.Unlock()
			return
		}
	}
	if a.status500 {
		writeJSON(w, 500, map[string]any{"ok": false, "error": map[string]string{"type": "internal", "message": "boom"}})
		return
	}
	order := req.Args["order_number"]
	if a.pending > 0 {
		go func() {
			time.Sleep(a.pending)
			b.apply(req.Tool, req.Args)
		}()
		writeJSON(w, 202, map[string]any{"ok": true, "status": "pending", "operation": "op-1"})
		return
	}
	rec, ok := b.apply(req.Tool, req.Args)
	if !ok {
		writeJSON(w, 404, map[string]any{"ok": false, "error": map[string]string{"type": "not_found", "message": order}})
		return
	}
	if a.empty {
		w.WriteHeader(200)
		return
	}
	if a.wrong != nil {
		rec = *a.wrong
	}
	writeJSON(w, 200, map[string]any{"ok": true, "record": rec})
}

func (b *fakeBackend) apply(tool string, args map[string]string) (trace.Record, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	order := args["order_number"]
	switch tool {
	case "ship_order":
		b.ships = append(b.ships, order)
		return trace.Record{Table: "shipments", Key: "shipments-1", Version: 1, Fields: map[string]string{"order_number": order}}, true
	case "get_order", "update_order":
		f, ok := b.orders[order]
		if !ok {
			return trace.Record{}, false
		}
		if tool == "update_order" {
			for k, v := range args {
				if k != "order_number" {
					f[k] = v
				}
			}
			b.applied[order] = true
		}
		return trace.Record{Table: "orders", Key: order, Version: 1, Fields: copyMap(f)}, true
	}
	return trace.Record{}, false
}

func (b *fakeBackend) wasApplied(order string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.applied[order]
}

func (b *fakeBackend) requests(tool string) []fakeReq {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []fakeReq
	for _, r := range b.reqs {
		if tool == "" || r.Tool == tool {
			out = append(out, *r)
		}
	}
	return out
}

func (b *fakeBackend) field(order, f string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.orders[order][f]
}

// waitRequest waits for the next request to tool.
func (b *fakeBackend) waitRequest(t *testing.T, tool string) fakeReq {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case r := <-b.got:
			if r.Tool == tool {
				return r
			}
		case <-deadline:
			t.Fatalf("no %s request", tool)
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// --- a fake caller: a scripted stand-in for callsim, speaking the native
// protocol with gorilla/websocket directly ---

type heardMsg struct {
	msg      native.Message
	applied5 bool // fake backend had applied a write to 5590 when this arrived
}

type fakeCaller struct {
	t    *testing.T
	ws   *websocket.Conn
	in   chan heardMsg
	mu   sync.Mutex
	log  []native.Message
	seq  int
	done chan struct{}
}

func dialCaller(t *testing.T, url string, b *fakeBackend) *fakeCaller {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	require.NoError(t, err)
	c := &fakeCaller{t: t, ws: ws, in: make(chan heardMsg, 1024), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer close(c.in)
		for {
			var m native.Message
			if err := ws.ReadJSON(&m); err != nil {
				return
			}
			c.mu.Lock()
			c.log = append(c.log, m)
			c.mu.Unlock()
			c.in <- heardMsg{msg: m, applied5: b.wasApplied("5590")}
		}
	}()
	t.Cleanup(func() { _ = ws.Close(); <-c.done })
	c.send(native.Message{Event: native.EventStart, Start: &native.Start{
		CallID:    "call-1",
		TimeScale: testScale,
		Tools:     native.Tools{BaseURL: b.srv.URL, Token: "tok", Catalog: defaultCatalog()},
	}})
	return c
}

func (c *fakeCaller) send(m native.Message) {
	c.t.Helper()
	require.NoError(c.t, c.ws.WriteJSON(m))
}

func (c *fakeCaller) say(text string) {
	c.seq++
	id := fmt.Sprintf("c%d", c.seq)
	c.send(native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: id, Phase: native.PhaseOnset}})
	c.send(native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: id, Phase: native.PhaseFinal, Text: text}})
}

func (c *fakeCaller) sound() {
	c.send(native.Message{Event: native.EventSound, Sound: &native.Sound{ID: "n1", Phase: native.PhaseOnset, Kind: "cough"}})
}

// waitFor reads frames until one matches.
func (c *fakeCaller) waitFor(what string, match func(native.Message) bool) heardMsg {
	c.t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case h, ok := <-c.in:
			if !ok {
				c.t.Fatalf("connection closed while waiting for %s", what)
			}
			if match(h.msg) {
				return h
			}
		case <-deadline:
			c.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func isSpeech(phase string) func(native.Message) bool {
	return func(m native.Message) bool {
		return m.Event == native.EventAgentSpeech && m.AgentSpeech != nil && m.AgentSpeech.Phase == phase
	}
}

func isOutcome(text string) bool {
	return strings.HasPrefix(text, "Done.") || strings.HasPrefix(text, "Sorry") || strings.HasPrefix(text, "Okay, I won't")
}

// answerText waits for the agent's answer (done, failed, refused) to be
// spoken in full, and for the first frame that carried it.
func (c *fakeCaller) answerText() (string, heardMsg) {
	c.t.Helper()
	first := c.waitFor("answer", func(m native.Message) bool {
		return m.Event == native.EventAgentSpeech && m.AgentSpeech != nil && m.AgentSpeech.Phase == native.PhaseText && isOutcome(m.AgentSpeech.Text)
	})
	end := c.waitFor("answer end", func(m native.Message) bool {
		return isSpeech(native.PhaseEnd)(m) && m.AgentSpeech.ID == first.msg.AgentSpeech.ID
	})
	return end.msg.AgentSpeech.Text, first
}

func (c *fakeCaller) greeted() {
	c.t.Helper()
	c.waitFor("ack", func(m native.Message) bool { return m.Event == native.EventAck })
	c.waitFor("greeting end", isSpeech(native.PhaseEnd))
}

// hangUp sends stop and waits for the agent to close the connection.
func (c *fakeCaller) hangUp() {
	c.t.Helper()
	c.send(native.Message{Event: native.EventStop, Stop: &native.Stop{Reason: "done"}})
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		c.t.Fatal("agent did not close after stop")
	}
}

func (c *fakeCaller) frames() []native.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]native.Message(nil), c.log...)
}

func (c *fakeCaller) count(event string) int {
	n := 0
	for _, m := range c.frames() {
		if m.Event == event {
			n++
		}
	}
	return n
}

// startAgent runs cfg on loopback for one test.
func startAgent(t *testing.T, cfg Config) *Running {
	t.Helper()
	r, err := Start(context.Background(), cfg, "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close()) })
	return r
}
