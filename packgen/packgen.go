package packgen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/callproof/callproof/scenarios"
)

// Categories a pack can hold, in the order the README lists them.
func Categories() []scenarios.Category {
	return []scenarios.Category{scenarios.CatCorrection, scenarios.CatInterruption, scenarios.CatToolFailure}
}

// SizeSmall is the number of scenarios per tool of a small pack: enough
// for each category to be met more than once.
const SizeSmall = 8

// Options choose what a pack holds. Rand is required: a pack is a
// function of the catalogue and Rand's seed.
type Options struct {
	Rand *rand.Rand
	// Tools names the consequential tools to cover; empty means all.
	Tools []string
	// Categories to generate; empty means all three.
	Categories []scenarios.Category
	// PerTool caps the scenarios per tool, taking each category's in
	// turn so all of them are met; 0 means every scenario.
	PerTool int
	// Forms says how caller lines say values; "" means Spoken.
	Forms Forms
	// CallDate is the day of every call (YYYY-MM-DD); "" means
	// scenarios.DefaultCallDate.
	CallDate string
	// Source names the catalogue in the README and the files' headers.
	Source string
	// Confirm has the caller answer an agent that reads the request back
	// and asks before it acts: "Yes, please go ahead." after the agent's
	// first reply (after its reply to an early or read-back correction).
	// Only for such agents: one that acts at once hears the yes late.
	Confirm bool
}

// File is one file of a pack: a scenario or the README.
type File struct {
	Name string
	Data []byte
	// What the scenario tests, for the README ("" for the README).
	Tests  string
	tool   string
	cat    scenarios.Category
	parsed *scenarios.Scenario // as Generate loaded it back
}

// Generate writes a pack for the consequential tools of catalog. Every
// scenario file it returns loads, validates and compiles; the last file is
// README.md.
func Generate(catalog []scenarios.Tool, o Options) ([]File, error) {
	if o.Rand == nil {
		return nil, errors.New("packgen: Options.Rand is required")
	}
	if o.Forms == "" {
		o.Forms = Spoken
	}
	if o.Forms != Spoken && o.Forms != Written {
		return nil, fmt.Errorf("packgen: unknown forms %q (want %s or %s)", o.Forms, Spoken, Written)
	}
	if o.CallDate == "" {
		o.CallDate = scenarios.DefaultCallDate
	}
	day, err := time.Parse(time.DateOnly, o.CallDate)
	if err != nil {
		return nil, fmt.Errorf("packgen: call date %q: want YYYY-MM-DD", o.CallDate)
	}
	cats := o.Categories
	if len(cats) == 0 {
		cats = Categories()
	}
	for _, c := range cats {
		if !slices.Contains(Categories(), c) {
			return nil, fmt.Errorf("packgen: category %q: want one of correction, interruption, tool_failure", c)
		}
	}
	targets, err := pickTargets(catalog, o.Tools, day)
	if err != nil {
		return nil, err
	}
	g := &gen{o: o, day: day, catalog: catalog, say: sayer{forms: o.Forms, r: o.Rand}}
	var files []File
	ids := map[string]bool{}
	for _, t := range targets {
		kinds := t.kinds(cats)
		if o.PerTool > 0 {
			kinds = roundRobin(kinds, o.PerTool)
		}
		for _, k := range kinds {
			f, err := g.scenario(t, k)
			if err != nil {
				return nil, err
			}
			if ids[f.Name] {
				// Two tool names that differ only in what an id cannot hold.
				return nil, fmt.Errorf("tool %s: its scenario ids clash with another tool's (%s)", t.tool.Name, f.Name)
			}
			ids[f.Name] = true
			f.tool, f.cat = t.tool.Name, k.cat
			files = append(files, f)
		}
	}
	files = append(files, File{Name: "README.md", Data: readme(o, targets, files)})
	return files, nil
}

// target is one consequential tool and what its scenarios say.
type target struct {
	tool   scenarios.Tool
	noun   string    // the record, "reservation"
	key    *valuer   // nil for a create
	values []*valuer // arguments the caller says, the focus first
	fixed  map[string]string
	reads  []scenarios.Tool // tools that read the same record by its key alone
	// undoable: the catalogue can take back the tool's landed write.
	undoable bool
}

// Undoable reports whether catalog lets an agent take back what tool did
// once it has landed: an update is put back by an update of the same
// fields, through the tool itself, so not one that sets a field to its
// only allowed value (cancel_booking's status: cancelled cannot be set
// back to what it was); a create is cancelled or deleted by a tool on its table whose
// key argument takes the key the backend gives a created record
// ("{table}-{n}", docs/PROTOCOL.md: a tool whose key pattern refuses it
// cannot name the record); a cancel or a delete cannot be taken back
// (recreating a record is no tool's effect).
func Undoable(catalog []scenarios.Tool, tool scenarios.Tool) bool {
	switch tool.Effect {
	case "update":
		for _, a := range tool.Args {
			if a.Name != tool.KeyArg && len(a.Enum) == 1 {
				return false
			}
		}
		return true
	case "create":
		made := tool.Table + "-2"
		for _, t := range catalog {
			if t.Table == tool.Table && (t.Effect == "cancel" || t.Effect == "delete") && takesKey(t, made) {
				return true
			}
		}
	}
	return false
}

// takesKey reports whether t's key argument accepts key.
func takesKey(t scenarios.Tool, key string) bool {
	for _, a := range t.Args {
		if a.Name == t.KeyArg && a.Pattern != "" {
			re, err := regexp.Compile(a.Pattern)
			return err == nil && re.MatchString(key)
		}
	}
	return true
}

// pickTargets finds the tools to cover and checks every value of theirs
// can be synthesized.
func pickTargets(catalog []scenarios.Tool, names []string, day time.Time) ([]*target, error) {
	for _, n := range names {
		i := slices.IndexFunc(catalog, func(t scenarios.Tool) bool { return t.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("tool %s: not in the catalogue", n)
		}
		if !catalog[i].Consequential {
			return nil, fmt.Errorf("tool %s: not consequential: a pack tests the tools that change something", n)
		}
	}
	var out []*target
	for _, tool := range catalog {
		if !tool.Consequential || (len(names) > 0 && !slices.Contains(names, tool.Name)) {
			continue
		}
		t := &target{tool: tool, noun: singular(tool.Table), fixed: map[string]string{}, undoable: Undoable(catalog, tool)}
		for _, a := range tool.Args {
			v, err := newValuer(tool.Name, a, day)
			if err != nil {
				return nil, err
			}
			if f, ok := v.fixed(); ok {
				if a.Required {
					t.fixed[a.Name] = f
				}
				continue
			}
			if a.Name == tool.KeyArg && tool.Effect != "create" {
				t.key = v
				continue
			}
			t.values = append(t.values, v)
		}
		if tool.Effect != "create" && t.key == nil {
			return nil, fmt.Errorf("tool %s: key argument %q is not one of its arguments", tool.Name, tool.KeyArg)
		}
		slices.SortStableFunc(t.values, func(a, b *valuer) int { return rank(a) - rank(b) })
		// Every value must be synthesizable, now rather than mid-pack.
		probe := rand.New(rand.NewPCG(1, 2))
		for _, v := range append([]*valuer{t.key}, t.values...) {
			if v == nil {
				continue
			}
			x, err := v.fresh(probe)
			if err != nil {
				return nil, err
			}
			if _, err := v.near(probe, x); err != nil {
				return nil, v.refuse("no second value fits (a correction needs two)")
			}
		}
		for _, r := range catalog {
			if r.Effect == "read" && r.Table == tool.Table && r.KeyArg != "" && r.KeyArg == tool.KeyArg && keyOnly(r) {
				t.reads = append(t.reads, r)
			}
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, errors.New("the catalogue has no consequential tool to test")
	}
	return out, nil
}

// rank orders the arguments a caller corrects, most telling first:
// dates, times, counts, amounts, choices, codes, names.
func rank(v *valuer) int {
	order := map[string]int{"date": 0, "time": 1, "integer": 2, "number": 3, "money": 3, "enum": 4, "code": 5, "text": 6}
	r := order[v.dim]
	if isBool(v.arg.Enum) {
		r = 8
	}
	if !v.arg.Required {
		r += 10 // a required argument is said in every request anyway
	}
	return r
}

func isBool(enum []string) bool {
	return len(enum) == 2 && slices.Contains(enum, "true") && slices.Contains(enum, "false")
}

// kind is one scenario of a tool.
type kind struct {
	cat   scenarios.Category
	name  string // id suffix
	stage string // correction and interruption stage
	field string // "key", "value", "value2", "action"
	fault string
	sound string
	// invalidates and execute, for interruptions
	stop, goOn bool
}

// Stages of a correction: before anything is built, while the call is
// prepared, while it is in flight, and at the agent's read-back.
var corrStages = []string{"early", "prep", "flight", "readback"}

func (t *target) kinds(cats []scenarios.Category) []kind {
	var out []kind
	for _, c := range cats {
		switch c {
		case scenarios.CatCorrection:
			var fields []string
			if t.key != nil {
				fields = append(fields, "key")
			}
			if len(t.values) > 0 {
				fields = append(fields, "value")
			}
			if t.key == nil && len(t.values) > 1 {
				fields = append(fields, "value2")
			}
			for _, st := range corrStages {
				for _, f := range fields {
					out = append(out, kind{cat: c, name: "corr-" + f + "-" + st, stage: st, field: f})
				}
			}
			out = append(out, kind{cat: c, name: "corr-negate", stage: "prep", field: "action"})
		case scenarios.CatInterruption:
			out = append(out,
				kind{cat: c, name: "int-stop-in-flight", stage: "flight", stop: true},
				kind{cat: c, name: "int-noise-cough", stage: "noise", sound: "cough"})
			if t.undoable {
				// A value replaced once the write has landed: only a
				// catalogue that can put the write back makes it passable.
				out = append(out, kind{cat: c, name: "int-replace-readback", stage: "readback"})
			}
			out = append(out,
				kind{cat: c, name: "int-withdraw-prep", stage: "prep", stop: true},
				kind{cat: c, name: "int-noise-tv", stage: "noise", sound: "tv"},
				kind{cat: c, name: "int-replace-in-flight", stage: "flight"},
				kind{cat: c, name: "int-go-ahead", stage: "prep", goOn: true},
				kind{cat: c, name: "int-noise-door", stage: "noise", sound: "door"})
		case scenarios.CatToolFailure:
			for _, f := range []string{"status_after_commit", "drop_response", "wrong_record", "timeout", "status",
				"empty", "late_success", "duplicate", "status_503_twice"} {
				if blindFaults[f] && len(t.reads) == 0 {
					// Only reading the record back tells these apart
					// (docs/PROTOCOL.md, "status_after_commit: read back
					// before retrying or confirming"); a create's new
					// record, or one no tool reads by its key, cannot be.
					continue
				}
				out = append(out, kind{cat: c, name: "tf-" + strings.ReplaceAll(f, "_", "-"), fault: f})
			}
		}
	}
	return out
}

// blindFaults answer a write that landed as if it had not (a 500), or with
// another record, and replay that answer to a retry under the same key:
// an agent learns that it landed only by reading the record back. A plain
// `status` 500 lands nothing, but the backend replays it to the same key
// too, and only a read showing that the write did not land lets a
// careful agent retry under a new key (an unread 500 may have landed:
// status_after_commit); without one the write cannot be completed
// safely, and the scenario expects it completed.
var blindFaults = map[string]bool{"status_after_commit": true, "wrong_record": true, "status": true}

// keyOnly reports a read that needs nothing but its key.
func keyOnly(r scenarios.Tool) bool {
	for _, a := range r.Args {
		if a.Required && a.Name != r.KeyArg {
			return false
		}
	}
	return true
}

// roundRobin keeps n kinds, taking each category's next in turn.
func roundRobin(kinds []kind, n int) []kind {
	by := map[scenarios.Category][]kind{}
	var order []scenarios.Category
	for _, k := range kinds {
		if _, ok := by[k.cat]; !ok {
			order = append(order, k.cat)
		}
		by[k.cat] = append(by[k.cat], k)
	}
	var out []kind
	for len(out) < n {
		took := false
		for _, c := range order {
			if len(by[c]) > 0 && len(out) < n {
				out = append(out, by[c][0])
				by[c] = by[c][1:]
				took = true
			}
		}
		if !took {
			break
		}
	}
	return out
}

// gen holds what every scenario of a pack shares.
type gen struct {
	o       Options
	day     time.Time
	catalog []scenarios.Tool
	say     sayer
}

// cast is the values of one scenario: the record the caller means, its
// near miss, a decoy, and for each said argument its value, the
// corrected value and the record's current one.
type cast struct {
	key, near, decoy string
	val, alt, old    map[string]string
}

func (g *gen) cast(t *target) (*cast, error) {
	r := g.o.Rand
	c := &cast{val: map[string]string{}, alt: map[string]string{}, old: map[string]string{}}
	var err error
	if t.key != nil {
		if c.key, err = t.key.fresh(r); err != nil {
			return nil, err
		}
		if c.near, err = t.key.near(r, c.key); err != nil {
			return nil, err
		}
		if c.decoy, err = t.key.fresh(r, c.key, c.near); err != nil {
			return nil, err
		}
	} else {
		c.decoy = strconv.Itoa(1000 + r.IntN(9000))
	}
	for _, v := range t.values {
		n := v.arg.Name
		if c.val[n], err = v.fresh(r); err != nil {
			return nil, err
		}
		if c.alt[n], err = v.near(r, c.val[n]); err != nil {
			return nil, err
		}
		// The record holds a third value, so neither the request nor the
		// correction is already true of it. Where none exists (a
		// boolean) it holds none: had it held the correction, a write
		// of the correction after the request's had landed would read
		// as an undo of that write, not as the caller's new wish.
		if c.old[n], err = v.fresh(r, c.val[n], c.alt[n]); err != nil {
			c.old[n] = ""
		}
	}
	return c, nil
}

// ids are lower-case letters, digits, '-' and '_'.
var reNotID = regexp.MustCompile(`[^a-z0-9_-]+`)

func scenarioID(tool, suffix string) string {
	id := strings.Trim(reNotID.ReplaceAllString(strings.ToLower(tool), "-"), "-_")
	if id == "" {
		id = "tool"
	}
	return id + "-" + suffix
}
