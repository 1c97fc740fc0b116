package pipecat

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/callproof/callproof/internal/subproc"
)

// StopWait is how long Stop waits after SIGTERM before it kills.
const StopWait = 10 * time.Second

// Install runs scripts/install-python.sh in root (idempotent) and returns
// the path of the virtual environment's python.
func Install(ctx context.Context, root string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "install-python.sh"))
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("scripts/install-python.sh: %w\n%s", err, out)
	}
	return filepath.Join(root, ".venv", "bin", "python"), nil
}

// Script is what the fake model does (fake_llm.py's flags): the
// update_order arguments of the caller's request and of putting it back
// after a "stop", and the replies it speaks after each; HangUp has it end
// the call (the bot's end_call) with the confirmation. Conversation has it
// read each request instead (fake_llm.py --mode conversation: the caller's
// words so far, the tool results and the offered tools' schemas decide
// its calls and words), and the other fields are not used.
type Script struct {
	Request, Restore      map[string]string
	Confirm, RestoreReply string
	HangUp                bool
	Conversation          bool
}

// Process is one of the Python programs, listening on URL. Log and Stop
// (SIGTERM, then a kill StopWait later) are subproc.Process's.
type Process struct {
	URL string

	*subproc.Process
}

// StartFake starts fake_llm.py, logging each request it answers to
// logPath; its URL is the OpenAI-compatible base URL (…/v1).
func StartFake(ctx context.Context, python, root, logPath string, s Script) (*Process, error) {
	if s.Conversation {
		return start(ctx, python, root, "fake_llm.py", "--log", logPath, "--mode", "conversation")
	}
	req, err := json.Marshal(s.Request)
	if err != nil {
		return nil, err
	}
	restore, err := json.Marshal(s.Restore)
	if err != nil {
		return nil, err
	}
	args := []string{"fake_llm.py", "--log", logPath, "--request-args", string(req),
		"--restore-args", string(restore), "--confirm", s.Confirm, "--restore-reply", s.RestoreReply}
	if s.HangUp {
		args = append(args, "--hang-up")
	}
	return start(ctx, python, root, args...)
}

// StartBot starts bot.py with its model at llmURL; its URL is its Twilio
// Media Streams (and eval) endpoint (ws://…/ws), OfferURL its SmallWebRTC
// one. cancel is the writes' cancel_on_interruption (Pipecat's default
// is true); flags are more of bot.py's (e.g. "--tools", "mcp").
func StartBot(ctx context.Context, python, root, llmURL string, cancel bool, flags ...string) (*Process, error) {
	args := []string{"-W", "ignore::DeprecationWarning", "bot.py", "--llm-url", llmURL}
	if !cancel {
		args = append(args, "--no-cancel-on-interruption")
	}
	return start(ctx, python, root, append(args, flags...)...)
}

// OfferURL is the bot's SmallWebRTC signaling URL (POST /api/offer),
// beside its /ws.
func (p *Process) OfferURL() string {
	u := strings.Replace(p.URL, "ws://", "http://", 1)
	return strings.TrimSuffix(u, "/ws") + "/api/offer"
}

// start runs python with args in agents/pipecat and waits, until ctx ends,
// for the "listening on URL" line on its stdout.
func start(ctx context.Context, python, root string, args ...string) (*Process, error) {
	cmd := exec.Command(python, args...)
	cmd.Dir = filepath.Join(root, "agents", "pipecat")
	p, err := subproc.Start(ctx, cmd, "listening on ", StopWait)
	if err != nil {
		return nil, err
	}
	return &Process{URL: p.Said, Process: p}, nil
}
