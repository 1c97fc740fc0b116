package randtools

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
)

// OpenAI writes OpenAI function-calling tools for a made-up domain
// from a seed: for each noun a lookup and two or three writes, with
// parameters of every JSON Schema type init flattens (dates, HH:MM
// patterns, integers, numbers, enums, booleans, codes).
func OpenAI(r *rand.Rand) []byte {
	nouns := []string{"appointment", "parcel", "permit", "voucher", "lesson", "rental", "repair", "pickup"}
	r.Shuffle(len(nouns), func(i, j int) { nouns[i], nouns[j] = nouns[j], nouns[i] })
	type fn struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	}
	type tool struct {
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	values := []map[string]any{
		{"type": "string", "format": "date"},
		{"type": "string", "pattern": `^([01]\d|2[0-3]):[0-5]\d$`},
		{"type": "integer", "description": "how many people"},
		{"type": "number"},
		{"type": "string", "enum": []string{"standard", "express", "same-day"}},
		{"type": "boolean"},
		{"type": "string", "pattern": `^[A-Z]{3}-\d{2}$`},
		{"type": "string"},
	}
	names := []string{"date", "slot_time", "party_size", "price", "speed", "insured", "bay_label", "note"}
	var out []tool
	for _, noun := range nouns[:1+r.IntN(3)] {
		key := noun + "_" + []string{"id", "ref", "number", "code"}[r.IntN(4)]
		keySchema := map[string]any{"type": "string"}
		if r.IntN(2) == 0 {
			keySchema["pattern"] = []string{`^\d{4}$`, `^[A-Z]{2}\d{4}$`, `^[A-Z]\d{5}$`}[r.IntN(3)]
		}
		params := func(withKey bool) map[string]any {
			props := map[string]any{}
			var req []string
			if withKey {
				props[key], req = keySchema, append(req, key)
			}
			for _, i := range r.Perm(len(values))[:1+r.IntN(3)] {
				props[names[i]] = values[i]
				if r.IntN(2) == 0 {
					req = append(req, names[i])
				}
			}
			return map[string]any{"type": "object", "properties": props, "required": req}
		}
		out = append(out, tool{"function", fn{"get_" + noun, "Look a " + noun + " up.", params(true)}})
		out = append(out, tool{"function", fn{[]string{"update_", "change_", "move_"}[r.IntN(3)] + noun, "Change a " + noun + ".", params(true)}})
		out = append(out, tool{"function", fn{[]string{"cancel_", "delete_"}[r.IntN(2)] + noun, "Call off a " + noun + ".",
			map[string]any{"type": "object", "properties": map[string]any{key: keySchema}, "required": []string{key}}}})
		if r.IntN(2) == 0 {
			out = append(out, tool{"function", fn{"book" + strings.ToUpper(noun[:1]) + noun[1:], "Make a new " + noun + ".", params(false)}})
		}
	}
	data, _ := json.Marshal(out)
	return data
}
