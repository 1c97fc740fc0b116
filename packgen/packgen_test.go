package packgen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/callproof/callproof/scenarios"
)

func seeded(n uint64) *rand.Rand { return rand.New(rand.NewPCG(n, n)) }

func restaurant(t *testing.T) []scenarios.Tool {
	t.Helper()
	tools, err := scenarios.LoadCatalogFile("../toolimport/testdata/restaurant-catalogue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// randomCatalog makes a catalogue from a seed: a few tables, each with a
// read and writes of every effect, arguments of every type with and
// without patterns and enums.
func randomCatalog(r *rand.Rand) []scenarios.Tool {
	nouns := []string{"appointment", "parcel", "invoice", "claim", "ticket", "lease", "order", "visit"}
	patterns := []string{`^[A-Z]{2}\d{4}$`, `^\d{6}$`, `^[A-Z]\d[A-Z]\d$`, `^(ABC|XYZ)-\d{3}$`, `^\d{3,5}$`}
	var tools []scenarios.Tool
	r.Shuffle(len(nouns), func(i, j int) { nouns[i], nouns[j] = nouns[j], nouns[i] })
	for _, noun := range nouns[:1+r.IntN(3)] {
		table := noun + "s"
		keyArg := scenarios.Arg{Name: noun + "_id", Type: "string", Required: true}
		if r.IntN(3) > 0 {
			keyArg.Pattern = patterns[r.IntN(len(patterns))]
		}
		tools = append(tools, scenarios.Tool{Name: "get_" + noun, Effect: "read", Table: table, KeyArg: keyArg.Name, Args: []scenarios.Arg{keyArg}})
		values := func() []scenarios.Arg {
			var out []scenarios.Arg
			kinds := []scenarios.Arg{
				{Name: "date", Type: "date"}, {Name: "time", Type: "time"}, {Name: "count", Type: "integer"},
				{Name: "amount", Type: "number"}, {Name: "tier", Type: "string", Enum: []string{"basic", "plus", "gold-star"}},
				{Name: "contact_name", Type: "string"}, {Name: "urgent", Type: "string", Enum: []string{"false", "true"}},
				{Name: "slot_code", Type: "string", Pattern: patterns[r.IntN(len(patterns))]},
			}
			r.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
			for _, a := range kinds[:1+r.IntN(4)] {
				a.Required = r.IntN(2) == 0
				out = append(out, a)
			}
			return out
		}
		tools = append(tools, scenarios.Tool{Name: "update_" + noun, Effect: "update", Table: table, KeyArg: keyArg.Name,
			Consequential: true, Args: append([]scenarios.Arg{keyArg}, values()...)})
		switch r.IntN(3) {
		case 0:
			tools = append(tools, scenarios.Tool{Name: "cancel_" + noun, Effect: "cancel", Table: table, KeyArg: keyArg.Name,
				Consequential: true, StatusField: "status", StatusValue: "cancelled", Args: []scenarios.Arg{keyArg}})
		case 1:
			tools = append(tools, scenarios.Tool{Name: "void_" + noun, Effect: "update", Table: table, KeyArg: keyArg.Name,
				Consequential: true, Args: []scenarios.Arg{keyArg, {Name: "status", Type: "string", Required: true, Enum: []string{"void"}}}})
		default:
			tools = append(tools, scenarios.Tool{Name: "delete_" + noun, Effect: "delete", Table: table, KeyArg: keyArg.Name,
				Consequential: true, Args: []scenarios.Arg{keyArg}})
		}
		if r.IntN(2) == 0 {
			tools = append(tools, scenarios.Tool{Name: "create" + strings.ToUpper(noun[:1]) + noun[1:], Effect: "create", Table: table,
				Consequential: true, Args: values()})
		}
	}
	return tools
}

// checkPack asserts what every pack must hold: files that load and
// compile, unique ids, at least 8 scenarios per consequential tool (and
// 24 in all for a full pack), every category, and a README naming each file.
func checkPack(t *testing.T, catalog []scenarios.Tool, files []File, cats []scenarios.Category, full bool) {
	t.Helper()
	per := map[string]int{}
	seen := map[scenarios.Category]bool{}
	var pack []*scenarios.Scenario
	seenID := map[string]bool{}
	var readme []byte
	for _, f := range files {
		if f.Name == "README.md" {
			readme = f.Data
			continue
		}
		// Generate loaded it back from f.Data, which validated it (the
		// compiler's own checks).
		s := f.parsed
		if s == nil || s.Description == "" || seenID[s.ID] {
			t.Fatalf("%s: not loaded back, no description or a duplicate id", f.Name)
		}
		seenID[s.ID] = true
		unambiguous(t, catalog, s)
		pack = append(pack, s)
		per[f.tool]++
		seen[s.Category] = true
	}
	total := 0
	for _, tool := range catalog {
		if tool.Consequential {
			if per[tool.Name] < 8 {
				t.Errorf("%s: %d scenarios, want at least 8", tool.Name, per[tool.Name])
			}
			total += per[tool.Name]
		}
	}
	if full && total < 24 {
		t.Errorf("%d scenarios, want at least 24", total)
	}
	for _, c := range cats {
		if !seen[c] {
			t.Errorf("no %s scenario", c)
		}
	}
	for _, f := range files[:len(files)-1] {
		if !bytes.Contains(readme, []byte("`"+f.Name+"`")) {
			t.Errorf("README does not list %s", f.Name)
		}
	}
}

func TestRestaurantPack(t *testing.T) {
	files, err := Generate(restaurant(t), Options{Rand: seeded(1), Source: "restaurant-catalogue.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	checkPack(t, restaurant(t), files, Categories(), true)
	// The pack as validate checks a directory.
	var pack []*scenarios.Scenario
	for _, f := range files[:len(files)-1] {
		pack = append(pack, f.parsed)
	}
	if errs := scenarios.ValidatePack(pack); len(errs) > 0 {
		t.Fatal(errs)
	}
	written, err := Generate(restaurant(t), Options{Rand: seeded(1), Forms: Written, PerTool: SizeSmall})
	if err != nil {
		t.Fatal(err)
	}
	checkPack(t, restaurant(t), written, Categories(), false)
}

// Random catalogues, several seeds: valid packs, and the same seed writes
// the same bytes.
// unambiguous asserts that a scenario's verdict can only depend on what
// the agent does: no record the caller names already holds a value the
// caller asks for in any step (else a write of it reads as an undo), and
// no value the generator chose spells a denial or a claim ("no onions",
// "NOT-12"), which would make a faithful confirmation read otherwise.
func unambiguous(t *testing.T, catalog []scenarios.Tool, s *scenarios.Scenario) {
	t.Helper()
	enum := map[string]bool{}
	for _, tool := range catalog {
		for _, a := range tool.Args {
			if len(a.Enum) > 0 {
				enum[a.Name] = true
			}
		}
	}
	for _, st := range s.Steps {
		for n, v := range st.Slots {
			if !enum[n] && polarValue(v) {
				t.Errorf("%s: step %s: value %s=%q reads as a claim", s.ID, st.ID, n, v)
			}
			for _, r := range s.Records {
				if r.Fields[n] == v && slices.ContainsFunc(s.Steps, func(x scenarios.StepSpec) bool { return slices.Contains(mapValues(x.Slots), r.Key) }) {
					t.Errorf("%s: record %s already holds %s=%q, which step %s asks for", s.ID, r.Key, n, v, st.ID)
				}
			}
		}
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func TestRandomCatalogues(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		catalog := randomCatalog(seeded(seed))
		// One full pack (the counts); the others small (validity and
		// determinism are the same code).
		per := SizeSmall
		if seed == 1 {
			per = 0
		}
		t.Run(fmt.Sprintf("seed%d-size%d", seed, per), func(t *testing.T) {
			a, err := Generate(catalog, Options{Rand: seeded(seed * 7), PerTool: per})
			if err != nil {
				t.Fatal(err)
			}
			checkPack(t, catalog, a, Categories(), per == 0)
			b, err := Generate(catalog, Options{Rand: seeded(seed * 7), PerTool: per})
			if err != nil {
				t.Fatal(err)
			}
			if len(a) != len(b) {
				t.Fatalf("%d files, then %d", len(a), len(b))
			}
			for i := range a {
				if a[i].Name != b[i].Name || !bytes.Equal(a[i].Data, b[i].Data) {
					t.Fatalf("%s differs between two runs with one seed", a[i].Name)
				}
			}
		})
	}
}

func TestSeedChangesValues(t *testing.T) {
	a, _ := Generate(restaurant(t), Options{Rand: seeded(1), PerTool: 1})
	b, _ := Generate(restaurant(t), Options{Rand: seeded(2), PerTool: 1})
	if bytes.Equal(a[0].Data, b[0].Data) {
		t.Error("two seeds wrote the same first scenario")
	}
}

func TestChoices(t *testing.T) {
	files, err := Generate(restaurant(t), Options{Rand: seeded(3), Tools: []string{"cancel_reservation"},
		Categories: []scenarios.Category{scenarios.CatToolFailure}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files[:len(files)-1] {
		if f.tool != "cancel_reservation" || f.cat != scenarios.CatToolFailure {
			t.Errorf("%s: tool %s category %s", f.Name, f.tool, f.cat)
		}
	}
	if len(files) != 10 {
		t.Errorf("%d files, want 9 failures and the README", len(files))
	}
	for _, bad := range []Options{
		{Rand: seeded(1), Tools: []string{"find_reservation"}},
		{Rand: seeded(1), Tools: []string{"nope"}},
		{Rand: seeded(1), Categories: []scenarios.Category{scenarios.CatDTMF}},
		{Rand: seeded(1), Forms: "sung"},
		{},
	} {
		if _, err := Generate(restaurant(t), bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// An argument no value can be synthesized for is refused, naming the tool
// and the argument.
func TestRefusesUnsayable(t *testing.T) {
	catalog := []scenarios.Tool{{Name: "set_flag", Effect: "update", Table: "flags", KeyArg: "flag_id", Consequential: true,
		Args: []scenarios.Arg{{Name: "flag_id", Type: "string", Required: true, Pattern: `^\d{4}$`},
			{Name: "mode", Type: "string", Required: true, Pattern: `^on$`}}}}
	_, err := Generate(catalog, Options{Rand: seeded(1)})
	if err == nil || !strings.Contains(err.Error(), "tool set_flag: argument mode:") {
		t.Fatalf("got %v", err)
	}
}

func TestDump(t *testing.T) {
	dir := os.Getenv("PACKGEN_DUMP")
	if dir == "" {
		t.Skip("set PACKGEN_DUMP=DIR to write the restaurant pack there")
	}
	files, err := Generate(restaurant(t), Options{Rand: seeded(1), Source: "restaurant"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(dir+"/"+f.Name, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// With Confirm every script answers once: right after the request, or
// after an early or read-back correction.
func TestConfirm(t *testing.T) {
	files, err := Generate(restaurant(t), Options{Rand: seeded(5), Confirm: true, Tools: []string{"change_reservation"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files[:len(files)-1] {
		var ids []string
		for _, st := range f.parsed.Steps {
			ids = append(ids, st.ID)
		}
		order := strings.Join(ids, ",")
		after := "ask,yes"
		if strings.Contains(f.Name, "corr-") && (strings.HasSuffix(f.Name, "-early.yaml") || strings.HasSuffix(f.Name, "-readback.yaml")) {
			after = "ask,correct,yes"
		}
		if strings.Count(order, "yes") != 1 || !strings.Contains(order, after) {
			t.Errorf("%s: steps %s, want %s in them", f.Name, order, after)
		}
	}
}

// A landed write is undoable only where a tool can put it back: an update
// through itself unless it sets a field to its only allowed value; a
// create through a cancel or delete that can name the created record.
func TestUndoable(t *testing.T) {
	key := scenarios.Arg{Name: "booking_ref", Type: "string", Required: true}
	move := scenarios.Tool{Name: "reschedule_booking", Effect: "update", Table: "bookings", KeyArg: key.Name,
		Args: []scenarios.Arg{key, {Name: "date", Type: "date", Required: true}}}
	cancelUpdate := scenarios.Tool{Name: "cancel_booking", Effect: "update", Table: "bookings", KeyArg: key.Name,
		Args: []scenarios.Arg{key, {Name: "status", Type: "string", Required: true, Enum: []string{"cancelled"}}}}
	book := scenarios.Tool{Name: "book_table", Effect: "create", Table: "bookings", Args: []scenarios.Arg{{Name: "date", Type: "date", Required: true}}}
	del := scenarios.Tool{Name: "delete_booking", Effect: "delete", Table: "bookings", KeyArg: key.Name, Args: []scenarios.Arg{key}}
	catalog := []scenarios.Tool{move, cancelUpdate, book}
	for _, c := range []struct {
		catalog []scenarios.Tool
		tool    scenarios.Tool
		want    bool
	}{
		{catalog, move, true},
		{catalog, cancelUpdate, false},
		{catalog, book, false},
		{append(catalog, del), book, true},
		{append(catalog, del), del, false},
	} {
		if got := Undoable(c.catalog, c.tool); got != c.want {
			t.Errorf("Undoable(%s) = %t, want %t", c.tool.Name, got, c.want)
		}
	}
}
