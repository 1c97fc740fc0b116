package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/hearing"
	"github.com/callproof/callproof/internal/interop"
	"github.com/callproof/callproof/trace"
)

// Scored audio load against the project's audio-only agent (careful with
// --no-transcript: every word it says is recognized after the script):
// a few core calls at once are scored, their recognition done after their
// scripts, and no call fails for it — the media pause
// while a call waits for its words, and the decoders wait their turn
// (docs/PERFORMANCE.md, "Recognition off the real-time path"). Real time:
// about 30-40 s; make interop only (scripts/test.sh, INTEROP_ONLY).
func TestLoadAudioOnlyAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time audio calls")
	}
	for _, bin := range []string{"flite", "pocketsphinx_continuous"} {
		if _, err := exec.LookPath(bin); err != nil {
			interop.Missing(t, bin+" is not installed (scripts/install-speech.sh installs it)")
		}
	}
	cache := t.TempDir()
	url, agentErr := startAudioAgent(t, cache, "--no-transcript")

	const calls = 3
	code, out, errOut := fxCLI(t, "load", "--transport", "twilio", "--suite", "core", "--calls", "3",
		"--agent", url, "--speech-cache", cache, "--json")
	var res textLoadReport
	require.NoError(t, json.Unmarshal([]byte(out), &res), "exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	assert.Equal(t, calls, res.Calls)
	// A busy machine may put a call behind real time (the run's own
	// figure, never hidden); nothing else may keep a call from its score.
	behind := 0
	for _, e := range res.Errors {
		if strings.Contains(e, callsim.ReasonBehind) {
			behind++
		}
	}
	assert.Equal(t, calls, res.Outcomes[trace.OutcomeScored]+behind, "outcomes %v, errors %v", res.Outcomes, res.Errors)
	require.NotNil(t, res.Recognition, out)
	g := *res.Recognition
	assert.Equal(t, calls, g.Calls, "every call had agent speech to recognize")
	assert.GreaterOrEqual(t, g.Drafts, calls, "each agent utterance decoded once")
	assert.Equal(t, hearing.DefaultPoolSize(), g.PoolSize, "%+v", g)
	assert.GreaterOrEqual(t, g.PoolWide, g.PoolSize)
	if n, panicked := agentErr(); panicked {
		t.Errorf("the agent panicked (%d lines of stderr)", n)
	}
}
