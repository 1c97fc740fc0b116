package main

import (
	"fmt"
	"io"
	"os"

	"github.com/callproof/callproof/scenarios"
)

func cmdSchema(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "usage: callproof schema\n\nPrints the JSON Schema for scenario files.\n")
		return exitUsage
	}
	b, err := scenarios.Schema()
	if err != nil {
		fmt.Fprintf(stderr, "callproof schema: %v\n", err)
		return exitUsage
	}
	stdout.Write(b)
	return exitOK
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
