package mcptools

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/callproof/callproof/internal/doccheck"
	"github.com/callproof/callproof/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docConsts are the constants docs/PROTOCOL.md "Tools over MCP" states.
func docConsts() map[string]any {
	return map[string]any{
		"mcptools.ArgIdempotencyKey":  ArgIdempotencyKey,
		"mcptools.ArgStateVersion":    ArgStateVersion,
		"mcptools.MetaIdempotencyKey": MetaIdempotencyKey,
		"mcptools.MetaStateVersion":   MetaStateVersion,
		"mcptools.DefaultMaxSessions": DefaultMaxSessions,
		"mcptools.MaxMessageBytes":    MaxMessageBytes,
		"mcptools.DropWait":           DropWait,
	}
}

func TestProtocolDocMatchesMCPTools(t *testing.T) {
	code := docConsts()
	names, err := doccheck.ExportedConsts(".", "mcptools")
	require.NoError(t, err)
	for _, name := range names {
		_, ok := code[name]
		assert.True(t, ok, "%s: a new constant; state it in docs/PROTOCOL.md and docConsts", name)
	}
	raw, err := os.ReadFile("../../docs/PROTOCOL.md")
	require.NoError(t, err)
	assert.Empty(t, doccheck.Mismatches(string(raw), code, "mcptools"), "docs/PROTOCOL.md and the code disagree")
}

// The values "Tools over MCP" states of the schema tools/list gives: the
// key argument's length bound (mockbackend's docs test checks the same
// value against the backend's bound) and the integer type's pattern.
func TestProtocolDocMatchesSchema(t *testing.T) {
	raw, err := os.ReadFile("../../docs/PROTOCOL.md")
	require.NoError(t, err)
	_, sec, ok := strings.Cut(string(raw), "\n## Tools over MCP\n")
	require.True(t, ok, "docs/PROTOCOL.md has a Tools over MCP section")
	sec, _, _ = strings.Cut(sec, "\n## ")
	flat := doccheck.Flat(sec)

	schema := inputSchema(trace.ToolSpec{Name: "t", Consequential: true,
		Args: []trace.ArgSpec{{Name: "n", Type: trace.ArgInteger}}})
	props := schema["properties"].(map[string]any)
	keyLen := props[ArgIdempotencyKey].(map[string]any)["maxLength"]
	written := doccheck.Refs(flat, "mockbackend")["mockbackend.maxKeyLen"]
	require.NotEmpty(t, written, "the section states the key's bound as VALUE (`mockbackend.maxKeyLen`)")
	for _, w := range written {
		n, err := strconv.Atoi(w)
		require.NoError(t, err)
		assert.Equal(t, keyLen, n, "the idempotency_key argument's maxLength")
	}
	pattern := props["n"].(map[string]any)["pattern"].(string)
	assert.Regexp(t, regexp.QuoteMeta("`"+pattern+"` for `integer`"), flat, "the integer pattern the section names")
	assert.Equal(t, false, schema["additionalProperties"], "no other properties allowed")
}
