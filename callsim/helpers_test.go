package callsim_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/nativews"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// fakeAgent is the test's stand-in for a voice agent: a scripted function
// on the server side of a real loopback WebSocket.
type fakeAgent struct {
	t   *testing.T
	ws  *websocket.Conn
	got []native.Message
	rec *trace.Recorder
	// ended is closed once the caller's Run has returned: an agent that
	// plays dead waits for it.
	ended chan struct{}
}

// next reads one caller frame; ok is false once the caller is gone.
func (a *fakeAgent) next() (native.Message, bool) {
	var m native.Message
	_, b, err := a.ws.ReadMessage()
	if err != nil {
		return m, false
	}
	if err := jsonUnmarshal(b, &m); err != nil {
		a.t.Errorf("caller sent bad JSON %q: %v", b, err)
		return m, false
	}
	a.got = append(a.got, m)
	return m, true
}

// until reads frames until one satisfies pred.
func (a *fakeAgent) until(pred func(native.Message) bool) (native.Message, bool) {
	for {
		m, ok := a.next()
		if !ok || pred(m) {
			return m, ok
		}
	}
}

func (a *fakeAgent) untilFinal() bool {
	_, ok := a.until(func(m native.Message) bool {
		return m.Event == native.EventSpeech && m.Speech.Phase == native.PhaseFinal
	})
	return ok
}

// drain reads until the caller's stop or the connection ends.
func (a *fakeAgent) drain() {
	a.until(func(m native.Message) bool { return m.Event == native.EventStop })
}

func (a *fakeAgent) send(m native.Message) { a.sendRaw(jsonMarshal(m)) }

func (a *fakeAgent) sendRaw(s string) {
	// Write errors mean the caller hung up; the test's assertions say
	// whether that was expected.
	_ = a.ws.WriteMessage(websocket.TextMessage, []byte(s))
}

func (a *fakeAgent) ack(scale float64) {
	a.send(native.Message{Event: native.EventAck, Ack: &native.Ack{TimeScale: scale, Agent: "fake"}})
}

func (a *fakeAgent) speak(id, phase, text string) {
	a.send(native.Message{Event: native.EventAgentSpeech, AgentSpeech: &native.AgentSpeech{ID: id, Phase: phase, Text: text}})
}

// outcome is one finished fake call.
type outcome struct {
	res  callsim.Result
	hist *trace.History
	got  []native.Message // every frame the agent received
}

type setup struct {
	opts   callsim.Options
	call   func(*callsim.Call)
	agent  func(a *fakeAgent)
	script trace.Script
}

// runCall runs one call against a fake agent on loopback and waits for
// both sides to finish.
func runCall(t *testing.T, s setup) outcome {
	t.Helper()
	rec := trace.NewRecorder("c1", trace.SystemClock{})
	got := make(chan []native.Message, 1)
	ended := make(chan struct{})
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			t.Errorf("upgrade: %v", err)
			return
		}
		defer ws.Close()
		a := &fakeAgent{t: t, ws: ws, rec: rec, ended: ended}
		s.agent(a)
		got <- a.got
	}))
	defer srv.Close()

	c := callsim.Call{
		ID:        "c1",
		AgentURL:  "ws" + strings.TrimPrefix(srv.URL, "http"),
		Script:    s.script,
		Tools:     native.Tools{BaseURL: "http://127.0.0.1:1/tools", Token: "tok", Catalog: []trace.ToolSpec{{Name: "ship_order", Effect: trace.EffectCreate, Table: "shipments"}}},
		Recorder:  rec,
		Transport: &nativews.Transport{},
	}
	if s.call != nil {
		s.call(&c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := callsim.New(s.opts).Run(ctx, c)
	close(ended)
	var frames []native.Message
	select {
	case frames = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("fake agent did not finish after the call ended")
	}
	return outcome{res: res, hist: rec.Close(), got: frames}
}

// fakeBackend logs every call; Fail fails so error notes can be seen.
type fakeBackend struct {
	mu    sync.Mutex
	calls []string
}

func (b *fakeBackend) log(f string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, fmt.Sprintf(f, args...))
}

func (b *fakeBackend) Hold(name string, m *trace.ToolMatch, max time.Duration) error {
	b.log("hold %s %s %s", name, m.Tool, max)
	return nil
}
func (b *fakeBackend) Release(name string) error { b.log("release %s", name); return nil }
func (b *fakeBackend) Fail(name string, status int) error {
	b.log("fail %s %d", name, status)
	return fmt.Errorf("no held call %s", name)
}
func (b *fakeBackend) Inject(f trace.Fault) error { b.log("inject %s", f.Kind); return nil }
func (b *fakeBackend) SetTimeScale(f float64)     { b.log("scale %g", f) }

func (b *fakeBackend) Calls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.calls...)
}

// Helpers over histories.

func kinds(h *trace.History, src trace.Source) []trace.Kind {
	var ks []trace.Kind
	for _, e := range h.Events {
		if src == "" || e.Source == src {
			ks = append(ks, e.Kind)
		}
	}
	return ks
}

func find(h *trace.History, k trace.Kind, pred func(trace.Event) bool) *trace.Event {
	for i := range h.Events {
		if h.Events[i].Kind == k && (pred == nil || pred(h.Events[i])) {
			return &h.Events[i]
		}
	}
	return nil
}

func mustFind(t *testing.T, h *trace.History, k trace.Kind, pred func(trace.Event) bool) trace.Event {
	t.Helper()
	e := find(h, k, pred)
	require.NotNil(t, e, "no %s in history: %v", k, kinds(h, ""))
	return *e
}

func ofStep(step string) func(trace.Event) bool {
	return func(e trace.Event) bool {
		switch d := e.Data.(type) {
		case *trace.CallerSpeech:
			return d.Step == step
		case *trace.TriggerNote:
			return d.Step == step
		case *trace.CallerNoise:
			return d.Step == step
		case *trace.CallerDTMF:
			return d.Step == step
		}
		return false
	}
}

func say(id, text string, d time.Duration, on trace.Trigger) trace.Step {
	return trace.Step{ID: id, Do: trace.StepSay, Act: trace.ActSay, Text: text, Duration: d, On: on}
}
