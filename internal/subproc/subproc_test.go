package subproc

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestStartReadsTheLineAndStops(t *testing.T) {
	cmd := exec.Command("sh", "-c", `echo oops >&2; echo warming up; echo "listening on 42"; exec sleep 60`)
	p, err := Start(context.Background(), cmd, "listening on ", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if p.Said != "42" {
		t.Errorf("Said = %q, want 42", p.Said)
	}
	if _, err := p.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if !strings.Contains(p.Log(), "oops") {
		t.Errorf("Log = %q, want the program's stderr", p.Log())
	}
	if _, err := p.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestStartFailsWhenTheProgramExitsFirst(t *testing.T) {
	cmd := exec.Command("sh", "-c", `echo broken >&2; exit 3`)
	_, err := Start(context.Background(), cmd, "listening on ", time.Second)
	if err == nil || !strings.Contains(err.Error(), "status 3") || !strings.Contains(err.Error(), "broken") {
		t.Errorf("err = %v, want the exit status and stderr", err)
	}
}

func TestStopKillsAProgramThatIgnoresSIGTERM(t *testing.T) {
	cmd := exec.Command("sh", "-c", `trap "" TERM; echo "listening on x"; while :; do sleep 1; done`)
	p, err := Start(context.Background(), cmd, "listening on ", 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stop(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Stop: %v, want killed", err)
	}
}

func TestStartEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Start(ctx, exec.Command("sleep", "60"), "listening on ", time.Second)
	if err == nil || !strings.Contains(err.Error(), "not listening") {
		t.Errorf("err = %v, want not listening", err)
	}
}

// Stop ends what the program started too: a test that times out or stops
// an agent leaves no grandchild running.
func TestStopEndsTheProgramsChildren(t *testing.T) {
	cmd := exec.Command("sh", "-c", `sleep 60 & echo "listening on $!"; wait`)
	p, err := Start(context.Background(), cmd, "listening on ", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(p.Said)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		// gone, or a zombie nobody reaped yet: not running
		raw, err := os.ReadFile("/proc/" + p.Said + "/stat")
		if err != nil || strings.Contains(string(raw), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the program's child %d still runs after Stop: %s", pid, raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
