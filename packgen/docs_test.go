package packgen

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The figures docs/CLI.md and docs/SCENARIOS.md give for generated packs
// are the code's.
func TestDocumentedFigures(t *testing.T) {
	cli, err := os.ReadFile("../docs/CLI.md")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := os.ReadFile("../docs/SCENARIOS.md")
	if err != nil {
		t.Fatal(err)
	}
	// Scenarios per tool of a full pack: the fewest (a tool with a key
	// and no value, or a create with one value) and the most.
	catalog := restaurant(t)
	files, err := Generate(catalog, Options{Rand: seeded(1)})
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, f := range files[:len(files)-1] {
		per[f.tool]++
	}
	lo, hi := 1000, 0
	for _, n := range per {
		lo, hi = min(lo, n), max(hi, n)
	}
	for _, want := range []struct {
		doc  []byte
		text string
	}{
		{cli, fmt.Sprintf("`small` (%d per tool, `packgen.SizeSmall`", SizeSmall)},
		{cli, fmt.Sprintf("every scenario, %d to %d per tool", lo, hi)},
		{sc, fmt.Sprintf("`small` keeps %d", SizeSmall)},
		{sc, fmt.Sprintf("(bounded at %s", quietBound)},
		{sc, fmt.Sprintf("fallback %dms", prepFallback.Milliseconds())},
		{sc, fmt.Sprintf("released on the agent's cancel or %s later", releaseWait)},
		{sc, "(202, lands 800ms later)"},
	} {
		if !strings.Contains(string(want.doc), want.text) {
			t.Errorf("docs do not say %q", want.text)
		}
	}
}
