package toolimport

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/internal/doccheck"
)

// The input limit the docs state is the code's.
func TestDocsStateLimits(t *testing.T) {
	for _, name := range []string{"../docs/CLI.md", "../docs/SCENARIOS.md"} {
		raw, err := os.ReadFile(name)
		require.NoError(t, err)
		assert.Empty(t, doccheck.Mismatches(doccheck.Flat(string(raw)), map[string]any{"toolimport.MaxInput": MaxInput}, "toolimport"), name)
	}
}
