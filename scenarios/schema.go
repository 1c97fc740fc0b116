package scenarios

import (
	"encoding/json"

	"github.com/invopop/jsonschema"
)

// SchemaID is the $id of the scenario file schema.
const SchemaID = "https://github.com/callproof/callproof/scenarios/scenario.schema.json"

// Schema returns the JSON Schema of a scenario file, generated from the Go
// types (the committed scenario.schema.json is this output).
func Schema() ([]byte, error) {
	r := &jsonschema.Reflector{
		// Required fields are those without omitempty, as for the loader.
		RequiredFromJSONSchemaTags: false,
		DoNotReference:             false,
	}
	s := r.Reflect(&Scenario{})
	s.ID = SchemaID
	s.Title = "callproof scenario"
	s.Description = "One callproof scenario: a compact case (category + setup) or an explicit step script. See docs/SCENARIOS.md."
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// JSONSchemaExtend lists the accepted event names in the schema.
func (TriggerSpec) JSONSchemaExtend(s *jsonschema.Schema) {
	ev, ok := s.Properties.Get("event")
	if !ok {
		return
	}
	for _, n := range EventNames() {
		ev.Enum = append(ev.Enum, n)
	}
	ev.Description = "a trace event kind or a friendly alias"
}
