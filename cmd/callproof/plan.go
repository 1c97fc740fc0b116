package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/internal/safetext"
	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/scorer"
)

const planUsage = `usage: callproof plan [--suite core|extended|PATH] [--only IDS] [--trials K] [--shard I/N] [--json]

Lists the calls a run with the same flags places, one call id per line, in
the order run places them; nothing is placed or written. --json prints one
JSON object: the suite's name and, per call, its id, scenario and trial
(1..K). The pytest plugin collects one test item per call from it.
`

// plannedCall is one call of plan --json.
type plannedCall struct {
	Call     string `json:"call"`
	Scenario string `json:"scenario"`
	Trial    int    `json:"trial"`
}

func cmdPlan(args []string, stdout, stderr io.Writer) int {
	c := newCLI("plan", planUsage, stdout, stderr)
	suite := c.String("suite", "core", "core, extended, or a scenario file or directory")
	only := c.String("only", "", "comma-separated scenario ids to list")
	trials := c.Int("trials", 1, fmt.Sprintf("every scenario this many times (1..%d)", harness.MaxTrials))
	shard := c.String("shard", "", "I/N: list only shard I (0-based) of N, as run --shard places it")
	asJSON := c.Bool("json", false, "print JSON")
	if _, code, ok := c.positional(args, 0); !ok {
		return code
	}
	if *trials < 1 || *trials > harness.MaxTrials {
		fmt.Fprintf(stderr, "callproof plan: --trials %d: want 1..%d\n", *trials, harness.MaxTrials)
		return exitUsage
	}
	name, cases, err := harness.LoadSuite(*suite)
	if err == nil && *only != "" {
		cases, err = harness.Select(cases, strings.Split(*only, ","))
	}
	if err != nil {
		fmt.Fprintf(stderr, "callproof plan: %v\n", err)
		return exitUsage
	}
	calls := harness.Placements(cases, *trials)
	if *shard != "" {
		i, n, err := harness.ParseShard(*shard)
		if err != nil {
			fmt.Fprintf(stderr, "callproof plan: %v\n", err)
			return exitUsage
		}
		calls = harness.ShardPlacements(calls, i, n)
	}
	if !*asJSON {
		for _, id := range harness.CallIDs(calls) {
			fmt.Fprintln(stdout, id)
		}
		return exitOK
	}
	out := struct {
		Suite string        `json:"suite"`
		Calls []plannedCall `json:"calls"`
	}{Suite: name, Calls: make([]plannedCall, len(calls))}
	for i, p := range calls {
		out.Calls[i] = plannedCall{Call: p.CallID(), Scenario: p.Case.Scenario.ID, Trial: max(p.Trial, 1)}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(stderr, "callproof plan: %v\n", err)
		return exitBroken
	}
	return exitOK
}

const explainUsage = `usage: callproof explain [--json] RUN.jsonl|DIR|- [CALL...]

Says why each call fell short, as callprooftest's failure messages do: its
outcome, each axis that did not pass with its findings, the root-cause
buckets, and the events they cite. Without CALLs, every call without
end-to-end integrity, in scenario order. --json prints one JSON object per
line for every call (or each CALL): call, scenario, trial, outcome,
integrity, and the explanation (text escaped as on a terminal).
`

// explained is one line of explain --json.
type explained struct {
	Call      string `json:"call"`
	Scenario  string `json:"scenario"`
	Trial     int    `json:"trial"`
	Outcome   string `json:"outcome"`
	Integrity bool   `json:"integrity"`
	Explain   string `json:"explain"`
}

func cmdExplain(args []string, stdout, stderr io.Writer) int {
	c := newCLI("explain", explainUsage, stdout, stderr)
	asJSON := c.Bool("json", false, "one JSON object per call")
	pos, code, ok := c.parse(args)
	if !ok {
		return code
	}
	if len(pos) < 1 {
		c.Usage()
		return exitUsage
	}
	run, err := loadRun(pos[0], "explain", stderr)
	if err != nil {
		fmt.Fprintf(stderr, "callproof explain: %v\n", err)
		return exitUsage
	}
	hs := run.Sorted()
	if len(pos) > 1 {
		var picked = hs[:0:0]
		for _, id := range pos[1:] {
			h, err := findCall(hs, id)
			if err != nil {
				fmt.Fprintf(stderr, "callproof explain: %v\n", err)
				return exitUsage
			}
			picked = append(picked, h)
		}
		hs = picked
	}
	enc := json.NewEncoder(stdout)
	first := true
	for _, h := range hs {
		s := scorer.Score(h)
		if *asJSON {
			_, trial := harness.SplitCallID(s.Call)
			// Escaped line by line: the text is the agent's too, and the
			// plugin prints it to a terminal as it is.
			lines := strings.Split(reports.Explain(h, s), "\n")
			for i, l := range lines {
				lines[i] = safetext.Escape(l)
			}
			e := explained{Call: s.Call, Scenario: s.Scenario, Trial: max(trial, 1), Outcome: string(s.Outcome), Integrity: s.Integrity, Explain: strings.Join(lines, "\n")}
			if err := enc.Encode(e); err != nil {
				fmt.Fprintf(stderr, "callproof explain: %v\n", err)
				return exitBroken
			}
			continue
		}
		if s.Integrity && len(pos) == 1 {
			continue
		}
		if !first {
			fmt.Fprintln(stdout)
		}
		first = false
		fmt.Fprintln(stdout, reports.Explain(h, s))
	}
	return exitOK
}
