package main

import (
	"fmt"
	"io"
	"os"

	"github.com/callproof/callproof/scenarios"
)

func cmdSchema(args []string, stdout, stderr io.Writer) int {
	c := newCLI("schema", "usage: callproof schema\n\nPrints the JSON Schema for scenario files.\n", stdout, stderr)
	if _, code, ok := c.positional(args, 0); !ok {
		return code
	}
	b, err := scenarios.Schema()
	if err != nil {
		fmt.Fprintf(stderr, "callproof schema: %v\n", err)
		return exitUsage
	}
	if _, err := stdout.Write(b); err != nil {
		fmt.Fprintf(stderr, "callproof schema: %v\n", err)
		return exitBroken
	}
	return exitOK
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
