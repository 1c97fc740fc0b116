package harness_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/agents/hostile"
	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/twilio"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/internal/safetext"
	"github.com/callproof/callproof/mockbackend"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// helperEnv, set to "careful" or "hostile:BEHAVIOUR", makes the test
// binary serve that agent on loopback, print its URL and run until stdin
// closes: an agent in a process of its own, to kill or stop mid-call, or
// whose memory is not counted as the harness's.
const helperEnv = "CALLPROOF_TEST_HELPER_AGENT"

func TestMain(m *testing.M) {
	switch v := os.Getenv(helperEnv); {
	case v == "careful":
		os.Exit(helperAgent(func() (string, func(), error) {
			r, err := agents.Start(context.Background(), agents.Careful(), "127.0.0.1:0")
			if err != nil {
				return "", nil, err
			}
			return r.URL, func() { _ = r.Close() }, nil
		}))
	case strings.HasPrefix(v, "hostile:"):
		os.Exit(helperAgent(func() (string, func(), error) {
			// hostile:BEHAVIOUR[:ROUNDS]
			b, rounds, _ := strings.Cut(strings.TrimPrefix(v, "hostile:"), ":")
			n, _ := strconv.Atoi(rounds)
			r, err := hostile.Start(context.Background(), hostile.Options{Behaviour: hostile.Behaviour(b), Rounds: n}, "127.0.0.1:0")
			if err != nil {
				return "", nil, err
			}
			return r.URL, r.Close, nil
		}))
	}
	os.Exit(m.Run())
}

// helperAgent starts an agent, prints its URL and serves until stdin
// closes.
func helperAgent(start func() (string, func(), error)) int {
	url, stop, err := start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(url)
	_, _ = io.Copy(io.Discard, os.Stdin)
	stop()
	return 0
}

// fxAgentProcess starts the careful agent in a child process. Cleanup
// resumes it (it may be stopped) and kills it.
func fxAgentProcess(t *testing.T) (*os.Process, string) {
	t.Helper()
	return fxHelperProcess(t, "careful")
}

// fxHelperProcess starts the agent helperEnv names as agent ("careful",
// "hostile:BEHAVIOUR[:ROUNDS]") in a child process. Cleanup resumes it (it may be
// stopped) and kills it.
func fxHelperProcess(t *testing.T, agent string) (*os.Process, string) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+agent)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	return cmd.Process, strings.TrimSpace(line)
}

// fxRouter is the one agent address a run dials: it reads each call's
// start frame and hands the call to the agent chosen for its id, a
// hostile behaviour in process or a WebSocket agent it relays to (the
// careful reference agent by default). Relaying is frame for frame, pings
// and pongs included, so an agent that stops answering looks stopped to
// the caller.
type fxRouter struct {
	URL     string
	careful string
	srv     *httptest.Server
	wg      sync.WaitGroup

	mu      sync.Mutex
	peers   []native.Tools
	serve   map[string]func(ws *websocket.Conn, start native.Start)
	targets map[string]string
	onFinal map[string]func()
	// holdFinal runs before the caller's first final is passed on.
	holdFinal map[string]func()
}

func fxNewRouter(t *testing.T, careful string) *fxRouter {
	t.Helper()
	r := &fxRouter{careful: careful, serve: map[string]func(*websocket.Conn, native.Start){},
		targets: map[string]string{}, onFinal: map[string]func(){}, holdFinal: map[string]func(){}}
	up := websocket.Upgrader{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.wg.Add(1)
		defer r.wg.Done()
		ws, err := up.Upgrade(w, req, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		_, raw, err := ws.ReadMessage()
		var m native.Message
		if err != nil || json.Unmarshal(raw, &m) != nil || m.Start == nil {
			return
		}
		id := m.Start.CallID
		r.mu.Lock()
		r.peers = append(r.peers, m.Start.Tools)
		serve, target, final, hold := r.serve[id], r.targets[id], r.onFinal[id], r.holdFinal[id]
		r.mu.Unlock()
		switch {
		case serve != nil:
			serve(ws, *m.Start)
		case target != "":
			fxRelay(ws, raw, target, hold, final)
		default:
			fxRelay(ws, raw, r.careful, nil, nil)
		}
	}))
	r.URL = "ws" + strings.TrimPrefix(r.srv.URL, "http") + "/"
	t.Cleanup(func() {
		r.srv.CloseClientConnections()
		r.srv.Close()
		r.wg.Wait()
	})
	return r
}

// Peers is every call's tools the router has seen.
func (r *fxRouter) Peers() []native.Tools {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]native.Tools(nil), r.peers...)
}

// fxRelay passes frames both ways between the caller and the agent at
// target, starting with the start frame; hold runs before the caller's
// first final is passed on, onFinal once it has been. When the agent's side dies, the
// caller's connection is dropped the same way.
func fxRelay(caller *websocket.Conn, start []byte, target string, hold, onFinal func()) {
	agent, _, err := websocket.DefaultDialer.Dial(target, nil)
	if err != nil {
		_ = caller.NetConn().Close()
		return
	}
	defer agent.Close()
	deadline := func() time.Time { return time.Now().Add(time.Second) }
	caller.SetPingHandler(func(d string) error { return agent.WriteControl(websocket.PingMessage, []byte(d), deadline()) })
	agent.SetPongHandler(func(d string) error { return caller.WriteControl(websocket.PongMessage, []byte(d), deadline()) })
	if agent.WriteMessage(websocket.TextMessage, start) != nil {
		_ = caller.NetConn().Close()
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			mt, b, err := agent.ReadMessage()
			if err != nil {
				_ = caller.NetConn().Close()
				return
			}
			if caller.WriteMessage(mt, b) != nil {
				return
			}
		}
	}()
	finalSeen := false
	for {
		mt, b, err := caller.ReadMessage()
		if err != nil {
			break
		}
		final := !finalSeen && strings.Contains(string(b), `"phase":"final"`)
		finalSeen = finalSeen || final
		if final && hold != nil {
			hold()
		}
		if agent.WriteMessage(mt, b) != nil {
			break
		}
		if final && onFinal != nil {
			onFinal()
		}
	}
	_ = agent.NetConn().Close()
	<-done
}

// fxHostileCase is a short call for a hostile agent: the request, a wait
// for quiet, the hang-up; extra adds top-level fields (limits, timeouts).
func fxHostileCase(t *testing.T, name, extra string) *scenarios.Compiled {
	t.Helper()
	quiet := "12s"
	if strings.Contains(extra, "call: 600s") {
		quiet = "300s" // an agent that takes long to get its frames out
	}
	return fxHostileCaseQuiet(t, name, extra, quiet)
}

// fxSuiteCase is TestHostileAgents' hostile call: fxHostileCase with
// every bound its call could end on by timing far out of reach (script
// time: the wait for quiet 300 s, steps 120 s, unless the case sets its
// timeouts; the quiet period 20 s, 1 s real, so a gap between an agent's
// frames on a busy machine is not its silence), so that it ends as its
// agent makes it end: no behaviour of the suite ends on the caller's own
// patience.
func fxSuiteCase(t *testing.T, name, extra string) *scenarios.Compiled {
	t.Helper()
	if !strings.Contains(extra, "timeouts:") {
		extra = "timeouts: {quiet: 20s, step: 120s, call: 600s}\n" + extra
	}
	return fxHostileCaseQuiet(t, name, extra, "300s")
}

// fxHostileCaseQuiet is fxHostileCase with the quiet wait's bound.
func fxHostileCaseQuiet(t *testing.T, name, extra, quiet string) *scenarios.Compiled {
	t.Helper()
	y := `id: hostile-` + name + `
category: combined
description: a hostile agent
steps:
  - {id: ask, do: say, text: "Hi, I'd like to change the delivery date on order 5590 to December 3.", action: update_order, slots: {order_number: "5590", delivery_date: "2026-12-03"}}
  - {id: quiet, do: wait_quiet, on: {timeout: ` + quiet + `}}
  - {id: bye, do: hangup}
` + extra + `
expected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true, backend_correct: true, confirmation_matches_backend: true, should_execute: true}
`
	s, err := scenarios.LoadBytes(name+".yaml", []byte(y))
	require.NoError(t, err)
	c, err := scenarios.Compile(s)
	require.NoError(t, err)
	return c
}

// fxHostileSuite is what one hostile call's suite saw.
type fxHostileSuite struct {
	dir     string // the results directory
	hostile *trace.History
	others  []*trace.History
	// otherScores are the careful calls' scores, in the order of others.
	otherScores []scorer.CallScore
	agent       *hostile.Agent // the hostile agent, when a check needs it
	elapsed     time.Duration
	heapGrow    int64  // HeapInuse after the run (after a GC) minus before
	allocated   uint64 // TotalAlloc during the run
}

// fxRunHostile places fxFewBystanders careful bystanders (fxBystanders)
// around the hostile case in one run (concurrency 4) through the router, with a
// results directory, and checks that every planned call was recorded and
// scored exactly once and that each bystander got its usual verdict, the
// one its scenario's expected block gives (fxUsualVerdict). Placed once:
// the bystanders' scripts have no timed window for a busy machine to
// move, so nothing here is retried.
func fxRunHostile(t *testing.T, env *harness.Env, rt *fxRouter, hc *scenarios.Compiled) fxHostileSuite {
	t.Helper()
	s := fxRunHostileOnce(t, env, rt, hc, fxFewBystanders)
	fxAssertBystanders(t, s)
	return s
}

// fxAssertBystanders: each bystander got its usual verdict; the timeline
// of one that did not is logged, with its axes.
func fxAssertBystanders(t *testing.T, s fxHostileSuite) {
	t.Helper()
	for i, c := range s.otherScores {
		if assert.Equal(t, fxUsualVerdict, liveFingerprint(c), "%s: every bystander's usual verdict (%s)", c.Call, c.Reason) {
			continue
		}
		var b bytes.Buffer
		if err := reports.WriteTimeline(&b, s.others[i], c); err == nil {
			t.Logf("%s:\n%s", c.Call, b.String())
		}
	}
}

// fxUsualVerdict is every bystander's outcome | six verdicts | primary
// bucket: scored, each axis passed, no bucket; by construction, as
// careful meets every expected block (TestIntegrationCarefulMatchesExpected)
// and fxBystanders' expect all six.
var fxUsualVerdict = "scored | pass pass pass pass pass pass | "

// fxBystanderOverloadBound (script time; 1 s of real time at fxScale)
// replaces harness.DefaultOverloadBound in the suite: the bystanders
// race nothing, so lateness moves none of their verdicts, and a call is
// marked overloaded only when its harness timers stalled a whole second,
// far beyond any busy machine's scheduling delay (docs/PERFORMANCE.md,
// "Harness lateness") and a sign of the hostile call's work.
const fxBystanderOverloadBound = 20 * time.Second

// fxAckWait replaces callsim.DefaultAckWait in the suite: an ack later
// than 300 ms on a busy machine would run the call at time scale 1, its
// 20 s quiet period then 20 s of real time.
const fxAckWait = 10 * time.Second

// fxBystanderToolTimeout (script time; 10 s real at fxScale) is the
// bystanders' careful agent's client timeout per tool request instead of
// agents.DefaultToolTimeout (200 ms real at fxScale): a verifying read
// that a busy machine delays past it makes careful say it cannot confirm
// (confirmation_matches_backend fails), which is timing, not the hostile
// call's doing.
const fxBystanderToolTimeout = 200 * time.Second

// fxBystanderAgent serves the bystanders' careful agent on loopback.
func fxBystanderAgent(t *testing.T) string {
	t.Helper()
	cfg := agents.Careful()
	cfg.ToolTimeout = fxBystanderToolTimeout
	running, err := agents.Start(context.Background(), cfg, "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = running.Close() })
	return running.URL
}

// fxFewBystanders is how many careful calls run beside a native hostile
// agent's call, and in the control; fxBesideBystanders beside a Twilio or
// WebRTC one (and in its wire's flood-free run): the 20 calls issue 25
// asks to keep their verdicts while one call sends every message kind
// of its wire at its limits.
const (
	fxFewBystanders    = 3
	fxBesideBystanders = 20
)

// fxBystandersOf is how many bystanders case name's run holds.
func fxBystandersOf(name string) int {
	for _, hc := range fxHostileCases(nil) {
		if hc.name == name && hc.wire != "" {
			return fxBesideBystanders
		}
	}
	return fxFewBystanders
}

// fxBystanders are n careful calls around a hostile one: a date, a
// quantity and a shipment in turn, each asked once the greeting is over and
// ended once the agent has been quiet for 20 s of script time (1 s real),
// nothing timed between. What careful does in them is an ordering (hear
// the request, read it back, call the tool, confirm), so however late a
// busy machine makes it, their verdicts are the expected block's, given
// a tool timeout no busy machine reaches (fxBystanderAgent); the
// core scenarios time corrections and interruptions against the agent's
// work, which CPU starvation moves at fxScale (docs/PERFORMANCE.md).
func fxBystanders(t *testing.T, n int) []*scenarios.Compiled {
	t.Helper()
	asks := []struct{ id, text, action, slots string }{
		{"date", "Hi, I'd like to change the delivery date on order 5590 to December 3.", "update_order", `{order_number: "5590", delivery_date: "2026-12-03"}`},
		{"quantity", "Hi, please change the quantity on order 5590 to 2.", "update_order", `{order_number: "5590", quantity: "2"}`},
		{"ship", "Hi, please ship order 5590 today.", "ship_order", `{order_number: "5590"}`},
	}
	var out []*scenarios.Compiled
	for i := 0; i < n; i++ {
		a := asks[i%len(asks)]
		id := "bystander-" + a.id
		if n > len(asks) {
			id += "-" + strconv.Itoa(i/len(asks)+1)
		}
		y := `id: ` + id + `
category: combined
description: a careful call beside a hostile one, with nothing timed
timeouts: {quiet: 20s, step: 600s, call: 1200s}
steps:
  - {id: ask, do: say, text: "` + a.text + `", action: ` + a.action + `, slots: ` + a.slots + `, on: {event: agent.speech_end, timeout: 600s}}
  - {id: quiet, do: wait_quiet, on: {timeout: 600s}}
  - {id: bye, do: hangup}
expected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true, backend_correct: true, confirmation_matches_backend: true, should_execute: true}
`
		s, err := scenarios.LoadBytes(id+".yaml", []byte(y))
		require.NoError(t, err)
		c, err := scenarios.Compile(s)
		require.NoError(t, err)
		out = append(out, c)
	}
	return out
}

// fxRunHostileOnce places the suite once, with n bystanders.
func fxRunHostileOnce(t *testing.T, env *harness.Env, rt *fxRouter, hc *scenarios.Compiled, n int) fxHostileSuite {
	t.Helper()
	core := fxBystanders(t, n)
	cases := core
	if hc != nil {
		cases = append([]*scenarios.Compiled{core[0], hc}, core[1:]...)
	}
	dir := filepath.Join(t.TempDir(), "run")
	if out := os.Getenv(hostileOutEnv); out != "" {
		d, err := os.MkdirTemp(out, "attempt-") // read by the parent
		require.NoError(t, err)
		dir = filepath.Join(d, "run")
	}
	planned := harness.Plan(cases)
	res, err := harness.CreateResults(dir, harness.Meta{Agent: rt.URL, Suite: "hostile", TimeScale: fxScale, Calls: len(cases), Planned: planned})
	require.NoError(t, err)
	r := fxRunner(env)
	r.Concurrency = max(4, len(cases)) // every bystander open at once
	r.Results = res
	r.OverloadBound = fxBystanderOverloadBound

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := r.Run(ctx, rt.URL, cases)
	elapsed := time.Since(began)
	require.NoError(t, err)
	require.NoError(t, res.Close())
	runtime.GC()
	runtime.ReadMemStats(&after)

	hs, err := harness.ReadRun(filepath.Join(dir, harness.RunFile))
	require.NoError(t, err)
	scores, err := harness.ReadScores(filepath.Join(dir, harness.ScoresFile))
	require.NoError(t, err)
	count := map[string]int{}
	for _, h := range hs {
		count[h.Call]++
	}
	scored := map[string]int{}
	for _, s := range scores {
		scored[s.Call]++
	}
	for _, id := range planned {
		assert.Equal(t, 1, count[id], "%s recorded %d times", id, count[id])
		assert.Equal(t, 1, scored[id], "%s scored %d times", id, scored[id])
	}
	assert.Len(t, hs, len(planned))
	assert.FileExists(t, filepath.Join(dir, harness.DoneFile))

	s := fxHostileSuite{dir: dir, elapsed: elapsed, heapGrow: int64(after.HeapInuse) - int64(before.HeapInuse), allocated: after.TotalAlloc - before.TotalAlloc}
	for _, c := range out {
		fxAssertShape(t, c.History)
		if hc != nil && c.History.Call == hc.Scenario.ID {
			s.hostile = c.History
			continue
		}
		s.others = append(s.others, c.History)
		s.otherScores = append(s.otherScores, c.Score)
	}
	if hc == nil {
		t.Logf("the bystanders' run: %s, heap +%d KiB, allocated %d MiB", elapsed.Round(time.Millisecond), s.heapGrow>>10, s.allocated>>20)
		return s
	}
	require.NotNil(t, s.hostile)
	t.Logf("%s: %s, heap +%d KiB, allocated %d MiB, %d events", hc.Scenario.ID, elapsed.Round(time.Millisecond),
		s.heapGrow>>10, s.allocated>>20, len(s.hostile.Events))
	return s
}

// fxToolEvents lists a history's tool events whose reason or error holds
// sub.
func fxToolEvents(h *trace.History, k trace.Kind, sub string) []*trace.ToolEvent {
	var out []*trace.ToolEvent
	for _, e := range h.Events {
		if d, ok := e.Data.(*trace.ToolEvent); ok && e.Kind == k && strings.Contains(d.Reason+" "+d.Error, sub) {
			out = append(out, d)
		}
	}
	return out
}

// hostileCase is one misbehaviour of TestHostileAgents.
type hostileCase struct {
	name    string
	extra   string
	opts    hostile.Options
	process string // "kill" or "stop": the careful agent in a child process, so treated at the caller's first final
	// wire "twilio" or "webrtc": the hostile call goes over Twilio Media
	// Streams or WebRTC, in real time, beside the bystanders (fxRunBeside).
	wire string
	// baseline: the flood-free run of the later cases of its wire, whose
	// peak RSS they are measured against (the others' is the control's).
	baseline bool
	outcome  trace.Outcome
	reason   string // call.end reason, prefix
	maxAlloc uint64
	check    func(t *testing.T, s fxHostileSuite, rt *fxRouter)
}

// fxHostileCases lists TestHostileAgents' cases; env is the backend the
// checks look at (nil when only the names are needed).
func fxHostileCases(env *harness.Env) []hostileCase {
	return []hostileCase{
		{name: "partial-body", extra: "timeouts: {quiet: 10s, step: 120s, call: 600s}", opts: hostile.Options{Behaviour: hostile.PartialBody},
			outcome: trace.OutcomeAgentError, reason: mockbackend.ReasonStalledBody, maxAlloc: 64 << 20,
			check: func(t *testing.T, s fxHostileSuite, _ *fxRouter) {
				// The stalled request is cut when the call closes, on the record.
				assert.Len(t, fxToolEvents(s.hostile, trace.KindToolCancelled, "body was arriving"), 1)
			}},
		{name: "slow-body", extra: "timeouts: {quiet: 10s, step: 120s, call: 600s}", opts: hostile.Options{Behaviour: hostile.SlowBody},
			outcome: trace.OutcomeAgentError, reason: mockbackend.ReasonStalledBody, maxAlloc: 64 << 20,
			check: func(t *testing.T, s fxHostileSuite, _ *fxRouter) {
				assert.Len(t, fxToolEvents(s.hostile, trace.KindToolCancelled, "body was arriving"), 1)
			}},
		// 24 frames: about 4 s under -race on an idle machine, well within
		// the 15 s the caller waits for quiet on a busy one.
		{name: "huge-frames", extra: "timeouts: {quiet: 20s, step: 120s, call: 600s}", opts: hostile.Options{Behaviour: hostile.HugeFrames, Frames: 24},
			outcome: trace.OutcomeScored, reason: "agent hung up", maxAlloc: 24 * 6 << 20,
			check: func(t *testing.T, s fxHostileSuite, _ *fxRouter) {
				assert.GreaterOrEqual(t, len(fxKinds(s.hostile, trace.KindAgentSpeechText)), 24, "every frame was read")
			}},
		{name: "text-flood", extra: "limits: {max_call_text_bytes: 65536}", opts: hostile.Options{Behaviour: hostile.TextFlood},
			outcome: trace.OutcomeAgentError, reason: callsim.ReasonTextBudget, maxAlloc: 64 << 20},
		// A rate any flood passes at once however busy the machine, and a
		// wait for quiet (no tool call open) long enough for it to.
		{name: "tool-flood", extra: "timeouts: {quiet: 20s, step: 120s, call: 600s}\nlimits: {max_tool_requests_per_second: 5}", opts: hostile.Options{Behaviour: hostile.ToolFlood, Requests: 3000},
			outcome: trace.OutcomeAgentError, reason: mockbackend.ReasonToolFlood + ": more than 5 tool requests per second", maxAlloc: 256 << 20,
			check: func(t *testing.T, s fxHostileSuite, _ *fxRouter) {
				// Only the requests within the budget are in the history: a
				// burst of 5 and what the rate refilled until it broke.
				assert.LessOrEqual(t, len(fxKinds(s.hostile, trace.KindToolReceived)), 20)
				assert.GreaterOrEqual(t, env.Backend.RejectedCount(), int64(1), "requests after the end are refused on the server")
			}},
		{name: "cross-call", opts: hostile.Options{Behaviour: hostile.CrossCall},
			outcome: trace.OutcomeScored, reason: "agent hung up", maxAlloc: 64 << 20,
			check: func(t *testing.T, s fxHostileSuite, rt *fxRouter) {
				assert.Empty(t, fxKinds(s.hostile, trace.KindToolReceived), "no request entered its own history either")
				for _, h := range s.others {
					for _, e := range h.Events {
						if d, ok := e.Data.(*trace.ToolEvent); ok {
							assert.NotEqual(t, hostile.CrossCallOrder, d.Args["order_number"], "%s #%d came from the hostile call", h.Call, e.Seq)
						}
					}
				}
				var theirs, ours int
				for _, rr := range env.Backend.Rejected() {
					if rr.TokenOf == "hostile-cross-call" && rr.Status == http.StatusForbidden {
						theirs++
					}
					if rr.CallID == "hostile-cross-call" && rr.TokenOf != "" && rr.Status == http.StatusForbidden {
						ours++
					}
				}
				assert.Positive(t, theirs, "its token on other calls, refused and logged")
				assert.Positive(t, ours, "other calls' tokens on its call, refused and logged")
			}},
		{name: "header-flood", opts: hostile.Options{Behaviour: hostile.HeaderFlood, Conns: 300},
			outcome: trace.OutcomeAgentError, reason: mockbackend.ReasonConnBound + ": ", maxAlloc: 256 << 20,
			check: func(t *testing.T, s fxHostileSuite, _ *fxRouter) {
				var noted bool
				for _, e := range s.hostile.Events {
					if n, ok := e.Data.(*trace.Note); ok && strings.HasPrefix(n.Text, "tool connection bound passed") {
						noted = true
					}
				}
				assert.True(t, noted, "the bound passed is on the record")
			}},
		// A scenario's limits: reach its call's tools listener: 3
		// connections (the connection bound, 64, out of reach), each
		// sending its headers in 8 KiB lines, and the header bound
		// lowered from 16 KiB to 4 KiB.
		{name: "header-flood-limits", extra: "limits: {max_tool_header_bytes: 4096}", opts: hostile.Options{Behaviour: hostile.HeaderFlood, Conns: 3},
			outcome: trace.OutcomeAgentError, reason: mockbackend.ReasonConnBound + ": request headers over 4096 bytes", maxAlloc: 64 << 20},
		{name: "terminal-hangup", opts: hostile.Options{Behaviour: hostile.TerminalText, End: hostile.EndHangup},
			outcome: trace.OutcomeScored, reason: "agent hung up", maxAlloc: 64 << 20, check: fxTerminalSafe},
		{name: "terminal-transfer", opts: hostile.Options{Behaviour: hostile.TerminalText, End: hostile.EndTransfer},
			outcome: trace.OutcomeScored, reason: "agent transferred the call", maxAlloc: 64 << 20, check: fxTerminalSafe},
		{name: "terminal-close", opts: hostile.Options{Behaviour: hostile.TerminalText, End: hostile.EndClose},
			outcome: trace.OutcomeAgentError, reason: callsim.ReasonClosed, maxAlloc: 64 << 20, check: fxTerminalSafe},
		{name: "garbage", opts: hostile.Options{Behaviour: hostile.Garbage},
			outcome: trace.OutcomeAgentError, reason: callsim.ReasonGarbageFrame, maxAlloc: 64 << 20},
		// The wire cases' flood-free runs: the same call, its agent
		// sending only the last frame (the one over a limit).
		{name: "twilio-baseline", baseline: true, wire: "twilio", opts: hostile.Options{Behaviour: hostile.TwilioJunk, Rounds: -1},
			outcome: trace.OutcomeAgentError, reason: callsim.ReasonOversizedFrame, maxAlloc: 64 << 20},
		{name: "webrtc-baseline", baseline: true, wire: "webrtc", process: "own", extra: "limits: {max_call_text_bytes: 67108864}",
			opts: hostile.Options{Behaviour: hostile.WebRTCJunk, Rounds: -1}, outcome: trace.OutcomeAgentError, reason: callsim.ReasonOversizedFrame, maxAlloc: 128 << 20},
		// Five rounds of every Twilio message kind at its limit (1 MiB
		// frames of an unknown event and of another stream, 50 marks
		// with 4 KiB names, a transcript, a clear), then a 1 MB mark name.
		{name: "twilio-junk", wire: "twilio", opts: hostile.Options{Behaviour: hostile.TwilioJunk},
			outcome: trace.OutcomeAgentError, reason: callsim.ReasonOversizedFrame, maxAlloc: 256 << 20,
			check: func(t *testing.T, s fxHostileSuite, _ *fxRouter) {
				var foreign int
				for _, e := range fxKinds(s.hostile, trace.KindAgentUnknown) {
					if n, ok := e.Data.(*trace.Note); ok && strings.Contains(n.Text, `"streamSid":"MZother"`) {
						foreign++
					}
				}
				assert.Equal(t, 5, foreign, "each frame of another stream ignored and recorded")
				assert.LessOrEqual(t, s.agent.LongestEcho(), twilio.DefaultMaxMarkNameBytes, "no longer name echoed back")
			}},
		// 5 s of audio at once, a round of every data-channel message
		// kind just under the 1 MiB limit or at its own, then one over it;
		// the call's text budget raised to its most so that every kind
		// is read before the last message.
		{name: "webrtc-junk", wire: "webrtc", process: "own", extra: "limits: {max_call_text_bytes: 67108864}", opts: hostile.Options{Behaviour: hostile.WebRTCJunk},
			outcome: trace.OutcomeAgentError, reason: callsim.ReasonOversizedFrame, maxAlloc: 512 << 20,
			check: func(t *testing.T, s fxHostileSuite, _ *fxRouter) {
				assert.NotEmpty(t, fxKinds(s.hostile, trace.KindAgentState), "the state messages were read")
				assert.NotEmpty(t, fxKinds(s.hostile, trace.KindAgentUnknown), "the unknown messages were read")
			}},
		{name: "killed", process: "kill", outcome: trace.OutcomeAgentError, reason: callsim.ReasonClosed, maxAlloc: 64 << 20},
		{name: "stopped", process: "stop", extra: "timeouts: {quiet: 20s, step: 120s, call: 600s}\nlimits: {idle_timeout: 400ms}",
			outcome: trace.OutcomeAgentError, reason: callsim.ReasonUnresponsive, maxAlloc: 64 << 20},
	}
}

// hostileCaseEnv, set in a child test process, makes TestHostileAgents
// place its cases in process (the parent picks one with -test.run) and
// write its results and the other calls' verdicts (fxHostileVerdicts)
// under the directory hostileOutEnv names.
const (
	hostileCaseEnv = "CALLPROOF_TEST_HOSTILE_CASE"
	hostileOutEnv  = "CALLPROOF_TEST_HOSTILE_OUT"
)

// hostileControl is the case with no hostile call: the careful calls
// alone, the run every other case is compared with.
const hostileControl = "control"

// maxHostileRSSGrowth is how far a hostile call may raise a run's peak
// resident set above the control run's (issue 25).
const maxHostileRSSGrowth = 100 << 20

// Each hostile agent gets one call in a small suite of careful calls: its
// call ends as it should, every other call is recorded and scored once
// with its usual verdict (fxUsualVerdict, known by construction: see
// fxBystanders), the run ends in time, and memory stays bounded: the heap
// in process, and the peak RSS within the flood-free run's plus 100 MB:
// the control run's (the careful calls alone) for a native agent; for a
// Twilio or WebRTC one, its wire's baseline (the same run, the agent
// sending only its last frame), as a real-time audio call of any kind
// costs the harness more than a text one.
//
// Each case, the control included, runs in a child process of its own,
// so that its peak RSS is the kernel's count for that process alone
// (rusage maxrss); the control is placed once and shared. The child
// asserts the verdicts too; they are checked here again so that a
// difference is shown with the control's timeline beside it.
func TestHostileAgents(t *testing.T) {
	if os.Getenv(hostileCaseEnv) != "" {
		fxHostileInProcess(t)
		return
	}
	dir := t.TempDir() // the control's results outlive its subtest
	var control fxHostileChildRun
	ok := t.Run(hostileControl, func(t *testing.T) {
		control = fxHostileChild(t, dir, hostileControl)
		fxAssertUsual(t, hostileControl, control)
	})
	require.True(t, ok, "the control run failed")
	flood := map[string]fxHostileChildRun{} // by wire; "" the control
	flood[""] = control
	for _, hc := range fxHostileCases(nil) {
		t.Run(hc.name, func(t *testing.T) {
			if !hc.baseline {
				// Two children at a time (-test.parallel, GOMAXPROCS):
				// no verdict here hangs on timing, and each child's
				// peak RSS is its own. The baselines, not parallel, are
				// all placed before any of these starts.
				t.Parallel()
			}
			got := fxHostileChild(t, dir, hc.name)
			if !fxAssertUsual(t, hc.name, got) {
				fxHostileDiffer(t, control, got)
			}
			if hc.baseline {
				flood[hc.wire] = got
				return
			}
			base, ok := flood[hc.wire]
			require.True(t, ok, "no flood-free run of wire %q placed before %s", hc.wire, hc.name)
			assert.LessOrEqual(t, got.peakRSS, base.peakRSS+maxHostileRSSGrowth,
				"peak RSS %d MiB, the flood-free run's %d MiB", got.peakRSS>>20, base.peakRSS>>20)
		})
	}
}

// fxAssertUsual: the child of case name scored its bystanders
// (fxBystandersOf), each with its usual verdict.
func fxAssertUsual(t *testing.T, name string, run fxHostileChildRun) bool {
	t.Helper()
	ok := assert.Len(t, run.Verdicts, fxBystandersOf(name))
	for call, v := range run.Verdicts {
		ok = assert.Equal(t, fxUsualVerdict, v, "%s: outcome | verdicts | primary bucket", call) && ok
	}
	return ok
}

// fxHostileVerdicts is what a child process of TestHostileAgents
// writes: its results directory and the other calls' fingerprints by
// call.
type fxHostileVerdicts struct {
	Dir      string            `json:"dir"`
	Verdicts map[string]string `json:"verdicts"`
}

// fxHostileChildRun is what a child process of TestHostileAgents placed,
// and its peak resident set.
type fxHostileChildRun struct {
	fxHostileVerdicts
	peakRSS int64
}

// fxHostileDiffer logs the timelines, here and in the control run, of
// the calls whose verdicts differ from the control run's.
func fxHostileDiffer(t *testing.T, control, got fxHostileChildRun) {
	t.Helper()
	calls := func(dir string) map[string]*trace.History {
		hs, err := harness.ReadRun(filepath.Join(dir, harness.RunFile))
		require.NoError(t, err)
		byCall := map[string]*trace.History{}
		for _, h := range hs {
			byCall[h.Call] = h
		}
		return byCall
	}
	was, now := calls(control.Dir), calls(got.Dir)
	for id, v := range got.Verdicts {
		if control.Verdicts[id] != v && was[id] != nil && now[id] != nil {
			liveLogTimelines(t, was[id], now[id])
		}
	}
}

// fxHostileChild runs one case of TestHostileAgents in a child process
// and returns what it wrote and its peak RSS. The child's own assertions
// (the hostile call's outcome, its checks, the heap) fail it, and so
// this test, with its output.
func fxHostileChild(t *testing.T, dir, name string) fxHostileChildRun {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	out, err := os.MkdirTemp(dir, name+"-")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^TestHostileAgents$/^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), hostileCaseEnv+"=1", hostileOutEnv+"="+out)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "child placing %s:\n%s", name, b)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "hostile_test.go:") {
			t.Log(strings.TrimSpace(l))
		}
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	require.True(t, ok, "no rusage on this platform")
	run := fxHostileChildRun{peakRSS: ru.Maxrss << 10} // KiB on Linux
	raw, err := os.ReadFile(filepath.Join(out, "verdicts.json"))
	require.NoError(t, err, "child placing %s wrote no verdicts:\n%s", name, b)
	require.NoError(t, json.Unmarshal(raw, &run.fxHostileVerdicts))
	t.Logf("%s: peak RSS %d MiB", name, run.peakRSS>>20)
	return run
}

// fxHostileInProcess is TestHostileAgents in a child process: each case
// (the parent's -test.run picks one) placed in process, the other calls'
// fingerprints written to hostileOutEnv's file.
func fxHostileInProcess(t *testing.T) {
	// The collector's target of a process that places calls (callproof
	// run's), so that the peak RSS measured is the one a run would have.
	harness.TuneGC()
	env := fxEnv(t)
	// Every agent here acks (the hostile ones at once, careful as soon as
	// it runs): wait for it, however busy the machine, rather than run a
	// call whose ack was late at time scale 1 (callsim.DefaultAckWait).
	env.Simulator = callsim.New(callsim.Options{Clock: env.Clock, AckWait: fxAckWait})
	careful := fxBystanderAgent(t)
	// Tool requests of the in-process hostile agents, closed at the end.
	client := &http.Client{Timeout: 5 * time.Second}
	t.Cleanup(client.CloseIdleConnections)

	const (
		maxRun  = 20 * time.Second
		maxHeap = 32 << 20
	)
	written := func(t *testing.T, s fxHostileSuite) {
		v := fxHostileVerdicts{Dir: s.dir, Verdicts: map[string]string{}}
		for _, c := range s.otherScores {
			v.Verdicts[c.Call] = liveFingerprint(c)
		}
		b, err := json.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(os.Getenv(hostileOutEnv), "verdicts.json"), b, 0o644))
	}
	t.Run(hostileControl, func(t *testing.T) {
		rt := fxNewRouter(t, careful)
		s := fxRunHostile(t, env, rt, nil)
		fxAssertInTime(t, s, maxRun)
		written(t, s)
	})
	for _, hc := range fxHostileCases(env) {
		t.Run(hc.name, func(t *testing.T) {
			rt := fxNewRouter(t, careful)
			c := fxSuiteCase(t, hc.name, hc.extra)
			id := c.Scenario.ID
			var s fxHostileSuite
			switch {
			case hc.wire != "":
				s = fxRunBeside(t, env, rt, careful, hc.wire, hc.process == "own", c, hc.opts)
			case hc.process == "":
				o := hc.opts
				o.Client = client
				o.Peers = rt.Peers
				a, err := hostile.New(o)
				require.NoError(t, err)
				t.Cleanup(a.Close)
				rt.serve[id] = a.Serve
				s = fxRunHostile(t, env, rt, c)
			default:
				p, url := fxAgentProcess(t)
				sig := map[string]syscall.Signal{"kill": syscall.SIGKILL, "stop": syscall.SIGSTOP}[hc.process]
				rt.targets[id] = url
				rt.onFinal[id] = func() { _ = p.Signal(sig) }
				s = fxRunHostile(t, env, rt, c)
			}
			end := s.hostile.End()
			require.NotNil(t, end)
			got := end.Outcome
			if got == "" {
				got = trace.OutcomeScored
			}
			assert.Equal(t, hc.outcome, got, "reason %q", end.Reason)
			assert.True(t, strings.HasPrefix(end.Reason, hc.reason), "reason %q, want prefix %q", end.Reason, hc.reason)
			run := maxRun
			if hc.wire != "" {
				run += fxBesideWait // the bystanders wait for the hostile call
			}
			fxAssertInTime(t, s, run)
			assert.Less(t, s.heapGrow, int64(maxHeap), "heap in use after the run")
			assert.Less(t, s.allocated, hc.maxAlloc, "allocated during the run")
			if hc.check != nil {
				hc.check(t, s, rt)
			}
			written(t, s)
		})
	}
}

// fxBesideWait bounds how long each bystander waits, mid-call, for the
// hostile call of fxRunBeside to end: well within their idle timeout
// (the scaled step timeout, 30 s).
const fxBesideWait = 15 * time.Second

// fxRunBeside places hostile call c in real time over another wire
// ("twilio": Twilio Media Streams; "webrtc": SmallWebRTC), from a runner of its own in this process with a
// backend of its own, against agent behaviour o, while the bystanders
// are mid-call (ownProcess: the agent in a child process, as pion's
// sending side allocates about what the caller's reading side does, and
// it is not the harness's memory): each one's relay holds the caller's
// first final until the hostile call is over (at most fxBesideWait), so
// every bystander is open, its request said, while the hostile agent's
// frames are read and decoded. The bystanders' verdicts do not depend on how long they wait
// (fxBystanders).
func fxRunBeside(t *testing.T, env *harness.Env, rt *fxRouter, careful, wire string, ownProcess bool, c *scenarios.Compiled, o hostile.Options) fxHostileSuite {
	t.Helper()
	var agentURL string
	var a *hostile.Agent
	if ownProcess {
		_, agentURL = fxHelperProcess(t, "hostile:"+string(o.Behaviour)+":"+strconv.Itoa(o.Rounds))
	} else {
		r, err := hostile.Start(context.Background(), o, "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(r.Close)
		agentURL, a = r.URL, r.Agent
	}
	henv := fxEnv(t)
	ao := harness.AudioOptions{SpeechCache: audioCache(t)}
	switch wire {
	case "twilio":
		tr, err := harness.TwilioTransport(ao)
		require.NoError(t, err)
		henv.Transport, henv.TransportName = tr, wire
	case "webrtc":
		tr, err := harness.WebRTCTransport(ao, harness.WebRTCOptions{})
		require.NoError(t, err)
		henv.Transport, henv.TransportName = tr, wire
	default:
		t.Fatalf("no wire %q", wire)
	}
	hr := henv.Runner()
	hr.TimeScale, hr.Suite, hr.Agent = 1, "hostile", "hostile/"+string(o.Behaviour)

	var (
		once sync.Once
		done = make(chan struct{})
		res  []harness.CallResult
		herr error
	)
	place := func() {
		go func() {
			defer close(done)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, herr = hr.Run(ctx, agentURL, []*scenarios.Compiled{c})
		}()
	}
	for _, b := range fxBystanders(t, fxBesideBystanders) {
		rt.targets[b.Scenario.ID] = careful
		rt.holdFinal[b.Scenario.ID] = func() {
			once.Do(place)
			select {
			case <-done:
			case <-time.After(fxBesideWait):
			}
		}
	}
	s := fxRunHostileOnce(t, env, rt, nil, fxBesideBystanders)
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the hostile call did not end")
	}
	require.NoError(t, herr)
	require.Len(t, res, 1)
	fxAssertShape(t, res[0].History)
	s.hostile, s.agent = res[0].History, a
	fxAssertBystanders(t, s)
	end := s.hostile.End()
	t.Logf("%s beside them: %d events, ended %s %q", c.Scenario.ID, len(s.hostile.Events), end.Outcome, end.Reason)
	return s
}

// fxAssertInTime: the run ended within max; when it did not, every
// call's timeline is logged, to see what it waited for.
func fxAssertInTime(t *testing.T, s fxHostileSuite, max time.Duration) {
	t.Helper()
	if assert.Less(t, s.elapsed, max, "the run ends in time") {
		return
	}
	for _, h := range append([]*trace.History{s.hostile}, s.others...) {
		if h == nil {
			continue
		}
		var b bytes.Buffer
		if err := reports.WriteTimeline(&b, h, scorer.CallScore{Call: h.Call}); err == nil {
			t.Logf("%s:\n%s", h.Call, b.String())
		}
	}
}

// fxTerminalSafe renders the call's timeline as show prints it and
// checks the bytes: the agent's junk is there, escaped, and no control,
// bidi override or zero-width character reaches the output as such.
func fxTerminalSafe(t *testing.T, s fxHostileSuite, _ *fxRouter) {
	var b bytes.Buffer
	require.NoError(t, reports.WriteTimeline(&b, s.hostile, scorer.CallScore{Call: s.hostile.Call}))
	out := b.String()
	for i, r := range out {
		if r == '\n' || r == '\t' {
			continue
		}
		if r == utf8.RuneError || !safetext.Safe(r) {
			t.Fatalf("%U at byte %d of the timeline:\n%s", r, i, out)
		}
	}
	assert.Contains(t, out, `\x1b[2J`, "the junk is shown, escaped")
	assert.Contains(t, out, `\u202e`)
	for _, k := range []trace.Kind{trace.KindAgentState, trace.KindAgentToolIntent, trace.KindAgentClear, trace.KindAgentSpeechText} {
		assert.NotEmpty(t, fxKinds(s.hostile, k), "the agent sent %s", k)
	}
}

// A scenario's custom_parameters reach the agent in start.customParameters.
func TestCustomParametersReachTheAgent(t *testing.T) {
	env := fxEnv(t)
	rt := fxNewRouter(t, fxCareful(t))
	c := fxHostileCase(t, "params", "custom_parameters: {lang: en, variant: b}")
	got := make(chan map[string]string, 1)
	rt.serve[c.Scenario.ID] = func(ws *websocket.Conn, start native.Start) {
		got <- start.CustomParameters
		_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"event":"hangup","hangup":{"reason":"done"}}`))
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
		}
	}
	out := fxRun(t, fxRunner(env), rt.URL, []*scenarios.Compiled{c})
	assert.Equal(t, "agent hung up", out[0].History.End().Reason)
	assert.Equal(t, map[string]string{"lang": "en", "variant": "b"}, <-got)
}

// A scenario's call block reaches the agent in start and is recorded in
// call.start; a scenario without one gets the defaults.
func TestCallDateReachesTheAgent(t *testing.T) {
	env := fxEnv(t)
	rt := fxNewRouter(t, fxCareful(t))
	dated := fxHostileCase(t, "dated", "call: {date: 2026-12-07, time_zone: America/New_York}")
	plain := fxHostileCase(t, "plain", "")
	got := make(chan [2]string, 2)
	for _, c := range []*scenarios.Compiled{dated, plain} {
		rt.serve[c.Scenario.ID] = func(ws *websocket.Conn, start native.Start) {
			got <- [2]string{start.CallDate, start.TimeZone}
			_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"event":"hangup","hangup":{"reason":"done"}}`))
			for {
				if _, _, err := ws.ReadMessage(); err != nil {
					return
				}
			}
		}
	}
	out := fxRun(t, fxRunner(env), rt.URL, []*scenarios.Compiled{dated, plain})
	seen := map[[2]string]bool{<-got: true, <-got: true}
	assert.Equal(t, map[[2]string]bool{{"2026-12-07", "America/New_York"}: true, {scenarios.DefaultCallDate, scenarios.DefaultTimeZone}: true}, seen)
	byID := map[string]*trace.CallStart{}
	for _, o := range out {
		st := o.History.Start()
		byID[st.ScenarioID] = st
	}
	assert.Equal(t, "2026-12-07", byID[dated.Scenario.ID].CallDate)
	assert.Equal(t, "America/New_York", byID[dated.Scenario.ID].TimeZone)
	assert.Equal(t, scenarios.DefaultCallDate, byID[plain.Scenario.ID].CallDate)
	assert.Equal(t, scenarios.DefaultTimeZone, byID[plain.Scenario.ID].TimeZone)
}
