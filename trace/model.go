package trace

import (
	"fmt"
	"sort"
)

// Effect says what a tool does to the backend's records.
type Effect string

// Tool effects.
const (
	EffectRead   Effect = "read"   // return the record named by KeyArg
	EffectUpdate Effect = "update" // set the other arguments as fields on that record
	EffectCreate Effect = "create" // insert a new record whose fields are the arguments
	EffectCancel Effect = "cancel" // set StatusField to StatusValue (and the other arguments) on the record named by KeyArg
	EffectDelete Effect = "delete" // remove the record named by KeyArg
)

// Effects lists the effects a catalogue can declare.
func Effects() []Effect {
	return []Effect{EffectRead, EffectUpdate, EffectCreate, EffectCancel, EffectDelete}
}

// Keyed reports whether the effect names its record by KeyArg.
func (e Effect) Keyed() bool { return e != EffectCreate }

// ToolSpec is one tool of a scenario's catalogue.
type ToolSpec struct {
	Name          string    `json:"name"`
	Description   string    `json:"description,omitempty"`
	Effect        Effect    `json:"effect"`
	Table         string    `json:"table"`
	KeyArg        string    `json:"key_arg,omitempty"`
	Consequential bool      `json:"consequential,omitempty"`
	Args          []ArgSpec `json:"args"`
	// StatusField and StatusValue (cancel only): the field a cancel writes
	// and the value it writes there, e.g. status and cancelled.
	StatusField string `json:"status_field,omitempty"`
	StatusValue string `json:"status_value,omitempty"`
}

// ArgSpec is one argument's schema.
type ArgSpec struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"` // one of ArgTypes(): string, integer, date (YYYY-MM-DD), time (HH:MM), number (decimal)
	Required    bool     `json:"required,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Pattern     string   `json:"pattern,omitempty"`
	Description string   `json:"description,omitempty"`
}

// Argument types a catalogue can declare.
const (
	ArgString  = "string"
	ArgInteger = "integer"
	ArgDate    = "date"   // YYYY-MM-DD
	ArgTime    = "time"   // HH:MM, 24-hour
	ArgNumber  = "number" // a decimal: 45, 45.5, 45.50
)

// ArgTypes lists the argument types a catalogue can declare.
func ArgTypes() []string { return []string{ArgString, ArgInteger, ArgDate, ArgTime, ArgNumber} }

// Record is one row of backend state. Version rises by one on every write.
type Record struct {
	Table   string            `json:"table"`
	Key     string            `json:"key"`
	Version int               `json:"version"`
	Fields  map[string]string `json:"fields"`
}

// Clone returns an independent copy.
func (r Record) Clone() Record {
	f := make(map[string]string, len(r.Fields))
	for k, v := range r.Fields {
		f[k] = v
	}
	r.Fields = f
	return r
}

// Catalog finds a tool by name.
func Catalog(tools []ToolSpec, name string) (ToolSpec, bool) {
	for _, t := range tools {
		if t.Name == name {
			return t, true
		}
	}
	return ToolSpec{}, false
}

// Apply computes the records after one successful call of spec with args.
// It is the single definition of what a tool does, used by the mock backend
// to execute and by the scorer to compute the state the caller's intent
// implies. Created records get the key "<table>-<n>" (n counts that table's
// rows; the mock backend counts deleted rows too, so a key is never given
// twice). A delete removes the record. records is not modified.
func Apply(records []Record, spec ToolSpec, args map[string]string) ([]Record, error) {
	out := make([]Record, len(records))
	for i, r := range records {
		out[i] = r.Clone()
	}
	switch spec.Effect {
	case EffectRead:
		return out, nil
	case EffectUpdate, EffectCancel, EffectDelete:
		key := args[spec.KeyArg]
		for i := range out {
			if out[i].Table != spec.Table || out[i].Key != key {
				continue
			}
			if spec.Effect == EffectDelete {
				return append(out[:i], out[i+1:]...), nil
			}
			for _, name := range SortedKeys(args) {
				if name != spec.KeyArg {
					out[i].Fields[name] = args[name]
				}
			}
			if spec.Effect == EffectCancel {
				out[i].Fields[spec.StatusField] = spec.StatusValue
			}
			out[i].Version++
			return out, nil
		}
		return nil, fmt.Errorf("%s: no %s record %q", spec.Name, spec.Table, key)
	case EffectCreate:
		n := 1
		for _, r := range out {
			if r.Table == spec.Table {
				n++
			}
		}
		f := make(map[string]string, len(args))
		for k, v := range args {
			f[k] = v
		}
		return append(out, Record{Table: spec.Table, Key: fmt.Sprintf("%s-%d", spec.Table, n), Version: 1, Fields: f}), nil
	}
	return nil, fmt.Errorf("%s: unknown effect %q", spec.Name, spec.Effect)
}

// FieldDiff is one difference between two states.
type FieldDiff struct {
	Table string `json:"table"`
	Key   string `json:"key"`
	Field string `json:"field"` // "" when the whole record is missing or extra
	Want  string `json:"want"`
	Got   string `json:"got"`
}

// Diff lists field-level differences between the state wanted and the state
// got, ignoring versions. Order is deterministic.
func Diff(want, got []Record) []FieldDiff {
	idx := func(rs []Record) map[[2]string]Record {
		m := make(map[[2]string]Record, len(rs))
		for _, r := range rs {
			m[[2]string{r.Table, r.Key}] = r
		}
		return m
	}
	w, g := idx(want), idx(got)
	keys := make([][2]string, 0, len(w)+len(g))
	for k := range w {
		keys = append(keys, k)
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	var out []FieldDiff
	for _, k := range keys {
		wr, wok := w[k]
		gr, gok := g[k]
		switch {
		case !gok:
			out = append(out, FieldDiff{Table: k[0], Key: k[1], Want: "present", Got: "missing"})
		case !wok:
			out = append(out, FieldDiff{Table: k[0], Key: k[1], Want: "absent", Got: "present"})
		default:
			fields := map[string]bool{}
			for f := range wr.Fields {
				fields[f] = true
			}
			for f := range gr.Fields {
				fields[f] = true
			}
			names := make([]string, 0, len(fields))
			for f := range fields {
				names = append(names, f)
			}
			sort.Strings(names)
			for _, f := range names {
				if wr.Fields[f] != gr.Fields[f] {
					out = append(out, FieldDiff{Table: k[0], Key: k[1], Field: f, Want: wr.Fields[f], Got: gr.Fields[f]})
				}
			}
		}
	}
	return out
}

// SortedKeys returns a map's keys in order, for deterministic output.
func SortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
