package toolimport

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/scenarios"
)

// catalogue runs the whole import on data and returns the file written.
func catalogue(t testing.TB, data []byte) ([]byte, error) {
	tools, format, err := Parse(data)
	if err != nil {
		return nil, err
	}
	entries, skipped := Infer(tools)
	var b bytes.Buffer
	require.NoError(t, Write(&b, "in.json", format, entries, skipped))
	return b.Bytes(), nil
}

// The restaurant fixture (a domain no agent of the project knows) imports
// to the committed golden catalogue, which validates. UPDATE_GOLDEN=1
// rewrites it.
func TestRestaurantGolden(t *testing.T) {
	data, err := os.ReadFile("../examples/tools/restaurant-openai.json")
	require.NoError(t, err)
	got, err := catalogue(t, data)
	require.NoError(t, err)
	const golden = "testdata/restaurant-catalogue.yaml"
	if os.Getenv("UPDATE_GOLDEN") != "" {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	tools, err := scenarios.LoadCatalogBytes(golden, got)
	require.NoError(t, err)
	assert.Len(t, tools, 5)

	again, err := catalogue(t, data)
	require.NoError(t, err)
	assert.Equal(t, got, again, "the same input writes the same bytes")
}

// Each input format writes a catalogue that validates.
func TestWrittenCataloguesValidate(t *testing.T) {
	for name, in := range map[string]string{
		"openapi": clinicAPI,
		"mcp": `{"tools":[{"name":"lookup_patient","inputSchema":{"type":"object","properties":{"patient_id":{"type":"string"}}},"annotations":{"readOnlyHint":true}},
		  {"name":"drop_slot","description":"line one\nline two # not a comment\u0001","inputSchema":{"type":"object","properties":{"slot":{"type":"integer","enum":[1,2]}}},"annotations":{"destructiveHint":true}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			out, err := catalogue(t, []byte(in))
			require.NoError(t, err)
			_, err = scenarios.LoadCatalogBytes("c.yaml", out)
			require.NoError(t, err, "%s", out)
			assert.Contains(t, string(out), "# review: effect ")
		})
	}
}
