package agents

import "github.com/callproof/callproof/trace"

// defaultCatalog is the built-in order domain, used when start carries no
// catalogue (a bare test caller).
func defaultCatalog() []trace.ToolSpec {
	order := trace.ArgSpec{Name: slotOrder, Type: "string", Required: true, Pattern: `^\d{4}$`}
	return []trace.ToolSpec{
		{Name: toolGet, Effect: trace.EffectRead, Table: "orders", KeyArg: slotOrder, Args: []trace.ArgSpec{order}},
		{Name: toolUpdate, Effect: trace.EffectUpdate, Table: "orders", KeyArg: slotOrder, Consequential: true, Args: []trace.ArgSpec{
			order, {Name: slotDate, Type: "date"}, {Name: slotQuantity, Type: "integer"},
		}},
		{Name: toolShip, Effect: trace.EffectCreate, Table: "shipments", Consequential: true, Args: []trace.ArgSpec{order}},
	}
}

// builtinSpec finds a tool of the built-in domain when the catalogue
// offered lacks it.
func builtinSpec(name string) trace.ToolSpec {
	t, _ := trace.Catalog(defaultCatalog(), name)
	return t
}
