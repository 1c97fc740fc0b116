package harness

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A process placing calls collects at GCPercent, unless GOGC says
// otherwise.
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	assert.Equal(t, GCPercent, TuneGC())
	assert.Equal(t, GCPercent, debug.SetGCPercent(GCPercent), "in force")
	assert.Equal(t, 50, GCPercent, "the documented target")

	t.Setenv("GOGC", "200")
	debug.SetGCPercent(200) // as the runtime reads it at start-up
	assert.Equal(t, 200, TuneGC(), "the user's choice stands")
	assert.Equal(t, 200, debug.SetGCPercent(200))
}
