package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/callproof/callproof/callsim/webrtc"
	"github.com/callproof/callproof/internal/interop"
)

// envPipecatNetns names, in the test's child, the network namespace it
// runs in.
const envPipecatNetns = "CALLPROOF_PIPECAT_NETNS"

// pipecatBotAddr is the bot's ICE address in the namespace: aioice never
// gathers 127.0.0.1, so the namespace's lo gets a second loopback address.
const pipecatBotAddr = "127.0.0.2"

// TestRunWebRTCPipecatBot is `callproof run --transport webrtc` against
// the same Pipecat bot as TestRunTwilioPipecatBot, answering SmallWebRTC
// on /api/offer with Pipecat's own request handler and transport. The
// call's data rides the offer's request_data; the bot's words are read
// from its RTVI bot-output on the data channel, so
// confirmation_matches_backend is decided; its hang-up is peerLeft. The
// test makes a network namespace whose lo also has pipecatBotAddr and
// re-runs itself inside it for each case (the fake, the bot and the CLI
// all on the namespace's loopback). It needs root and `ip`: a missing one
// fails under CALLPROOF_INTEROP_REQUIRED=1 or CI, skips otherwise.
func TestRunWebRTCPipecatBot(t *testing.T) {
	more := map[string][]string{
		"confirms": {`(?m)^  confirmation_matches_backend +pass$`, `agent\.tool_intent +update_order|rtvi\.llm-function-call`},
		"hangs-up": {`(?m)^  confirmation_matches_backend +pass$`},
		// Pipecat's own word on the function call, as over the eval wire.
		"cancel-on-interruption":    {`llm-function-call-stopped.*"cancelled": true`},
		"no-cancel-on-interruption": {`llm-function-call-stopped.*"cancelled": false`},
	}
	hangUp := "(" + regexp.QuoteMeta(webrtc.ReasonPeerLeft) + "|" + regexp.QuoteMeta(webrtc.ReasonClosedCleanly) + ")"
	cases := pipecatCases(".", hangUp)
	if os.Getenv(envPipecatNetns) != "" {
		// The child, inside the namespace: one case (-test.run).
		ctx, python, root := pipecatVenv(t)
		speech := t.TempDir()
		for _, tc := range pipecatCases(root, hangUp) {
			tc.show = append(tc.show, more[tc.name]...)
			tc.transport = transportWebRTC
			t.Run(tc.name, func(t *testing.T) { runPipecat(ctx, t, python, root, speech, tc) })
		}
		return
	}
	ctx, _, _ := pipecatVenv(t) // installed once, before the children
	ns := pipecatNetns(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// make test runs hangs-up and no-cancel-on-interruption (one call of
	// each configuration); INTEROP_ONLY leaves the others to make interop.
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runPipecatNetns(ctx, t, ns, self, tc.name) })
	}
}

// runPipecatNetns runs the case name of TestRunWebRTCPipecatBot in a
// child inside the namespace ns.
func runPipecatNetns(ctx context.Context, t *testing.T, ns, self, name string) {
	runInNetns(ctx, t, ns, self, "TestRunWebRTCPipecatBot", name)
}

// runInNetns runs the subtest name of test in a child inside the
// namespace ns.
func runInNetns(ctx context.Context, t *testing.T, ns, self, test, name string) {
	runInNetnsFor(ctx, t, ns, self, test, name, 8*time.Minute)
}

// runInNetnsFor is runInNetns with the child's time bound.
func runInNetnsFor(ctx context.Context, t *testing.T, ns, self, test, name string, bound time.Duration) {
	cctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	cmd := exec.CommandContext(cctx, "ip", "netns", "exec", ns, self,
		"-test.run", "^"+test+"$/^"+regexp.QuoteMeta(name)+"$", "-test.v", "-test.count=1", "-test.timeout="+bound.String())
	cmd.Env = append(os.Environ(), envPipecatNetns+"="+ns)
	out, err := cmd.CombinedOutput()
	t.Logf("the child, in %s:\n%s", ns, out)
	switch {
	case err != nil:
		t.Fatalf("the child: %v", err)
	case strings.Contains(string(out), "--- SKIP"):
		t.Skip("the child skipped")
	}
}

// pipecatNetns makes a network namespace for the test (deleted at its
// end): lo up, with pipecatBotAddr beside 127.0.0.1.
func pipecatNetns(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		interop.Missing(t, "pipecat webrtc: needs root, to create a network namespace (ip netns add)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		interop.Missing(t, "pipecat webrtc: no `ip` (iproute2)")
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	ns := "callproof-pipecat-" + hex.EncodeToString(b)
	ipCmd := func(args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
		if err != nil {
			t.Logf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return err
	}
	if ipCmd("netns", "add", ns) != nil {
		interop.Missing(t, "pipecat webrtc: `ip netns add` failed (no network namespaces here?)")
	}
	t.Cleanup(func() { _ = ipCmd("netns", "del", ns) })
	if ipCmd("-n", ns, "link", "set", "lo", "up") != nil || ipCmd("-n", ns, "addr", "add", pipecatBotAddr+"/32", "dev", "lo") != nil {
		t.Fatalf("setting up %s's lo failed", ns)
	}
	return ns
}
