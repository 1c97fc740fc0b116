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
	"syscall"
	"testing"
	"time"

	"github.com/callproof/callproof/internal/interop"
	"github.com/callproof/callproof/internal/netns"
)

// The server's dev credentials (livekit-server --dev uses the same).
const (
	APIKey    = "devkey"
	APISecret = "secret"
	// EnvBinary names a livekit-server binary to use instead of the one
	// scripts/install-livekit.sh puts in bin/livekit/.
	EnvBinary = "CALLPROOF_LIVEKIT_SERVER"
	// EnvNonLoopback=1 lets Start run outside a loopback-only namespace.
	// The LiveKit Go SDK builds its own pion API, which gathers no ICE
	// candidate on a loopback address, so there its media travels this
	// machine's own interface addresses, not 127/8 (the project's rule:
	// loopback, or namespaces a test makes).
	EnvNonLoopback = "CALLPROOF_LIVEKIT_NONLOOPBACK"
	// EnvChild marks the test binary re-executed by InNamespace.
	EnvChild = "CALLPROOF_LIVEKIT_CHILD"
	// ChildTimeout bounds a test run by InNamespace.
	ChildTimeout = 90 * time.Second
	// VethDev and VethPeer are the veth pair InNamespaceVeth adds, VethAddr
	// the loopback address on VethDev: libwebrtc (LiveKit's Python and
	// Node rtc SDKs) gathers no candidate on lo, but does on a 127.x
	// address of another interface.
	VethDev  = "lkv0"
	VethPeer = "lkv1"
	VethAddr = "127.0.0.2"
	// StartTimeout bounds the server's start.
	StartTimeout = 30 * time.Second
	// StopTimeout bounds its stop after SIGTERM, before SIGKILL.
	StopTimeout = 5 * time.Second
)

// RelayPorts is the UDP range of the server's TURN relay.
var RelayPorts = [2]int{40000, 40999}

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

// Start runs a LiveKit server on loopback until t ends. Outside a
// namespace whose every address is a loopback one (InNamespace) it skips
// the test unless EnvNonLoopback is 1 (see there); past that, a missing
// server skips the test, or fails it where interop.Required.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := netns.LoopbackOnly(VethDev, VethPeer); err != nil && os.Getenv(EnvNonLoopback) != "1" {
		t.Skipf("livekit: runs inside its own network namespace (lkserver.InNamespace), or with %s=1: "+
			"the LiveKit Go SDK gathers no loopback ICE candidate, so here its media would leave 127/8 (%v)", EnvNonLoopback, err)
	}
	bin := Binary()
	if bin == "" {
		interop.Missing(t, "livekit interop: no livekit-server (scripts/install-livekit.sh, or "+EnvBinary+")")
		return nil
	}
	port, rtcTCP, rtcUDP, turnUDP := freePort(t, "tcp"), freePort(t, "tcp"), freePort(t, "udp"), freePort(t, "udp")
	// Every address on loopback: the node IP, the server's own candidates
	// (enable_loopback_candidate) and its TURN relay. The SDK's pion skips
	// loopback addresses, so in a namespace that has no other it gathers
	// only the relay candidate (on 127.0.0.1) the server's TURN hands it,
	// and that TURN relays to the server's 127.0.0.1 candidates only
	// because 127/8 is allowed as a peer.
	cfg := fmt.Sprintf(`port: %d
bind_addresses: ["127.0.0.1"]
rtc:
  tcp_port: %d
  udp_port: %d
  node_ip: 127.0.0.1
  use_external_ip: false
  enable_loopback_candidate: true
turn:
  enabled: true
  udp_port: %d
  bind_addresses: ["127.0.0.1"]
  relay_range_start: %d
  relay_range_end: %d
  allow_restricted_peer_cidrs: ["127.0.0.0/8"]
keys:
  %s: %s
logging:
  level: warn
`, port, rtcTCP, rtcUDP, turnUDP, RelayPorts[0], RelayPorts[1], APIKey, APISecret)
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
	// Its own process group, stopped whole, and killed with the test
	// binary when a -timeout ends it before its cleanups run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("livekit-server: %v", err)
	}
	s := &Server{URL: fmt.Sprintf("ws://127.0.0.1:%d", port), Port: port, cmd: cmd}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(StopTimeout):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
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

// InNamespace runs the test t inside a network namespace of its own that
// has lo with 127.0.0.1 only: it re-executes the test binary there as t alone and returns
// false (the parent's work is done: the child passed, or t failed or
// skipped as it did), or, in that child, checks the namespace and returns
// true: the caller runs the test's body, server and SDK participants alike
// on the namespace's 127.0.0.1. With EnvNonLoopback=1 it returns true at
// once: the test runs on the host. The child has ChildTimeout.
func InNamespace(t *testing.T) bool {
	t.Helper()
	return inNamespace(t, false, ChildTimeout)
}

// InNamespaceVeth is InNamespace for a test whose participants include
// libwebrtc ones (a LiveKit Agents worker): the namespace also has the veth
// pair VethDev–VethPeer with VethAddr on VethDev (netns.AddLoopbackVeth),
// still loopback addresses only, and the child has timeout.
func InNamespaceVeth(t *testing.T, timeout time.Duration) bool {
	t.Helper()
	return inNamespace(t, true, timeout)
}

func inNamespace(t *testing.T, veth bool, timeout time.Duration) bool {
	t.Helper()
	if os.Getenv(EnvChild) != "" {
		ifs, err := netns.CheckIsolated(VethDev, VethPeer)
		if err == nil {
			err = netns.IPv4Only()
		}
		if err != nil {
			t.Fatalf("livekit child: %v (interfaces %v)", err, ifs)
		}
		return true
	}
	if os.Getenv(EnvNonLoopback) == "1" {
		t.Logf("livekit: %s=1: on the host, media off 127/8", EnvNonLoopback)
		return true
	}
	ns := netns.New(t, "callproof-livekit-")
	if err := ns.DropIPv6(); err != nil {
		t.Fatal(err)
	}
	if veth {
		if err := ns.AddLoopbackVeth(VethDev, VethPeer, VethAddr); err != nil {
			t.Fatal(err)
		}
	}
	started := time.Now()
	out, err := ns.Child(t.Name(), EnvChild, true, timeout)
	took := time.Since(started).Round(time.Millisecond)
	switch {
	case err != nil:
		t.Fatalf("%s in namespace %s failed after %v: %v\n%s", t.Name(), ns.Name, took, err, out)
	case strings.Contains(out, "--- SKIP: "+t.Name()):
		t.Skipf("%s skipped in namespace %s:\n%s", t.Name(), ns.Name, out)
	case !strings.Contains(out, "--- PASS: "+t.Name()):
		t.Fatalf("%s in namespace %s did not pass:\n%s", t.Name(), ns.Name, out)
	}
	t.Logf("%s passed in namespace %s in %v:\n%s", t.Name(), ns.Name, took, out)
	return false
}
