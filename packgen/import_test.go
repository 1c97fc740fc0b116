package packgen

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/callproof/callproof/internal/randtools"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/toolimport"
)

// TestInitThenPack runs init's two halves on random tool definitions:
// import, infer and write a catalogue, load it as validate does, then
// generate a pack from it: full packs for three seeds, small ones for
// more (the small cases are where a value's shape trips a check).
func TestInitThenPack(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			data := randtools.OpenAI(seeded(seed))
			parsed, format, err := toolimport.Parse(data)
			if err != nil {
				t.Fatalf("%v\n%s", err, data)
			}
			entries, _ := toolimport.Infer(parsed)
			var b bytes.Buffer
			if err := toolimport.Write(&b, "tools.json", format, entries, nil); err != nil {
				t.Fatal(err)
			}
			catalog, err := scenarios.LoadCatalogBytes("catalogue.yaml", b.Bytes())
			if err != nil {
				t.Fatalf("%v\n%s", err, b.Bytes())
			}
			per := 0
			if seed > 3 {
				per = SizeSmall
			}
			files, err := Generate(catalog, Options{Rand: seeded(seed), PerTool: per})
			if err != nil {
				t.Fatalf("%v\n%s", err, b.Bytes())
			}
			checkPack(t, catalog, files, Categories(), per == 0)
		})
	}
}

// FuzzPattern: whatever an argument's pattern, Generate writes a valid
// pack or refuses naming the tool and the argument; it never panics.
func FuzzPattern(f *testing.F) {
	for _, p := range []string{`^\d{4}$`, `^[A-Z]{2}\d{4}$`, `^on$`, `^(a|b)+$`, `.*`, `^[^0-9]{2,}$`, `\bx\b`, `^$`, `[`, `^\p{Greek}{3}$`} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		catalog := []scenarios.Tool{{Name: "set_slot", Effect: "update", Table: "slots", KeyArg: "slot_id", Consequential: true,
			Args: []scenarios.Arg{{Name: "slot_id", Type: "string", Required: true, Pattern: `^\d{4}$`},
				{Name: "label", Type: "string", Required: true, Pattern: pattern}}}}
		files, err := Generate(catalog, Options{Rand: seeded(1), Categories: []scenarios.Category{scenarios.CatCorrection}})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "tool set_slot: argument label: ") {
				t.Fatalf("pattern %q: %v", pattern, err)
			}
			return
		}
		for _, f := range files[:len(files)-1] {
			if f.parsed == nil {
				t.Fatalf("%s not loaded back", f.Name)
			}
		}
	})
}
