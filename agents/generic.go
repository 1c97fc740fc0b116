package agents

import (
	"github.com/callproof/callproof/trace"
)

// domain is what the engine knows of a call's tools and words: how it
// hears the caller, which argument names a tool's record, and how it
// words what it does. The engine (turn-taking, invalidation, tool work)
// is the same for every domain; the built-in order desk is one domain
// (orderDomain), any other catalogue is read generically (genericDomain).
type domain interface {
	// understand reads one caller final; action is the action in force.
	understand(text, action string) heard
	// dtmf is what keypad digits mean, as words to understand.
	dtmf(digits string) string
	// keyArg is the slot naming the record tool acts on ("" for none).
	keyArg(tool string) string
	// argsFor builds tool's arguments from the slots.
	argsFor(tool string, slots map[string]string) map[string]string
	// ask is the question to put when args are not enough for tool ("":
	// they are).
	ask(tool string, args map[string]string) string
	// readTool reads the records tool writes; updateTool puts fields of
	// those records back (zero specs when there is none).
	readTool(tool string) trace.ToolSpec
	updateTool(tool string) trace.ToolSpec
	// lookups are the reads a careful agent makes before calling tool
	// with args: the records its arguments name in other tables.
	lookups(tool string, args map[string]string) []lookup
	// undoTool cancels or deletes a record of table that this call
	// created, to take back a create the caller withdrew (zero: none).
	undoTool(table string) trace.ToolSpec

	readBack(tool string, args map[string]string) string
	done(tool string, values map[string]string) string
	failed(tool, key string) string
	unconfirmed(tool, key string) string
	nothingChanged(tool, key string) string
	undoFailed(tool, key string) string
	// wrongValues is ConfirmsWrongValue: values with one of them off.
	wrongValues(tool string, values map[string]string) map[string]string
}

// lookup is one read of a record by its key.
type lookup struct {
	tool trace.ToolSpec
	key  string
}

// orderDomain is the built-in order desk (parse.go, phrases.go).
type orderDomain struct{ catalog []trace.ToolSpec }

func (orderDomain) understand(text, _ string) heard { return parse(text) }

// Keypad entry: the digits (without the # or * that end them) are an
// order number, as if the caller had said "order 5590".
func (orderDomain) dtmf(digits string) string { return "order " + digits }

func (orderDomain) keyArg(string) string { return slotOrder }

func (d orderDomain) argsFor(tool string, slots map[string]string) map[string]string {
	names := []string{slotOrder}
	if tool == toolUpdate {
		names = append(names, slotDate, slotQuantity)
	}
	spec, known := trace.Catalog(d.catalog, tool)
	args := map[string]string{}
	for _, n := range names {
		v := slots[n]
		if v == "" {
			continue
		}
		if known && !declares(spec, n) {
			continue
		}
		args[n] = v
	}
	return args
}

func (orderDomain) ask(tool string, args map[string]string) string {
	order := args[slotOrder]
	switch {
	case order == "":
		return askOrder
	case tool == toolUpdate && len(args) < 2:
		return askChange(order)
	}
	return ""
}

func (d orderDomain) readTool(string) trace.ToolSpec {
	upd := d.updateTool("")
	for _, t := range d.catalog {
		if t.Effect == trace.EffectRead && (upd.Table == "" || t.Table == upd.Table) {
			return t
		}
	}
	return trace.ToolSpec{}
}

func (d orderDomain) updateTool(string) trace.ToolSpec {
	t, _ := trace.Catalog(d.catalog, toolUpdate)
	return t
}

func (orderDomain) lookups(string, map[string]string) []lookup { return nil }
func (orderDomain) undoTool(string) trace.ToolSpec             { return trace.ToolSpec{} }

func (orderDomain) readBack(tool string, v map[string]string) string { return sayReadBack(tool, v) }
func (orderDomain) done(tool string, v map[string]string) string     { return sayDone(tool, v) }
func (orderDomain) failed(tool, key string) string                   { return sayFailed(tool, key) }
func (orderDomain) unconfirmed(_, key string) string                 { return sayUnconfirmed(key) }
func (orderDomain) nothingChanged(_, key string) string              { return sayNothingChanged(key) }
func (orderDomain) undoFailed(_, key string) string                  { return sayUndoFailed(key) }
func (orderDomain) wrongValues(tool string, v map[string]string) map[string]string {
	return wrongValues(tool, v)
}

// isOrderCatalog reports a catalogue the order desk knows: it has the
// order update or the shipment tool.
func isOrderCatalog(cat []trace.ToolSpec) bool {
	for _, t := range cat {
		if t.Name == toolUpdate || t.Name == toolShip {
			return true
		}
	}
	return false
}
