package readdeadline

import (
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/callproof/callproof/callsim"
)

type fakeConn struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeConn) SetReadDeadline(t time.Time) error {
	f.mu.Lock()
	f.t = t
	f.mu.Unlock()
	return nil
}

// The deadline is the earlier of the call's and last sign of life + idle;
// a timeout names which one it was.
func TestKeeperTakesTheEarlierDeadline(t *testing.T) {
	c := &fakeConn{}
	k := New(c)
	call := time.Now().Add(time.Hour)
	k.SetCallDeadline(call)
	assert.Equal(t, call, c.t, "no idle timeout: the call deadline")
	k.SetIdleTimeout(time.Second)
	assert.WithinDuration(t, time.Now().Add(time.Second), c.t, 100*time.Millisecond)
	assert.Equal(t, time.Second, k.Idle())
	k.SetIdleTimeout(2 * time.Hour)
	assert.Equal(t, call, c.t, "the call deadline comes first")
	assert.Contains(t, k.TimedOut().Error(), "no frame and no answer to pings for 2h0m0s")
	k.SetCallDeadline(time.Now().Add(-time.Millisecond))
	assert.ErrorIs(t, k.TimedOut(), callsim.ErrUnresponsive)
	assert.Contains(t, k.TimedOut().Error(), "past the call deadline")
	assert.True(t, IsTimeout(os.ErrDeadlineExceeded))
	assert.False(t, IsTimeout(errors.New("closed")))
}
