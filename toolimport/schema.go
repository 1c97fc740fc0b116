package toolimport

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/trace"
)

// Tool is one imported definition: what the source states, before any
// inference. The hints are what Infer reads besides the words.
type Tool struct {
	Name        string
	Description string
	Args        []scenarios.Arg
	// MCP annotations, nil when the server did not say.
	ReadOnly, Destructive, Idempotent *bool
	// OpenAPI: the operation's method (upper case) and path, and the
	// arguments that were path parameters.
	Method, Path string
	PathArgs     []string
}

// resolver follows local "#/..." references inside one document.
type resolver struct{ root any }

// deref returns the schema a $ref names, following chains up to maxDepth.
func (r resolver) deref(s *obj) (*obj, error) {
	for i := 0; s != nil && s.get("$ref") != nil; i++ {
		ref := s.str("$ref")
		if i >= maxDepth || !strings.HasPrefix(ref, "#/") {
			return nil, fmt.Errorf("$ref %q cannot be flattened (only local #/ references are followed)", ref)
		}
		var cur any = r.root
		for _, part := range strings.Split(ref[2:], "/") {
			part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
			o, ok := cur.(*obj)
			if !ok {
				cur = nil
				break
			}
			cur = o.get(part)
		}
		next, ok := cur.(*obj)
		if !ok {
			return nil, fmt.Errorf("$ref %q names nothing in the document", ref)
		}
		s = next
	}
	return s, nil
}

// hhmm are the times an HH:MM pattern must accept and the non-times it
// must refuse, for a string to count as a time.
var (
	hhmmYes = []string{"09:30", "23:59", "00:00"}
	hhmmNo  = []string{"0930", "9:30:00", "2026-12-01"}
)

// IsTimePattern says whether a pattern describes HH:MM times.
func IsTimePattern(p string) bool {
	re, err := regexp.Compile(p)
	if err != nil {
		return false
	}
	for _, s := range hhmmYes {
		if !re.MatchString(s) {
			return false
		}
	}
	for _, s := range hhmmNo {
		if re.MatchString(s) {
			return false
		}
	}
	return true
}

// scalar renders an enum value as the string callproof compares.
func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case bool:
		return fmt.Sprint(v), true
	}
	return "", false
}

// schemaType returns the declared type, taking the non-null member of a
// ["T", "null"] list (an optional value is still one value).
func schemaType(s *obj) (string, error) {
	switch t := s.get("type").(type) {
	case nil:
		return "", nil
	case string:
		return t, nil
	case []any:
		var kept []string
		for _, x := range t {
			if str, _ := x.(string); str != "null" {
				kept = append(kept, fmt.Sprint(x))
			}
		}
		if len(kept) == 1 {
			return kept[0], nil
		}
		return "", fmt.Errorf("type %v is not one type", t)
	}
	return "", fmt.Errorf("type is not a string")
}

// arg maps one property schema to a catalogue argument, or says why it
// cannot be one value.
func (r resolver) arg(name string, raw any, required bool) (scenarios.Arg, error) {
	a := scenarios.Arg{Name: name, Required: required}
	s, ok := raw.(*obj)
	if !ok {
		return a, fmt.Errorf("schema is not an object")
	}
	s, err := r.deref(s)
	if err != nil {
		return a, err
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if s.get(k) != nil {
			return a, fmt.Errorf("%s cannot be flattened to one value", k)
		}
	}
	a.Description = strings.TrimSpace(s.str("description"))
	typ, err := schemaType(s)
	if err != nil {
		return a, err
	}
	if enum, ok := s.get("enum").([]any); ok {
		for _, v := range enum {
			if v == nil {
				continue // null in an enum means "optional"
			}
			str, ok := scalar(v)
			if !ok {
				return a, fmt.Errorf("enum value %v is not a scalar", v)
			}
			a.Enum = append(a.Enum, str)
		}
		if len(a.Enum) > scenarios.MaxItems {
			return a, fmt.Errorf("more than %d enum values (scenarios.MaxItems)", scenarios.MaxItems)
		}
	}
	pattern := s.str("pattern")
	if pattern != "" {
		if _, err := regexp.Compile(pattern); err != nil {
			return a, fmt.Errorf("pattern %q: %v", pattern, err)
		}
	}
	switch typ {
	case "string", "":
		if typ == "" && len(a.Enum) == 0 {
			return a, fmt.Errorf("no type")
		}
		switch {
		case s.str("format") == "date":
			a.Type = trace.ArgDate
		case pattern != "" && IsTimePattern(pattern):
			a.Type = trace.ArgTime
		default:
			a.Type = trace.ArgString
			a.Pattern = pattern
		}
	case "integer":
		a.Type = trace.ArgInteger
	case "number":
		a.Type = trace.ArgNumber
	case "boolean":
		a.Type = trace.ArgString
		a.Enum = []string{"false", "true"}
	case "array", "object":
		return a, fmt.Errorf("type %s cannot be flattened to one value", typ)
	default:
		return a, fmt.Errorf("unknown type %q", typ)
	}
	return a, nil
}

// objectArgs flattens an object schema (a tool's parameters, a request
// body) into arguments, in the order the properties are written.
func (r resolver) objectArgs(tool string, raw any) ([]scenarios.Arg, error) {
	if raw == nil {
		return nil, nil
	}
	s, ok := raw.(*obj)
	if !ok {
		return nil, fmt.Errorf("tool %s: parameters: not an object schema", tool)
	}
	s, err := r.deref(s)
	if err != nil {
		return nil, fmt.Errorf("tool %s: parameters: %v", tool, err)
	}
	if t, _ := schemaType(s); t != "" && t != "object" {
		return nil, fmt.Errorf("tool %s: parameters: type %s, want object", tool, t)
	}
	required := map[string]bool{}
	if list, ok := s.get("required").([]any); ok {
		for _, x := range list {
			if str, ok := x.(string); ok {
				required[str] = true
			}
		}
	}
	props := s.sub("properties")
	if props == nil {
		return nil, nil
	}
	if len(props.keys) > scenarios.MaxItems {
		return nil, fmt.Errorf("tool %s: more than %d arguments (scenarios.MaxItems)", tool, scenarios.MaxItems)
	}
	var out []scenarios.Arg
	for _, k := range props.keys {
		if k == "" {
			return nil, fmt.Errorf("tool %s: an argument has no name", tool)
		}
		a, err := r.arg(k, props.get(k), required[k])
		if err != nil {
			return nil, fmt.Errorf("tool %s: argument %s: %v", tool, k, err)
		}
		out = append(out, a)
	}
	return out, nil
}
