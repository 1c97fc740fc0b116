package main

import (
	"fmt"
	"io"

	"github.com/callproof/callproof/harness"
)

func cmdMerge(args []string, stdout, stderr io.Writer) int {
	c := newCLI("merge", `usage: callproof merge [--force] OUT DIR...

Combines results directories (a run, then its --rerun-failed runs) into OUT,
one directory that score, report, show and gate read as one run. For each
call the later attempt wins (a later DIR, or later in its file); earlier
attempts are kept in OUT/attempts.jsonl. OUT must be new or empty.

The shards of a sharded run (run --shard I/N) merge into the whole run:
they must come from one version of the suite and be complete, each of
0..N-1 exactly once; a missing, repeated, unfinished or foreign shard is
an error that names it. Merge re-runs of a sharded run's failures into
the merged run afterwards.
`, stdout, stderr)
	force := c.Bool("force", false, "write into a non-empty OUT, replacing what is there")
	pos, code, ok := c.parse(args)
	if !ok {
		return code
	}
	if len(pos) < 2 {
		c.Usage()
		return exitUsage
	}
	out, dirs := pos[0], pos[1:]
	for _, d := range dirs {
		if harness.SameDir(d, out) {
			fmt.Fprintf(stderr, "callproof merge: OUT %s is also a run to merge: write into a new directory\n", out)
			return exitUsage
		}
		if !isDir(d) {
			fmt.Fprintf(stderr, "callproof merge: %s is not a results directory\n", d)
			return exitUsage
		}
	}
	if used, err := harness.InUse(out); err != nil {
		fmt.Fprintf(stderr, "callproof merge: %v\n", err)
		return exitUsage
	} else if used && !*force {
		fmt.Fprintf(stderr, "callproof merge: %s is not empty: pass --force to replace it, or choose a new directory\n", out)
		return exitUsage
	}
	res, err := harness.Merge(out, dirs)
	if err != nil {
		fmt.Fprintf(stderr, "callproof merge: %v\n", err)
		return exitUsage
	}
	warn(stderr, "merge", res.Warnings)
	fmt.Fprintf(stdout, "merged %d runs into %s: %d calls, %d earlier attempts kept in %s\n", len(dirs), out, res.Calls, res.Replaced, harness.AttemptsFile)
	return exitOK
}
