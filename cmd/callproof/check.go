package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/harness/conformance"
)

func cmdCheck(args []string, stdout, stderr io.Writer) int {
	c := newCLI("check", "usage: callproof check --agent URL [--scale F] [--json]\n\nPlaces a few short calls and says, message by message, what the agent gets right\nand what it must fix. Exit 0: nothing to fix; 1: something to fix; 2: bad usage; 3: our side failed.\n", stdout, stderr)
	agentURL := c.String("agent", "", "the agent's WebSocket URL (ws://host:port/path)")
	scale := c.Float64("scale", 1.0, "time scale offered to the agent (at least 0.01)")
	asJSON := c.Bool("json", false, "print the findings as JSON")
	if _, code, ok := c.positional(args, 0); !ok {
		return code
	}
	for _, err := range []error{checkAgent(*agentURL), checkScale(*scale)} {
		if err != nil {
			fmt.Fprintf(stderr, "callproof check: %v\n", err)
			return exitUsage
		}
	}
	ctx, stop := interruptible("check", stderr)
	defer stop()
	env, err := harness.NewEnv(harness.EnvOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "callproof check: %v\n", err)
		return exitBroken
	}
	defer env.Close()
	rep, err := conformance.Run(ctx, env, *agentURL, conformance.Options{TimeScale: *scale})
	if err != nil {
		fmt.Fprintf(stderr, "callproof check: %v\n", err)
		return exitBroken
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		rep.Write(stdout) // checked by run's writer
	}
	if err != nil {
		fmt.Fprintf(stderr, "callproof check: %v\n", err)
		return exitBroken
	}
	if rep.Failed() {
		return exitGate
	}
	return exitOK
}
