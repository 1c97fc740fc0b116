package twilio

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/internal/doccheck"
)

// docs/PROTOCOL.md states each bound the caller puts on what a Twilio
// agent sends as VALUE (`twilio.Name`); this checks the values.
func TestProtocolDocMatchesTwilioBounds(t *testing.T) {
	raw, err := os.ReadFile("../../docs/PROTOCOL.md")
	require.NoError(t, err)
	refs := doccheck.Refs(string(raw), "twilio")
	for name, want := range map[string]any{
		"twilio.DefaultMaxMarkNameBytes": int64(DefaultMaxMarkNameBytes),
		"twilio.DefaultMaxPendingMarks":  int64(DefaultMaxPendingMarks),
		"twilio.MaxTranscriptBytes":      int64(MaxTranscriptBytes),
		"twilio.MaxPendingTranscripts":   int64(MaxPendingTranscripts),
		"twilio.EventForeignStream":      EventForeignStream,
		"twilio.MaxForeignFieldBytes":    int64(MaxForeignFieldBytes),
		"twilio.ReasonClosedCleanly":     ReasonClosedCleanly,
		"twilio.ReasonRESTHangUp":        ReasonRESTHangUp,
	} {
		written, ok := refs[name]
		if !assert.True(t, ok, "docs/PROTOCOL.md never states %s", name) {
			continue
		}
		for _, w := range written {
			got, err := doccheck.Value(want, w)
			if assert.NoError(t, err, "%s: %q", name, w) {
				assert.Equal(t, want, got, "%s as written: %q", name, w)
			}
		}
	}
}

// The Twilio section names every custom parameter the caller adds.
func TestProtocolDocNamesTwilioParams(t *testing.T) {
	raw, err := os.ReadFile("../../docs/PROTOCOL.md")
	require.NoError(t, err)
	_, sec, ok := strings.Cut(string(raw), "## Twilio Media Streams dialect")
	require.True(t, ok)
	for _, p := range []string{ParamCallID, ParamToolsBaseURL, ParamToolsToken, ParamToolsCatalog, ParamCallDate, ParamTimeZone} {
		assert.Contains(t, sec, "`"+p+"`")
	}
}
