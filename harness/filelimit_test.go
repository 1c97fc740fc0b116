package harness_test

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/harness"
)

// The soft open-file limit ends at the hard one, and the calls it allows
// are what is left after the reserve, FilesPerCall each.
func TestRaiseFileLimit(t *testing.T) {
	fl, err := harness.RaiseFileLimit()
	require.NoError(t, err)
	var r syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r))
	assert.Equal(t, r.Max, r.Cur, "soft raised to hard")
	assert.Equal(t, fl.Hard, r.Max)
	assert.Equal(t, int((r.Max-harness.FilesReserve)/harness.FilesPerCall), fl.MaxCalls)
}
