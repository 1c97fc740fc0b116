package audiocall

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/internal/doccheck"
)

// docs/PROTOCOL.md and docs/CLI.md state the bound on a call's whole
// recognition as VALUE (`audiocall.DefaultHearTimeout`); it is the code's.
func TestDocsStateHearTimeout(t *testing.T) {
	for _, doc := range []string{"../../docs/PROTOCOL.md", "../../docs/CLI.md"} {
		raw, err := os.ReadFile(doc)
		require.NoError(t, err)
		written := doccheck.Refs(string(raw), "audiocall")["audiocall.DefaultHearTimeout"]
		require.NotEmpty(t, written, "%s never states audiocall.DefaultHearTimeout", doc)
		for _, w := range written {
			got, err := doccheck.Value(DefaultHearTimeout, w)
			if assert.NoError(t, err, "%s: %q", doc, w) {
				assert.Equal(t, DefaultHearTimeout, got, "%s says %s", doc, w)
			}
		}
	}
}
