package callprooftest_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callprooftest"
)

// preflightURLEnv hands the child test its agent URL.
const preflightURLEnv = "CALLPROOFTEST_PREFLIGHT_URL"

// TestPreflightChild is the body TestNoAgentFailsBeforeAnyCall runs in a
// child process: Run against an agent that is not there must fail t.
func TestPreflightChild(t *testing.T) {
	url := os.Getenv(preflightURLEnv)
	if url == "" {
		t.Skip("run by TestNoAgentFailsBeforeAnyCall")
	}
	callprooftest.Run(t, url, "core", callprooftest.Options{Only: []string{"corr-01", "corr-02"}})
}

// Nothing listens at the URL: the test fails once, naming the URL, and
// no call's subtest runs.
func TestNoAgentFailsBeforeAnyCall(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "ws://" + l.Addr().String() + "/"
	require.NoError(t, l.Close()) // refused from here on
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestPreflightChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), preflightURLEnv+"="+url)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the child test must fail\n%s", out)
	assert.Contains(t, string(out), "callprooftest: preflight: no agent answers at "+url+" (native dialect)")
	assert.Contains(t, string(out), "connection refused")
	assert.NotContains(t, string(out), "TestPreflightChild/corr-01", "no call was placed")
}
