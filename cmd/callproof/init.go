package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/toolimport"
)

func cmdInit(args []string, stdout, stderr io.Writer) int {
	c := newCLI("init", `usage: callproof init --tools FILE|URL [--token T] [--out catalogue.yaml]
       callproof init --catalogue FILE [--out DIR] [--seed N] [--tools NAMES]
                      [--categories LIST] [--size small|full|N] [--forms spoken|written] [--confirm]

Reads an agent's tool definitions (OpenAI function-calling tools, an MCP
tools/list result, or an OpenAPI 3 document in JSON or YAML; the format is
detected), or lists the tools of a live MCP server at an http(s) URL
(streamable HTTP; --token is sent as a bearer token), and writes a
callproof catalogue. Each tool's effect, table, key
argument and consequential flag are guessed and marked "# review:" in the
file; check them, then run callproof validate on it. Without --out the
catalogue goes to stdout.

With --catalogue, reads a reviewed catalogue and writes a pack of
scenarios for its consequential tools into --out (default "pack", which
must not exist or be empty): corrections, interruptions and tool
failures in seed 001's shape, and a README listing what each tests.
--tools then names the tools to cover (comma-separated; default all).
The same catalogue and --seed always write the same pack.
`, stdout, stderr)
	tools := c.String("tools", "", "the tool definitions file, or a live MCP server's URL (required); with --catalogue, the tools to cover, comma-separated")
	token := c.String("token", "", "bearer token for a live MCP server")
	out := c.String("out", "", "write the catalogue here instead of stdout (refuses to overwrite a file); with --catalogue, the pack's directory (default \"pack\")")
	p := packFlags(c)
	if _, code, ok := c.positional(args, 0); !ok {
		return code
	}
	if *p.catalogue != "" {
		if *token != "" {
			fmt.Fprintln(stderr, "callproof init: --token is for --tools URL, not --catalogue")
			return exitUsage
		}
		return initPack(p, *tools, *out, stdout, stderr)
	}
	if c.set("seed") || c.set("categories") || c.set("size") || c.set("forms") || c.set("confirm") {
		fmt.Fprintln(stderr, "callproof init: --seed, --categories, --size, --forms and --confirm need --catalogue")
		return exitUsage
	}
	if *tools == "" {
		fmt.Fprintln(stderr, "callproof init: --tools is required")
		return exitUsage
	}
	var data []byte
	var err error
	if isURL(*tools) {
		if data, err = fetchMCPTools(context.Background(), *tools, *token); err != nil {
			err = fmt.Errorf("%s: %w", *tools, err)
		}
	} else {
		data, err = readCapped(*tools, toolimport.MaxInput)
	}
	if err != nil {
		fmt.Fprintf(stderr, "callproof init: %v\n", err)
		return exitUsage
	}
	parsed, format, err := toolimport.Parse(data)
	if err != nil {
		fmt.Fprintf(stderr, "callproof init: %s: %v\n", *tools, err)
		return exitUsage
	}
	entries, skipped := toolimport.Infer(parsed)
	for _, s := range skipped {
		warn(stderr, "init", []string{fmt.Sprintf("skipped %s: %s", s.Name, s.Reason)})
	}
	if len(entries) == 0 {
		fmt.Fprintf(stderr, "callproof init: %s: no tool to write\n", *tools)
		return exitUsage
	}
	var b bytes.Buffer
	if err := toolimport.Write(&b, *tools, format, entries, skipped); err != nil {
		fmt.Fprintf(stderr, "callproof init: %v\n", err)
		return exitBroken
	}
	// Never write a file validate refuses: what the parsers accept always
	// validates (fuzzed), except a catalogue over the scenario loader's
	// size limits.
	if _, err := scenarios.LoadCatalogBytes("catalogue.yaml", b.Bytes()); err != nil {
		fmt.Fprintf(stderr, "callproof init: %s: the catalogue would not load: %v\n", *tools, err)
		return exitUsage
	}
	if *out == "" {
		if _, err := stdout.Write(b.Bytes()); err != nil {
			return exitBroken
		}
		return exitOK
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		fmt.Fprintf(stderr, "callproof init: %v\n", err)
		return exitBroken
	}
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		fmt.Fprintf(stderr, "callproof init: %v\n", err)
		return exitUsage
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		fmt.Fprintf(stderr, "callproof init: %v\n", err)
		return exitBroken
	}
	if err := f.Close(); err != nil {
		fmt.Fprintf(stderr, "callproof init: %v\n", err)
		return exitBroken
	}
	fmt.Fprintf(stdout, "wrote %s: %d tool(s) from %s (%s); review the lines marked \"# review:\"\n", *out, len(entries), *tools, format)
	return exitOK
}

// readCapped reads a file, refusing one over max bytes without reading it
// all.
func readCapped(name string, max int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: over %d bytes", name, max)
	}
	return data, nil
}
