package mcptools

import (
	"os"
	"testing"

	"github.com/callproof/callproof/internal/doccheck"
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
