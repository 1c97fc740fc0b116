package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/harness/conformance"
)

func cmdCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	agentURL := fs.String("agent", "", "the agent's WebSocket URL")
	scale := fs.Float64("scale", 1.0, "time scale offered to the agent")
	asJSON := fs.Bool("json", false, "print the findings as JSON")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: callproof check --agent URL [--scale F] [--json]\n\nPlaces a few short calls and says, message by message, what the agent gets right\nand what it must fix. Exit 0: nothing to fix; 1: something to fix; 3: our side failed.\n")
		fs.PrintDefaults()
	}
	pos, err := parse(fs, args)
	if err != nil {
		return exitUsage
	}
	if *agentURL == "" || len(pos) != 0 {
		fs.Usage()
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
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
		enc.Encode(rep)
	} else {
		rep.Write(stdout)
	}
	if rep.Failed() {
		return exitGate
	}
	return exitOK
}
