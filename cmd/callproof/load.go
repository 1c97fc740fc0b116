package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/agents/loadbot"
	"github.com/callproof/callproof/callsim/livekit"
	"github.com/callproof/callproof/harness"
)

const loadUsage = `usage: callproof load [--calls N] [--duration D] [--agent URL [--fidelity]] [--turns [--answer-within D]]
                     [--transport twilio|webrtc|livekit] [--signaling smallwebrtc|whip|pipecat-start] [--trickle]
                     [--livekit-agent-name NAME] [--livekit-api-key KEY] [--livekit-api-secret SECRET] [--ramp D] [--speech-cache DIR] [--voice ENGINE/VOICE] [--json] [--no-preflight]
       callproof load --transport native [--calls N] [--suite S] [--scale F] [--ramp D] [--agent URL] [--json] [--no-preflight]
                     [--at-once N] [--against FILE]
       callproof load --transport twilio|livekit --suite S [--calls N] [--ramp D] [--agent URL] [--at-once N]
                     [--against FILE] [--recognizers N] [--speech-cache DIR] [--voice ENGINE/VOICE] [--json] [--no-preflight]

Measures how many real-time audio calls this machine's harness sustains:
places N Twilio Media Streams calls at once (ids load-0, load-1, …), each
streaming 20 ms μ-law frames and speaking every 3 s for D, and reports how
late the caller's frames went out (the median call's p50, the worst call's
p99, the worst frame), the calls that fell behind (a frame over the 60 ms
jitter allowance), and
CPU and memory per call. Without --agent it starts a minimal bot (it plays
a second of tone back for every two seconds it hears) in a separate
process. --transport webrtc places the calls over WebRTC instead (needs
--agent: a WebRTC agent's signaling URL, such as
callproof agent careful --transport webrtc at http://HOST:PORT/api/offer).

--fidelity (with --agent, a reference agent in audio mode) checks that
the agent heard every utterance of every call as exactly one utterance,
with its words: each call says whole utterances from a short script, a
pause between them, none cut by the stop; afterwards load reads the
agent's own ear counts from http://HOST:PORT/stats/ear and compares them
call by call. The agent's ear finds utterances in the speech cache, so
both must use the same one:

  callproof agent careful --transport twilio --speech-cache DIR --listen 127.0.0.1:8081
  callproof load --agent ws://127.0.0.1:8081/ --speech-cache DIR --fidelity

--turns has each call take turns with the agent instead of speaking
every 3 s, for an agent that answers once the caller stops (a VAD agent,
which a caller speaking every 3 s never lets answer): each call says a
line (a request, a correction, a withdrawal, in turn), streams silence
until the agent starts to answer, then, a second after the answer ends,
says the next. A turn is answered in time when the
answer starts within --answer-within (default 5s) of the line's end; no
turn starts that could not be answered before the call ends (give the
calls a minute: --duration 60s). The run is clean when no call fell
behind and every turn was answered in time:

  callproof load --transport livekit --agent ws://127.0.0.1:7880 --livekit-agent-name NAME --turns --duration 60s --calls N

--transport native measures text-mode scale instead: it places N calls
of the native protocol at once (their starts spread over --ramp, default
2s), drawn round-robin from --suite (default core; call ids SCENARIO.cK),
each scored as in a run, and reports the outcomes, how many scored calls
got their scenario's usual verdicts (the most common among its copies),
the harness's own lateness (each call's worst, script time; calls over
the overload bound are harness_error: overloaded), and the harness's
CPU and peak memory per call. Without --agent it starts the careful
reference agent in a separate process and reports its CPU and memory too.

  callproof load --transport native --calls 5000

--transport twilio with --suite places the suite's calls the same way but
over Twilio Media Streams, in real time, against an agent whose speech is
recognized (without --agent: callproof agent careful --transport twilio
--no-transcript in a separate process), and reports as native does plus
the worst caller frame and the recognition (decodes, cross-checks, the
decoders' CPU); --recognizers N bounds the decoders at once (default one
fewer than the cores). --at-once N places only N at once (e.g. 10, for a
baseline); --json prints each scenario's usual verdicts, and --against
FILE (such a baseline's --json output) requires every call to get them.

  callproof load --transport twilio --suite core --calls 30 --at-once 10 --json > base.json
  callproof load --transport twilio --suite core --calls 200 --against base.json

--transport livekit places the calls in LiveKit rooms, one each, as run
does (docs/PROTOCOL.md, "LiveKit dialect"): --agent (default
$LIVEKIT_URL) is the LiveKit server, the credentials and the agent's
dispatch are run's (--livekit-api-key, --livekit-api-secret,
--livekit-agent-name), --ramp D spreads the calls' starts over D (default
2s; a LiveKit join is heavy), and an agent must be there to be dispatched: your
LiveKit agent, or callproof's load bot as a LiveKit worker (it answers
as the Twilio load bot does):

  callproof load-bot --transport livekit --agent ws://127.0.0.1:7880 --livekit-agent-name callproof-load-bot &
  callproof load --transport livekit --agent ws://127.0.0.1:7880 --livekit-agent-name callproof-load-bot --calls 20

With --suite it places the suite's calls, scored, as --transport twilio
--suite does (--agent and an agent to dispatch needed; --against and
--at-once as there).

exit: 0 every call kept within a frame of real time (and, with
--fidelity, was heard exactly as said; with --turns, had every turn
answered in time; native: every call scored with its
scenario's usual verdicts), 1 some fell behind or were heard otherwise
(--turns: or a turn went unanswered in time)
(native: overloaded or unusual calls, or calls without --against's
verdicts), 2 bad usage, 3 the run could not
happen, 5 no agent answers at --agent (preflight; nothing placed).
`

func cmdLoad(args []string, stdout, stderr io.Writer) int {
	c := newCLI("load", loadUsage, stdout, stderr)
	calls := c.Int("calls", 100, "calls at once")
	dur := c.Duration("duration", 20*time.Second, "how long each call streams")
	agent := c.String("agent", "", "a Twilio Media Streams agent's ws:// URL (default: start the load bot)")
	asJSON := c.Bool("json", false, "print the figures as JSON")
	voice := c.String("voice", "", "the caller's voice (default "+audioDefaultVoice()+")")
	cache := c.String("speech-cache", "", "speech cache, shared with the agent for --fidelity (default "+harness.DefaultSpeechCache()+")")
	fidelity := c.Bool("fidelity", false, "check the reference agent's own ear counts: every utterance heard once (needs --agent)")
	turns := c.Bool("turns", false, "take turns with the agent: say the line, wait for its answer, then say it again")
	answerWithin := c.Duration("answer-within", harness.DefaultAnswerWithin, "with --turns: how soon after the caller's line the agent must start to answer")
	af := audioFlags{}
	c.StringVar(&af.transport, "transport", transportTwilio, "twilio, webrtc or livekit (audio), or native (text-mode scale)")
	addLiveKitFlags(c, &af.livekit)
	c.StringVar(&af.signaling, "signaling", "", "webrtc: smallwebrtc (the default) or whip")
	c.BoolVar(&af.trickle, "trickle", false, "webrtc: send ICE candidates after the offer")
	suite := c.String("suite", "core", "native: the suite whose scenarios the calls copy")
	scale := c.Float64("scale", 1, "native: time scale offered to the agent")
	ramp := c.Duration("ramp", harness.DefaultTextLoadRamp, "native, twilio with --suite, or livekit: spread the calls' starts over this long")
	against := c.String("against", "", "native, or twilio with --suite: a previous load --json output whose verdicts every call must get (e.g. one at 10 calls)")
	atOnce := c.Int("at-once", 0, "native, or twilio with --suite: calls at once (default --calls): fewer measures the verdicts --against compares with")
	c.IntVar(&af.pool, "recognizers", 0, "twilio with --suite: decoders at once (default cores-1)")
	noPreflight := c.Bool("no-preflight", false, "with --agent: "+noPreflightUsage)
	if _, code, ok := c.positional(args, 0); !ok {
		return code
	}
	if af.transport == transportNative {
		for _, f := range []string{"duration", "fidelity", "voice", "speech-cache", "signaling", "trickle", "turns", "answer-within"} {
			if c.set(f) {
				fmt.Fprintf(stderr, "callproof load: --%s is for audio load (--transport twilio or webrtc)\n", f)
				return exitUsage
			}
		}
		return loadText(textLoadArgs{calls: *calls, suite: *suite, scale: *scale, ramp: *ramp, agent: *agent, json: *asJSON,
			against: *against, atOnce: *atOnce, noPreflight: *noPreflight}, stdout, stderr)
	}
	*agent = liveKitAgentURL(af.transport, *agent)
	if (af.transport == transportTwilio || af.transport == transportLiveKit) && c.set("suite") {
		for _, f := range []string{"duration", "fidelity", "scale", "signaling", "trickle", "turns", "answer-within"} {
			if c.set(f) {
				fmt.Fprintf(stderr, "callproof load: --%s is not for scored audio load (--transport twilio|livekit --suite)\n", f)
				return exitUsage
			}
		}
		if err := af.check(1); err != nil {
			fmt.Fprintf(stderr, "callproof load: %v\n", err)
			return exitUsage
		}
		if af.transport == transportLiveKit && *agent == "" {
			fmt.Fprintln(stderr, "callproof load: --transport livekit needs --agent (the LiveKit server) or $"+livekit.EnvURL)
			return exitUsage
		}
		return loadText(textLoadArgs{calls: *calls, suite: *suite, scale: 1, ramp: *ramp, agent: *agent, json: *asJSON,
			against: *against, atOnce: *atOnce, noPreflight: *noPreflight, audio: &af, voice: *voice, cache: *cache}, stdout, stderr)
	}
	if c.set("recognizers") || c.set("against") || c.set("at-once") {
		fmt.Fprintln(stderr, "callproof load: --recognizers, --against and --at-once are for --transport native, or twilio or livekit with --suite")
		return exitUsage
	}
	for _, f := range []string{"suite", "ramp"} {
		// A LiveKit call's join is heavy (two peer connections through
		// TURN, at both ends): its pacing load may spread them wider.
		if c.set(f) && (f != "ramp" || af.transport != transportLiveKit) {
			fmt.Fprintf(stderr, "callproof load: --%s is for scored load (--transport native, or twilio or livekit with --suite)\n", f)
			return exitUsage
		}
	}
	if c.set("scale") {
		fmt.Fprintln(stderr, "callproof load: --scale is for text load (--transport native)")
		return exitUsage
	}
	if af.transport == transportPipecatEval {
		fmt.Fprintf(stderr, "callproof load: --transport %s is for run and replay\n", transportPipecatEval)
		return exitUsage
	}
	if err := af.check(1); err != nil {
		fmt.Fprintf(stderr, "callproof load: %v\n", err)
		return exitUsage
	}
	if af.transport == transportWebRTC && *agent == "" {
		fmt.Fprintln(stderr, "callproof load: --transport webrtc needs --agent (callproof agent careful --transport webrtc)")
		return exitUsage
	}
	if af.transport == transportLiveKit && *agent == "" {
		fmt.Fprintln(stderr, "callproof load: --transport livekit needs --agent (the LiveKit server) or $"+livekit.EnvURL)
		return exitUsage
	}
	if af.transport == transportLiveKit && *fidelity {
		fmt.Fprintln(stderr, "callproof load: --fidelity reads a reference agent's ear over Twilio or WebRTC, not --transport livekit")
		return exitUsage
	}
	if *calls < 1 || *dur <= 0 {
		fmt.Fprintln(stderr, "callproof load: --calls and --duration must be positive")
		return exitUsage
	}
	if c.set("ramp") && *ramp <= 0 {
		fmt.Fprintln(stderr, "callproof load: --ramp must be positive")
		return exitUsage
	}
	if *turns && *fidelity {
		fmt.Fprintln(stderr, "callproof load: --turns or --fidelity, not both")
		return exitUsage
	}
	if c.set("answer-within") && (!*turns || *answerWithin <= 0) {
		fmt.Fprintln(stderr, "callproof load: --answer-within is a positive duration, with --turns")
		return exitUsage
	}
	if *fidelity && *agent == "" {
		fmt.Fprintln(stderr, "callproof load: --fidelity needs --agent (a reference agent: callproof agent careful --transport twilio)")
		return exitUsage
	}
	ctx, stop := interruptible("load", stderr)
	defer stop()
	url := *agent
	if url == "" {
		bot, u, err := startLoadBot(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "callproof load: %v\n", err)
			return exitBroken
		}
		defer func() { _ = bot.Process.Kill(); _ = bot.Wait() }()
		url = u
	} else if err := checkAgentFor(af.transport, url); err != nil {
		fmt.Fprintf(stderr, "callproof load: %v\n", err)
		return exitUsage
	} else if !*noPreflight && !preflight("load", af, url, stderr) {
		return exitNoAgent // the bot load starts itself needs no check
	}
	if n := fileLimitConcurrency("load", *calls, stderr); n < *calls {
		fmt.Fprintf(stderr, "callproof load: %d calls need more open files than the hard limit allows\n", *calls)
		return exitUsage
	}
	opts := harness.LoadOptions{Agent: url, Calls: *calls, Duration: *dur, Fidelity: *fidelity, Turns: *turns, AnswerWithin: *answerWithin}
	if c.set("ramp") {
		opts.Ramp = *ramp
	}
	ao := harness.AudioOptions{SpeechCache: *cache, Voice: *voice}
	switch af.transport {
	case transportWebRTC:
		tr, err := harness.WebRTCTransport(ao, harness.WebRTCOptions{Signaling: af.signaling, Trickle: af.trickle})
		if err != nil {
			fmt.Fprintf(stderr, "callproof load: %v\n", err)
			return exitBroken
		}
		opts.Transport, opts.Speech = tr, tr.Speech
	case transportLiveKit:
		tr, err := liveKitTransport(ao, af.livekit)
		if err != nil {
			fmt.Fprintf(stderr, "callproof load: %v\n", err)
			return exitBroken
		}
		opts.Transport, opts.Speech = tr, tr.Speech
	default:
		tr, err := harness.TwilioTransport(ao)
		if err != nil {
			fmt.Fprintf(stderr, "callproof load: %v\n", err)
			return exitBroken
		}
		opts.Transport, opts.Speech = tr, tr.Speech
	}
	var ear *earClient
	var err error
	base := 0
	if *fidelity {
		// Read the agent's count of calls first: an agent that has served
		// calls before (a previous run's load-0…) is told apart by seq.
		if ear, err = newEarClient(url, *calls); err == nil {
			base, err = ear.filed(ctx)
		}
		if err != nil {
			fmt.Fprintf(stderr, "callproof load: --fidelity: %v (is the agent `callproof agent careful|naive --transport twilio|webrtc`?)\n", err)
			return exitBroken
		}
	}
	res, err := harness.RunLoad(ctx, opts)
	if err != nil {
		fmt.Fprintf(stderr, "callproof load: %v\n", err)
		return exitBroken
	}
	if ear != nil {
		heard, err := ear.heard(ctx, base, res.Calls-res.Failed)
		if err != nil {
			fmt.Fprintf(stderr, "callproof load: --fidelity: %v\n", err)
			return exitBroken
		}
		f := harness.CheckFidelity(res.Said, heard)
		res.Fidelity = &f
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
	} else {
		fmt.Fprintf(stdout, "calls %d (failed %d) · %s each · %d frames\n", res.Calls, res.Failed, *dur, res.Frames)
		fmt.Fprintf(stdout, "frame lateness: median call p50 %s · worst call p99 %s · worst frame %s · calls behind %d\n",
			res.P50, res.WorstP99, res.Max.Round(time.Millisecond), res.CallsBehind)
		fmt.Fprintf(stdout, "agent utterances heard %d\n", res.AgentUtterances)
		if *turns {
			fmt.Fprintf(stdout, "turns answered within %s: %d/%d · answer start after the line: median %s · worst %s\n",
				*answerWithin, res.Answered, res.Turns, res.AnswerP50.Round(time.Millisecond), res.AnswerMax.Round(time.Millisecond))
		}
		fmt.Fprintf(stdout, "harness CPU per call %.1f%% of a core · peak RSS %d MiB (%d KiB per call)\n",
			100*res.CPUPerCallSecond.Seconds(), res.PeakRSSBytes>>20, res.RSSPerCallBytes>>10)
		for _, e := range res.Errors {
			fmt.Fprintf(stdout, "error: %s\n", e)
		}
		if f := res.Fidelity; f != nil {
			printFidelity(stdout, *f)
		}
	}
	if res.Failed > 0 {
		return exitBroken
	}
	if *turns && res.Turns == 0 {
		fmt.Fprintf(stderr, "callproof load: --turns: no turn fit in --duration %s (a line and --answer-within)\n", *dur)
		return 1
	}
	if res.CallsBehind > 0 || (res.Fidelity != nil && !res.Fidelity.OK()) || res.Answered < res.Turns {
		return 1
	}
	return exitOK
}

func printFidelity(w io.Writer, f harness.LoadFidelity) {
	fmt.Fprintf(w, "fidelity: %d/%d calls heard every utterance exactly once (%d utterances said; the agent's own ear counts)\n",
		f.Exact, f.Calls, f.Utterances)
	for _, d := range f.Differing {
		fmt.Fprintf(w, "  %s: %s\n", d.CallID, d.What)
	}
	if more := f.Calls - f.Exact - len(f.Differing); more > 0 {
		fmt.Fprintf(w, "  … and %d more calls\n", more)
	}
}

// earClient reads a reference agent's ear counts (agents.EarStatsPath) on
// the agent's own listener.
type earClient struct {
	url    string
	http   *http.Client
	budget int64 // bytes a report may take
}

// Bounds on reading the agent's ear counts.
const (
	earRequestTimeout = 10 * time.Second
	earFileWait       = 20 * time.Second // for the agent to file the last calls after their stop
	earPerCallBytes   = 32 << 10         // a few hundred bytes a call in practice
)

func newEarClient(agentURL string, calls int) (*earClient, error) {
	u, err := earStatsURL(agentURL)
	if err != nil {
		return nil, err
	}
	return &earClient{url: u, http: &http.Client{Timeout: earRequestTimeout},
		budget: 1<<20 + int64(calls)*earPerCallBytes}, nil
}

// earStatsURL is where the agent at a ws:// or wss:// URL serves its ear
// counts: the same host and port, over http(s).
func earStatsURL(agentURL string) (string, error) {
	u, err := neturl.Parse(agentURL)
	if err != nil {
		return "", err
	}
	switch u.Scheme {
	case "ws", "http":
		u.Scheme = "http"
	case "wss", "https":
		u.Scheme = "https"
	default:
		return "", fmt.Errorf("agent URL %q: want ws://, wss://, http:// or https://", agentURL)
	}
	if u.Host == "" {
		return "", fmt.Errorf("agent URL %q has no host", agentURL)
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment, u.User = agents.EarStatsPath, "", "", "", nil
	return u.String(), nil
}

// get fetches and decodes one report.
func (e *earClient) get(ctx context.Context, query string) (agents.EarReport, error) {
	var r agents.EarReport
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url+query, nil)
	if err != nil {
		return r, err
	}
	resp, err := e.http.Do(req)
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return r, fmt.Errorf("GET %s: %s", e.url, resp.Status)
	}
	r, err = decodeEarReport(resp.Body, e.budget)
	if err != nil {
		return r, fmt.Errorf("GET %s: %w", e.url, err)
	}
	return r, nil
}

// decodeEarReport reads an agents.EarReport of at most budget bytes.
func decodeEarReport(body io.Reader, budget int64) (agents.EarReport, error) {
	var r agents.EarReport
	data, err := io.ReadAll(io.LimitReader(body, budget+1))
	if err != nil {
		return r, err
	}
	if int64(len(data)) > budget {
		return r, fmt.Errorf("the ear report is over %d bytes", budget)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("the ear report: %w", err)
	}
	if r.Totals.Cap <= 0 {
		return r, fmt.Errorf("the ear report has no totals: not a callproof reference agent's")
	}
	return r, nil
}

// filed is how many calls the agent has filed so far.
func (e *earClient) filed(ctx context.Context) (int, error) {
	r, err := e.get(ctx, "?totals")
	return r.Totals.Calls, err
}

// heard waits (bounded) until the agent has filed want calls after base,
// then returns its account of the calls filed after base.
func (e *earClient) heard(ctx context.Context, base, want int) ([]harness.AgentHeard, error) {
	deadline := time.Now().Add(earFileWait)
	for {
		n, err := e.filed(ctx)
		if err != nil {
			return nil, err
		}
		if n-base >= want || !time.Now().Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	r, err := e.get(ctx, "?after="+strconv.Itoa(base))
	if err != nil {
		return nil, err
	}
	if r.Totals.Dropped > 0 && len(r.Calls) > 0 && r.Calls[0].Seq > base+1 {
		return nil, fmt.Errorf("the agent no longer keeps every call of this run (it keeps the latest %d)", r.Totals.Cap)
	}
	out := make([]harness.AgentHeard, 0, len(r.Calls))
	for _, c := range r.Calls {
		h := harness.AgentHeard{CallID: c.CallID, Onsets: c.Onsets, Sounds: c.Sounds, Texts: make([]string, len(c.Heard))}
		for i, u := range c.Heard {
			h.Texts[i] = u.Text
		}
		out = append(out, h)
	}
	return out, nil
}

// startLoadBot runs `callproof load-bot` as a separate process and reads
// the address it listens on.
func startLoadBot(ctx context.Context) (*exec.Cmd, string, error) {
	return startSelf(ctx, "load bot", []string{"load-bot"}, func(l string) (string, bool) {
		if addr, ok := strings.CutPrefix(l, "listening "); ok {
			return "ws://" + addr + "/", true
		}
		return "", false
	})
}

// cmdLoadBot serves the load bot on a loopback port until killed; not in
// the command list (callproof load starts it). With --transport livekit it
// is a LiveKit agent worker instead, on the server at --agent, answering
// in every room it is dispatched into (livekit.Bot).
func cmdLoadBot(args []string, stdout, stderr io.Writer) int {
	c := newCLI("load-bot", "usage: callproof load-bot [--listen ADDR]\n       callproof load-bot --transport livekit [--agent URL] [--livekit-agent-name NAME] [--livekit-api-key KEY] [--livekit-api-secret SECRET]\n", stdout, stderr)
	listen := c.String("listen", "127.0.0.1:0", "address")
	transport := c.String("transport", transportTwilio, "twilio, or livekit (a LiveKit agent worker)")
	agent := c.String("agent", "", "livekit: the LiveKit server (default $"+livekit.EnvURL+")")
	var lk liveKitFlags
	addLiveKitFlags(c, &lk)
	if _, code, ok := c.positional(args, 0); !ok {
		return code
	}
	if err := lk.check(*transport); err != nil {
		fmt.Fprintf(stderr, "callproof load-bot: %v\n", err)
		return exitUsage
	}
	ctx, stop := interruptible("load-bot", stderr)
	defer stop()
	if *transport == transportLiveKit {
		return liveKitLoadBot(ctx, liveKitAgentURL(*transport, *agent), lk, stdout, stderr)
	}
	if *transport != transportTwilio || c.set("agent") {
		fmt.Fprintln(stderr, "callproof load-bot: --transport twilio (the default, serving on --listen) or livekit (with --agent)")
		return exitUsage
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "callproof load-bot: %v\n", err)
		return exitBroken
	}
	fmt.Fprintf(stdout, "listening %s\n", ln.Addr())
	if err := (&loadbot.Bot{}).Serve(ctx, ln); err != nil {
		fmt.Fprintf(stderr, "callproof load-bot: %v\n", err)
		return exitBroken
	}
	return exitOK
}

// liveKitLoadBot registers the load bot as a LiveKit worker on server and
// serves until ctx ends.
func liveKitLoadBot(ctx context.Context, server string, f liveKitFlags, stdout, stderr io.Writer) int {
	if server == "" {
		fmt.Fprintln(stderr, "callproof load-bot: --transport livekit needs --agent (the LiveKit server) or $"+livekit.EnvURL)
		return exitUsage
	}
	livekit.QuietSDK()
	key, secret := f.keys()
	bot := &livekit.Bot{}
	w := &livekit.Worker{URL: server, APIKey: key, APISecret: secret, AgentName: f.agentName, Run: bot.Run}
	if err := w.Start(ctx); err != nil {
		fmt.Fprintf(stderr, "callproof load-bot: %v\n", err)
		return exitBroken
	}
	fmt.Fprintf(stdout, "registered as %q on %s\n", f.agentName, server)
	<-ctx.Done()
	w.Close()
	st := bot.Stats()
	fmt.Fprintf(stdout, "rooms %d · caller frames heard %d · jobs failed %d\n", st.Calls, st.Frames, st.Failed)
	if st.FirstError != "" {
		fmt.Fprintf(stdout, "first failure: %s\n", st.FirstError)
	}
	return exitOK
}
