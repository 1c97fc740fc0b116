package realtime_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/callproof/callproof/testkit/realtime"
)

// The customParameters names of callsim/twilio (ParamCallID,
// ParamToolsBaseURL, ParamToolsToken), which agents/openai-twilio reads.
const (
	paramCallID    = "callproofCallId"
	paramToolsURL  = "toolsBaseUrl"
	paramToolsTok  = "toolsToken"
	interopCallID  = "interop-1"
	interopToken   = "tok-interop-1"
	scriptedArgs   = `{"order_number":"5590","delivery_date":"2026-12-03","quantity":null}`
	frameBytes     = 160 // 20 ms of 8 kHz μ-law
	frameEvery     = 20 * time.Millisecond
	bargeAfter     = time.Second // reply audio the caller hears before it talks over it
	installTimeout = 15 * time.Minute
	startTimeout   = 60 * time.Second // node loads the SDK in 1-5 s on a busy machine
	stepTimeout    = 15 * time.Second
)

// TestInteropOpenAIAgentsTwilio drives the OpenAI Agents SDK's Twilio
// transport (agents/openai-twilio) with a minimal Twilio Media Streams
// caller, the agent's model being this package's fake: the caller speaks,
// the fake calls update_order, the SDK POSTs it to the tools server, the
// fake answers with audio the caller plays out (echoing marks), the caller
// talks over it, and the SDK must clear Twilio's queue and truncate the
// reply where the caller's marks say playout was. See docs/INTEROP.md.
//
// It runs twice, for the SDK's two barge-in paths: the reply still being
// generated (the fake cancels it, as the real server does with
// interrupt_response), and the reply wholly sent, only the caller's queue
// still playing it.
func TestInteropOpenAIAgentsTwilio(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found: the interop test needs Node 20+ (and npm) to run the OpenAI Agents SDK")
	}
	root := repoRoot(t)
	installNodeAgents(t, root)
	// Streaming the 3 s reply at 1.25x takes 2.4 s, far past the barge-in
	// at 1 s of playout even when a busy machine slows the caller's ticks;
	// at 100x it is all sent in 30 ms, long before.
	t.Run("reply still streaming", func(t *testing.T) { interop(t, node, root, 1.25, "cancelled") })
	t.Run("reply wholly sent", func(t *testing.T) { interop(t, node, root, 100, "completed") })
}

// interop is one call; speed is the fake's Script.Speed and replyStatus
// the status of the interrupted reply's response.done.
func interop(t *testing.T, node, root string, speed float64, replyStatus string) {
	tools := newToolsServer()
	defer tools.Close()
	reply := realtime.Tone(440, 3*time.Second, 6000)
	fake := realtime.NewServer(realtime.Script{Speed: speed, Turns: []realtime.Turn{
		{
			Calls: []realtime.FunctionCall{{Name: "update_order", Arguments: scriptedArgs}},
			Reply: realtime.Reply{Audio: reply, Transcript: "Done: order 5590 now arrives on December 3. Anything else?"},
		},
		{Reply: realtime.Reply{Audio: realtime.Tone(330, 600*time.Millisecond, 6000), Transcript: "Sure."}},
	}})
	defer fake.Close()

	spawned := time.Now()
	agent := startAgent(t, node, root, fake.URL())
	defer agent.stop(t)
	t.Logf("agent listening after %v", time.Since(spawned).Round(time.Millisecond))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	step := func(what string, f func(context.Context) error) {
		t.Helper()
		sctx, scancel := context.WithTimeout(ctx, stepTimeout)
		defer scancel()
		if err := f(sctx); err != nil {
			t.Fatalf("%s: %v\nagent log:\n%s", what, err, agent.log())
		}
	}

	caller := dialTwilio(t, agent.url, map[string]string{
		paramCallID:   interopCallID,
		paramToolsURL: tools.URL + "/calls/" + interopCallID + "/tools",
		paramToolsTok: interopToken,
	})
	defer caller.close()

	// The SDK drops media until its Realtime socket is up: speak after the
	// session is configured.
	step("session.update from the SDK", func(ctx context.Context) error {
		_, err := fake.WaitFor(ctx, realtime.Is(realtime.FromClient, "session.update"))
		return err
	})
	time.Sleep(200 * time.Millisecond)
	caller.say(700 * time.Millisecond)

	var post toolRequest
	step("the tool POST", func(ctx context.Context) (err error) { post, err = tools.next(ctx); return })
	step("reply audio played", func(ctx context.Context) error {
		return caller.waitUntil(ctx, func(c *twilioCaller) bool { return c.played >= msBytes(bargeAfter) })
	})
	caller.say(600 * time.Millisecond) // barge-in
	step("clear from the agent", func(ctx context.Context) error {
		return caller.waitUntil(ctx, func(c *twilioCaller) bool { return len(c.clears) > 0 })
	})
	step("truncate at the fake", func(ctx context.Context) error {
		_, err := fake.WaitFor(ctx, realtime.Is(realtime.FromClient, "conversation.item.truncate"))
		return err
	})
	// The second turn answers the barge-in: audio after the clear, played
	// out to its last mark.
	step("the second reply played out", func(ctx context.Context) error {
		return caller.waitUntil(ctx, func(c *twilioCaller) bool {
			return c.received > c.clears[0].played && c.played == c.received && c.echoedAfterClear() > 0
		})
	})
	caller.hangup()
	step("the SDK closes its Realtime socket after stop", func(ctx context.Context) error {
		_, err := fake.WaitFor(ctx, realtime.Is(realtime.Note, "disconnect"))
		return err
	})
	if code := agent.stop(t); code != 0 {
		t.Errorf("agent exit status after SIGTERM = %d, want 0\n%s", code, agent.log())
	}

	evs := fake.Events()
	defer func() {
		if t.Failed() {
			t.Logf("what the fake saw:\n%s", eventTrace(evs))
		}
	}()
	checkToolPost(t, post)
	checkSession(t, evs)
	checkToolRoundTrip(t, evs)
	checkPlayout(t, caller, len(reply))
	checkBargeIn(t, evs, caller, replyStatus)
	logTimings(t, evs, caller, post)
	for _, e := range evs {
		if e.Dir == realtime.Note && e.Type != "connect" && e.Type != "disconnect" && e.Type != "no turn" {
			t.Errorf("fake noted %s: %s", e.Type, e.Text)
		}
	}
}

func checkToolPost(t *testing.T, p toolRequest) {
	t.Helper()
	if want := "/calls/" + interopCallID + "/tools/update_order"; p.path != want {
		t.Errorf("tool POST path = %q, want %q", p.path, want)
	}
	if want := "Bearer " + interopToken; p.header.Get("Authorization") != want {
		t.Errorf("tool POST Authorization = %q, want %q", p.header.Get("Authorization"), want)
	}
	if p.header.Get("Idempotency-Key") == "" {
		t.Error("tool POST has no Idempotency-Key (update_order is consequential)")
	}
	var got map[string]any
	if err := json.Unmarshal(p.body, &got); err != nil {
		t.Fatalf("tool POST body %q: %v", p.body, err)
	}
	// The scripted arguments, the null quantity dropped.
	want := map[string]any{"order_number": "5590", "delivery_date": "2026-12-03"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tool POST body = %v, want %v", got, want)
	}
}

// checkSession: the SDK dials with its Node headers and asks for μ-law both
// ways, which is why the fake decodes g711 and Twilio audio passes through
// untouched.
func checkSession(t *testing.T, evs []realtime.Event) {
	t.Helper()
	var conn struct {
		Authorization string   `json:"authorization"`
		Subprotocols  []string `json:"subprotocols"`
	}
	for _, e := range evs {
		if e.Dir == realtime.Note && e.Type == "connect" {
			_ = json.Unmarshal(e.Raw, &conn)
			break
		}
	}
	if conn.Authorization != "Bearer test" {
		t.Errorf("Realtime connect Authorization = %q, want Bearer test", conn.Authorization)
	}
	var upd struct {
		Session struct {
			Audio struct {
				Input struct {
					Format map[string]any `json:"format"`
				} `json:"input"`
				Output struct {
					Format map[string]any `json:"format"`
				} `json:"output"`
			} `json:"audio"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"session"`
	}
	// The SDK also sends a session.update of its own for tracing alone.
	if first(evs, realtime.FromClient, "session.update", func(e realtime.Event) bool {
		return json.Unmarshal(e.Raw, &upd) == nil && upd.Session.Audio.Input.Format != nil
	}) == nil {
		t.Fatal("no session.update with audio formats")
	}
	a := upd.Session.Audio
	if a.Input.Format["type"] != "audio/pcmu" || a.Output.Format["type"] != "audio/pcmu" {
		t.Errorf("session.update audio formats = in %v, out %v; want audio/pcmu both", a.Input.Format, a.Output.Format)
	}
	if len(upd.Session.Tools) != 1 || upd.Session.Tools[0].Name != "update_order" {
		t.Errorf("session.update tools = %+v, want update_order", upd.Session.Tools)
	}
}

// checkToolRoundTrip: after the fake's function call the SDK sent the
// call's output (the tools server's answer) and then asked for a response.
func checkToolRoundTrip(t *testing.T, evs []realtime.Event) {
	t.Helper()
	var call struct {
		Item struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
		} `json:"item"`
	}
	iCall := index(evs, realtime.FromServer, "response.output_item.done", func(e realtime.Event) bool {
		_ = json.Unmarshal(e.Raw, &call)
		return call.Item.Type == "function_call"
	})
	var out struct {
		Item struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Output string `json:"output"`
		} `json:"item"`
	}
	iOut := index(evs, realtime.FromClient, "conversation.item.create", func(e realtime.Event) bool {
		_ = json.Unmarshal(e.Raw, &out)
		return out.Item.Type == "function_call_output"
	})
	iCreate := index(evs, realtime.FromClient, "response.create", nil)
	if iCall < 0 || iOut < 0 || iCreate < 0 || !(iCall < iOut && iOut < iCreate) {
		t.Fatalf("function call %d, its output %d, response.create %d: want all, in this order", iCall, iOut, iCreate)
	}
	if out.Item.CallID != call.Item.CallID {
		t.Errorf("function_call_output call_id = %q, want %q", out.Item.CallID, call.Item.CallID)
	}
	if !strings.Contains(out.Item.Output, `"ok":true`) {
		t.Errorf("function_call_output = %q, want the tools server's answer", out.Item.Output)
	}
}

// checkPlayout: the reply came as Twilio media frames on the start's
// stream, each followed by a mark.
func checkPlayout(t *testing.T, c *twilioCaller, replyBytes int) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.media == 0 || c.marks < c.media {
		t.Errorf("media frames %d, marks %d: want a mark after every frame", c.media, c.marks)
	}
	if c.badSid > 0 {
		t.Errorf("%d frames from the agent did not name stream %s", c.badSid, c.streamSid)
	}
	if len(c.unknown) > 0 {
		t.Errorf("unexpected frames from the agent: %v", c.unknown)
	}
	if total := c.clears[0].played + c.clears[0].dropped; total > replyBytes {
		t.Errorf("%d bytes of the first reply reached the caller, more than its %d", total, replyBytes)
	}
}

// checkBargeIn: the truncate names the reply's item and its audio_end_ms
// is where the caller's echoed marks put playout.
//
// The SDK computes audio_end_ms = (position of the last audio mark echoed
// before it saw speech_started) + 50 ms, capped by the audio it sent. So
// audio_end_ms - 50 must be the position of a mark the caller echoed before
// the clear. And it must be close to the caller's own playout clock when
// the clear arrived: no later than it, and no earlier than it by more than
// one delta of audio (marks come once per delta, DefaultChunk), the time
// speech_started took to come back as a clear (measured: the caller kept
// playing meanwhile), one 20 ms playout tick, and one more tick for an echo
// still on its way to the SDK when it took its snapshot.
func checkBargeIn(t *testing.T, evs []realtime.Event, c *twilioCaller, replyStatus string) {
	t.Helper()
	tr := realtime.Truncates(evs)
	if len(tr) != 1 {
		t.Fatalf("%d truncates, want 1", len(tr))
	}
	// The interrupted reply is the second response (the first made the
	// function call).
	var done struct {
		Response struct {
			Status string `json:"status"`
		} `json:"response"`
	}
	if e := nth(evs, realtime.FromServer, "response.done", 2); e == nil || json.Unmarshal(e.Raw, &done) != nil || done.Response.Status != replyStatus {
		t.Errorf("interrupted reply's response.done status %q, want %q", done.Response.Status, replyStatus)
	}
	if i := index(evs, realtime.FromClient, "response.cancel", nil); i >= 0 {
		t.Error("the SDK sent response.cancel though the session has interrupt_response")
	}
	var item struct {
		Item struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		} `json:"item"`
	}
	if index(evs, realtime.FromServer, "response.output_item.added", func(e realtime.Event) bool {
		_ = json.Unmarshal(e.Raw, &item)
		return item.Item.Type == "message"
	}) < 0 || tr[0].ItemID != item.Item.ID || tr[0].ContentIndex != 0 {
		t.Errorf("truncate names item %q content %d, want the reply %q content 0", tr[0].ItemID, tr[0].ContentIndex, item.Item.ID)
	}
	started := nth(evs, realtime.FromServer, "input_audio_buffer.speech_started", 2)
	if started == nil {
		t.Fatal("no second speech_started")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	clr := c.clears[0]
	lag := clr.at.Sub(started.At)
	playedMs := bytesMs(clr.played)
	endMs := tr[0].AudioEndMs
	heard := false
	for _, e := range c.echoes {
		if !e.cleared && e.at.Before(clr.at) && bytesMs(e.pos)+50 == endMs {
			heard = true
		}
	}
	if !heard {
		t.Errorf("audio_end_ms %d is not an echoed mark's position + 50 ms", endMs)
	}
	lo := playedMs - int(realtime.DefaultChunk/time.Millisecond) - int(lag/time.Millisecond) - 2*int(frameEvery/time.Millisecond)
	if endMs-50 > playedMs || endMs-50 < lo {
		t.Errorf("audio_end_ms %d: want its mark position %d within [%d, %d] (caller played %d ms at the clear, %v after speech_started)",
			endMs, endMs-50, lo, playedMs, playedMs, lag)
	}
	t.Logf("barge-in: caller had played %d ms at the clear (%d ms dropped); truncate audio_end_ms %d; speech_started -> clear %v",
		playedMs, bytesMs(clr.dropped), endMs, lag.Round(time.Millisecond))
}

func logTimings(t *testing.T, evs []realtime.Event, c *twilioCaller, post toolRequest) {
	t.Helper()
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	if stop := nth(evs, realtime.FromServer, "input_audio_buffer.speech_stopped", 1); stop != nil {
		t.Logf("speech_stopped -> tool POST %s", ms(post.at.Sub(stop.At)))
	}
	if create := first(evs, realtime.FromClient, "response.create", nil); create != nil {
		t.Logf("tool POST -> response.create %s", ms(create.At.Sub(post.at)))
		c.mu.Lock()
		t.Logf("response.create -> first media at the caller %s", ms(c.firstMediaAt.Sub(create.At)))
		c.mu.Unlock()
	}
	if started := nth(evs, realtime.FromServer, "input_audio_buffer.speech_started", 2); started != nil {
		if tr := realtime.Truncates(evs); len(tr) > 0 {
			t.Logf("speech_started -> truncate %s", ms(tr[0].At.Sub(started.At)))
		}
	}
	c.mu.Lock()
	t.Logf("caller: %d media frames and %d marks from the agent, %d echoes, first mark %q",
		c.media, c.marks, len(c.echoes), c.firstMark)
	c.mu.Unlock()
}

// ---- event helpers ----

// eventTrace is evs one a line, runs of audio events collapsed, for
// failure reports.
func eventTrace(evs []realtime.Event) string {
	var b strings.Builder
	if len(evs) == 0 {
		return ""
	}
	t0, last, run := evs[0].At, "", 0
	for _, e := range evs {
		k := string(e.Dir) + " " + e.Type
		if k == last && e.AudioBytes > 0 {
			run++
			continue
		}
		if run > 0 {
			fmt.Fprintf(&b, "        (x%d)\n", run+1)
		}
		run, last = 0, k
		raw := string(e.Raw)
		if len(raw) > 240 {
			raw = raw[:240] + "…"
		}
		fmt.Fprintf(&b, "%6dms %s %s %s\n", e.At.Sub(t0).Milliseconds(), k, raw, e.Text)
	}
	return b.String()
}

func index(evs []realtime.Event, dir realtime.Direction, typ string, pred func(realtime.Event) bool) int {
	for i, e := range evs {
		if e.Dir == dir && e.Type == typ && (pred == nil || pred(e)) {
			return i
		}
	}
	return -1
}

func first(evs []realtime.Event, dir realtime.Direction, typ string, pred func(realtime.Event) bool) *realtime.Event {
	if i := index(evs, dir, typ, pred); i >= 0 {
		return &evs[i]
	}
	return nil
}

func nth(evs []realtime.Event, dir realtime.Direction, typ string, n int) *realtime.Event {
	for i, e := range evs {
		if e.Dir == dir && e.Type == typ {
			if n--; n == 0 {
				return &evs[i]
			}
		}
	}
	return nil
}

func msBytes(d time.Duration) int { return int(d.Milliseconds()) * 8 }
func bytesMs(b int) int           { return b / 8 }

// ---- the agent process ----

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "agents", "openai-twilio", "server.mjs")); err != nil {
		t.Fatalf("repository root not at %s: %v", dir, err)
	}
	return dir
}

// installNodeAgents runs scripts/install-node-agents.sh (a no-op when
// node_modules is current). A failure fails the test: with node present the
// interop test must run.
func installNodeAgents(t *testing.T, root string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "install-node-agents.sh"))
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/install-node-agents.sh: %v\n%s", err, out)
	}
}

type agentProc struct {
	cmd      *exec.Cmd
	url      string
	stderr   *lockedBuffer
	exited   chan struct{}
	exitCode int
	once     sync.Once
}

func startAgent(t *testing.T, node, root, realtimeURL string) *agentProc {
	t.Helper()
	cmd := exec.Command(node, "server.mjs", "--port", "0")
	cmd.Dir = filepath.Join(root, "agents", "openai-twilio")
	cmd.Env = append(os.Environ(), "REALTIME_URL="+realtimeURL, "OPENAI_AGENTS_DISABLE_TRACING=1")
	a := &agentProc{cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = a.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start node: %v", err)
	}
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				select {
				case port <- p:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		_ = cmd.Wait()
		a.exitCode = cmd.ProcessState.ExitCode()
		close(a.exited)
	}()
	select {
	case p := <-port:
		a.url = "ws://127.0.0.1:" + p + "/media-stream"
	case <-a.exited:
		t.Fatalf("agent exited before listening:\n%s", a.log())
	case <-time.After(startTimeout):
		a.stop(t)
		t.Fatalf("agent not listening within %v:\n%s", startTimeout, a.log())
	}
	return a
}

func (a *agentProc) log() string { return a.stderr.String() }

// stop sends SIGTERM (then SIGKILL after 5 s) and returns the exit status.
func (a *agentProc) stop(t *testing.T) int {
	a.once.Do(func() {
		_ = a.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-a.exited:
		case <-time.After(5 * time.Second):
			t.Errorf("agent still running 5 s after SIGTERM; killing it")
			_ = a.cmd.Process.Kill()
			<-a.exited
		}
	})
	<-a.exited
	return a.exitCode
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// ---- the tools server ----

type toolRequest struct {
	at     time.Time
	path   string
	header http.Header
	body   []byte
}

type toolsServer struct {
	*httptest.Server
	reqs chan toolRequest
}

func newToolsServer() *toolsServer {
	s := &toolsServer{reqs: make(chan toolRequest, 16)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		select {
		case s.reqs <- toolRequest{at: time.Now(), path: r.URL.Path, header: r.Header.Clone(), body: body}:
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true,"record":{"table":"orders","key":"5590","version":2,"fields":{"delivery_date":"2026-12-03"}}}`)
	}))
	return s
}

func (s *toolsServer) next(ctx context.Context) (toolRequest, error) {
	select {
	case r := <-s.reqs:
		return r, nil
	case <-ctx.Done():
		return toolRequest{}, ctx.Err()
	}
}

// ---- a minimal Twilio Media Streams caller (scaffolding until
// callsim/twilio replaces it) ----

type mark struct {
	name string
	pos  int // bytes of agent audio queued before it
}

type echo struct {
	mark
	at      time.Time
	cleared bool // echoed at once on clear, not reached by playout
}

type clearEv struct {
	at      time.Time
	played  int
	dropped int
}

type twilioCaller struct {
	ws        *websocket.Conn
	streamSid string
	speech    []byte // one 20 ms frame of caller "speech"
	silence   []byte

	wmu sync.Mutex
	seq int

	mu           sync.Mutex
	speaking     int // frames of speech still to send
	received     int // agent audio bytes queued (the queue is received - played)
	played       int
	pending      []mark
	echoes       []echo
	clears       []clearEv
	media, marks int
	badSid       int
	firstMediaAt time.Time
	firstMark    string
	unknown      []string
	changed      chan struct{}

	quit chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func dialTwilio(t *testing.T, url string, params map[string]string) *twilioCaller {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	ws, _, err := d.Dial(url, nil)
	if err != nil {
		t.Fatalf("dial agent: %v", err)
	}
	c := &twilioCaller{
		ws: ws, streamSid: "MZ00000000000000000000000000000001",
		speech:  realtime.Tone(300, frameEvery, 8000),
		silence: realtime.Silence(frameEvery),
		changed: make(chan struct{}), quit: make(chan struct{}),
	}
	// Twilio sends connected (no sequence number) then start.
	c.write(map[string]any{"event": "connected", "protocol": "Call", "version": "1.0.0"}, false)
	c.write(map[string]any{"event": "start", "streamSid": c.streamSid, "start": map[string]any{
		"accountSid": "AC00000000000000000000000000000001", "callSid": "CA00000000000000000000000000000001",
		"streamSid": c.streamSid, "tracks": []string{"inbound"}, "customParameters": params,
		"mediaFormat": map[string]any{"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
	}}, true)
	c.wg.Add(2)
	go c.read()
	go c.pump()
	return c
}

// write sends one frame, numbering it when seq is set.
func (c *twilioCaller) write(m map[string]any, seq bool) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if seq {
		c.seq++
		m["sequenceNumber"] = strconv.Itoa(c.seq)
	}
	b, _ := json.Marshal(m)
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_ = c.ws.WriteMessage(websocket.TextMessage, b)
}

func (c *twilioCaller) echo(names []string) {
	for _, n := range names {
		c.write(map[string]any{"event": "mark", "streamSid": c.streamSid, "mark": map[string]any{"name": n}}, true)
	}
}

func (c *twilioCaller) signalLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// say queues d of caller speech.
func (c *twilioCaller) say(d time.Duration) {
	c.mu.Lock()
	c.speaking += int(d / frameEvery)
	c.mu.Unlock()
}

func (c *twilioCaller) waitUntil(ctx context.Context, cond func(*twilioCaller) bool) error {
	for {
		c.mu.Lock()
		ok, ch := cond(c), c.changed
		c.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (c *twilioCaller) echoedAfterClear() int {
	n := 0
	for _, e := range c.echoes {
		if !e.cleared && len(c.clears) > 0 && e.at.After(c.clears[0].at) {
			n++
		}
	}
	return n
}

// pump sends a media frame every 20 ms (speech or silence, with Twilio's
// string counters) and plays agent audio out at the same pace, echoing each
// mark when playout reaches it.
func (c *twilioCaller) pump() {
	defer c.wg.Done()
	tick := time.NewTicker(frameEvery)
	defer tick.Stop()
	for chunk := 1; ; chunk++ {
		select {
		case <-c.quit:
			return
		case <-tick.C:
		}
		c.mu.Lock()
		payload := c.silence
		if c.speaking > 0 {
			c.speaking--
			payload = c.speech
		}
		c.played += min(frameBytes, c.received-c.played)
		var due []string
		for len(c.pending) > 0 && c.pending[0].pos <= c.played {
			m := c.pending[0]
			c.pending = c.pending[1:]
			c.echoes = append(c.echoes, echo{mark: m, at: time.Now()})
			due = append(due, m.name)
		}
		c.signalLocked()
		c.mu.Unlock()
		c.write(map[string]any{"event": "media", "streamSid": c.streamSid, "media": map[string]any{
			"track": "inbound", "chunk": strconv.Itoa(chunk),
			"timestamp": strconv.Itoa((chunk - 1) * int(frameEvery/time.Millisecond)),
			"payload":   base64.StdEncoding.EncodeToString(payload),
		}}, true)
		c.echo(due)
	}
}

// read takes the agent's media (queued for playout), marks (queued behind
// the audio before them) and clear (queue dropped, pending marks echoed at
// once).
func (c *twilioCaller) read() {
	defer c.wg.Done()
	for {
		_, b, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		var m struct {
			Event     string `json:"event"`
			StreamSid string `json:"streamSid"`
			Media     struct {
				Payload string `json:"payload"`
			} `json:"media"`
			Mark struct {
				Name string `json:"name"`
			} `json:"mark"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			c.mu.Lock()
			c.unknown = append(c.unknown, string(b))
			c.mu.Unlock()
			continue
		}
		var due []string
		c.mu.Lock()
		if m.StreamSid != c.streamSid {
			c.badSid++
		}
		switch m.Event {
		case "media":
			audio, _ := base64.StdEncoding.DecodeString(m.Media.Payload)
			if c.media == 0 {
				c.firstMediaAt = time.Now()
			}
			c.media++
			c.received += len(audio)
		case "mark":
			if c.marks == 0 {
				c.firstMark = m.Mark.Name
			}
			c.marks++
			c.pending = append(c.pending, mark{name: m.Mark.Name, pos: c.received})
		case "clear":
			now := time.Now()
			c.clears = append(c.clears, clearEv{at: now, played: c.played, dropped: c.received - c.played})
			c.received = c.played
			for _, p := range c.pending {
				c.echoes = append(c.echoes, echo{mark: p, at: now, cleared: true})
				due = append(due, p.name)
			}
			c.pending = nil
		default:
			c.unknown = append(c.unknown, m.Event)
		}
		c.signalLocked()
		c.mu.Unlock()
		c.echo(due)
	}
}

// hangup sends stop and closes the socket.
func (c *twilioCaller) hangup() {
	c.once.Do(func() {
		close(c.quit)
		c.write(map[string]any{"event": "stop", "streamSid": c.streamSid, "stop": map[string]any{
			"accountSid": "AC00000000000000000000000000000001", "callSid": "CA00000000000000000000000000000001",
		}}, true)
		c.wmu.Lock()
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		c.wmu.Unlock()
		_ = c.ws.Close()
	})
	c.wg.Wait()
}

func (c *twilioCaller) close() { c.hangup() }
