package netns

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const childEnv = "CALLPROOF_NETNS_TEST_CHILD"

type params struct{ Dev string }

// The namespace holds lo and the veth only, every address a loopback one,
// and a child re-executed in it sees that and its parameters.
func TestChildInNamespace(t *testing.T) {
	ns := New(t, "callproof-netnstest-")
	require.NoError(t, ns.AddLoopbackVeth("nt0", "nt1", "127.0.0.2"))
	require.NoError(t, ns.DropIPv6())
	assert.Error(t, ns.AddLoopbackVeth("nt2", "nt3", "10.0.0.1"), "a private address")
	start := time.Now()
	out, err := ns.Child("TestChildSide", childEnv, params{Dev: "nt0"}, 30*time.Second)
	require.NoError(t, err, out)
	assert.Contains(t, out, "--- PASS: TestChildSide", out)
	assert.Contains(t, out, "saw [lo nt1 nt0]", out)
	t.Logf("child in %v", time.Since(start).Round(time.Millisecond))
}

// TestChildSide runs only as TestChildInNamespace's child.
func TestChildSide(t *testing.T) {
	var p params
	ok, err := Params(childEnv, &p)
	require.NoError(t, err)
	if !ok {
		t.Skip("runs only as TestChildInNamespace's child")
	}
	ifs, err := CheckIsolated(p.Dev, "nt1")
	require.NoError(t, err, "interfaces %v", ifs)
	require.NoError(t, IPv4Only())
	t.Logf("saw [%s]", strings.Join(ifs, " "))
}
