package webrtc

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/internal/doccheck"
)

// Every constant an agent can see is stated in docs/PROTOCOL.md as VALUE
// (`webrtc.Name`), with the code's value.
func TestProtocolDocMatchesWebRTC(t *testing.T) {
	code := map[string]any{
		"webrtc.DefaultMaxAhead":       DefaultMaxAhead,
		"webrtc.PingEvery":             PingEvery,
		"webrtc.Label":                 Label,
		"webrtc.SignalingSmallWebRTC":  SignalingSmallWebRTC,
		"webrtc.SignalingWHIP":         SignalingWHIP,
		"webrtc.MaxSignalBytes":        int64(MaxSignalBytes),
		"webrtc.HangupTimeout":         HangupTimeout,
		"webrtc.SignalingPipecatStart": SignalingPipecatStart,
		"webrtc.SignallingType":        SignallingType,
		"webrtc.PeerLeft":              PeerLeft,
		"webrtc.ReasonPeerLeft":        ReasonPeerLeft,
		"webrtc.ReasonClosedCleanly":   ReasonClosedCleanly,
		"webrtc.RTVILinger":            RTVILinger,
	}
	undocumented := map[string]string{
		"webrtc.DefaultMaxFrameBytes": "the transport's limit until callsim sets its own (callsim.DefaultMaxFrameBytes) before the first read",
	}
	names, err := doccheck.ExportedConsts(".", "webrtc")
	require.NoError(t, err)
	for _, n := range names {
		_, mapped := code[n]
		_, skipped := undocumented[n]
		assert.True(t, mapped || skipped, "%s: a new constant; add it to docs/PROTOCOL.md and this test", n)
	}
	raw, err := os.ReadFile("../../docs/PROTOCOL.md")
	require.NoError(t, err)
	doc := doccheck.Refs(string(raw), "webrtc")
	for name, want := range code {
		written, ok := doc[name]
		if !assert.True(t, ok, "docs/PROTOCOL.md never states %s as VALUE (`%s`)", name, name) {
			continue
		}
		for _, w := range written {
			got, err := doccheck.Value(want, w)
			if assert.NoError(t, err, "%s: %q", name, w) {
				if d, ok := want.(int64); ok {
					assert.Equal(t, d, got, name)
				} else {
					assert.Equal(t, want, got, name)
				}
			}
		}
	}
}
