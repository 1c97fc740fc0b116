package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/callproof/callproof/scorer"
)

func cmdScore(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("score", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: callproof score RUN.jsonl|DIR|-\n\nScores every call's history and writes one JSON score per line.\n")
	}
	pos, ok := positional(fs, args, 1)
	if !ok {
		return exitUsage
	}
	hs, err := loadRun(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "callproof score: %v\n", err)
		return exitUsage
	}
	w := bufio.NewWriter(stdout)
	enc := json.NewEncoder(w)
	for _, s := range scorer.ScoreAll(hs) {
		if err := enc.Encode(s); err != nil {
			fmt.Fprintf(stderr, "callproof score: %v\n", err)
			return exitUsage
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "callproof score: %v\n", err)
		return exitUsage
	}
	return exitOK
}
