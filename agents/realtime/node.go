package realtime

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/callproof/callproof/internal/subproc"
)

// NodeAgentStop bounds the wait for the agent's exit after SIGTERM; then
// it is killed.
const NodeAgentStop = 5 * time.Second

// InstallNodeAgents runs root's scripts/install-node-agents.sh, which
// installs agents/openai-twilio's pinned npm packages (a no-op when
// node_modules is current). ctx bounds it.
func InstallNodeAgents(ctx context.Context, root string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "install-node-agents.sh"))
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("scripts/install-node-agents.sh: %w\n%s", err, out)
	}
	return nil
}

// NodeAgent is agents/openai-twilio (the OpenAI Agents SDK behind its
// Twilio transport) running under node, its model being the Realtime
// server at the URL it was started with. Log and Stop (SIGTERM, then a
// kill NodeAgentStop later) are subproc.Process's.
type NodeAgent struct {
	// URL is the agent's Twilio Media Streams endpoint (ws://…/media-stream).
	URL string

	*subproc.Process
}

// StartNodeAgent starts `node server.mjs --port 0 [args…]` in root's
// agents/openai-twilio with REALTIME_URL=realtimeURL and waits, until ctx
// ends, for it to listen. node is the node binary; args such as
// "--tools", "mcp" choose its configuration.
func StartNodeAgent(ctx context.Context, node, root, realtimeURL string, args ...string) (*NodeAgent, error) {
	cmd := exec.Command(node, append([]string{"server.mjs", "--port", "0"}, args...)...)
	cmd.Dir = filepath.Join(root, "agents", "openai-twilio")
	cmd.Env = append(os.Environ(), "REALTIME_URL="+realtimeURL, "OPENAI_AGENTS_DISABLE_TRACING=1")
	p, err := subproc.Start(ctx, cmd, "listening ", NodeAgentStop)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	return &NodeAgent{URL: "ws://127.0.0.1:" + p.Said + "/media-stream", Process: p}, nil
}
