package netns

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callproof/callproof/internal/interop"
)

const (
	// CmdTimeout bounds one `ip …` command.
	CmdTimeout = 10 * time.Second
	// Stale is how old a namespace of a prefix with no process in it must
	// be before a later run deletes it: runs take minutes, so only one
	// whose test binary died without its cleanup is that old and empty.
	Stale = 10 * time.Minute
	// EnvHostNetNS carries the parent's network namespace to a child,
	// which refuses to run in it.
	EnvHostNetNS = "CALLPROOF_NETNS_HOST"
)

// NS is a network namespace a test made; it is deleted when the test
// ends.
type NS struct {
	IP   string // the ip command
	Name string // <prefix><random>
}

// New makes a namespace named prefix+random with its lo up, deleted at
// t's end, after sweeping the stale ones of prefix. No root, no `ip` or
// no namespaces skips t, or fails it where interop.Required.
func New(t testing.TB, prefix string) *NS {
	t.Helper()
	if os.Geteuid() != 0 {
		interop.Missing(t, "netns: needs root, to create a network namespace (ip netns add)")
		return nil
	}
	ipBin, err := exec.LookPath("ip")
	if err != nil {
		interop.Missing(t, fmt.Sprintf("netns: no `ip` (iproute2): %v", err))
		return nil
	}
	Sweep(t, ipBin, prefix)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	ns := &NS{IP: ipBin, Name: prefix + hex.EncodeToString(b)}
	if out, err := Run(ipBin, "netns", "add", ns.Name); err != nil {
		interop.Missing(t, fmt.Sprintf("netns: `ip netns add %s` failed (no network namespaces here?): %v: %s", ns.Name, err, out))
		return nil
	}
	t.Cleanup(func() {
		if out, err := Run(ipBin, "netns", "del", ns.Name); err != nil {
			t.Errorf("ip netns del %s: %v: %s", ns.Name, err, out)
		}
	})
	if err := ns.IPCmd("link", "set", "lo", "up"); err != nil {
		t.Fatal(err)
	}
	return ns
}

// DropIPv6 removes lo's ::1, for a namespace whose every packet must be
// in 127.0.0.0/8 (IPv4Only checks it from inside). Janus's echo keeps
// it: without it that test loses frames (not understood yet).
func (ns *NS) DropIPv6() error {
	return ns.IPCmd("-6", "addr", "flush", "dev", "lo")
}

// IPv4Only is nil when no interface of this process's namespace has an
// IPv6 address.
func IPv4Only() error {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if ip, _, err := net.ParseCIDR(a.String()); err != nil || ip.To4() == nil {
			return fmt.Errorf("netns: address %s is not an IPv4 one", a)
		}
	}
	return nil
}

// IPCmd runs `ip -n NAME args…`.
func (ns *NS) IPCmd(args ...string) error {
	if out, err := Run(ns.IP, append([]string{"-n", ns.Name}, args...)...); err != nil {
		return fmt.Errorf("ip -n %s %s: %v: %s", ns.Name, strings.Join(args, " "), err, out)
	}
	return nil
}

// AddLoopbackVeth adds a veth pair dev–peer whose two ends stay in the
// namespace, both up, with addr (a 127.x.y.z) as a /32 on dev: a loopback
// address on an interface that is not IFF_LOOPBACK, which ICE stacks that
// skip loopback interfaces (libnice) gather. Local addresses are
// delivered over lo, so its packets still travel the namespace's lo.
func (ns *NS) AddLoopbackVeth(dev, peer, addr string) error {
	if ip := net.ParseIP(addr); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("netns: %q is not a loopback address", addr)
	}
	for _, args := range [][]string{
		{"link", "add", dev, "type", "veth", "peer", "name", peer},
		{"link", "set", dev, "addrgenmode", "none"}, // no IPv6 link-local
		{"link", "set", peer, "addrgenmode", "none"},
		{"addr", "add", addr + "/32", "dev", dev},
		{"link", "set", peer, "up"},
		{"link", "set", dev, "up"},
	} {
		if err := ns.IPCmd(args...); err != nil {
			return err
		}
	}
	return nil
}

// Command is name run inside the namespace (`ip netns exec` execs it: the
// process started is name itself), killed with the test binary.
func (ns *NS) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, ns.IP, append([]string{"netns", "exec", ns.Name, name}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// Child re-executes the test binary inside the namespace as the test
// named test alone, with params as JSON in env, and waits at most
// timeout. It returns the child's output and whether it passed; a child
// that skipped is a failure here unless the caller looks at the output.
func (ns *NS) Child(test, env string, params any, timeout time.Duration) (out string, err error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return "", err
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	host, err := Current()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := ns.Command(ctx, self, "-test.run=^"+test+"$", "-test.v", "-test.count=1", "-test.timeout="+timeout.String())
	cmd.Env = append(os.Environ(), env+"="+string(raw), EnvHostNetNS+"="+host)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err = cmd.Run()
	return b.String(), err
}

// Params reads a child's parameters from env into p; false when env is
// unset (the test is not a child).
func Params(env string, p any) (bool, error) {
	raw := os.Getenv(env)
	if raw == "" {
		return false, nil
	}
	return true, json.Unmarshal([]byte(raw), p)
}

// Current is this process's network namespace (/proc/self/ns/net).
func Current() (string, error) { return os.Readlink("/proc/self/ns/net") }

// CheckIsolated is nil when this process is in a namespace other than the
// parent's (EnvHostNetNS, when set), whose interfaces are loopback ones
// or named in allowed, and whose every address is a loopback one. It
// returns the interfaces it saw.
func CheckIsolated(allowed ...string) ([]string, error) {
	ns, err := Current()
	if err != nil {
		return nil, err
	}
	if host := os.Getenv(EnvHostNetNS); host != "" && ns == host {
		return nil, fmt.Errorf("netns: still in the parent's network namespace %s", ns)
	}
	return LoopbackOnly(allowed...)
}

// LoopbackOnly is nil when every interface of this process's namespace is
// a loopback one or named in allowed, and every address a loopback one
// (127.0.0.0/8, ::1): no packet can leave the machine's loopback.
func LoopbackOnly(allowed ...string) ([]string, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, i := range ifs {
		names = append(names, i.Name)
		ok := i.Flags&net.FlagLoopback != 0
		for _, a := range allowed {
			ok = ok || i.Name == a
		}
		if !ok {
			return names, fmt.Errorf("netns: interface %s is not one the test made", i.Name)
		}
		addrs, err := i.Addrs()
		if err != nil {
			return names, err
		}
		for _, a := range addrs {
			if ip, _, err := net.ParseCIDR(a.String()); err != nil || !ip.IsLoopback() {
				return names, fmt.Errorf("netns: %s has address %s, not a loopback one", i.Name, a)
			}
		}
	}
	return names, nil
}

// Sweep deletes the namespaces named prefix* a killed run left behind
// (empty, and older than Stale).
func Sweep(t testing.TB, ipBin, prefix string) {
	out, err := Run(ipBin, "netns", "list")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		fi, err := os.Stat(filepath.Join("/run/netns", name))
		if err != nil || time.Since(fi.ModTime()) < Stale {
			continue
		}
		if pids, err := Run(ipBin, "netns", "pids", name); err != nil || len(bytes.TrimSpace(pids)) > 0 {
			continue
		}
		if out, err := Run(ipBin, "netns", "del", name); err != nil {
			t.Logf("a stale namespace %s stays: %v: %s", name, err, out)
		} else {
			t.Logf("deleted the stale namespace %s (created %v, empty)", name, fi.ModTime().Format(time.RFC3339))
		}
	}
}

// Run runs a short command, killed after CmdTimeout.
func Run(name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), CmdTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("%w (killed after %v)", err, CmdTimeout)
	}
	return out, err
}
