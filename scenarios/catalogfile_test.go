package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadCatalogBytes(t *testing.T) {
	good := `tools:
  - {name: get_visit, effect: read, table: visits, key_arg: visit_id, args: [{name: visit_id, type: string, required: true}]}
  - {name: cancel_visit, effect: cancel, table: visits, key_arg: visit_id, status_field: status, status_value: cancelled, consequential: true,
     args: [{name: visit_id, type: string, required: true}]}
`
	tools, err := LoadCatalogBytes("c.yaml", []byte(good))
	require.NoError(t, err)
	require.Len(t, tools, 2)
	assert.Equal(t, "cancelled", tools[1].StatusValue)

	for in, want := range map[string]string{
		"tools: []\n": "c.yaml:1: tools: empty catalogue (leave tools out for the order catalogue)",
		"{}\n":        "c.yaml:1: tools: required field missing",
		"tools:\n  - {name: a, effect: zap, table: t}\n":              `c.yaml:2: tools[0].effect: unknown effect "zap" (want read, update, create, cancel or delete)`,
		"tools:\n  - {name: a, effect: create, table: t, extra: 1}\n": "c.yaml:2: tools[0].extra: unknown field",
		"id: x\n": "c.yaml:1: id: unknown field (want one of tools)",
	} {
		_, err := LoadCatalogBytes("c.yaml", []byte(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
}

func TestIsCatalogFile(t *testing.T) {
	for in, want := range map[string]bool{
		"tools: []\n":                true,
		"id: a\ntools: []\n":         false,
		"id: a\ncategory: dtmf\n":    false,
		"- tools\n":                  false,
		"tools: [\n":                 false,
		`{"tools": [{"name": "x"}]}`: true,
	} {
		name := "c.yaml"
		if in[0] == '{' {
			name = "c.json"
		}
		assert.Equal(t, want, IsCatalogFile(name, []byte(in)), in)
	}
}
