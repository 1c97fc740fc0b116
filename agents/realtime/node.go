package realtime

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
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
// server at the URL it was started with.
type NodeAgent struct {
	// URL is the agent's Twilio Media Streams endpoint (ws://…/media-stream).
	URL string

	cmd      *exec.Cmd
	stderr   *lockedBuffer
	exited   chan struct{}
	exitCode int
	once     sync.Once
	killed   bool
}

// StartNodeAgent starts `node server.mjs --port 0 [args…]` in root's
// agents/openai-twilio with REALTIME_URL=realtimeURL and waits, until ctx
// ends, for it to listen. node is the node binary; args such as
// "--tools", "mcp" choose its configuration.
func StartNodeAgent(ctx context.Context, node, root, realtimeURL string, args ...string) (*NodeAgent, error) {
	cmd := exec.Command(node, append([]string{"server.mjs", "--port", "0"}, args...)...)
	cmd.Dir = filepath.Join(root, "agents", "openai-twilio")
	cmd.Env = append(os.Environ(), "REALTIME_URL="+realtimeURL, "OPENAI_AGENTS_DISABLE_TRACING=1")
	a := &NodeAgent{cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = a.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				select {
				case port <- p:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		_ = cmd.Wait()
		a.exitCode = cmd.ProcessState.ExitCode()
		close(a.exited)
	}()
	select {
	case p := <-port:
		a.URL = "ws://127.0.0.1:" + p + "/media-stream"
		return a, nil
	case <-a.exited:
		return nil, fmt.Errorf("agent exited (status %d) before listening:\n%s", a.exitCode, a.Log())
	case <-ctx.Done():
		_, _ = a.Stop()
		return nil, fmt.Errorf("agent not listening: %w:\n%s", ctx.Err(), a.Log())
	}
}

// Log is what the agent wrote to stderr so far.
func (a *NodeAgent) Log() string { return a.stderr.String() }

// Stop sends SIGTERM, kills the agent if it is still running
// NodeAgentStop later, and returns its exit status. The error says it had
// to be killed. Safe to call more than once.
func (a *NodeAgent) Stop() (int, error) {
	a.once.Do(func() {
		_ = a.cmd.Process.Signal(syscall.SIGTERM)
		t := time.NewTimer(NodeAgentStop)
		defer t.Stop()
		select {
		case <-a.exited:
		case <-t.C:
			a.killed = true
			_ = a.cmd.Process.Kill()
			<-a.exited
		}
	})
	<-a.exited
	if a.killed {
		return a.exitCode, errors.New("agent still running " + NodeAgentStop.String() + " after SIGTERM: killed")
	}
	return a.exitCode, nil
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
