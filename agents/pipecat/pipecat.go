package pipecat

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
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
// after a "stop", and the replies it speaks after each.
type Script struct {
	Request, Restore      map[string]string
	Confirm, RestoreReply string
}

// Process is one of the Python programs, listening on URL.
type Process struct {
	URL string

	cmd      *exec.Cmd
	out      *lockedBuffer
	exited   chan struct{}
	exitCode int
	once     sync.Once
	killed   bool
}

// StartFake starts fake_llm.py, logging each request it answers to
// logPath; its URL is the OpenAI-compatible base URL (…/v1).
func StartFake(ctx context.Context, python, root, logPath string, s Script) (*Process, error) {
	req, err := json.Marshal(s.Request)
	if err != nil {
		return nil, err
	}
	restore, err := json.Marshal(s.Restore)
	if err != nil {
		return nil, err
	}
	return start(ctx, python, root, "fake_llm.py", "--log", logPath, "--request-args", string(req),
		"--restore-args", string(restore), "--confirm", s.Confirm, "--restore-reply", s.RestoreReply)
}

// StartBot starts bot.py with its model at llmURL; its URL is its Twilio
// Media Streams endpoint (ws://…/ws). cancel is update_order's
// cancel_on_interruption (Pipecat's default is true).
func StartBot(ctx context.Context, python, root, llmURL string, cancel bool) (*Process, error) {
	args := []string{"-W", "ignore::DeprecationWarning", "bot.py", "--llm-url", llmURL}
	if !cancel {
		args = append(args, "--no-cancel-on-interruption")
	}
	return start(ctx, python, root, args...)
}

// start runs python with args in agents/pipecat and waits, until ctx ends,
// for the "listening on URL" line on its stdout.
func start(ctx context.Context, python, root string, args ...string) (*Process, error) {
	cmd := exec.Command(python, args...)
	cmd.Dir = filepath.Join(root, "agents", "pipecat")
	p := &Process{cmd: cmd, out: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.out
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", args, err)
	}
	url := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				select {
				case url <- u:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		_ = cmd.Wait()
		p.exitCode = cmd.ProcessState.ExitCode()
		close(p.exited)
	}()
	select {
	case u := <-url:
		p.URL = u
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("%s exited (status %d) before listening:\n%s", args, p.exitCode, p.Log())
	case <-ctx.Done():
		_, _ = p.Stop()
		return nil, fmt.Errorf("%s not listening: %w:\n%s", args, ctx.Err(), p.Log())
	}
}

// Log is what the program wrote to stderr so far.
func (p *Process) Log() string { return p.out.String() }

// Stop sends SIGTERM, kills the program if it still runs StopWait later,
// and returns its exit status; the error says it had to be killed. Safe
// to call more than once.
func (p *Process) Stop() (int, error) {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		t := time.NewTimer(StopWait)
		defer t.Stop()
		select {
		case <-p.exited:
		case <-t.C:
			p.killed = true
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	<-p.exited
	if p.killed {
		return p.exitCode, errors.New("still running " + StopWait.String() + " after SIGTERM: killed")
	}
	return p.exitCode, nil
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
