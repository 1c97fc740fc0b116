package mcptools

import (
	"github.com/callproof/callproof/trace"
)

// Optional arguments of a consequential tool that carry what the
// Idempotency-Key and X-State-Version headers carry over HTTP: an
// unmodified MCP client can set no per-call _meta, but its model can fill
// in an argument. A catalogue argument of the same name wins.
const (
	ArgIdempotencyKey = "idempotency_key"
	ArgStateVersion   = "state_version"
)

// Keys of a tools/call request's _meta read for the same, for clients that
// can send it. An argument wins over _meta.
const (
	MetaIdempotencyKey = "idempotencyKey"
	MetaStateVersion   = "stateVersion"
)

// typePatterns are the value forms of the catalogue's argument types, as
// mockbackend checks them (docs/PROTOCOL.md "The tool catalogue").
var typePatterns = map[string]string{ //nolint:gochecknoglobals // immutable
	trace.ArgInteger: `^-?[0-9]+$`,
	trace.ArgDate:    `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`,
	trace.ArgTime:    `^([01][0-9]|2[0-3]):[0-5][0-9]$`,
	trace.ArgNumber:  `^-?[0-9]+(\.[0-9]+)?$`,
}

var typeFormats = map[string]string{ //nolint:gochecknoglobals // immutable
	trace.ArgDate: "date",
}

// inputSchema is a tool's arguments as a JSON Schema object. Values are
// strings, as over HTTP; a type's form is its pattern unless the argument
// declares its own (both are checked by the backend either way).
func inputSchema(sp trace.ToolSpec) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, a := range sp.Args {
		p := map[string]any{"type": "string"}
		if a.Description != "" {
			p["description"] = a.Description
		}
		if len(a.Enum) > 0 {
			p["enum"] = append([]string(nil), a.Enum...)
		}
		switch {
		case a.Pattern != "":
			p["pattern"] = a.Pattern
		case typePatterns[a.Type] != "":
			p["pattern"] = typePatterns[a.Type]
		}
		if f := typeFormats[a.Type]; f != "" {
			p["format"] = f
		}
		if a.Required {
			p["minLength"] = 1
			required = append(required, a.Name)
		}
		props[a.Name] = p
	}
	if sp.Consequential {
		if _, taken := props[ArgIdempotencyKey]; !taken {
			props[ArgIdempotencyKey] = map[string]any{
				"type": "string", "minLength": 1, "maxLength": 255,
				"description": "A key unique to this change; send the same key when retrying it, so the change happens once.",
			}
		}
		if _, taken := props[ArgStateVersion]; !taken {
			props[ArgStateVersion] = map[string]any{
				"type":        "integer",
				"description": "The version of your working state these arguments were built from.",
			}
		}
	}
	return map[string]any{
		"type": "object", "properties": props, "required": required, "additionalProperties": false,
	}
}
