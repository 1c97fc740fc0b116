package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

const replayUsage = `usage: callproof replay RUN_DIR CALL [--agent URL] [--until-fail N] [--out DIR] [--json] [--no-preflight]

Places one recorded call again, with the seed, script, holds and faults its
history recorded, and says whether the same root-cause buckets appear. The
agent defaults to the run's own. --until-fail N repeats the call up to N
times and stops at the first attempt without end-to-end integrity: a race
that shows once in ten tries shows here. Attempts are written to --out
(default RUN_DIR/replay/CALL, replaced), as calls CALL.r1, CALL.r2, …

exit: 0 the recorded buckets appeared again (for a call recorded as passing:
it passed again); 1 they did not; 2 bad usage or input; 3 every attempt
ended in a harness error; 5 no agent answers at --agent (preflight;
nothing placed)
`

// maxReplays bounds --until-fail: a failure rarer than this is a sweep's
// job (callproof sweep), not a replay's.
const maxReplays = 1000

func cmdReplay(args []string, stdout, stderr io.Writer) int {
	c := newCLI("replay", replayUsage, stdout, stderr)
	agent := c.String("agent", "", "the agent's WebSocket URL (default: the run's)")
	until := c.Int("until-fail", 0, fmt.Sprintf("repeat up to N times (1..%d), stopping at the first failing attempt", maxReplays))
	out := c.String("out", "", "where the attempts are written (default RUN_DIR/replay/CALL)")
	asJSON := c.Bool("json", false, "print the attempts as JSON")
	noPreflight := c.Bool("no-preflight", false, noPreflightUsage)
	conc := 1
	var af audioFlags
	c.StringVar(&af.voice, "voice", "", "audio: the caller's voice, engine/voice")
	c.StringVar(&af.cache, "speech-cache", "", "audio: where synthesized caller speech is cached")
	c.BoolVar(&af.record, "record", false, "audio: write each attempt as a stereo WAV")
	pos, code, ok := c.positional(args, 2)
	if !ok {
		return code
	}
	dir, call := pos[0], pos[1]
	attempts := 1
	if c.set("until-fail") {
		if *until < 1 || *until > maxReplays {
			fmt.Fprintf(stderr, "callproof replay: --until-fail %d: want 1..%d\n", *until, maxReplays)
			return exitUsage
		}
		attempts = *until
	}
	run, err := harness.LoadRun(dir)
	if err != nil {
		fmt.Fprintf(stderr, "callproof replay: %v\n", err)
		return exitUsage
	}
	warn(stderr, "replay", run.Warnings)
	var rec *trace.History
	for _, h := range run.Histories {
		if h.Call == call {
			rec = h // the last attempt of the call wins, as everywhere
		}
	}
	if rec == nil {
		fmt.Fprintf(stderr, "callproof replay: %s has no call %q\n", dir, call)
		return exitUsage
	}
	st := rec.Start()
	suite := ""
	if st != nil {
		suite = st.Suite
	}
	if run.Meta != nil {
		suite = run.Meta.Suite
		if *agent == "" {
			*agent = run.Meta.Agent
		}
		af.transport, af.signaling, af.trickle = run.Meta.Transport, run.Meta.Signaling, run.Meta.Trickle
	}
	if err := checkAgentFor(af.transport, *agent); err != nil {
		fmt.Fprintf(stderr, "callproof replay: %v (the run records none)\n", err)
		return exitUsage
	}
	if st != nil && st.Transport != "" {
		af.transport = st.Transport
	}
	var cases = suiteOrNothing(suite, stderr)
	c0, warnings, err := harness.ReplayCase(rec, cases)
	if err != nil {
		fmt.Fprintf(stderr, "callproof replay: %v\n", err)
		return exitUsage
	}
	warn(stderr, "replay", warnings)
	scale := st.TimeScale
	if scale <= 0 {
		scale = 1
	}
	if err := af.check(scale); err != nil {
		fmt.Fprintf(stderr, "callproof replay: the recorded call: %v\n", err)
		return exitUsage
	}
	if *out == "" {
		*out = filepath.Join(dir, "replay", call)
	}
	if harness.SameDir(*out, dir) {
		fmt.Fprintf(stderr, "callproof replay: --out %s is the run itself: choose another directory\n", *out)
		return exitUsage
	}
	if !*noPreflight && !preflight("replay", af, *agent, stderr) {
		return exitNoAgent
	}
	orig := scorer.Score(rec)
	if !*asJSON {
		fmt.Fprintf(stdout, "replaying %s of %s against %s: seed %d, time scale %v, %d steps, %d faults\n",
			call, dir, *agent, st.Seed, scale, len(st.Script.Steps), len(st.Faults))
		fmt.Fprintf(stdout, "recorded:   %s\n", describeScore(orig))
	}
	ctx, stop := interruptible("replay", stderr)
	defer stop()
	p := placement{agent: *agent, out: *out, suite: suite, scale: scale, conc: conc, audio: af}
	var reps []harness.Reproduction
	broken := 0
	for i := 1; i <= attempts && ctx.Err() == nil; i++ {
		p.out = *out
		if attempts > 1 {
			p.out = filepath.Join(*out, fmt.Sprintf("r%d", i))
		}
		res, err := p.place(ctx, []harness.Placement{{Case: c0, ID: harness.ReplayID(call, i)}}, io.Discard)
		if err != nil {
			fmt.Fprintf(stderr, "callproof replay: %v\n", err)
			return exitBroken
		}
		s := res[0].Score
		r := harness.Reproduced(orig, s)
		reps = append(reps, r)
		if s.Outcome == trace.OutcomeHarnessError {
			broken++
		}
		if !*asJSON {
			fmt.Fprintf(stdout, "attempt %-3d %s: %s\n", i, describeScore(s), reproductionWords(orig, r))
		}
		if attempts > 1 && !s.Integrity && s.Outcome == trace.OutcomeScored {
			break // the failure showed
		}
	}
	reproduced := false
	for _, r := range reps {
		reproduced = reproduced || r.Same || r.PrimarySeen
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Call       string                 `json:"call"`
			Recorded   harness.Reproduction   `json:"recorded"`
			Attempts   []harness.Reproduction `json:"attempts"`
			Reproduced bool                   `json:"reproduced"`
			Out        string                 `json:"out"`
		}{call, harness.Reproduced(orig, orig), reps, reproduced, *out}); err != nil {
			fmt.Fprintf(stderr, "callproof replay: %v\n", err)
			return exitBroken
		}
	} else {
		verdict := "not reproduced"
		if reproduced {
			verdict = "reproduced"
		}
		fmt.Fprintf(stdout, "%s in %d attempt(s); attempts in %s (show one: %s show %s CALL)\n", verdict, len(reps), *out, self(), p.out)
	}
	switch {
	case len(reps) > 0 && broken == len(reps):
		return exitBroken
	case !reproduced:
		return exitGate
	}
	return exitOK
}

// suiteOrNothing loads the suite a run recorded, for the limits and custom
// parameters a history does not carry; a suite that no longer loads only
// costs those (ReplayCase warns).
func suiteOrNothing(suite string, stderr io.Writer) []*scenarios.Compiled {
	if suite == "" {
		return nil
	}
	_, cases, err := harness.LoadSuite(suite)
	if err != nil {
		warn(stderr, "replay", []string{fmt.Sprintf("suite %s does not load (%v)", suite, err)})
		return nil
	}
	return cases
}

// describeScore is one call's verdict in a line: integrity, outcome,
// buckets.
func describeScore(s scorer.CallScore) string {
	var b strings.Builder
	switch {
	case s.Outcome != trace.OutcomeScored:
		fmt.Fprintf(&b, "%s", s.Outcome)
		if s.Reason != "" {
			fmt.Fprintf(&b, " (%s)", s.Reason)
		}
		return b.String()
	case s.Integrity:
		b.WriteString("integrity")
	default:
		var failing []string
		for _, a := range s.Axes {
			if a.Verdict != scorer.Pass {
				failing = append(failing, string(a.Axis)+" "+string(a.Verdict))
			}
		}
		fmt.Fprintf(&b, "no integrity (%s)", strings.Join(failing, ", "))
	}
	if bs := harness.BucketSet(s); len(bs) > 0 {
		names := make([]string, len(bs))
		for i, x := range bs {
			names[i] = string(x)
		}
		fmt.Fprintf(&b, "; buckets %s", strings.Join(names, ", "))
	}
	return b.String()
}

func reproductionWords(orig scorer.CallScore, r harness.Reproduction) string {
	switch {
	case r.Same:
		return "same verdict and buckets"
	case r.PrimarySeen:
		return fmt.Sprintf("recorded primary %s seen again", orig.Primary)
	case r.Outcome != trace.OutcomeScored:
		return "not scored"
	}
	return "different"
}
