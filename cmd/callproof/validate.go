package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/callproof/callproof/scenarios"
)

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	c := newCLI("validate", "usage: callproof validate [FILE|DIR ...]\n\nChecks scenario files (YAML or JSON) and lists every problem as file:line: field: message.\nA file holding only tools is a catalogue (as callproof init writes it) and is checked as one.\nWith no arguments it checks the built-in packs.\n", stdout, stderr)
	pos, code, ok := c.parse(args)
	if !ok {
		return code
	}
	var problems []error
	count, catalogs := 0, 0
	check := func(list []*scenarios.Scenario, err error) {
		if err != nil {
			problems = append(problems, flatten(err)...)
		}
		for _, s := range list {
			if s == nil {
				continue
			}
			count++
			if _, err := scenarios.Compile(s); err != nil {
				problems = append(problems, flatten(err)...)
			}
		}
	}
	if len(pos) == 0 {
		for _, name := range scenarios.PackNames() {
			list, err := scenarios.Pack(name)
			check(list, err)
			problems = append(problems, scenarios.ValidatePack(list)...)
		}
	} else {
		for _, p := range pos {
			if isDir(p) {
				check(scenarios.LoadDir(p))
				continue
			}
			if data, err := os.ReadFile(p); err == nil && scenarios.IsCatalogFile(p, data) {
				catalogs++
				if _, err := scenarios.LoadCatalogBytes(p, data); err != nil {
					problems = append(problems, flatten(err)...)
				}
				continue
			}
			s, err := scenarios.LoadFile(p)
			check([]*scenarios.Scenario{s}, err)
		}
	}
	problems = dedupe(problems)
	for _, p := range problems {
		fmt.Fprintln(stderr, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(stderr, "%d problem(s)\n", len(problems))
		return exitUsage
	}
	if catalogs > 0 {
		fmt.Fprintf(stdout, "%d catalogue(s) valid\n", catalogs)
		if count == 0 {
			return exitOK
		}
	}
	fmt.Fprintf(stdout, "%d scenario(s) valid\n", count)
	return exitOK
}

// flatten unpacks joined errors so each problem prints on its own line.
func flatten(err error) []error {
	var multi interface{ Unwrap() []error }
	if errors.As(err, &multi) {
		var out []error
		for _, e := range multi.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

func dedupe(errs []error) []error {
	seen := map[string]bool{}
	var out []error
	for _, e := range errs {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			out = append(out, e)
		}
	}
	return out
}
