package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/callproof/callproof/harness"
)

func cmdGate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	policyPath := fs.String("policy", "", "policy file (YAML) that tightens the gate")
	asJSON := fs.Bool("json", false, "print the verdict as JSON")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: callproof gate [--policy FILE] [--json] RUN.jsonl|DIR\n\nApplies seed 001's release gate. Exit 0: holds; 1: does not hold; 2: bad input; 3: broken run.\n")
		fs.PrintDefaults()
	}
	pos, ok := positional(fs, args, 1)
	if !ok {
		return exitUsage
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
	hs, err := loadRun(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "callproof gate: %v\n", err)
		return exitUsage
	}
	g := harness.Gate(harness.ScoreCalls(hs), policy)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(g)
	} else {
		writeGate(stdout, g)
	}
	return gateExit(g)
}

func gateExit(g harness.GateResult) int {
	switch {
	case g.Broken:
		return exitBroken
	case !g.Holds:
		return exitGate
	}
	return exitOK
}

func writeGate(w io.Writer, g harness.GateResult) {
	verdict := "HOLDS"
	if g.Broken {
		verdict = "BROKEN RUN (" + g.Reason + ")"
	} else if !g.Holds {
		verdict = "DOES NOT HOLD"
	}
	fmt.Fprintf(w, "release gate: %s\n", verdict)
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
		for i, v := range r.Violations {
			if i == 5 {
				fmt.Fprintf(w, "       … %d more\n", len(r.Violations)-5)
				break
			}
			call := v.Call
			if call == "" {
				call = "suite"
			}
			fmt.Fprintf(w, "       %s: %s\n", call, v.Text)
		}
	}
}
