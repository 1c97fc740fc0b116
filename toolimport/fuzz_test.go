package toolimport

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/callproof/callproof/scenarios"
)

// importValid is the property every parser must keep: no panic, and an
// input it accepts writes a catalogue that validates (unless the
// catalogue is over one of the scenario loader's size limits).
func importValid(t *testing.T, tools []Tool, err error) {
	if err != nil {
		return
	}
	entries, skipped := Infer(tools)
	if len(entries) == 0 {
		return
	}
	var b bytes.Buffer
	if err := Write(&b, "fuzz", FormatOpenAI, entries, skipped); err != nil {
		t.Fatal(err)
	}
	if _, err := scenarios.LoadCatalogBytes("fuzz.yaml", b.Bytes()); err != nil && !strings.Contains(err.Error(), "(Max") {
		t.Fatalf("written catalogue does not validate: %v\n%s", err, b.Bytes())
	}
}

func FuzzOpenAITools(f *testing.F) {
	if data, err := os.ReadFile("../examples/tools/restaurant-openai.json"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`[{"type":"function","name":"a","parameters":{"type":"object","properties":{"x":{"type":"boolean"}}}}]`))
	f.Add([]byte(`{"tools":[{"type":"function","function":{"name":"b","parameters":{"type":"object","properties":{"t":{"type":"string","pattern":"^\\d\\d:\\d\\d$"}},"required":["t"]}}}]}`))
	f.Add([]byte(`[{"type":"function","name":"c","parameters":{"$ref":"#/x"}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tools, err := ParseOpenAI(data)
		importValid(t, tools, err)
	})
}

func FuzzMCPTools(f *testing.F) {
	f.Add([]byte(`{"tools":[{"name":"lookup","inputSchema":{"type":"object","properties":{"id":{"type":"string"}}},"annotations":{"readOnlyHint":true}}]}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"drop","inputSchema":{"type":"object","properties":{"n":{"type":["integer","null"],"enum":[1,2,null]}}},"annotations":{"destructiveHint":true}}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tools, err := ParseMCP(data)
		importValid(t, tools, err)
	})
}

func FuzzOpenAPI(f *testing.F) {
	f.Add([]byte(clinicAPI))
	f.Add([]byte(`{"openapi":"3.1.0","paths":{"/a/{id}":{"delete":{"parameters":[{"name":"id","in":"path","schema":{"type":"integer"}}]}}}}`))
	f.Add([]byte("openapi: 3.0.0\npaths:\n  /x: &a\n    get: {parameters: [{name: q, in: query, schema: {type: string}}]}\n  /y: *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tools, err := ParseOpenAPI(data)
		importValid(t, tools, err)
	})
}
