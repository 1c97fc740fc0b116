package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/harness"
)

// TestLoadFidelity: `callproof load --fidelity` against the careful
// reference agent in audio mode, in its own process (this test binary as
// `callproof agent`), sharing one speech cache: the agent's own ear counts
// show every utterance of every call heard once, with its words.
func TestLoadFidelity(t *testing.T) {
	realTimeAudio(t)
	cache := t.TempDir()
	url, agentErr := startAudioAgent(t, cache)

	const calls = 8
	code, out, errOut := fxCLI(t, "load", "--calls", strconv.Itoa(calls), "--duration", "10s",
		"--agent", url, "--speech-cache", cache, "--fidelity", "--json")
	var res harness.LoadResult
	require.NoError(t, json.Unmarshal([]byte(out), &res), "exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	require.NotNil(t, res.Fidelity, out)
	f := *res.Fidelity
	assert.Zero(t, res.Failed, "%v", res.Errors)
	assert.Equal(t, calls, f.Calls)
	assert.Equal(t, calls, f.Exact, "differing: %+v", f.Differing)
	// A 10 s call says the two shorter lines: 3.1 s, a pause, 4.1 s.
	assert.Equal(t, 2*calls, f.Utterances)
	// A busy machine may put a call behind real time (exit 1 then);
	// fidelity must not be why.
	if code != exitOK {
		assert.Equal(t, 1, code, errOut)
		assert.Positive(t, res.CallsBehind, "exit %d with every call in time: %s", code, errOut)
	}

	// The agent's account, read directly: one entry per load call.
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(strings.Replace(url, "ws://", "http://", 1) + "stats/ear")
	require.NoError(t, err)
	rep, err := decodeEarReport(resp.Body, 1<<20)
	resp.Body.Close()
	require.NoError(t, err)
	ids := map[string]int{}
	for _, c := range rep.Calls {
		ids[c.CallID]++
		assert.Len(t, c.Heard, 2, c.CallID)
		assert.Equal(t, 2, c.Onsets, c.CallID)
	}
	for i := range calls {
		assert.Equal(t, 1, ids[fmt.Sprintf("load-%d", i)], "load-%d", i)
	}

	// Load calls carry no tool URL: the agent copes, without a flood of
	// complaints (a line per utterance heard and one per call).
	lines, panicked := agentErr()
	assert.False(t, panicked, "the agent panicked")
	assert.LessOrEqual(t, lines, calls*4+10, "agent stderr lines")
}

// realTimeAudio skips a test of real-time audio calls in -short mode, or
// without flite to speak them.
func realTimeAudio(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("real-time audio calls")
	}
	if _, err := exec.LookPath("flite"); err != nil {
		t.Skipf("flite is not installed (scripts/install-speech.sh installs it): %v", err)
	}
}

// startAudioAgent runs `callproof agent careful --transport twilio` over
// cache as a child process, waits (bounded) for its listen line and
// returns its URL, and a function counting its stderr lines so far and
// whether it panicked (extra: more agent flags). The agent is stopped
// when the test ends.
func startAudioAgent(t *testing.T, cache string, extra ...string) (string, func() (int, bool)) {
	t.Helper()
	args := append([]string{"agent", "careful", "--transport", "twilio", "--speech-cache", cache, "--listen", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(callproofBinary(t), args...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var lines atomic.Int64
	var panicked atomic.Bool
	var errTail tailBuffer
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines.Add(1)
			if strings.Contains(sc.Text(), "panic:") {
				panicked.Store(true)
			}
			errTail.add(sc.Text())
		}
	}()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	first := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		first <- s
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var line string
	select {
	case line = <-first:
	case <-exited:
		t.Fatalf("the agent exited at start: %s", errTail.String())
	case <-time.After(60 * time.Second): // flite synthesizes its greeting first
		t.Fatalf("the agent did not start within 60s: %s", errTail.String())
	}
	m := regexp.MustCompile(`listening on (ws://\S+)`).FindStringSubmatch(line)
	require.NotNil(t, m, "listen line %q", line)
	return m[1], func() (int, bool) {
		select {
		case <-exited:
			t.Errorf("the agent exited during the test: %s", errTail.String())
			<-drained
		default:
		}
		return int(lines.Load()), panicked.Load()
	}
}

// tailBuffer keeps the last few lines of a child's stderr, for messages.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *tailBuffer) add(l string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, l)
	if len(b.lines) > 20 {
		b.lines = b.lines[1:]
	}
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// TestLoadTurns is `callproof load --turns` against the reference agent
// (careful over Twilio, an agent that answers once the caller stops): each
// call says a line, waits for the answer and says the next, and every
// turn is answered within --answer-within. With an answer wanted within
// a millisecond none is, and the run exits 1.
func TestLoadTurns(t *testing.T) {
	realTimeAudio(t)
	cache := t.TempDir()
	url, _ := startAudioAgent(t, cache)

	const calls = 2
	code, out, errOut := fxCLI(t, "load", "--calls", "2", "--duration", "24s", "--agent", url,
		"--speech-cache", cache, "--turns", "--json")
	var res harness.LoadResult
	require.NoError(t, json.Unmarshal([]byte(out), &res), "exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	assert.Zero(t, res.Failed, "%v", res.Errors)
	// A 24 s call fits two turns: a line of about 4.5 s, its answer (a
	// second to start, several to say), a second of pause, and the second
	// line with its answer window.
	assert.GreaterOrEqual(t, res.Turns, 2*calls, out)
	assert.Equal(t, res.Turns, res.Answered, out)
	assert.Positive(t, res.AnswerP50, out)
	assert.LessOrEqual(t, res.AnswerMax, harness.DefaultAnswerWithin, out)
	if code != exitOK {
		// A busy machine may put a call behind real time (exit 1 then).
		assert.Equal(t, 1, code, errOut)
		assert.Positive(t, res.CallsBehind, "exit %d with every call in time and every turn answered: %s", code, errOut)
	}

	code, out, errOut = fxCLI(t, "load", "--calls", "1", "--duration", "8s", "--agent", url,
		"--speech-cache", cache, "--turns", "--answer-within", "1ms")
	assert.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	assert.Contains(t, out, "turns answered within 1ms: 0/")
}

func TestLoadTurnsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"load", "--turns", "--fidelity", "--agent", "ws://127.0.0.1:1/"},
		{"load", "--answer-within", "3s"},
		{"load", "--turns", "--answer-within", "0s"},
		{"load", "--transport", "native", "--turns"},
		{"load", "--transport", "twilio", "--suite", "core", "--turns", "--agent", "ws://127.0.0.1:1/"},
	} {
		code, _, errOut := fxCLI(t, args...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, errOut)
	}
}

func TestLoadFidelityNeedsAgent(t *testing.T) {
	code, _, errOut := fxCLI(t, "load", "--fidelity", "--calls", "1", "--duration", "1s")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--fidelity needs --agent")
}

func TestEarStatsURL(t *testing.T) {
	for in, want := range map[string]string{
		"ws://127.0.0.1:8081/":            "http://127.0.0.1:8081/stats/ear",
		"ws://127.0.0.1:8081":             "http://127.0.0.1:8081/stats/ear",
		"wss://agent.example/call?x=1":    "https://agent.example/stats/ear",
		"ws://u:p@[::1]:9/twilio#f":       "http://[::1]:9/stats/ear",
		"http://127.0.0.1:8081/api/offer": "http://127.0.0.1:8081/stats/ear", // a WebRTC agent's signaling URL
	} {
		got, err := earStatsURL(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for _, bad := range []string{"ftp://127.0.0.1:8081/", "ws:///x", "::"} {
		_, err := earStatsURL(bad)
		assert.Error(t, err, bad)
	}
}

func TestDecodeEarReport(t *testing.T) {
	body := `{"calls":[{"seq":1,"call_id":"load-0","heard":[{"id":"u1","text":"Hi."}],"onsets":1}],` +
		`"totals":{"calls":1,"utterances":1,"onsets":1,"kept":1,"cap":10000}}`
	r, err := decodeEarReport(strings.NewReader(body), int64(len(body)))
	require.NoError(t, err)
	assert.Equal(t, []agents.EarCall{{Seq: 1, CallID: "load-0", Heard: []agents.EarHeard{{ID: "u1", Text: "Hi."}}, Onsets: 1}}, r.Calls)
	assert.Equal(t, 10000, r.Totals.Cap)

	_, err = decodeEarReport(strings.NewReader(body), int64(len(body))-1)
	assert.ErrorContains(t, err, "over")
	_, err = decodeEarReport(strings.NewReader(`{"calls":[]}`), 1<<10)
	assert.ErrorContains(t, err, "not a callproof reference agent")
	_, err = decodeEarReport(strings.NewReader(`<html>`), 1<<10)
	assert.Error(t, err)
}

// fakeEar serves an agent's ear counts as agents.Server does: the calls
// in rep, filed one more on each totals request until all are.
func fakeEar(t *testing.T, rep agents.EarReport, startFiled int) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	filed := startFiled
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != agents.EarStatsPath {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		out := agents.EarReport{Calls: []agents.EarCall{}, Totals: rep.Totals}
		out.Totals.Calls = filed
		if r.URL.Query().Has("totals") {
			filed = min(filed+1, rep.Totals.Calls)
		} else {
			after, _ := strconv.Atoi(r.URL.Query().Get("after"))
			for _, c := range rep.Calls {
				if c.Seq > after && c.Seq <= filed {
					out.Calls = append(out.Calls, c)
				}
			}
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(hs.Close)
	return hs
}

// The client waits for the agent to file the run's calls and reads only
// those after the run's base: a previous run's load-0 is not this one's.
func TestEarClientReadsThisRunsCalls(t *testing.T) {
	heard := func(seq int, id string, texts ...string) agents.EarCall {
		c := agents.EarCall{Seq: seq, CallID: id, Onsets: len(texts)}
		for _, tx := range texts {
			c.Heard = append(c.Heard, agents.EarHeard{Text: tx})
		}
		return c
	}
	rep := agents.EarReport{
		Calls: []agents.EarCall{
			heard(1, "load-0", "old"),
			heard(2, "load-0", "A", "B"),
			heard(3, "load-1", "A"),
		},
		Totals: agents.EarTotals{Calls: 3, Kept: 3, Cap: 10},
	}
	hs := fakeEar(t, rep, 1)
	ec, err := newEarClient(strings.Replace(hs.URL, "http://", "ws://", 1)+"/", 2)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base, err := ec.filed(ctx)
	require.NoError(t, err)
	got, err := ec.heard(ctx, base, 2)
	require.NoError(t, err)
	assert.Equal(t, []harness.AgentHeard{
		{CallID: "load-0", Texts: []string{"A", "B"}, Onsets: 2},
		{CallID: "load-1", Texts: []string{"A"}, Onsets: 1},
	}, got)

	// Calls of this run dropped over the agent's cap: no verdict.
	rep.Calls = rep.Calls[2:]
	rep.Totals.Kept, rep.Totals.Dropped = 1, 2
	hs = fakeEar(t, rep, 3)
	ec, err = newEarClient(strings.Replace(hs.URL, "http://", "ws://", 1)+"/", 2)
	require.NoError(t, err)
	_, err = ec.heard(ctx, 1, 2)
	assert.ErrorContains(t, err, "no longer keeps")
}

func TestCheckFidelity(t *testing.T) {
	said := func(id string, texts ...string) harness.LoadSaid {
		return harness.LoadSaid{CallID: id, Texts: texts}
	}
	heard := func(id string, onsets int, texts ...string) harness.AgentHeard {
		return harness.AgentHeard{CallID: id, Texts: texts, Onsets: onsets}
	}
	f := harness.CheckFidelity(
		[]harness.LoadSaid{said("load-0", "A", "B"), said("load-1", "A")},
		[]harness.AgentHeard{heard("load-1", 1, "A"), heard("load-0", 2, "A", "B"), heard("other", 5, "Z")})
	assert.Equal(t, harness.LoadFidelity{Calls: 2, Exact: 2, Utterances: 3}, f)
	assert.True(t, f.OK())

	for _, c := range []struct {
		name  string
		said  harness.LoadSaid
		heard []harness.AgentHeard
		want  []string
	}{
		{"split", said("c", "A", "B"), []harness.AgentHeard{heard("c", 3, "A", "", "B")},
			[]string{"said 2 utterances, heard 3 (split, or extra)", `utterance 2: said "B", heard ""`, "3 speech onsets for 2 utterances"}},
		{"merged", said("c", "A", "B"), []harness.AgentHeard{heard("c", 1, "A")},
			[]string{"said 2 utterances, heard 1 (merged, or missed)", `utterance 2: said "B", heard nothing`}},
		{"wrong words", said("c", "order 5590", "B"), []harness.AgentHeard{heard("c", 2, "order 5599", "B")},
			[]string{`utterance 1: said "order 5590", heard "order 5599"`}},
		{"an onset without its final", said("c", "A"), []harness.AgentHeard{heard("c", 2, "A")},
			[]string{"2 speech onsets for 1 utterances"}},
		{"not filed", said("c", "A"), nil, []string{"the agent reports no call with this id"}},
		{"another speech cache", said("c", "A"), []harness.AgentHeard{{CallID: "c", Sounds: 1}},
			[]string{"heard 0", "1 sounds instead (does the agent use this run's speech cache?)"}},
		{"filed twice", said("c", "A"), []harness.AgentHeard{heard("c", 1, "A"), heard("c", 1, "A")},
			[]string{"the agent reports 2 calls with this id"}},
		{"failed", harness.LoadSaid{CallID: "c", Texts: []string{"A"}, Err: "dial: refused"}, []harness.AgentHeard{heard("c", 1, "A")},
			[]string{"the call failed: dial: refused"}},
		{"said nothing", said("c"), []harness.AgentHeard{heard("c", 0)},
			[]string{"said nothing"}},
	} {
		f := harness.CheckFidelity([]harness.LoadSaid{c.said}, c.heard)
		if assert.Len(t, f.Differing, 1, c.name) {
			assert.False(t, f.OK(), c.name)
			d := f.Differing[0]
			for _, w := range c.want {
				assert.Contains(t, d.What, w, c.name)
			}
		}
	}

	// The list is bounded; the count is not.
	var many []harness.LoadSaid
	for i := range harness.MaxFidelityDiffs + 5 {
		many = append(many, said(fmt.Sprintf("load-%d", i), "A"))
	}
	f = harness.CheckFidelity(many, nil)
	assert.Equal(t, harness.MaxFidelityDiffs+5, f.Calls)
	assert.Zero(t, f.Exact)
	assert.Len(t, f.Differing, harness.MaxFidelityDiffs)
	assert.Equal(t, -1, f.Differing[0].Heard)
	var buf bytes.Buffer
	printFidelity(&buf, f)
	assert.Contains(t, buf.String(), "fidelity: 0/15 calls heard every utterance exactly once")
	assert.Contains(t, buf.String(), "… and 5 more calls")
}
