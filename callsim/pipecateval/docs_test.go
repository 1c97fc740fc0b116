package pipecateval

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim/twilio"
	"github.com/callproof/callproof/internal/doccheck"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/trace"
)

// docs/PROTOCOL.md states the dialect's wire values and bounds as VALUE
// (`pipecateval.Name`); this checks them against the code.
func TestProtocolDocMatchesEvalDialect(t *testing.T) {
	raw, err := os.ReadFile("../../docs/PROTOCOL.md")
	require.NoError(t, err)
	assert.Empty(t, doccheck.Mismatches(string(raw), map[string]any{
		"pipecateval.StartType":            StartType,
		"pipecateval.RTVIVersion":          RTVIVersion,
		"pipecateval.ReasonClosedCleanly":  ReasonClosedCleanly,
		"pipecateval.DefaultMaxFrameBytes": DefaultMaxFrameBytes,
		"pipecateval.DefaultWriteTimeout":  DefaultWriteTimeout,
	}, "pipecateval"), "docs/PROTOCOL.md")
}

// The section names every key of the start client-message.
func TestProtocolDocNamesStartKeys(t *testing.T) {
	raw, err := os.ReadFile("../../docs/PROTOCOL.md")
	require.NoError(t, err)
	_, sec, ok := strings.Cut(string(raw), "## Pipecat eval dialect")
	require.True(t, ok)
	sec, _, _ = strings.Cut(sec, "\n## ")
	for _, p := range []string{twilio.ParamCallID, twilio.ParamToolsBaseURL, twilio.ParamToolsToken, twilio.ParamToolsCatalog,
		twilio.ParamToolsMCPURL, twilio.ParamCallDate, twilio.ParamTimeZone} {
		assert.Contains(t, sec, "`"+p+"`")
	}
}

// docs/INTEROP.md lists the core scenarios text mode cannot play (their
// caller makes a noise, which has no text form); the list is exact.
func TestEvalTextModeNoiseScenarios(t *testing.T) {
	core, err := scenarios.Pack("core")
	require.NoError(t, err)
	var noisy []string
	for _, s := range core {
		c, err := scenarios.Compile(s)
		require.NoError(t, err, s.ID)
		for _, st := range c.Script.Steps {
			if st.Do == trace.StepNoise {
				noisy = append(noisy, s.ID)
				break
			}
		}
	}
	require.NotEmpty(t, noisy)
	raw, err := os.ReadFile("../../docs/INTEROP.md")
	require.NoError(t, err)
	_, sec, ok := strings.Cut(string(raw), "**Text mode cannot play noise.**")
	require.True(t, ok)
	sec, _, _ = strings.Cut(sec, "\n\n")
	var listed []string
	for _, f := range strings.Split(sec, "`")[1:] {
		if strings.Contains(f, "-") && !strings.ContainsAny(f, " ") {
			listed = append(listed, f)
		}
	}
	slices.Sort(noisy)
	assert.Equal(t, noisy, listed)
}
