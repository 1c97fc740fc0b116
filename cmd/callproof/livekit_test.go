package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// --transport livekit needs the server's credentials, takes them from
// LiveKit's environment variables, and its preflight refuses a server
// that does not answer: nothing is placed (exit 5).
func TestLiveKitFlags(t *testing.T) {
	t.Setenv("LIVEKIT_URL", "")
	t.Setenv("LIVEKIT_API_KEY", "")
	t.Setenv("LIVEKIT_API_SECRET", "")
	out := filepath.Join(t.TempDir(), "out")
	code, _, errOut := fxCLI(t, "run", "--transport", "livekit", "--agent", "ws://127.0.0.1:1", "--out", out, "--only", "corr-01")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "needs the server's API key and secret")

	code, _, errOut = fxCLI(t, "run", "--livekit-agent-name", "a", "--agent", "ws://127.0.0.1:1", "--out", out, "--only", "corr-01")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "are for --transport livekit")

	t.Setenv("LIVEKIT_URL", "ws://127.0.0.1:1")
	t.Setenv("LIVEKIT_API_KEY", "devkey")
	t.Setenv("LIVEKIT_API_SECRET", "secret")
	code, _, errOut = fxCLI(t, "run", "--transport", "livekit", "--out", out, "--only", "corr-01")
	assert.Equal(t, exitNoAgent, code, errOut)
	assert.Contains(t, errOut, "livekit: the server at ws://127.0.0.1:1")
}
