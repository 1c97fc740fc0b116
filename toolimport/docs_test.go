package toolimport

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/internal/doccheck"
)

// The limits the docs state are the code's.
func TestDocsStateLimits(t *testing.T) {
	for name, code := range map[string]map[string]any{
		"../docs/CLI.md":       {"toolimport.MaxInput": MaxInput, "toolimport.MCPTimeout": MCPTimeout},
		"../docs/SCENARIOS.md": {"toolimport.MaxInput": MaxInput},
	} {
		raw, err := os.ReadFile(name)
		require.NoError(t, err)
		assert.Empty(t, doccheck.Mismatches(doccheck.Flat(string(raw)), code, "toolimport"), name)
	}
}
