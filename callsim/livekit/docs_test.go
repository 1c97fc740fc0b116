package livekit

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/internal/doccheck"
)

// Every constant an agent can see is stated in docs/PROTOCOL.md as VALUE
// (`livekit.Name`), with the code's value.
func TestProtocolDocMatchesLiveKit(t *testing.T) {
	code := map[string]any{
		"livekit.DefaultJoinTimeout":   DefaultJoinTimeout,
		"livekit.DefaultMaxAhead":      DefaultMaxAhead,
		"livekit.RoomPrefix":           RoomPrefix,
		"livekit.CallerIdentity":       CallerIdentity,
		"livekit.TopicTranscription":   TopicTranscription,
		"livekit.AttrAgentState":       AttrAgentState,
		"livekit.AttrTranscribedTrack": AttrTranscribedTrack,
		"livekit.HangupTimeout":        HangupTimeout,
		"livekit.EnvAPIKey":            EnvAPIKey,
		"livekit.EnvAPISecret":         EnvAPISecret,
		"livekit.EventAgentState":      EventAgentState,
		"livekit.ReasonAgentLeft":      ReasonAgentLeft,
		"livekit.NoAgentBusy":          NoAgentBusy,
	}
	undocumented := map[string]string{
		"livekit.EnvURL": "stated as $LIVEKIT_URL beside --agent",
		// The load bot's worker protocol (the server's side of dispatch),
		// not the dialect an agent sees.
		"livekit.WorkerPath":            "the server's own worker endpoint",
		"livekit.WorkerRegisterTimeout": "the load bot's registration bound",
	}
	names, err := doccheck.ExportedConsts(".", "livekit")
	require.NoError(t, err)
	for _, n := range names {
		_, mapped := code[n]
		_, skipped := undocumented[n]
		_, attr := attrs[n]
		assert.True(t, mapped || skipped || attr, "%s: a new constant; add it to docs/PROTOCOL.md and this test", n)
	}
	raw, err := os.ReadFile("../../docs/PROTOCOL.md")
	require.NoError(t, err)
	doc := string(raw)
	for n, v := range attrs {
		assert.Contains(t, doc, "`"+v+"`", "docs/PROTOCOL.md never names the attribute %s", n)
	}
	refs := doccheck.Refs(doc, "livekit")
	for name, want := range code {
		written, ok := refs[name]
		if !assert.True(t, ok, "docs/PROTOCOL.md never states %s as VALUE (`%s`)", name, name) {
			continue
		}
		checkWritten(t, "docs/PROTOCOL.md", name, want, written)
	}
	// The other docs need not state them, but what they state is the
	// code's value.
	for _, other := range []string{"CLI.md", "INTEROP.md", "PERFORMANCE.md", "ARCHITECTURE.md"} {
		raw, err := os.ReadFile("../../docs/" + other)
		require.NoError(t, err)
		for name, written := range doccheck.Refs(string(raw), "livekit") {
			want, ok := code[name]
			if assert.True(t, ok, "docs/%s states %s, which this test does not know", other, name) {
				checkWritten(t, "docs/"+other, name, want, written)
			}
		}
	}
}

// checkWritten checks each value doc writes for name against want.
func checkWritten(t *testing.T, doc, name string, want any, written []string) {
	t.Helper()
	for _, w := range written {
		got, err := doccheck.Value(want, w)
		if assert.NoError(t, err, "%s: %s: %q", doc, name, w) {
			assert.Equal(t, want, got, "%s: %s", doc, name)
		}
	}
}

// The caller's attributes, named in the doc's list.
var attrs = map[string]string{
	"livekit.AttrCallID": AttrCallID, "livekit.AttrToolsURL": AttrToolsURL, "livekit.AttrMCPURL": AttrMCPURL,
	"livekit.AttrToken": AttrToken, "livekit.AttrCallDate": AttrCallDate, "livekit.AttrTimeZone": AttrTimeZone,
	"livekit.AttrCatalog": AttrCatalog, "livekit.AttrParamPrefix": AttrParamPrefix + "NAME",
}
