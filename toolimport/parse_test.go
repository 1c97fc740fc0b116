package toolimport

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/scenarios"
)

func TestParseOpenAIShapes(t *testing.T) {
	params := `{"type":"object","properties":{"ref":{"type":"string"},"guests":{"type":"integer"}},"required":["ref"]}`
	want := []Tool{{Name: "move_booking", Description: "Move it.", Args: []scenarios.Arg{
		{Name: "ref", Type: "string", Required: true}, {Name: "guests", Type: "integer"}}}}
	for name, in := range map[string]string{
		"chat completions": `[{"type":"function","function":{"name":"move_booking","description":"Move it.","parameters":` + params + `}}]`,
		"flat realtime":    `[{"type":"function","name":"move_booking","description":"Move it.","parameters":` + params + `}]`,
		"tools wrapper":    `{"tools":[{"type":"function","name":"move_booking","description":"Move it.","parameters":` + params + `}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseOpenAI([]byte(in))
			require.NoError(t, err)
			assert.Equal(t, want, got)
			got, format, err := Parse([]byte(in))
			require.NoError(t, err)
			assert.Equal(t, FormatOpenAI, format)
			assert.Equal(t, want, got)
		})
	}
}

// argOf parses one property schema through the OpenAI parser.
func argOf(t *testing.T, schema string) (scenarios.Arg, error) {
	t.Helper()
	tools, err := ParseOpenAI([]byte(`[{"type":"function","name":"t","parameters":{"type":"object","properties":{"a":` + schema + `}}}]`))
	if err != nil {
		return scenarios.Arg{}, err
	}
	require.Len(t, tools, 1)
	require.Len(t, tools[0].Args, 1)
	return tools[0].Args[0], nil
}

func TestTypeMapping(t *testing.T) {
	for _, tc := range []struct {
		schema string
		want   scenarios.Arg
	}{
		{`{"type":"string","format":"date"}`, scenarios.Arg{Name: "a", Type: "date"}},
		{`{"type":"string","pattern":"^([01]\\d|2[0-3]):[0-5]\\d$"}`, scenarios.Arg{Name: "a", Type: "time"}},
		{`{"type":"string","pattern":"^\\d{2}:\\d{2}$"}`, scenarios.Arg{Name: "a", Type: "time"}},
		{`{"type":"string","pattern":"^\\d{4}$"}`, scenarios.Arg{Name: "a", Type: "string", Pattern: `^\d{4}$`}},
		{`{"type":"string","enum":["a","b"],"description":"pick"}`, scenarios.Arg{Name: "a", Type: "string", Enum: []string{"a", "b"}, Description: "pick"}},
		{`{"enum":["x","y",null]}`, scenarios.Arg{Name: "a", Type: "string", Enum: []string{"x", "y"}}},
		{`{"type":"integer","enum":[1,2]}`, scenarios.Arg{Name: "a", Type: "integer", Enum: []string{"1", "2"}}},
		{`{"type":"integer"}`, scenarios.Arg{Name: "a", Type: "integer"}},
		{`{"type":"number"}`, scenarios.Arg{Name: "a", Type: "number"}},
		{`{"type":"boolean"}`, scenarios.Arg{Name: "a", Type: "string", Enum: []string{"false", "true"}}},
		{`{"type":["string","null"]}`, scenarios.Arg{Name: "a", Type: "string"}},
	} {
		t.Run(tc.schema, func(t *testing.T) {
			got, err := argOf(t, tc.schema)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRefusals(t *testing.T) {
	for _, tc := range []struct{ schema, msg string }{
		{`{"type":"array","items":{"type":"string"}}`, "tool t: argument a: type array cannot be flattened"},
		{`{"type":"object","properties":{}}`, "tool t: argument a: type object cannot be flattened"},
		{`{"$ref":"#/$defs/x"}`, "tool t: argument a: $ref \"#/$defs/x\" names nothing"},
		{`{"$ref":"https://example.com/s.json"}`, "tool t: argument a: $ref \"https://example.com/s.json\" cannot be flattened"},
		{`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, "tool t: argument a: anyOf cannot be flattened"},
		{`{"type":["string","integer"]}`, "tool t: argument a: type"},
		{`{}`, "tool t: argument a: no type"},
		{`{"type":"string","pattern":"("}`, "tool t: argument a: pattern"},
	} {
		t.Run(tc.schema, func(t *testing.T) {
			_, err := argOf(t, tc.schema)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	for in, msg := range map[string]string{
		`[{"type":"web_search"}]`:                                         `only function tools`,
		`[{"type":"function","parameters":{}}]`:                           `tools[0]: no name`,
		`[{"type":"function","name":"a"},{"type":"function","name":"a"}]`: `tool a: defined twice`,
		`{"nope":1}`: `want a list of tools`,
		`[`:          `invalid JSON`,
	} {
		_, err := ParseOpenAI([]byte(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), msg, in)
	}
}

func TestParseMCP(t *testing.T) {
	list := `{"tools":[
	  {"name":"lookup_patient","description":"Find a patient.","inputSchema":{"type":"object","properties":{"patient_id":{"type":"string"}},"required":["patient_id"]},"annotations":{"readOnlyHint":true}},
	  {"name":"drop_slot","inputSchema":{"type":"object","properties":{"slot":{"type":"integer"}}},"annotations":{"destructiveHint":true,"idempotentHint":false}}
	]}`
	yes, no := true, false
	want := []Tool{
		{Name: "lookup_patient", Description: "Find a patient.", Args: []scenarios.Arg{{Name: "patient_id", Type: "string", Required: true}}, ReadOnly: &yes},
		{Name: "drop_slot", Args: []scenarios.Arg{{Name: "slot", Type: "integer"}}, Destructive: &yes, Idempotent: &no},
	}
	for name, in := range map[string]string{
		"result":   list,
		"json-rpc": `{"jsonrpc":"2.0","id":1,"result":` + list + `}`,
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseMCP([]byte(in))
			require.NoError(t, err)
			assert.Equal(t, want, got)
			got, format, err := Parse([]byte(in))
			require.NoError(t, err)
			assert.Equal(t, FormatMCP, format)
			assert.Equal(t, want, got)
		})
	}
	_, err := ParseMCP([]byte(`{"tools":[{"name":"x","inputSchema":{"type":"object","properties":{"l":{"type":"array"}}}}]}`))
	require.EqualError(t, err, "tool x: argument l: type array cannot be flattened to one value")
}

const clinicAPI = `openapi: 3.0.3
info: {title: clinic, version: "1"}
paths:
  /appointments/{appointment_id}:
    parameters:
      - {name: appointment_id, in: path, required: true, schema: {type: string, pattern: '^A\d{5}$'}}
    get:
      operationId: getAppointment
      summary: Read an appointment.
    patch:
      operationId: rescheduleAppointment
      summary: Move an appointment.
      parameters:
        - {name: X-Trace, in: header, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Move'}
    delete:
      summary: Remove an appointment.
  /appointments:
    post:
      operationId: createAppointment
      requestBody:
        content:
          application/json:
            schema:
              type: object
              required: [patient_id, day]
              properties:
                patient_id: {type: string}
                day: {type: string, format: date}
                urgent: {type: boolean}
components:
  schemas:
    Move:
      type: object
      properties:
        day: {type: string, format: date}
        at: {type: string, pattern: '^\d\d:\d\d$'}
`

func TestParseOpenAPI(t *testing.T) {
	key := scenarios.Arg{Name: "appointment_id", Type: "string", Required: true, Pattern: `^A\d{5}$`}
	want := []Tool{
		{Name: "createAppointment", Method: "POST", Path: "/appointments", Args: []scenarios.Arg{
			{Name: "patient_id", Type: "string", Required: true}, {Name: "day", Type: "date", Required: true},
			{Name: "urgent", Type: "string", Enum: []string{"false", "true"}}}},
		{Name: "getAppointment", Description: "Read an appointment.", Method: "GET", Path: "/appointments/{appointment_id}",
			Args: []scenarios.Arg{key}, PathArgs: []string{"appointment_id"}},
		{Name: "rescheduleAppointment", Description: "Move an appointment.", Method: "PATCH", Path: "/appointments/{appointment_id}",
			Args: []scenarios.Arg{key, {Name: "day", Type: "date"}, {Name: "at", Type: "time"}}, PathArgs: []string{"appointment_id"}},
		{Name: "delete_appointments_appointment_id", Description: "Remove an appointment.", Method: "DELETE", Path: "/appointments/{appointment_id}",
			Args: []scenarios.Arg{key}, PathArgs: []string{"appointment_id"}},
	}
	got, err := ParseOpenAPI([]byte(clinicAPI))
	require.NoError(t, err)
	assert.Equal(t, want, got)
	got, format, err := Parse([]byte(clinicAPI))
	require.NoError(t, err)
	assert.Equal(t, FormatOpenAPI, format)
	assert.Equal(t, want, got)

	for in, msg := range map[string]string{
		`{"openapi":"2.0","paths":{}}`: `want an OpenAPI 3 document`,
		`{"openapi":"3.1.0"}`:          `no paths`,
		`{"openapi":"3.1.0","paths":{"/a":{"post":{"operationId":"p","requestBody":{"content":{"text/plain":{}}}}}}}`:                                                    `tool p: requestBody: only application/json`,
		`{"openapi":"3.1.0","paths":{"/a":{"post":{"operationId":"p","requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Nope"}}}}}}}}`: `tool p: parameters: $ref "#/components/schemas/Nope" names nothing`,
		`{"openapi":"3.1.0","paths":{"/a":{"get":{"operationId":"p","parameters":[{"name":"tags","in":"query","schema":{"type":"array"}}]}}}}`:                           `tool p: argument tags: type array`,
	} {
		_, err := ParseOpenAPI([]byte(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), msg, in)
	}
}

// A $ref that names itself ends, refused, instead of looping.
func TestRefCycle(t *testing.T) {
	_, err := ParseOpenAPI([]byte(`{"openapi":"3.0.0","components":{"schemas":{"A":{"$ref":"#/components/schemas/A"}}},
	  "paths":{"/a":{"post":{"operationId":"p","requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/A"}}}}}}}}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot be flattened")
}

func TestFixtureParses(t *testing.T) {
	data, err := os.ReadFile("../examples/tools/restaurant-openai.json")
	require.NoError(t, err)
	tools, format, err := Parse(data)
	require.NoError(t, err)
	assert.Equal(t, FormatOpenAI, format)
	assert.Len(t, tools, 6)
}
