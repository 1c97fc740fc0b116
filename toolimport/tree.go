package toolimport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// MaxInput is the largest definitions file the parsers read (4 MiB).
const MaxInput = 4 << 20

// MCPTimeout bounds how long `callproof init` waits for a live MCP
// server's tools, connection included. (This package never dials; the
// command does.)
const MCPTimeout = 30 * time.Second

// maxDepth bounds nesting (and $ref chains) so no input can recurse deeply.
const maxDepth = 64

// obj is a JSON/YAML mapping that keeps its keys in file order, so the
// arguments of a tool come out in the order their author wrote them.
type obj struct {
	keys []string
	vals map[string]any
}

func (o *obj) get(k string) any {
	if o == nil {
		return nil
	}
	return o.vals[k]
}

func (o *obj) str(k string) string {
	s, _ := o.get(k).(string)
	return s
}

func (o *obj) sub(k string) *obj {
	m, _ := o.get(k).(*obj)
	return m
}

// decodeJSON reads one JSON value into obj, []any, string, json.Number,
// bool and nil.
func decodeJSON(data []byte) (any, error) {
	if len(data) > MaxInput {
		return nil, fmt.Errorf("input is over %d bytes", MaxInput)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := jsonValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: more than one value")
	}
	return v, nil
}

func jsonValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d deep", maxDepth)
	}
	t, err := dec.Token()
	if err == io.EOF {
		return nil, errors.New("invalid JSON: unexpected end of input")
	}
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &obj{vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("invalid JSON: %w", err)
				}
				k, _ := kt.(string)
				v, err := jsonValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if _, dup := o.vals[k]; !dup {
					o.keys = append(o.keys, k)
				}
				o.vals[k] = v
			}
			return o, closing(dec)
		case '[':
			var list []any
			for dec.More() {
				v, err := jsonValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			return list, closing(dec)
		}
		return nil, fmt.Errorf("invalid JSON: unexpected %v", t)
	default:
		return t, nil
	}
}

// closing reads the delimiter that ends an object or array.
func closing(dec *json.Decoder) error {
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	return nil
}

// decodeYAML reads one YAML document into the same shapes as decodeJSON
// (numbers as json.Number). Aliases are followed to maxDepth only.
func decodeYAML(data []byte) (any, error) {
	if len(data) > MaxInput {
		return nil, fmt.Errorf("input is over %d bytes", MaxInput)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, errors.New("empty input")
	}
	budget := 200000
	return yamlValue(doc.Content[0], 0, &budget)
}

func yamlValue(n *yaml.Node, depth int, budget *int) (any, error) {
	*budget--
	if depth > maxDepth || *budget < 0 {
		return nil, errors.New("YAML too deep or too large once aliases are expanded")
	}
	switch n.Kind {
	case yaml.AliasNode:
		return yamlValue(n.Alias, depth+1, budget)
	case yaml.MappingNode:
		o := &obj{vals: map[string]any{}}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			v, err := yamlValue(n.Content[i+1], depth+1, budget)
			if err != nil {
				return nil, err
			}
			if _, dup := o.vals[k]; !dup {
				o.keys = append(o.keys, k)
			}
			o.vals[k] = v
		}
		return o, nil
	case yaml.SequenceNode:
		var list []any
		for _, c := range n.Content {
			v, err := yamlValue(c, depth+1, budget)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		return list, nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool":
			b, _ := strconv.ParseBool(n.Value)
			return b, nil
		case "!!int", "!!float":
			return json.Number(n.Value), nil
		}
		return n.Value, nil
	}
	return nil, fmt.Errorf("unexpected YAML node at line %d", n.Line)
}
