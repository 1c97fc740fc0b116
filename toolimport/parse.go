package toolimport

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/callproof/callproof/scenarios"
)

// Format names an input format.
type Format string

// The formats Parse recognises.
const (
	FormatOpenAI  Format = "openai"
	FormatMCP     Format = "mcp"
	FormatOpenAPI Format = "openapi"
)

// Parse detects the format of data and parses it: an OpenAPI document has
// an openapi field; an MCP result has tools with inputSchema (also inside
// a JSON-RPC result); anything else is read as OpenAI tools.
func Parse(data []byte) ([]Tool, Format, error) {
	root, err := decodeAny(data)
	if err != nil {
		return nil, "", err
	}
	if o, ok := root.(*obj); ok {
		if o.get("openapi") != nil {
			tools, err := openAPI(root)
			return tools, FormatOpenAPI, err
		}
		if isMCP(o) {
			tools, err := mcp(root)
			return tools, FormatMCP, err
		}
	}
	tools, err := openAI(root)
	return tools, FormatOpenAI, err
}

// decodeAny reads JSON when the input starts like JSON, else YAML.
func decodeAny(data []byte) (any, error) {
	t := bytes.TrimSpace(data)
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return decodeJSON(data)
	}
	return decodeYAML(data)
}

func isMCP(o *obj) bool {
	if r := o.sub("result"); r != nil {
		o = r
	}
	list, _ := o.get("tools").([]any)
	for _, t := range list {
		if m, ok := t.(*obj); ok && m.get("inputSchema") != nil {
			return true
		}
	}
	return false
}

// ParseOpenAI reads OpenAI function-calling tools: a list (or {"tools":
// [...]}) of {"type":"function","function":{name,description,parameters}}
// (Chat Completions) or {"type":"function",name,description,parameters}
// (Realtime, Responses).
func ParseOpenAI(data []byte) ([]Tool, error) {
	root, err := decodeJSON(data)
	if err != nil {
		return nil, err
	}
	return openAI(root)
}

func openAI(root any) ([]Tool, error) {
	list, ok := root.([]any)
	if o, isObj := root.(*obj); isObj {
		list, ok = o.get("tools").([]any)
	}
	if !ok {
		return nil, errors.New(`want a list of tools or {"tools": [...]}`)
	}
	r := resolver{root: root}
	var out []Tool
	for i, raw := range list {
		t, ok := raw.(*obj)
		if !ok {
			return nil, fmt.Errorf("tools[%d]: not an object", i)
		}
		if typ := t.str("type"); typ != "" && typ != "function" {
			return nil, fmt.Errorf("tools[%d]: type %q: only function tools can be imported", i, typ)
		}
		def := t
		if f := t.sub("function"); f != nil {
			def = f
		}
		tool, err := r.tool(i, def.str("name"), def.str("description"), def.get("parameters"))
		if err != nil {
			return nil, err
		}
		out = append(out, tool)
	}
	return out, checkNames(out)
}

// ParseMCP reads an MCP tools/list result ({"tools": [...]}, bare or as a
// JSON-RPC response's result), keeping the annotations as hints.
func ParseMCP(data []byte) ([]Tool, error) {
	root, err := decodeJSON(data)
	if err != nil {
		return nil, err
	}
	return mcp(root)
}

func mcp(root any) ([]Tool, error) {
	o, _ := root.(*obj)
	if r := o.sub("result"); r != nil {
		o = r
	}
	list, ok := o.get("tools").([]any)
	if !ok {
		return nil, errors.New(`want {"tools": [...]} (an MCP tools/list result)`)
	}
	r := resolver{root: root}
	var out []Tool
	for i, raw := range list {
		t, ok := raw.(*obj)
		if !ok {
			return nil, fmt.Errorf("tools[%d]: not an object", i)
		}
		tool, err := r.tool(i, t.str("name"), t.str("description"), t.get("inputSchema"))
		if err != nil {
			return nil, err
		}
		if ann := t.sub("annotations"); ann != nil {
			tool.ReadOnly = boolHint(ann, "readOnlyHint")
			tool.Destructive = boolHint(ann, "destructiveHint")
			tool.Idempotent = boolHint(ann, "idempotentHint")
		}
		out = append(out, tool)
	}
	return out, checkNames(out)
}

func boolHint(o *obj, k string) *bool {
	if b, ok := o.get(k).(bool); ok {
		return &b
	}
	return nil
}

func (r resolver) tool(i int, name, desc string, params any) (Tool, error) {
	if name == "" {
		return Tool{}, fmt.Errorf("tools[%d]: no name", i)
	}
	args, err := r.objectArgs(name, params)
	if err != nil {
		return Tool{}, err
	}
	return Tool{Name: name, Description: oneLine(desc), Args: args}, nil
}

// oneLine keeps a description's first paragraph on one line.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n\n")
	return strings.Join(strings.Fields(s), " ")
}

// checkNames refuses a tool named twice, and more tools than a catalogue
// holds.
func checkNames(tools []Tool) error {
	if len(tools) > scenarios.MaxItems {
		return fmt.Errorf("%d tools: a catalogue holds at most %d (scenarios.MaxItems)", len(tools), scenarios.MaxItems)
	}
	seen := map[string]bool{}
	for _, t := range tools {
		if seen[t.Name] {
			return fmt.Errorf("tool %s: defined twice", t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}

// ParseOpenAPI reads an OpenAPI 3 document (JSON or YAML): each operation
// is a tool named by its operationId (else method and path); its path and
// query parameters and the properties of its JSON request body are the
// arguments.
func ParseOpenAPI(data []byte) ([]Tool, error) {
	root, err := decodeAny(data)
	if err != nil {
		return nil, err
	}
	return openAPI(root)
}

// methods in the order operations of one path are listed.
var methods = []string{"get", "head", "post", "put", "patch", "delete"}

func openAPI(root any) ([]Tool, error) {
	doc, _ := root.(*obj)
	if v, _ := scalar(doc.get("openapi")); !strings.HasPrefix(v, "3") {
		return nil, fmt.Errorf("openapi %q: want an OpenAPI 3 document", v)
	}
	paths := doc.sub("paths")
	if paths == nil {
		return nil, errors.New("no paths")
	}
	r := resolver{root: root}
	var out []Tool
	keys := append([]string(nil), paths.keys...)
	sort.Strings(keys)
	for _, path := range keys {
		item, err := r.deref(paths.sub(path))
		if err != nil || item == nil {
			return nil, fmt.Errorf("path %s: not an object", path)
		}
		for _, m := range methods {
			op := item.sub(m)
			if op == nil {
				continue
			}
			t, err := r.operation(path, m, item, op)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	return out, checkNames(out)
}

var nonWord = regexp.MustCompile(`[^A-Za-z0-9]+`)

// opName names an operation without an operationId: get /tables/{id} is
// get_tables_id.
func opName(method, path string) string {
	return method + "_" + strings.Trim(nonWord.ReplaceAllString(path, "_"), "_")
}

func (r resolver) operation(path, method string, item, op *obj) (Tool, error) {
	name := op.str("operationId")
	if name == "" {
		name = opName(method, path)
	}
	desc := op.str("summary")
	if desc == "" {
		desc = op.str("description")
	}
	t := Tool{Name: name, Description: oneLine(desc), Method: strings.ToUpper(method), Path: path}
	seen := map[string]bool{}
	var params []any
	for _, src := range []*obj{op, item} { // the operation's own win
		list, _ := src.get("parameters").([]any)
		params = append(params, list...)
	}
	for i, raw := range params {
		p, ok := raw.(*obj)
		if !ok {
			return t, fmt.Errorf("tool %s: parameters[%d]: not an object", name, i)
		}
		p, err := r.deref(p)
		if err != nil {
			return t, fmt.Errorf("tool %s: parameters[%d]: %v", name, i, err)
		}
		in, pname := p.str("in"), p.str("name")
		if in != "path" && in != "query" {
			continue // headers and cookies are transport, not the caller's values
		}
		if pname == "" {
			return t, fmt.Errorf("tool %s: parameters[%d]: no name", name, i)
		}
		if seen[pname] {
			continue
		}
		seen[pname] = true
		req, _ := p.get("required").(bool)
		a, err := r.arg(pname, p.get("schema"), req || in == "path")
		if err != nil {
			return t, fmt.Errorf("tool %s: argument %s: %v", name, pname, err)
		}
		if a.Description == "" {
			a.Description = oneLine(p.str("description"))
		}
		t.Args = append(t.Args, a)
		if in == "path" {
			t.PathArgs = append(t.PathArgs, pname)
		}
	}
	if body := op.sub("requestBody"); body != nil {
		body, err := r.deref(body)
		if err != nil {
			return t, fmt.Errorf("tool %s: requestBody: %v", name, err)
		}
		media := body.sub("content").sub("application/json")
		if media == nil && body.sub("content") != nil {
			return t, fmt.Errorf("tool %s: requestBody: only application/json bodies can be imported", name)
		}
		args, err := r.objectArgs(name, media.get("schema"))
		if err != nil {
			return t, err
		}
		for _, a := range args {
			if seen[a.Name] {
				return t, fmt.Errorf("tool %s: argument %s: both a parameter and a body field", name, a.Name)
			}
			seen[a.Name] = true
			t.Args = append(t.Args, a)
		}
	}
	return t, nil
}
