package scenarios

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// decoder walks a yaml.Node tree into Go values by their JSON tag names,
// collecting every mismatch with its line and field path instead of
// stopping at the first (yaml.v3's own decoder knows neither paths nor
// "all at once").
type decoder struct {
	src  *source
	errs Errors
}

const (
	tagStr       = "!!str"
	tagTimestamp = "!!timestamp"
	tagInt       = "!!int"
	tagFloat     = "!!float"
	tagBool      = "!!bool"
	tagNull      = "!!null"
)

var durationType = reflect.TypeOf(Duration(0))

func (d *decoder) fail(path string, line int, format string, args ...any) {
	d.src.bad[path] = true
	d.errs = append(d.errs, &Error{File: d.src.file, Line: line, Field: path, Msg: fmt.Sprintf(format, args...)})
}

// got describes a node for an error message.
func got(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "sequence"
	}
	switch n.ShortTag() {
	case tagNull:
		return "null"
	case tagStr, tagTimestamp:
		return fmt.Sprintf("string %q", n.Value)
	case tagInt:
		return "int " + n.Value
	case tagFloat:
		return "float " + n.Value
	case tagBool:
		return "bool " + n.Value
	}
	return fmt.Sprintf("%s %q", n.ShortTag(), n.Value)
}

// resolve follows an alias to its anchored node. yaml.v3 never anchors an
// alias, so one hop is the rule; the bound only guards against a malformed
// tree (checkBudget has refused longer chains already).
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i <= MaxDepth; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == tagNull }

// value decodes n into v (settable) at path.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	n = resolve(n)
	if _, ok := d.src.lines[path]; !ok {
		d.src.lines[path] = n.Line
	}
	if v.Type() == durationType {
		if n.Kind != yaml.ScalarNode || n.ShortTag() != tagStr {
			d.fail(path, n.Line, "want duration string like \"300ms\", got %s", got(n))
			return
		}
		dur, err := time.ParseDuration(n.Value)
		if err != nil || dur < 0 {
			d.fail(path, n.Line, "bad duration %q (want e.g. \"300ms\", \"1.5s\")", n.Value)
			return
		}
		v.SetInt(int64(dur))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if isNull(n) {
			return
		}
		p := reflect.New(v.Type().Elem())
		d.value(n, p.Elem(), path)
		v.Set(p)
	case reflect.Struct:
		d.structure(n, v, path)
	case reflect.Map:
		d.mapping(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.fail(path, n.Line, "want sequence, got %s", got(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			d.value(c, s.Index(i), index(path, i))
		}
		v.Set(s)
	case reflect.String:
		// Numbers must be quoted: "5590" is a key, 5590 is an int. A bare
		// YAML date (2026-12-03) is text in JSON terms, so it is accepted.
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != tagStr && n.ShortTag() != tagTimestamp) {
			d.fail(path, n.Line, "want string, got %s", got(n))
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.ShortTag() != tagBool || n.Decode(&b) != nil {
			d.fail(path, n.Line, "want bool, got %s", got(n))
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		var i int64
		if n.Kind != yaml.ScalarNode || n.ShortTag() != tagInt || n.Decode(&i) != nil || v.OverflowInt(i) {
			d.fail(path, n.Line, "want integer, got %s", got(n))
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		var f float64
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != tagInt && n.ShortTag() != tagFloat) || n.Decode(&f) != nil {
			d.fail(path, n.Line, "want number, got %s", got(n))
			return
		}
		v.SetFloat(f)
	case reflect.Interface:
		// A null stays the zero value (nil): reflect cannot Set from the
		// invalid Value that reflect.ValueOf(nil) is.
		if x := d.free(n, path); x != nil {
			v.Set(reflect.ValueOf(x))
		}
	default:
		panic("scenarios: decoder does not handle " + v.Type().String())
	}
}

// field is one struct field as the file spells it.
type field struct {
	index    int
	name     string
	required bool
}

// fieldsOf lists a struct's fields by JSON tag; a tag without omitempty
// means required (the same rule the schema generator uses).
func fieldsOf(t reflect.Type) []field {
	var fs []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if !sf.IsExported() || tag == "" || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fs = append(fs, field{index: i, name: name, required: !strings.Contains(opts, "omitempty")})
	}
	return fs
}

// keys walks a mapping's pairs, reporting non-string and duplicate keys.
func (d *decoder) keys(n *yaml.Node, path string, each func(key string, keyNode, val *yaml.Node)) {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == tagNull {
			d.fail(path, k.Line, "want a string key, got %s", got(k))
			continue
		}
		p := join(path, k.Value)
		if seen[k.Value] {
			d.fail(p, k.Line, "duplicate key")
			continue
		}
		seen[k.Value] = true
		d.src.lines[p] = k.Line
		each(k.Value, k, val)
	}
}

func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(path, n.Line, "want mapping, got %s", got(n))
		return
	}
	fs := fieldsOf(v.Type())
	byName := make(map[string]field, len(fs))
	names := make([]string, len(fs))
	for i, f := range fs {
		byName[f.name] = f
		names[i] = f.name
	}
	present := map[string]bool{}
	d.keys(n, path, func(key string, k, val *yaml.Node) {
		f, ok := byName[key]
		if !ok {
			d.fail(join(path, key), k.Line, "unknown field (want one of %s)", strings.Join(names, ", "))
			return
		}
		present[key] = true
		if isNull(resolve(val)) && f.required {
			d.fail(join(path, key), k.Line, "required, got null")
			return
		}
		d.value(val, v.Field(f.index), join(path, key))
	})
	for _, f := range fs {
		if f.required && !present[f.name] {
			d.fail(join(path, f.name), n.Line, "required field missing")
		}
	}
}

func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.fail(path, n.Line, "want mapping, got %s", got(n))
		return
	}
	m := reflect.MakeMap(v.Type())
	d.keys(n, path, func(key string, _, val *yaml.Node) {
		e := reflect.New(v.Type().Elem()).Elem()
		d.value(val, e, join(path, key))
		m.SetMapIndex(reflect.ValueOf(key), e)
	})
	v.Set(m)
}

// free decodes a free-form value (setup): booleans stay bool, null is nil,
// every other scalar is kept as the text written, so 5590 and "5590" agree.
func (d *decoder) free(n *yaml.Node, path string) any {
	n = resolve(n)
	if _, ok := d.src.lines[path]; !ok {
		d.src.lines[path] = n.Line
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		d.keys(n, path, func(key string, _, val *yaml.Node) { m[key] = d.free(val, join(path, key)) })
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			s[i] = d.free(c, index(path, i))
		}
		return s
	}
	switch n.ShortTag() {
	case tagNull:
		return nil
	case tagBool:
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	}
	return n.Value
}
