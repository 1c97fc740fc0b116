package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/callproof/callproof/harness"
)

// Exit codes (docs/CLI.md).
const (
	exitOK         = 0 // success; the gate holds
	exitGate       = 1 // the release gate does not hold
	exitUsage      = 2 // bad flags, unreadable or invalid input (scenario, policy, history)
	exitBroken     = 3 // broken run: a harness error, the run proves nothing; or the output could not be written
	exitIncomplete = 4 // incomplete run: planned calls missing or duplicated, or the run was cut short
	exitNoAgent    = 5 // preflight: no agent answers at --agent; nothing was placed
)

type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

func commands() map[string]command {
	return map[string]command{
		"init":      {"write a catalogue from your agent's tools (OpenAI, MCP or OpenAPI)", cmdInit},
		"validate":  {"check scenario files (no files: the built-in packs)", cmdValidate},
		"run":       {"run a suite against an agent and write a results directory", cmdRun},
		"score":     {"score recorded histories (run.jsonl in, scores out)", cmdScore},
		"report":    {"print the suite table from scores (or --json)", cmdReport},
		"show":      {"one call's timeline and why each axis passed or failed", cmdShow},
		"gate":      {"apply the release gate to a results directory", cmdGate},
		"demo":      {"run the core suite against both reference agents", cmdDemo},
		"agent":     {"serve a reference agent (naive | careful)", cmdAgent},
		"check":     {"conformance check of an agent's protocol handling", cmdCheck},
		"schema":    {"print the JSON Schema for scenario files", cmdSchema},
		"merge":     {"combine results directories into one (the later attempt of a call wins)", cmdMerge},
		"calibrate": {"compare scores with hand labels: agreement, kappa, false passes", cmdCalibrate},
		"baseline":  {"save an accepted run as the baseline gates compare with (or show one)", cmdBaseline},
		"history":   {"print the trend of a gate history file", cmdHistory},
		"replay":    {"place one recorded call again and say whether its buckets reappear", cmdReplay},
		"sweep":     {"run a scenario across a range of one timing: the map of a race window", cmdSweep},
		"load":      {"measure how many calls at once this machine sustains (audio, or text with --transport native)", cmdLoad},
		"version":   {"print callproof's version", cmdVersion},
		"plan":      {"list the calls a run places (call ids; --json for the pytest plugin)", cmdPlan},
		"explain":   {"why each call fell short: failing axes, buckets, cited events", cmdExplain},
	}
}

func main() {
	// A process that places many calls at once collects garbage at
	// harness.GCPercent (unless GOGC says otherwise): memory per call is a
	// documented target (docs/PERFORMANCE.md, "Text calls at scale").
	if len(os.Args) > 1 && placesCalls(os.Args[1]) {
		harness.TuneGC()
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// placesCalls says whether a command holds many calls at once.
func placesCalls(cmd string) bool {
	switch cmd {
	case "run", "load", "sweep", "demo":
		return true
	}
	return false
}

// run runs one command. Every write to stdout and stderr is checked: a
// command whose output was lost exits non-zero.
func run(args []string, stdout, stderr io.Writer) int {
	out, flushOut := guarded(stdout)
	errw, flushErr := guarded(stderr)
	code := dispatch(args, out, errw)
	if err := flushOut.Flush(); err != nil && out.err == nil {
		out.err = err
	}
	if err := flushErr.Flush(); err != nil && errw.err == nil {
		errw.err = err
	}
	if out.err != nil || errw.err != nil {
		err := out.err
		if err == nil {
			err = errw.err
		}
		fmt.Fprintf(stderr, "callproof: writing output: %v\n", err)
		if code == exitOK {
			code = exitBroken
		}
	}
	return code
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 {
		usage(stderr, cmds)
		return exitUsage
	}
	if args[0] == "help" || isHelp(args[0]) {
		usage(stdout, cmds)
		return exitOK
	}
	if args[0] == "load-bot" { // started by load; not in the list
		return cmdLoadBot(args[1:], stdout, stderr)
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "callproof: unknown command %q\n\n", args[0])
		usage(stderr, cmds)
		return exitUsage
	}
	return c.run(args[1:], stdout, stderr)
}

// self is how to invoke this command again in a printed hint: the binary's
// name, or `go run ./cmd/callproof` when it was started by go run.
func self() string {
	if strings.Contains(os.Args[0], "go-build") {
		return "go run ./cmd/callproof"
	}
	return "callproof"
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintf(w, "usage: callproof <command> [flags]\n\ncommands:\n")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintf(w, "\nexit codes: 0 ok, 1 gate does not hold, 2 bad usage or input, 3 broken run, 4 incomplete run, 5 no agent answers (preflight)\n\n'callproof <command> --help' describes a command.\n")
}
