package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/callproof/callproof/packgen"
	"github.com/callproof/callproof/scenarios"
)

// packOptions are init's flags for writing a pack (--catalogue).
type packOptions struct {
	catalogue, categories, size, forms *string
	seed                               *int64
	confirm                            *bool
}

func packFlags(c *cli) packOptions {
	return packOptions{
		catalogue:  c.String("catalogue", "", "write a pack of scenarios for this reviewed catalogue's consequential tools"),
		seed:       c.Int64("seed", 1, "with --catalogue: the seed the pack's values and phrasings are drawn from"),
		categories: c.String("categories", "corrections,interruptions,failures", "with --catalogue: the categories to write, comma-separated"),
		size:       c.String("size", "full", "with --catalogue: scenarios per tool: full (every one), small (8, each category in turn) or a number"),
		forms:      c.String("forms", string(packgen.Spoken), "with --catalogue: how the caller says values: spoken (words, spelled codes) or written (digits, as a transcript)"),
		confirm:    c.Bool("confirm", false, "with --catalogue: the caller answers \"Yes, please go ahead.\" after the agent's first reply, for an agent that reads back and asks before it acts"),
	}
}

// parseCategories reads --categories.
func parseCategories(s string) ([]scenarios.Category, error) {
	var out []scenarios.Category
	for _, w := range strings.Split(s, ",") {
		var c scenarios.Category
		switch strings.TrimSpace(w) {
		case "corrections", "correction":
			c = scenarios.CatCorrection
		case "interruptions", "interruption":
			c = scenarios.CatInterruption
		case "failures", "tool_failure", "tool_failures":
			c = scenarios.CatToolFailure
		default:
			return nil, fmt.Errorf("--categories: unknown category %q (want corrections, interruptions or failures)", w)
		}
		out = append(out, c)
	}
	return out, nil
}

// parseSize reads --size: scenarios per tool, 0 for all.
func parseSize(s string) (int, error) {
	switch s {
	case "full":
		return 0, nil
	case "small":
		return packgen.SizeSmall, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("--size: %q: want full, small or a number of scenarios per tool (1 or more)", s)
	}
	return n, nil
}

func initPack(p packOptions, tools, out string, stdout, stderr io.Writer) int {
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "callproof init: %v\n", err)
		return code
	}
	cats, err := parseCategories(*p.categories)
	if err != nil {
		return fail(exitUsage, err)
	}
	per, err := parseSize(*p.size)
	if err != nil {
		return fail(exitUsage, err)
	}
	var names []string
	for _, n := range strings.Split(tools, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	catalog, err := scenarios.LoadCatalogFile(*p.catalogue)
	if err != nil {
		return fail(exitUsage, err)
	}
	seed := uint64(*p.seed)
	files, err := packgen.Generate(catalog, packgen.Options{
		Rand: rand.New(rand.NewPCG(seed, seed)), Tools: names, Categories: cats, PerTool: per,
		Forms: packgen.Forms(*p.forms), Source: filepath.Base(*p.catalogue), Confirm: *p.confirm,
	})
	if err != nil {
		return fail(exitUsage, fmt.Errorf("%s: %w", *p.catalogue, err))
	}
	if out == "" {
		out = "pack"
	}
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return fail(exitUsage, fmt.Errorf("%s: not empty: a pack is written into a new or empty directory", out))
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail(exitUsage, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fail(exitBroken, err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(out, f.Name), f.Data, 0o644); err != nil {
			return fail(exitBroken, err)
		}
	}
	fmt.Fprintf(stdout, "wrote %s: %d scenario(s) from %s (seed %d); %s lists what each tests\n",
		out, len(files)-1, *p.catalogue, *p.seed, filepath.Join(out, "README.md"))
	return exitOK
}
