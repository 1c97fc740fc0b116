package toolimport

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/trace"
)

// Entry is one catalogue tool with the reasons for each guess, which Write
// prints as "review:" comments.
type Entry struct {
	Tool   scenarios.Tool
	Review []string
}

// Skipped is a tool left out of the catalogue, and why.
type Skipped struct{ Name, Reason string }

// effectWords are the verbs that name an effect, checked in a tool's name
// and then its description, word by word. Read words are also here so that
// "search_bookings" is not taken for a write.
var effectWords = map[string]trace.Effect{
	"get": trace.EffectRead, "list": trace.EffectRead, "find": trace.EffectRead, "search": trace.EffectRead,
	"lookup": trace.EffectRead, "look": trace.EffectRead, "check": trace.EffectRead, "show": trace.EffectRead,
	"fetch": trace.EffectRead, "read": trace.EffectRead, "view": trace.EffectRead, "query": trace.EffectRead,
	"retrieve": trace.EffectRead, "describe": trace.EffectRead, "status": trace.EffectRead,
	"cancel": trace.EffectCancel, "void": trace.EffectCancel, "revoke": trace.EffectCancel, "withdraw": trace.EffectCancel,
	"delete": trace.EffectDelete, "remove": trace.EffectDelete, "destroy": trace.EffectDelete, "purge": trace.EffectDelete, "erase": trace.EffectDelete,
	"create": trace.EffectCreate, "book": trace.EffectCreate, "add": trace.EffectCreate, "new": trace.EffectCreate,
	"place": trace.EffectCreate, "make": trace.EffectCreate, "schedule": trace.EffectCreate, "register": trace.EffectCreate,
	"submit": trace.EffectCreate, "send": trace.EffectCreate, "ship": trace.EffectCreate, "reserve": trace.EffectCreate, "open": trace.EffectCreate,
	"update": trace.EffectUpdate, "change": trace.EffectUpdate, "modify": trace.EffectUpdate, "edit": trace.EffectUpdate,
	"set": trace.EffectUpdate, "move": trace.EffectUpdate, "reschedule": trace.EffectUpdate, "rename": trace.EffectUpdate,
	"amend": trace.EffectUpdate, "patch": trace.EffectUpdate, "replace": trace.EffectUpdate,
}

// Words splits a name or sentence into lower-case words: snake_case,
// kebab-case, camelCase and spaces all separate.
func Words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// wordEffect returns the effect of the first effect word in s.
func wordEffect(s string) (trace.Effect, string, bool) {
	for _, w := range Words(s) {
		if e, ok := effectWords[w]; ok {
			return e, w, true
		}
	}
	return "", "", false
}

// InferEffect decides a tool's effect and says which rule did. The rules,
// first match wins: an MCP readOnlyHint or an HTTP GET/HEAD means read; an
// effect word in the name; an HTTP DELETE or an MCP destructiveHint means
// delete, PUT/PATCH update, POST create, an MCP idempotentHint update; an
// effect word in the description; else update (a write is the safer guess:
// its scenarios will ask for it to be checked).
func InferEffect(t Tool) (trace.Effect, string) {
	if t.ReadOnly != nil && *t.ReadOnly {
		return trace.EffectRead, "MCP readOnlyHint"
	}
	if t.Method == "GET" || t.Method == "HEAD" {
		return trace.EffectRead, "HTTP " + t.Method
	}
	if e, w, ok := wordEffect(t.Name); ok {
		return e, fmt.Sprintf("the name says %q", w)
	}
	switch {
	case t.Method == "DELETE":
		return trace.EffectDelete, "HTTP DELETE"
	case t.Destructive != nil && *t.Destructive:
		return trace.EffectDelete, "MCP destructiveHint"
	case t.Method == "PUT" || t.Method == "PATCH":
		return trace.EffectUpdate, "HTTP " + t.Method
	case t.Method == "POST":
		return trace.EffectCreate, "HTTP POST"
	case t.Idempotent != nil && *t.Idempotent:
		return trace.EffectUpdate, "MCP idempotentHint"
	}
	if e, w, ok := wordEffect(t.Description); ok {
		return e, fmt.Sprintf("the description says %q", w)
	}
	return trace.EffectUpdate, "no rule matched; update assumed"
}

// keyWords end the names of arguments a record is found by.
var keyWords = []string{"id", "ref", "reference", "number", "no", "code", "key", "confirmation", "uuid"}

// KeyLike says whether an argument's name ends in a word records are found
// by (id, ref, number, code, ...).
func KeyLike(name string) bool {
	ws := Words(name)
	return len(ws) > 0 && slices.Contains(keyWords, ws[len(ws)-1])
}

// InferKey picks the argument a record is found by and says why: an
// OpenAPI path parameter, else an argument whose name ends in an id word
// (id, ref, number, code, ...), required ones first; else the first
// required argument. "" when the tool has no argument.
func InferKey(t Tool) (string, string) {
	best, bestScore, why := "", -2, ""
	for _, a := range t.Args {
		score, reason := 0, "the first required argument"
		if !a.Required {
			score, reason = -1, "the first argument"
		}
		ws := Words(a.Name)
		if len(ws) > 0 && slices.Contains(keyWords, ws[len(ws)-1]) {
			score, reason = 2, fmt.Sprintf("its name ends in %q", ws[len(ws)-1])
			if a.Required {
				score = 3
			}
		}
		if slices.Contains(t.PathArgs, a.Name) {
			score, reason = 4, "a path parameter"
		}
		if score > bestScore {
			best, bestScore, why = a.Name, score, reason
		}
	}
	return best, why
}

// InferTable names the table a tool works on: the words of its name after
// the effect verb (or the first static segment of its OpenAPI path), made
// plural, so get_booking and cancel_booking share "bookings".
func InferTable(t Tool) string {
	var nouns []string
	if t.Path != "" {
		for _, seg := range strings.Split(t.Path, "/") {
			if seg != "" && !strings.HasPrefix(seg, "{") {
				nouns = Words(seg)
				break
			}
		}
	}
	if len(nouns) == 0 {
		for _, w := range Words(t.Name) {
			if _, verb := effectWords[w]; !verb && w != "by" && w != "a" && w != "the" {
				nouns = append(nouns, w)
			}
		}
	}
	if len(nouns) == 0 {
		nouns = Words(t.Name)
	}
	if len(nouns) == 0 {
		return "records"
	}
	return plural(strings.Join(nouns, "_"))
}

var pluralY = regexp.MustCompile(`[^aeiou]y$`)

func plural(s string) string {
	switch {
	case strings.HasSuffix(s, "ss"):
		return s + "es"
	case strings.HasSuffix(s, "s"):
		return s
	case pluralY.MatchString(s):
		return s[:len(s)-1] + "ies"
	case strings.HasSuffix(s, "ch") || strings.HasSuffix(s, "sh") || strings.HasSuffix(s, "x"):
		return s + "es"
	}
	return s + "s"
}

// statusField is the field a cancel is guessed to write.
const statusField, statusValue = "status", "cancelled"

// Infer turns imported tools into catalogue entries. A tool that needs a
// key (any effect but create) and has no argument cannot be a catalogue
// tool; it is skipped, with the reason.
func Infer(tools []Tool) ([]Entry, []Skipped) {
	var out []Entry
	var skipped []Skipped
	for _, t := range tools {
		eff, why := InferEffect(t)
		e := Entry{Tool: scenarios.Tool{Name: t.Name, Description: t.Description, Args: t.Args}}
		if eff == trace.EffectCancel && slices.ContainsFunc(t.Args, func(a scenarios.Arg) bool { return a.Name == statusField }) {
			eff, why = trace.EffectUpdate, why+", but it takes a status argument: an update that sets it"
		}
		e.Tool.Effect = string(eff)
		e.Review = append(e.Review, fmt.Sprintf("effect %s: %s", eff, why))
		e.Tool.Table = InferTable(t)
		e.Review = append(e.Review, fmt.Sprintf("table %s: from the name or path; tools on the same records must share it", e.Tool.Table))
		if eff.Keyed() {
			key, kwhy := InferKey(t)
			if key == "" {
				skipped = append(skipped, Skipped{t.Name, fmt.Sprintf("a %s needs an argument the record is found by, and it has none", eff)})
				continue
			}
			e.Tool.KeyArg = key
			e.Review = append(e.Review, fmt.Sprintf("key_arg %s: %s", key, kwhy))
		}
		if eff == trace.EffectCancel {
			e.Tool.StatusField, e.Tool.StatusValue = statusField, statusValue
			e.Review = append(e.Review, fmt.Sprintf("status_field %s, status_value %s: assumed; name the field and value your backend writes", statusField, statusValue))
		}
		e.Tool.Consequential = eff != trace.EffectRead
		if e.Tool.Consequential {
			e.Review = append(e.Review, "consequential: every effect but read changes a record; set false if a wrong call would not matter")
		}
		out = append(out, e)
	}
	return out, skipped
}
