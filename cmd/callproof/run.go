package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/callproof/callproof/callsim/twilio"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/release"
	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

const runUsage = `usage: callproof run --agent URL --out DIR [--suite core|extended|PATH] [--only IDS] [--seed N]
                    [--trials K] [--agent-version V] [--history FILE] [--rerun-failed DIR] [--concurrency N] [--ramp D] [--scale F] [--force]
                    [--shard I/N]
                    [--transport native|twilio|webrtc|livekit] [--signaling smallwebrtc|whip|pipecat-start] [--trickle] [--twilio-api HOST:PORT]
                    [--livekit-agent-name NAME] [--livekit-api-key KEY] [--livekit-api-secret SECRET]
                    [--voice ENGINE/VOICE] [--speech-cache DIR] [--record] [--recognizers N] [--place-again N] [--no-preflight]
       callproof run --resume DIR [--agent URL] [--concurrency N] [--ramp D] [--recognizers N] [--place-again N] [--no-preflight]

Places one call per scenario against the agent and writes DIR as each call
completes. --out must be new or empty (--force replaces what is there).
--rerun-failed places the failed and missing calls of an earlier run into a
new --out; --resume places, in DIR itself, the planned calls that have no
complete history (a run cut short, or cancelled with Ctrl-C).
--ramp D spreads the starts of the first --concurrency calls over D, so
thousands of calls at once do not all dial the agent in one instant.
--trials K places every scenario K times (call ids SCENARIO.t1 … .tK), for
pass^k and the gate's intervals (docs/GATING.md). --history FILE appends
the finished run's line (per-axis counts, integrity, the seed gate's
verdict) to a history file that callproof history prints.
--shard I/N places only shard I (0-based) of N: each call's shard is a
stable hash of its id, so N machines each running one shard place the
suite once between them; callproof merge OUT SHARD_DIR... makes them one run.
--transport twilio calls the agent as Twilio Media Streams does (audio,
real time: --scale must stay 1); --transport webrtc calls it over WebRTC
(--agent is the signaling URL: Pipecat SmallWebRTC's /api/offer, or a WHIP
endpoint with --signaling whip); --transport livekit calls it in a LiveKit
room of its own per call (--agent, default $LIVEKIT_URL, is the LiveKit
server's ws:// URL; the key and secret default to $LIVEKIT_API_KEY and
$LIVEKIT_API_SECRET; --livekit-agent-name dispatches that agent explicitly,
else the server's automatic dispatch brings it). --record writes each call as a stereo WAV
(caller left, agent right) into DIR/audio. An audio agent that sends no
transcript of its own has its speech recognized after each call's script,
by a pool shared by the whole run: --recognizers N decoders at once
(default one fewer than the machine's cores, at least 1).
--place-again N (0..5, default 1) places a call again at once, up to N
times, when it ended with no verdict because callproof itself ran late
(its caller fell behind real time, or it was overloaded); the earlier
attempt is kept in DIR/attempts.jsonl and named on stderr.
First one connection checks that the agent answers on its dialect (the
WebSocket upgrade; for WebRTC, the signaling URL answers HTTP) and closes
again; if not, nothing is placed or written and run exits 5.
--no-preflight skips the check.

exit: 0 the run completed (verdicts are in the table), 2 bad usage or input,
3 broken run (a harness error), 4 cut short (interrupted: resume it),
5 no agent answers at --agent (preflight; nothing placed)
`

// runPlan is what a run will do, decided before anything is written.
type runPlan struct {
	agent, out, suite string
	seed              int64
	scale             float64
	cases             []*scenarios.Compiled // the suite's selected scenarios
	calls             []harness.Placement   // what the run places
	trials            int
	version, history  string
	resume            bool
	audio             audioFlags
	shard             *harness.Shard // a sharded run's part of the suite
	ramp              time.Duration  // the first wave's starts spread over this
	placeAgain        int            // a call callproof ran late in is placed again up to this many times
	noPreflight       bool           // place without checking the agent answers
}

// agentAnswers is the preflight of a run with calls to place: an agent
// that is not there is said so, not recorded as every call's agent error.
func (p *runPlan) agentAnswers(calls int, stderr io.Writer) bool {
	return p.noPreflight || calls == 0 || preflight("run", p.audio, p.agent, stderr)
}

// audioFlags choose the wire dialect and, for audio, the caller's voice.
type audioFlags struct {
	transport, voice, cache string
	record                  bool
	signaling               string // webrtc
	twilioAPI               string // twilio: the REST stub's address
	rest                    *twilio.REST
	trickle                 bool // webrtc
	pool                    int  // audio: decoders at once (0: hearing.DefaultPoolSize)
	livekit                 liveKitFlags
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	c := newCLI("run", runUsage, stdout, stderr)
	agentURL := c.String("agent", "", "the agent's WebSocket URL (ws://host:port/path)")
	suite := c.String("suite", "core", "core, extended, or a scenario file or directory")
	out := c.String("out", "", "results directory (new or empty, unless --force)")
	only := c.String("only", "", "comma-separated scenario ids to run")
	seed := c.Int64("seed", 0, "override every scenario's seed")
	rerun := c.String("rerun-failed", "", "results directory of an earlier run: place only its failed and missing calls (into --out)")
	resume := c.String("resume", "", "results directory of a run cut short: place its unfinished calls there")
	force := c.Bool("force", false, "write into a non-empty --out, replacing the run there")
	conc := c.Int("concurrency", 8, "calls at once")
	ramp := c.Duration("ramp", 0, "spread the first --concurrency calls' starts over this long (e.g. 2s for thousands at once)")
	trials := c.Int("trials", 1, fmt.Sprintf("place every scenario this many times (1..%d)", harness.MaxTrials))
	version := c.String("agent-version", "", "the agent's version or commit, recorded in the run's manifest and history")
	history := c.String("history", "", "append the finished run's line to this history file")
	shard := c.String("shard", "", "I/N: place only shard I (0-based) of N of the suite's calls (merge the N results directories after)")
	scale := c.Float64("scale", 1.0, "time scale offered to the agent (0.1 = ten times faster; at least 0.01)")
	noPreflight := c.Bool("no-preflight", false, noPreflightUsage)
	placeAgain := c.Int("place-again", harness.DefaultPlaceAgain, fmt.Sprintf("place a call callproof itself ran late in again, up to this many times (0..%d)", harness.MaxPlaceAgain))
	var af audioFlags
	c.StringVar(&af.transport, "transport", "native", "wire dialect: native (JSON text), twilio (Twilio Media Streams audio), webrtc (audio), livekit (audio, in a LiveKit room) or pipecat-eval (Pipecat's eval wire, text)")
	c.StringVar(&af.signaling, "signaling", "", "webrtc: smallwebrtc (Pipecat, the default) or whip")
	c.BoolVar(&af.trickle, "trickle", false, "webrtc: send ICE candidates after the offer (PATCH)")
	c.StringVar(&af.twilioAPI, "twilio-api", "", "twilio: serve a stub of Twilio's REST call update on HOST:PORT, for bots that hang up through it")
	c.StringVar(&af.voice, "voice", "", "the caller's synthesized voice, engine/voice (default "+audioDefaultVoice()+")")
	c.StringVar(&af.cache, "speech-cache", "", "where synthesized caller speech is cached (default "+harness.DefaultSpeechCache()+")")
	c.BoolVar(&af.record, "record", false, "audio: write each call as a stereo WAV into OUT/audio")
	c.IntVar(&af.pool, "recognizers", 0, "audio: decoders of the agent's speech at once, shared by the run's calls (default one fewer than the cores)")
	addLiveKitFlags(c, &af.livekit)
	if _, code, ok := c.positional(args, 0); !ok {
		return code
	}
	*agentURL = liveKitAgentURL(af.transport, *agentURL)
	// A resumed run's dialect is its manifest's: its flags are checked
	// once that is read (audioFromMeta).
	if err := af.check(*scale); err != nil && *resume == "" {
		fmt.Fprintf(stderr, "callproof run: %v\n", err)
		return exitUsage
	}
	if *conc < 1 {
		fmt.Fprintf(stderr, "callproof run: --concurrency %d: want at least 1\n", *conc)
		return exitUsage
	}
	if *ramp < 0 || *ramp > time.Minute {
		fmt.Fprintf(stderr, "callproof run: --ramp %s: want 0 to 1m\n", *ramp)
		return exitUsage
	}
	if *placeAgain < 0 || *placeAgain > harness.MaxPlaceAgain {
		fmt.Fprintf(stderr, "callproof run: --place-again %d: want 0 to %d\n", *placeAgain, harness.MaxPlaceAgain)
		return exitUsage
	}
	var p *runPlan
	var err error
	if *resume != "" {
		p, err = planResume(c, *resume, *agentURL)
	} else {
		p, err = planRun(c, af.transport, *agentURL, *out, *suite, *only, *rerun, *seed, *scale, *force, *trials)
	}
	if p != nil && !p.resume {
		p.version = *version
	}
	if err == nil && p != nil && *shard != "" {
		if err = p.setShard(*shard, *rerun != "" || *resume != ""); err == nil && len(p.calls) == 0 {
			fmt.Fprintf(stderr, "callproof run: shard %s holds none of the suite's %d calls: the run records it, complete and empty, for merge\n", p.shard, len(p.shard.SuiteCalls))
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "callproof run: %v\n", err)
		return exitUsage
	}
	if p == nil {
		fmt.Fprintf(stdout, "no failed or missing calls in %s: nothing to re-run\n", *rerun)
		return exitOK
	}
	p.audio = af
	p.history = *history
	p.ramp = *ramp
	p.placeAgain = *placeAgain
	if p.resume && p.audioFromMeta() != nil {
		fmt.Fprintf(stderr, "callproof run: --resume: %v\n", p.audioFromMeta())
		return exitUsage
	}
	p.noPreflight = *noPreflight
	return placeCalls(p, *conc, stdout, stderr)
}

// fileLimitConcurrency raises the open-file limit for conc calls at once
// and returns the concurrency the hard limit allows, saying so when it
// is less, or when the soft limit had to be raised for it.
func fileLimitConcurrency(cmd string, conc int, stderr io.Writer) int {
	fl, err := harness.RaiseFileLimit()
	if err != nil {
		fmt.Fprintf(stderr, "callproof %s: warning: %v\n", cmd, err)
		return conc
	}
	need := uint64(conc)*harness.FilesPerCall + harness.FilesReserve
	if fl.Raised && need > fl.Was {
		fmt.Fprintf(stderr, "callproof %s: raised the open-file limit from %d to %d for %d calls at once\n", cmd, fl.Was, fl.Soft, conc)
	}
	if conc > fl.MaxCalls {
		fmt.Fprintf(stderr, "callproof %s: the open-file hard limit (%d) allows %d calls at once (%d descriptors each, %d reserved): placing %d at once, not %d (raise it with ulimit -Hn as root)\n",
			cmd, fl.Hard, fl.MaxCalls, harness.FilesPerCall, harness.FilesReserve, max(fl.MaxCalls, 1), conc)
		return max(fl.MaxCalls, 1)
	}
	return conc
}

// setShard keeps only the plan's shard of the suite and records the whole.
func (p *runPlan) setShard(s string, again bool) error {
	if again {
		return fmt.Errorf("--shard splits a fresh run: a re-run or a resume places its own calls")
	}
	i, n, err := harness.ParseShard(s)
	if err != nil {
		return err
	}
	pack, _ := harness.Hashes(p.cases)
	p.shard = &harness.Shard{Index: i, Count: n, SuiteHash: pack, SuiteCalls: harness.CallIDs(p.calls)}
	p.calls = harness.ShardPlacements(p.calls, i, n)
	return nil
}

// planRun checks a fresh run's flags; nothing is created yet.
func planRun(c *cli, transport, agent, out, suite, only, rerun string, seed int64, scale float64, force bool, trials int) (*runPlan, error) {
	if err := checkAgentFor(transport, agent); err != nil {
		return nil, err
	}
	if trials < 1 || trials > harness.MaxTrials {
		return nil, fmt.Errorf("--trials %d: want 1..%d", trials, harness.MaxTrials)
	}
	if err := checkScale(scale); err != nil {
		return nil, err
	}
	if out == "" {
		return nil, fmt.Errorf("--out is required")
	}
	if rerun != "" && harness.SameDir(rerun, out) {
		return nil, fmt.Errorf("--out %s is the run --rerun-failed reads: write the re-run into a new directory (then merge them)", out)
	}
	if used, err := harness.InUse(out); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	} else if used && !force {
		return nil, fmt.Errorf("--out %s is not empty: pass --force to replace it, --resume %s to finish it, or choose a new directory", out, out)
	}
	var ids, callIDs []string
	if only != "" {
		ids = strings.Split(only, ",")
	}
	if rerun != "" {
		earlier, err := harness.LoadRun(rerun)
		if err != nil {
			return nil, fmt.Errorf("--rerun-failed: %w", err)
		}
		if earlier.Meta != nil && !c.set("suite") {
			suite = earlier.Meta.Suite // re-run what that run ran
		}
		if earlier.Meta != nil && !c.set("trials") {
			trials = max(earlier.Meta.Trials, 1)
		}
		again := harness.Failed(scorer.ScoreAll(earlier.Histories))
		again = append(again, harness.CheckCompleteness(earlier).Missing...)
		if len(again) == 0 {
			return nil, nil
		}
		callIDs = again
	}
	name, cases, err := harness.LoadSuite(suite)
	if err != nil {
		return nil, err
	}
	all := cases
	if cases, err = harness.Select(cases, ids); err != nil {
		return nil, err
	}
	calls := harness.Placements(cases, trials)
	if callIDs != nil {
		// The failed calls themselves, under their own ids (so a merge
		// puts each new attempt in its old place), and any --only ones.
		if ids != nil {
			callIDs = append(callIDs, harness.CallIDs(calls)...)
		}
		if calls, err = harness.SelectCalls(all, callIDs); err != nil {
			return nil, fmt.Errorf("--rerun-failed: %w", err)
		}
		cases = all
	}
	return &runPlan{agent: agent, out: out, suite: name, seed: seed, scale: scale, cases: cases, calls: calls, trials: trials}, nil
}

// planResume reads a run's manifest: the resume runs what it planned, as
// it planned it; only the agent's address may change.
func planResume(c *cli, dir, agent string) (*runPlan, error) {
	for _, f := range []string{"out", "suite", "only", "seed", "scale", "rerun-failed", "force", "transport", "signaling", "trickle", "trials", "agent-version", "shard"} {
		if c.set(f) {
			return nil, fmt.Errorf("--resume takes the run's own settings from %s/%s: --%s cannot change them", dir, harness.MetaFile, f)
		}
	}
	meta, err := harness.ReadMeta(dir)
	if err != nil {
		return nil, fmt.Errorf("--resume: %w", err)
	}
	if len(meta.Planned) == 0 {
		return nil, fmt.Errorf("--resume: %s has no run manifest (its meta.json lists no planned calls): it cannot be resumed", dir)
	}
	if agent == "" {
		agent = meta.Agent
	}
	if err := checkAgentFor(meta.Transport, agent); err != nil {
		return nil, err
	}
	name, cases, err := harness.LoadSuite(meta.Suite)
	if err != nil {
		return nil, fmt.Errorf("--resume: suite of %s: %w", dir, err)
	}
	calls, err := harness.SelectCalls(cases, meta.Planned)
	if err != nil {
		return nil, fmt.Errorf("--resume: %w", err)
	}
	if err := sameVersion(meta, calls); err != nil {
		return nil, fmt.Errorf("--resume: %w", err)
	}
	return &runPlan{agent: agent, out: dir, suite: name, seed: meta.Seed, scale: meta.TimeScale, cases: cases, calls: calls, trials: meta.Trials, resume: true}, nil
}

// placeCalls starts the backend, writes the results directory and prints
// the run's table.
func placeCalls(p *runPlan, conc int, stdout, stderr io.Writer) int {
	calls := p.calls
	conc = fileLimitConcurrency("run", conc, stderr)
	var res *harness.Results
	var err error
	if p.resume {
		var plan *harness.Resume
		if plan, err = harness.PrepareResume(p.out); err != nil {
			fmt.Fprintf(stderr, "callproof run: --resume: %v\n", err)
			return exitBroken
		}
		warn(stderr, "run", plan.Warnings)
		if calls, err = harness.SelectCalls(p.cases, plan.Todo); err != nil {
			fmt.Fprintf(stderr, "callproof run: --resume: %v\n", err)
			return exitUsage
		}
		// Only now is what is left known; the kept calls are as they were.
		if !p.agentAnswers(len(calls), stderr) {
			return exitNoAgent
		}
		fmt.Fprintf(stderr, "callproof run: resuming %s: %d calls kept, %d to place", p.out, plan.Kept, len(calls))
		if plan.Moved > 0 {
			fmt.Fprintf(stderr, " (%d earlier attempts moved to %s)", plan.Moved, harness.AttemptsFile)
		}
		fmt.Fprintln(stderr)
		res, err = harness.OpenResults(p.out)
	} else {
		if !p.agentAnswers(len(calls), stderr) {
			return exitNoAgent // before the results directory is made
		}
		pack, hashes := harness.Hashes(p.cases)
		meta := harness.Meta{Agent: p.agent, AgentVersion: p.version, Suite: p.suite, Seed: p.seed, TimeScale: p.scale,
			Calls: len(calls), Trials: p.trials, Planned: harness.CallIDs(calls), PackHash: pack, ScenarioHashes: hashes}
		p.audio.setMeta(&meta)
		meta.Shard = p.shard
		res, err = harness.CreateResults(p.out, meta)
	}
	if err != nil {
		fmt.Fprintf(stderr, "callproof run: %v\n", err)
		return exitBroken
	}
	ctx, stop := interruptible("run", stderr)
	defer stop()
	env, err := harness.NewEnv(harness.EnvOptions{})
	if err != nil {
		res.Close()
		fmt.Fprintf(stderr, "callproof run: %v\n", err)
		return exitBroken
	}
	defer env.Close()
	if p.audio.twilioAPI != "" {
		stopAPI, err := p.audio.serveTwilioAPI()
		if err != nil {
			fmt.Fprintf(stderr, "callproof run: --twilio-api: %v\n", err)
			return exitBroken
		}
		defer stopAPI()
	}
	hear, err := p.audio.setUp(env, p.out)
	if err != nil {
		fmt.Fprintf(stderr, "callproof run: %v\n", err)
		return exitBroken
	}
	r := env.Runner()
	r.Concurrency, r.TimeScale, r.Seed, r.Suite, r.Agent, r.Results = conc, p.scale, p.seed, p.suite, p.agent, res
	r.Ramp = p.ramp
	bar := newProgress(stderr)
	defer bar.recognition(hear)()
	r.Progress = bar.update
	r.Replace = p.placeAgain
	r.Replaced = func(s scorer.CallScore, attempt int) {
		bar.note(fmt.Sprintf("callproof run: %s placed again (attempt %d kept in %s): %s", s.Call, attempt, harness.AttemptsFile, s.Reason))
	}
	r.Warm.Progress = speechProgress(stderr, "run")
	r.DropHistories = true // read back from disk below
	_, err = r.Place(ctx, p.agent, calls)
	bar.done()
	if n := res.Attempts(); n > 0 {
		fmt.Fprintf(stderr, "callproof run: attempts callproof ran late in, placed again: %d (kept in %s)\n", n, filepath.Join(p.out, harness.AttemptsFile))
	}
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(stderr, "callproof run: writing results: %v\n", err)
		return exitBroken
	}
	// Read back a call at a time: the table, the page and the checks never
	// hold more than one call's history, however long the run.
	idx, err := harness.IndexRun(p.out)
	if err != nil {
		fmt.Fprintf(stderr, "callproof run: reading results back: %v\n", err)
		return exitBroken
	}
	saved := idx.Run
	sorted := saved.Sorted()
	scores := make([]scorer.CallScore, len(sorted))
	for i, h := range sorted {
		full, err := idx.Load(h)
		if err != nil {
			fmt.Fprintf(stderr, "callproof run: reading results back: %v\n", err)
			return exitBroken
		}
		scores[i] = scorer.Score(full)
	}
	sum := reports.Summarize(scores)
	if err := reports.WriteTable(stdout, reports.Title{Suite: p.suite, Agent: p.agent}, sum); err != nil {
		fmt.Fprintf(stderr, "callproof run: %v\n", err)
		return exitBroken
	}
	if _, err := writeHTMLReport(saved, scores, idx.Load, p.out, filepath.Join(p.out, harness.ReportFile), p.suite, p.agent); err != nil {
		fmt.Fprintf(stderr, "callproof run: writing %s: %v\n", harness.ReportFile, err)
		return exitBroken
	}
	fmt.Fprintf(stdout, "\nresults: %s (show a call: %s show %s CALL; open %s in a browser)\n", p.out, self(), p.out, filepath.Join(p.out, harness.ReportFile))
	if p.history != "" {
		// The gate's line scores every call again: it reads them all.
		whole, err := harness.LoadRun(p.out)
		if err != nil {
			fmt.Fprintf(stderr, "callproof run: --history: %v\n", err)
			return exitBroken
		}
		g, rel := harness.GateRelease(whole, harness.Policy{}, harness.ReleaseOptions{AgentVersion: p.version, Now: time.Now()})
		line := release.NewHistoryLine(harness.RunRecord(whole, p.version, time.Now()), rel.Trials, release.GateWord(g.Holds, g.Broken, g.Incomplete != nil), nil)
		if err := release.AppendHistory(p.history, line); err != nil {
			fmt.Fprintf(stderr, "callproof run: --history: %v\n", err)
			return exitBroken
		}
	}
	if c := harness.CheckCompleteness(saved); !c.Complete() {
		warn(stderr, "run", c.Problems())
		fmt.Fprintf(stderr, "callproof run: the run was cut short; finish it with: %s run --resume %s\n", self(), p.out)
		return exitIncomplete
	}
	if n := countOutcome(scores, trace.OutcomeHarnessError); n > 0 {
		fmt.Fprintf(stderr, "callproof run: %d calls ended in a harness error; the run is broken (re-run them: %s run --resume %s)\n", n, self(), p.out)
		return exitBroken
	}
	return exitOK
}

func countOutcome(scores []scorer.CallScore, o trace.Outcome) int {
	n := 0
	for _, s := range scores {
		if s.Outcome == o {
			n++
		}
	}
	return n
}

// sameVersion refuses to resume a run whose scenarios changed since it
// started: its calls would be of two versions under one manifest.
func sameVersion(meta *harness.Meta, calls []harness.Placement) error {
	if len(meta.ScenarioHashes) == 0 {
		return nil // an older manifest: nothing recorded to compare
	}
	for _, p := range calls {
		id := p.Case.Scenario.ID
		if want, ok := meta.ScenarioHashes[id]; ok && want != harness.ScenarioHash(p.Case) {
			return fmt.Errorf("scenario %s changed since the run started (its content hash differs from the manifest's): start a new run", id)
		}
	}
	return nil
}
