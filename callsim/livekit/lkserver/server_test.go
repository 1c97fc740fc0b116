package lkserver

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/callproof/callproof/internal/netns"
)

// Outside a loopback-only namespace and without the opt-in, Start skips
// before it looks for a server, whatever CALLPROOF_INTEROP_REQUIRED says:
// its SDK's media would leave 127/8.
func TestStartNeedsOptIn(t *testing.T) {
	if _, err := netns.LoopbackOnly(); err == nil {
		t.Skip("this namespace is loopback-only")
	}
	t.Setenv(EnvNonLoopback, "")
	t.Setenv(EnvBinary, "/nonexistent/livekit-server")
	t.Setenv("CALLPROOF_INTEROP_REQUIRED", "1")
	var skipped bool
	ok := t.Run("start", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Start(t)
	})
	assert.True(t, ok)
	assert.True(t, skipped, "Start ran without %s=1", EnvNonLoopback)
}
