package livekit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/callproof/callproof/internal/subproc"
)

const (
	// AgentName is the name the agent registers under, the one
	// --livekit-agent-name dispatches.
	AgentName = "callproof-stock"
	// StopWait is how long Stop waits after SIGTERM before it kills: a
	// LiveKit worker drains its jobs on SIGTERM.
	StopWait = 10 * time.Second
	// Registered is the stdout line's prefix the agent prints once the
	// server registered it as a worker.
	Registered = "registered "
)

// Config is one configuration of the agent.
type Config struct {
	// InterruptTools false is the flawed configuration
	// (--no-interrupt-tools: update_order disallows interruptions).
	InterruptTools bool
	// MCP gives the agent its tools over MCP (--tools mcp: LiveKit's
	// MCPToolset on the call's MCP URL) instead of its update_order over
	// HTTP.
	MCP bool
	// STTURL, when set, has the agent hear the caller with earstt at
	// that URL (--stt ear --stt-url: agents/earstt, the scripted stand-in
	// for a cloud STT); empty: pocketsphinx.
	STTURL string
}

// Agent is the running agent. Log and Stop (SIGTERM to its process group,
// then a kill StopWait later) are subproc.Process's.
type Agent struct {
	*subproc.Process
}

// Start runs agent.py with python (the venv scripts/install-python.sh
// builds) as a worker of the LiveKit server at url with the given
// credentials, its model at llmURL, and waits, until ctx ends, for the
// server to register it.
func Start(ctx context.Context, python, root, url, apiKey, apiSecret, llmURL string, c Config) (*Agent, error) {
	args := []string{"-W", "ignore::DeprecationWarning", "agent.py", "--llm-url", llmURL, "--agent-name", AgentName}
	if !c.InterruptTools {
		args = append(args, "--no-interrupt-tools")
	}
	if c.MCP {
		args = append(args, "--tools", "mcp")
	}
	if c.STTURL != "" {
		args = append(args, "--stt", "ear", "--stt-url", c.STTURL)
	}
	cmd := exec.Command(python, append(args, "start", "--log-level", "info")...)
	cmd.Dir = filepath.Join(root, "agents", "livekit")
	cmd.Env = append(os.Environ(), "LIVEKIT_URL="+url, "LIVEKIT_API_KEY="+apiKey, "LIVEKIT_API_SECRET="+apiSecret)
	p, err := subproc.Start(ctx, cmd, Registered, StopWait)
	if err != nil {
		return nil, err
	}
	return &Agent{Process: p}, nil
}
