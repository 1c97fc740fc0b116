package main

import (
	"fmt"
	"io"
)

// Version is callproof's version, the one source every other copy is made
// from: `callproof version` prints it and scripts/build_wheel.py reads this
// line to name the Python wheels (docs/CLI.md, "Version"). It is SemVer
// limited to MAJOR.MINOR.PATCH with an optional -alpha.N, -beta.N, -rc.N or
// -dev.N, the forms that map one to one onto PEP 440.
const Version = "0.1.0"

func cmdVersion(args []string, stdout, stderr io.Writer) int {
	c := newCLI("version", "usage: callproof version\n\nPrints callproof's version.\n", stdout, stderr)
	if _, code, ok := c.positional(args, 0); !ok {
		return code
	}
	fmt.Fprintln(stdout, Version)
	return exitOK
}
