package harness_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/internal/doccheck"
)

// docs/ARCHITECTURE.md states the bounds of speech preparation; they are
// the code's.
func TestPrewarmDocs(t *testing.T) {
	doc, err := os.ReadFile("../docs/ARCHITECTURE.md")
	require.NoError(t, err)
	refs := doccheck.Refs(string(doc), "harness")
	for name, want := range map[string]any{
		"harness.PrewarmWorkers": int64(harness.PrewarmWorkers),
		"harness.PrewarmTimeout": harness.PrewarmTimeout,
	} {
		require.NotEmpty(t, refs[name], "%s is not stated", name)
		for _, s := range refs[name] {
			got, err := doccheck.Value(want, s)
			require.NoError(t, err, name)
			assert.Equal(t, want, got, name)
		}
	}
}
