package agents

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/callproof/callproof/trace"
)

// What the generic agent says is built from the catalogue's own words:
// the tool's verb, the record's noun, each argument's name and its value
// in a spoken form.

// noun is what the caller calls tool's record: the key argument without
// its "id"/"number" ("booking_ref" → booking), else the table, singular.
func (d *genericDomain) noun(t trace.ToolSpec) string {
	var ws []string
	for _, w := range nameWords(t.KeyArg) {
		switch w {
		case "id", "ref", "reference", "number", "no", "code", "key", "num":
			continue
		}
		ws = append(ws, w)
	}
	if len(ws) > 0 {
		return strings.Join(ws, " ")
	}
	ws = nameWords(t.Table)
	if len(ws) == 0 {
		return "record"
	}
	last := ws[len(ws)-1]
	if strings.HasSuffix(last, "ies") {
		last = strings.TrimSuffix(last, "ies") + "y"
	} else if strings.HasSuffix(last, "s") && !strings.HasSuffix(last, "ss") {
		last = strings.TrimSuffix(last, "s")
	}
	ws[len(ws)-1] = last
	return strings.Join(ws, " ")
}

// verb is the word the tool's name starts with, unless that is its record
// noun; then its effect's own.
func (d *genericDomain) verb(t trace.ToolSpec) string {
	ws := nameWords(t.Name)
	if len(ws) > 0 && stem(ws[0]) != stem(d.noun(t)) && !strings.HasSuffix(ws[0], "ing") {
		return ws[0]
	}
	for _, w := range ws[1:] {
		for _, v := range effectVerbs[t.Effect] {
			if w == v {
				return w
			}
		}
	}
	return string(t.Effect)
}

// subject names the record a tool acts on: "booking 4471", or "a new
// payment" for a create.
func (d *genericDomain) subject(t trace.ToolSpec, key string) string {
	if t.KeyArg == "" || key == "" {
		if t.Effect == trace.EffectCreate {
			return "a new " + d.noun(t)
		}
		return "that"
	}
	return d.noun(t) + " " + key
}

// describe lists argument values: "date December 9 and time 7:30 pm".
func (d *genericDomain) describe(t trace.ToolSpec, v map[string]string) string {
	var parts []string
	for _, a := range t.Args {
		val := v[a.Name]
		if a.Name == t.KeyArg || val == "" || (len(a.Enum) == 1 && a.Required) {
			continue
		}
		parts = append(parts, strings.Join(nameWords(a.Name), " ")+" "+d.spoken(t, a, val))
	}
	// Values the catalogue does not declare for this tool (none in
	// practice) are said too, in a fixed order.
	var extra []string
	for _, k := range trace.SortedKeys(v) {
		if k != t.KeyArg && !declares(t, k) && v[k] != "" {
			extra = append(extra, strings.Join(nameWords(k), " ")+" "+v[k])
		}
	}
	sort.Strings(extra)
	parts = append(parts, extra...)
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// spoken says a value the way a person would.
func (d *genericDomain) spoken(t trace.ToolSpec, a trace.ArgSpec, v string) string {
	switch d.kind(t, a) {
	case kindDate:
		return spokenDate(v)
	case kindTime:
		if tm, err := time.Parse("15:04", v); err == nil {
			h, m := tm.Hour(), tm.Minute()
			half := "am"
			if h >= 12 {
				half = "pm"
			}
			if h%12 == 0 {
				h += 12
			}
			if h > 12 {
				h -= 12
			}
			if m == 0 {
				return fmt.Sprintf("%d %s", h, half)
			}
			return fmt.Sprintf("%d:%02d %s", h, m, half)
		}
	case kindMoney:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return fmt.Sprintf("$%.2f", f)
		}
	}
	return v
}

func (d *genericDomain) spec(tool string) trace.ToolSpec {
	t, _ := trace.Catalog(d.cat, tool)
	return t
}

func (d *genericDomain) readBack(tool string, v map[string]string) string {
	t := d.spec(tool)
	s := fmt.Sprintf("Okay, let me %s %s", d.verb(t), d.subject(t, v[t.KeyArg]))
	if desc := d.describe(t, v); desc != "" {
		s += ": " + desc
	}
	return s + "."
}

func (d *genericDomain) done(tool string, v map[string]string) string {
	t := d.spec(tool)
	switch t.Effect {
	case trace.EffectCancel, trace.EffectDelete:
		past := "cancelled"
		if t.Effect == trace.EffectDelete {
			past = "deleted"
		} else if t.StatusValue != "" {
			past = t.StatusValue
		}
		return fmt.Sprintf("Done. %s has been %s.", upperFirst(d.subject(t, v[t.KeyArg])), past)
	case trace.EffectCreate:
		desc := d.describe(t, v)
		if desc == "" {
			return fmt.Sprintf("Done. The new %s is in.", d.noun(t))
		}
		return fmt.Sprintf("Done. The new %s has %s.", d.noun(t), desc)
	}
	if isCancelUpdate(t, v) {
		return fmt.Sprintf("Done. %s has been cancelled.", upperFirst(d.subject(t, v[t.KeyArg])))
	}
	return fmt.Sprintf("Done. %s now has %s.", upperFirst(d.subject(t, v[t.KeyArg])), d.describe(t, v))
}

// isCancelUpdate reports an update that writes a cancelled status.
func isCancelUpdate(t trace.ToolSpec, v map[string]string) bool {
	for _, a := range t.Args {
		if x := strings.ToLower(v[a.Name]); len(a.Enum) > 0 && (x == "cancelled" || x == "canceled") {
			return true
		}
	}
	return false
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func (d *genericDomain) failed(tool, key string) string {
	t := d.spec(tool)
	return fmt.Sprintf("Sorry, I couldn't %s %s. Nothing was changed.", d.verb(t), d.subject(t, key))
}

func (d *genericDomain) unconfirmed(tool, key string) string {
	t := d.spec(tool)
	if t.KeyArg == "" || key == "" {
		return "Sorry, I can't confirm yet whether that went through."
	}
	return fmt.Sprintf("Sorry, I can't confirm yet whether %s went through.", d.subject(t, key))
}

func (d *genericDomain) nothingChanged(tool, key string) string {
	t := d.spec(tool)
	if t.KeyArg == "" || key == "" {
		return "Okay, I won't make any change. Nothing was changed."
	}
	return fmt.Sprintf("Okay, I won't make any change. Nothing was changed on %s.", d.subject(t, key))
}

func (d *genericDomain) undoFailed(tool, key string) string {
	t := d.spec(tool)
	return fmt.Sprintf("Sorry, I couldn't undo the change on %s.", d.subject(t, key))
}

// wrongValues (ConfirmsWrongValue) puts a date a day late or a count one
// up in the first argument that has one.
func (d *genericDomain) wrongValues(tool string, v map[string]string) map[string]string {
	t := d.spec(tool)
	out := copyMap(v)
	for _, a := range t.Args {
		x := v[a.Name]
		if x == "" || a.Name == t.KeyArg {
			continue
		}
		if day, err := time.Parse(time.DateOnly, x); err == nil {
			out[a.Name] = day.AddDate(0, 0, 1).Format(time.DateOnly)
			return out
		}
		if n, err := strconv.Atoi(x); err == nil {
			out[a.Name] = strconv.Itoa(n + 1)
			return out
		}
	}
	return out
}
