package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/harness"
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

// A LiveKit run's manifest keeps the agent it dispatched by name, and its
// resume dispatches that agent again unless told another: without it the
// server's automatic dispatch brings no named agent, and every call placed
// again ended as agent_error.
func TestLiveKitResumeKeepsTheAgentName(t *testing.T) {
	t.Setenv("LIVEKIT_API_KEY", "devkey")
	t.Setenv("LIVEKIT_API_SECRET", "secret")
	var m harness.Meta
	audioFlags{transport: transportLiveKit, livekit: liveKitFlags{agentName: "callproof-stock"}}.setMeta(&m)
	assert.Equal(t, "callproof-stock", m.LiveKitAgentName)
	dir := t.TempDir()
	b, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, harness.MetaFile), b, 0o644))

	p := &runPlan{out: dir, scale: 1}
	require.NoError(t, p.audioFromMeta())
	assert.Equal(t, "callproof-stock", p.audio.livekit.agentName)
	p = &runPlan{out: dir, scale: 1}
	p.audio.livekit.agentName = "another"
	require.NoError(t, p.audioFromMeta())
	assert.Equal(t, "another", p.audio.livekit.agentName, "a name the resume gives wins")
}
