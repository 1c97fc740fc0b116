package scenarios

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

func TestPackNames(t *testing.T) {
	assert.Equal(t, []string{"core", "extended"}, PackNames())
	_, err := Pack("nope")
	assert.Error(t, err)
	_, err = Pack("../packs")
	assert.Error(t, err)
}

func TestEveryBuiltinScenarioValidatesAndCompiles(t *testing.T) {
	for _, name := range PackNames() {
		pack, err := Pack(name)
		require.NoError(t, err, name)
		assert.Empty(t, ValidatePack(pack), name)
		for _, s := range pack {
			assert.True(t, strings.HasPrefix(s.File(), name+"/"), s.File())
			assert.NotEmpty(t, s.Description, s.ID)
			c, err := Compile(s)
			require.NoError(t, err, s.ID)
			require.NotEmpty(t, c.Script.Steps, s.ID)
			last := c.Script.Steps[len(c.Script.Steps)-1]
			if name == "core" {
				assert.Equal(t, "hangup", string(last.Do), s.ID)
			}
		}
	}
}

func TestCorePack(t *testing.T) {
	pack, err := Pack("core")
	require.NoError(t, err)
	require.Len(t, pack, 30)
	want := map[Category][]string{
		CatCorrection:   {"corr-01", "corr-02", "corr-03", "corr-04", "corr-05", "corr-06", "corr-07", "corr-08", "corr-09", "corr-10"},
		CatInterruption: {"int-01", "int-02", "int-03", "int-04", "int-05", "int-06", "int-07", "int-08", "int-09", "int-10"},
		CatToolFailure:  {"tf-01", "tf-02", "tf-03", "tf-04", "tf-05", "tf-06", "tf-07", "tf-08", "tf-09", "tf-10"},
	}
	got := map[Category][]string{}
	noExecute := []string{"corr-09", "corr-10", "int-03", "int-05"}
	for _, s := range pack {
		got[s.Category] = append(got[s.Category], s.ID)
		assert.Empty(t, s.Steps, "core scenarios are compact: %s", s.ID)
		e := s.Expected
		assert.True(t, e.Captured && e.ActiveStateCorrect && e.ToolArgsCorrect && e.StaleWritePrevented &&
			e.BackendCorrect && e.ConfirmationMatchesBackend, "%s: a correct agent passes every axis", s.ID)
		assert.Equal(t, !slices.Contains(noExecute, s.ID), e.ShouldExecute, s.ID)
	}
	assert.Equal(t, want, got)

	stages := map[string]string{}
	for _, s := range pack {
		stages[s.ID], _ = s.Setup["interrupt_stage"].(string)
	}
	assert.Equal(t, "early", stages["corr-01"])
	assert.Equal(t, "during_tool_prep", stages["corr-02"])
	assert.Equal(t, "after_tool_sent", stages["corr-10"])
	assert.Equal(t, "after_tool_started", stages["int-07"])
}

func TestExtendedPack(t *testing.T) {
	pack, err := Pack("extended")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(pack), 5)
	kinds := map[string]bool{}
	for _, s := range pack {
		assert.NotEmpty(t, s.Steps, "extended scenarios use the explicit step script: %s", s.ID)
		for _, st := range s.Steps {
			kinds[st.Do] = true
		}
	}
	for _, k := range []string{"say", "correct", "negate", "interrupt", "noise", "silence", "dtmf", "hangup", "hold", "release", "fail", "fault", "wait_quiet"} {
		assert.True(t, kinds[k], "no extended scenario exercises do: %s", k)
	}
}

func TestSchemaFileIsGenerated(t *testing.T) {
	gen, err := Schema()
	require.NoError(t, err)
	const file = "scenario.schema.json"
	if os.Getenv("UPDATE_SCHEMA") == "1" {
		require.NoError(t, os.WriteFile(file, gen, 0o644))
	}
	committed, err := os.ReadFile(file)
	require.NoError(t, err, "run UPDATE_SCHEMA=1 go test ./scenarios to create it")
	assert.Equal(t, string(gen), string(committed), "scenario.schema.json is stale: run UPDATE_SCHEMA=1 go test ./scenarios")
}

func compiledSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	raw, err := os.ReadFile("scenario.schema.json")
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource(SchemaID, doc))
	sch, err := c.Compile(SchemaID)
	require.NoError(t, err)
	return sch
}

// asJSON reads a YAML or JSON file as the JSON value a schema validates.
func asJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	require.NoError(t, yaml.Unmarshal(data, &v))
	b, err := json.Marshal(v)
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	return doc
}

func TestPackFilesMatchSchema(t *testing.T) {
	sch := compiledSchema(t)
	n := 0
	err := fs.WalkDir(PackFS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(PackFS(), p)
		require.NoError(t, err)
		assert.NoError(t, sch.Validate(asJSON(t, data)), p)
		n++
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 30+len(must(Pack("extended"))), n)

	// The schema can fail: the seed case passes, the broken files do not.
	seed, err := os.ReadFile("testdata/seed001_corr-02.json")
	require.NoError(t, err)
	assert.NoError(t, sch.Validate(asJSON(t, seed)))
	for _, f := range []string{"testdata/three_mistakes.yaml", "testdata/three_mistakes.json"} {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Error(t, sch.Validate(asJSON(t, data)), f)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// The examples in docs/SCENARIOS.md must load and compile as written.
func TestDocExamplesLoad(t *testing.T) {
	doc, err := os.ReadFile("../docs/SCENARIOS.md")
	if os.IsNotExist(err) {
		t.Skip("docs/SCENARIOS.md not present")
	}
	require.NoError(t, err)
	blocks := strings.Split(string(doc), "```yaml\n")[1:]
	require.NotEmpty(t, blocks)
	for i, b := range blocks {
		body, _, ok := strings.Cut(b, "```")
		require.True(t, ok)
		s, err := LoadBytes("SCENARIOS.md example.yaml", []byte(body))
		require.NoError(t, err, "example %d", i+1)
		_, err = Compile(s)
		require.NoError(t, err, "example %d", i+1)
	}
}
