package scenarios

import (
	"os"
	"reflect"

	"go.yaml.in/yaml/v3"
)

// CatalogFile is a catalogue on its own, as `callproof init` writes it: a
// file whose only field is tools, in the same form as a scenario's tools.
type CatalogFile struct {
	Tools []Tool `json:"tools"`
}

// LoadCatalogFile reads a catalogue file (.yaml, .yml or .json).
func LoadCatalogFile(name string) ([]Tool, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readLimited(f)
	if err != nil {
		return nil, err
	}
	return LoadCatalogBytes(name, data)
}

// LoadCatalogBytes decodes and checks a catalogue file with the rules a
// scenario's tools are checked by, reporting every problem as Errors
// (file:line: field: message). Like LoadBytes, it never panics and
// enforces the same size limits.
func LoadCatalogBytes(name string, data []byte) ([]Tool, error) {
	src, root, err := parseWithin(name, data)
	if err != nil {
		return nil, err
	}
	var c CatalogFile
	d := &decoder{src: src}
	d.value(root, reflect.ValueOf(&c).Elem(), "")
	errs := d.errs
	if c.Tools != nil {
		b := &builder{s: &Scenario{src: src, Tools: c.Tools}}
		b.catalog()
		errs = append(errs, b.errs...)
	}
	sortErrors(errs)
	return c.Tools, errs.orNil()
}

// IsCatalogFile says whether data looks like a catalogue file rather than
// a scenario: a mapping with a tools field and neither id nor category. name's extension
// picks YAML or JSON, as for LoadBytes.
func IsCatalogFile(name string, data []byte) bool {
	if len(data) > MaxFileSize {
		return false
	}
	root, err := parse(name, data)
	if err != nil || checkBudget(name, root) != nil || root.Kind != yaml.MappingNode {
		return false
	}
	hasTools := false
	for i := 0; i < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "id", "category":
			return false
		case "tools":
			hasTools = true
		}
	}
	return hasTools
}
