package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/callproof/callproof/harness"
)

func cmdGate(args []string, stdout, stderr io.Writer) int {
	c := newCLI("gate", "usage: callproof gate [--policy FILE] [--json] RUN.jsonl|DIR|-\n\nApplies seed 001's release gate. Exit 0: holds; 1: does not hold; 2: bad input;\n3: broken run (a harness error); 4: incomplete run (planned calls missing or\nduplicated, or the run was cut short).\n", stdout, stderr)
	policyPath := c.String("policy", "", "policy file (YAML) that tightens the gate")
	asJSON := c.Bool("json", false, "print the verdict as JSON")
	pos, code, ok := c.positional(args, 1)
	if !ok {
		return code
	}
	var policy harness.Policy
	if *policyPath != "" {
		p, err := harness.LoadPolicy(*policyPath)
		if err != nil {
			fmt.Fprintf(stderr, "callproof gate: %v\n", err)
			return exitUsage
		}
		policy = p
	}
	run, err := loadRun(pos[0], "gate", stderr)
	if err != nil {
		fmt.Fprintf(stderr, "callproof gate: %v\n", err)
		return exitUsage
	}
	if run.Meta == nil && pos[0] != "-" {
		fmt.Fprintf(stderr, "callproof gate: warning: %s has no run manifest (meta.json): missing calls cannot be told\n", pos[0])
	}
	g := harness.GateRun(run, policy)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(g)
	} else {
		err = writeGate(stdout, g)
	}
	if err != nil {
		fmt.Fprintf(stderr, "callproof gate: %v\n", err)
		return exitBroken
	}
	return gateExit(g)
}

// gateExit: an incomplete run first (it is not the run that was planned),
// then a broken one (it proves nothing), then the rules.
func gateExit(g harness.GateResult) int {
	switch {
	case g.Incomplete != nil:
		return exitIncomplete
	case g.Broken:
		return exitBroken
	case !g.Holds:
		return exitGate
	}
	return exitOK
}

// gateVerdict is the gate's one-word verdict, as the demo table shows it.
func gateVerdict(g harness.GateResult) string {
	switch {
	case g.Incomplete != nil:
		return "incomplete"
	case g.Broken:
		return "broken run"
	case !g.Holds:
		return "FAILS"
	}
	return "holds"
}

func writeGate(w io.Writer, g harness.GateResult) error {
	verdict := "HOLDS"
	switch {
	case g.Incomplete != nil:
		verdict = "INCOMPLETE RUN"
	case g.Broken:
		verdict = "BROKEN RUN (" + g.Reason + ")"
	case !g.Holds:
		verdict = "DOES NOT HOLD"
	}
	if _, err := fmt.Fprintf(w, "release gate: %s\n", verdict); err != nil {
		return err
	}
	if g.Incomplete != nil {
		for _, p := range g.Incomplete.Problems() {
			fmt.Fprintf(w, "  %s\n", p)
		}
		if g.Broken {
			fmt.Fprintf(w, "  broken run too (%s)\n", g.Reason)
		}
	}
	for _, r := range g.Rules {
		mark := "ok  "
		if !r.Holds {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s %s", mark, r.Rule)
		if n := len(r.Violations); n > 0 {
			fmt.Fprintf(w, " (%d)", n)
		}
		fmt.Fprintln(w)
		vs := append([]harness.Violation(nil), r.Violations...)
		harness.SortViolations(vs)
		for i, v := range vs {
			if i == 5 {
				fmt.Fprintf(w, "       … %d more\n", len(vs)-5)
				break
			}
			call := v.Call
			if call == "" {
				call = "suite"
			}
			fmt.Fprintf(w, "       %s: %s\n", call, v.Text)
		}
	}
	return nil
}
