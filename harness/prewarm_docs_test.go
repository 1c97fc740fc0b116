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
	assertDocValues(t, "../docs/ARCHITECTURE.md", map[string]any{
		"harness.PrewarmWorkers": int64(harness.PrewarmWorkers),
		"harness.PrewarmTimeout": harness.PrewarmTimeout,
	})
}

// assertDocValues checks that doc states each harness constant of want,
// everywhere it names it, as the code's value.
func assertDocValues(t *testing.T, doc string, want map[string]any) {
	t.Helper()
	raw, err := os.ReadFile(doc)
	require.NoError(t, err)
	refs := doccheck.Refs(string(raw), "harness")
	for name, v := range want {
		require.NotEmpty(t, refs[name], "%s is not stated in %s", name, doc)
		for _, s := range refs[name] {
			got, err := doccheck.Value(v, s)
			require.NoError(t, err, name)
			assert.Equal(t, v, got, name)
		}
	}
}
