package harness_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim/audiocall"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/internal/doccheck"
)

// docs/PROTOCOL.md and docs/CLI.md state the decoders' niceness as VALUE
// (`harness.DefaultHearingNice`); it is the code's. A call that recognizes
// waits for its recognition as long as audiocall lets it.
func TestDocsStateHearingNice(t *testing.T) {
	for _, doc := range []string{"../docs/PROTOCOL.md", "../docs/CLI.md"} {
		raw, err := os.ReadFile(doc)
		require.NoError(t, err)
		written := doccheck.Refs(string(raw), "harness")["harness.DefaultHearingNice"]
		require.NotEmpty(t, written, "%s never states harness.DefaultHearingNice", doc)
		for _, w := range written {
			got, err := doccheck.Value(int64(0), w)
			if assert.NoError(t, err, "%s: %q", doc, w) {
				assert.Equal(t, int64(harness.DefaultHearingNice), got, "%s says %s", doc, w)
			}
		}
	}
	assert.Equal(t, audiocall.DefaultHearTimeout, harness.HearingFlushTimeout)
}
