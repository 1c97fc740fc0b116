package subproc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a started program.
type Process struct {
	// Said is the rest of the first stdout line that began with the
	// prefix Start waited for.
	Said string

	cmd      *exec.Cmd
	stderr   *lockedBuffer
	stopWait time.Duration
	exited   chan struct{}
	exitCode int
	once     sync.Once
	killed   bool
	group    bool // the program leads its own process group
}

// Start starts cmd (its Stdout and Stderr must be unset) and waits, until
// ctx ends or the program exits, for a stdout line beginning with prefix.
// stopWait is how long Stop waits after SIGTERM before it kills. Unless
// cmd.SysProcAttr is set, the program leads a process group of its own,
// which Stop signals whole (so nothing it started outlives it), and is
// killed when the thread that started it exits, as when a test binary
// dies of its -timeout without running its cleanups.
func Start(ctx context.Context, cmd *exec.Cmd, prefix string, stopWait time.Duration) (*Process, error) {
	p := &Process{cmd: cmd, stderr: &lockedBuffer{}, stopWait: stopWait, exited: make(chan struct{})}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		p.group = true
	}
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	said := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if s, ok := strings.CutPrefix(sc.Text(), prefix); ok {
				select {
				case said <- s:
				default:
				}
			}
			// Log keeps stdout too: some programs log there (a LiveKit worker does).
			_, _ = p.stderr.Write(append(sc.Bytes(), '\n'))
		}
		_, _ = io.Copy(p.stderr, stdout)
	}()
	go func() {
		_ = cmd.Wait()
		p.exitCode = cmd.ProcessState.ExitCode()
		close(p.exited)
	}()
	select {
	case s := <-said:
		p.Said = s
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("%s exited (status %d) before listening:\n%s", cmd.Args, p.exitCode, p.Log())
	case <-ctx.Done():
		_, _ = p.Stop()
		return nil, fmt.Errorf("%s not listening: %w:\n%s", cmd.Args, ctx.Err(), p.Log())
	}
}

// signal sends sig to the program's process group, or to the program.
func (p *Process) signal(sig syscall.Signal) {
	if p.group {
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
		return
	}
	_ = p.cmd.Process.Signal(sig)
}

// Log is what the program wrote to stderr and stdout so far.
func (p *Process) Log() string { return p.stderr.String() }

// Stop sends SIGTERM, kills the program if it still runs stopWait later,
// and returns its exit status (-1 for a program a signal ended); the
// error says it had to be killed. Safe to call more than once.
func (p *Process) Stop() (int, error) {
	p.once.Do(func() {
		p.signal(syscall.SIGTERM)
		t := time.NewTimer(p.stopWait)
		defer t.Stop()
		select {
		case <-p.exited:
		case <-t.C:
			p.killed = true
			p.signal(syscall.SIGKILL)
			<-p.exited
		}
		if p.group {
			// whatever of the group outlived its leader
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		}
	})
	<-p.exited
	if p.killed {
		return p.exitCode, errors.New("still running " + p.stopWait.String() + " after SIGTERM: killed")
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
