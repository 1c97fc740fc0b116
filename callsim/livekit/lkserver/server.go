package lkserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callproof/callproof/internal/interop"
)

// The server's dev credentials (livekit-server --dev uses the same).
const (
	APIKey    = "devkey"
	APISecret = "secret"
	// EnvBinary names a livekit-server binary to use instead of the one
	// scripts/install-livekit.sh puts in bin/livekit/.
	EnvBinary = "CALLPROOF_LIVEKIT_SERVER"
	// EnvNonLoopback opts in to the tests that start a server. They are
	// off by default: the LiveKit Go SDK builds its own pion API, which
	// gathers no ICE candidate on a loopback address, so their media would
	// travel this machine's own interface addresses, not 127/8 (the
	// project's rule: loopback, or namespaces a test makes).
	EnvNonLoopback = "CALLPROOF_LIVEKIT_NONLOOPBACK"
	// StartTimeout bounds the server's start.
	StartTimeout = 30 * time.Second
	// StopTimeout bounds its stop after SIGTERM, before SIGKILL.
	StopTimeout = 5 * time.Second
)

// Server is a running LiveKit server.
type Server struct {
	URL  string // ws://127.0.0.1:port
	Port int
	cmd  *exec.Cmd
}

// Binary finds livekit-server: EnvBinary, bin/livekit/ at the
// repository's root, or PATH; "" when none is there.
func Binary() string {
	if p := os.Getenv(EnvBinary); p != "" {
		return p
	}
	if dir, err := os.Getwd(); err == nil {
		for d := dir; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				p := filepath.Join(d, "bin", "livekit", "livekit-server")
				if _, err := os.Stat(p); err == nil {
					return p
				}
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if p, err := exec.LookPath("livekit-server"); err == nil {
		return p
	}
	return ""
}

// freePort asks the kernel for a free loopback port of network.
func freePort(t testing.TB, network string) int {
	t.Helper()
	if network == "udp" {
		c, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start runs a LiveKit server on loopback until t ends. It skips the
// test unless EnvNonLoopback is 1 (see there); past that, a missing
// server skips the test, or fails it where interop.Required.
func Start(t testing.TB) *Server {
	t.Helper()
	if os.Getenv(EnvNonLoopback) != "1" {
		t.Skip("livekit: skipped unless " + EnvNonLoopback + "=1: the LiveKit Go SDK gathers no loopback ICE candidate, " +
			"so this test's media would use this machine's interface addresses, not 127/8 (docs/INTEROP.md, \"LiveKit Agents\")")
	}
	bin := Binary()
	if bin == "" {
		interop.Missing(t, "livekit interop: no livekit-server (scripts/install-livekit.sh, or "+EnvBinary+")")
		return nil
	}
	port, rtcTCP, rtcUDP := freePort(t, "tcp"), freePort(t, "tcp"), freePort(t, "udp")
	// The node IP on loopback: every candidate the server offers is a
	// 127.0.0.1 one.
	cfg := fmt.Sprintf(`port: %d
bind_addresses: ["127.0.0.1"]
rtc:
  tcp_port: %d
  udp_port: %d
  node_ip: 127.0.0.1
  use_external_ip: false
keys:
  %s: %s
logging:
  level: warn
`, port, rtcTCP, rtcUDP, APIKey, APISecret)
	dir := t.TempDir()
	path := filepath.Join(dir, "livekit.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", path)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("livekit-server: %v", err)
	}
	s := &Server{URL: fmt.Sprintf("ws://127.0.0.1:%d", port), Port: port, cmd: cmd}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(StopTimeout):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("livekit-server log:\n%s", tail(string(b), 4000))
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/", port), nil)
		if resp, err := client.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("livekit-server exited at start: %v", err)
		case <-ctx.Done():
			t.Fatalf("livekit-server did not answer within %s", StartTimeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// HTTPURL is the server's API address.
func (s *Server) HTTPURL() string { return strings.Replace(s.URL, "ws://", "http://", 1) }
