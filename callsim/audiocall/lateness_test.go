package audiocall

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
)

func TestLatenessQuantiles(t *testing.T) {
	h := newHistogram()
	for i := 0; i < 98; i++ {
		h.add(time.Millisecond / 2)
	}
	h.add(15 * time.Millisecond)
	h.add(47 * time.Millisecond)
	l := h.summary()
	assert.Equal(t, 100, l.Frames)
	assert.Equal(t, time.Millisecond, l.P50)
	assert.Equal(t, 16*time.Millisecond, l.P99)
	assert.Equal(t, 47*time.Millisecond, l.Max)
	h.add(2 * time.Second)
	assert.Equal(t, 2*time.Second, h.summary().Max)
}

// A few frames a millisecond or five over their 20 ms slot are jitter no
// agent perceives: the call keeps its verdict.
func TestSmallOverrunIsNotBehind(t *testing.T) {
	for _, over := range []time.Duration{time.Millisecond, 1500 * time.Microsecond, 5 * time.Millisecond} {
		h := newHistogram()
		for i := 0; i < 500; i++ {
			h.add(time.Millisecond / 2)
		}
		for i := 0; i < 3; i++ {
			h.add(20*time.Millisecond + over)
		}
		assert.False(t, h.summary().Behind(), "3 of 503 frames %s over a frame", over)
	}
	h := newHistogram()
	h.add(callsim.JitterAllowance)
	assert.False(t, h.summary().Behind(), "exactly the allowance late is not behind")
}

// A single frame past the jitter allowance is a gap the agent could hear;
// so is a drift that carried every later frame past it.
func TestStallOrDriftIsBehind(t *testing.T) {
	h := newHistogram()
	for i := 0; i < 1000; i++ {
		h.add(0)
	}
	h.add(callsim.JitterAllowance + time.Millisecond)
	l := h.summary()
	assert.True(t, l.Behind(), "one frame past the allowance")
	assert.Contains(t, l.Why(), "over the 60ms jitter allowance")

	h = newHistogram()
	for i := 0; i < 100; i++ {
		h.add(time.Duration(i) * time.Millisecond) // a pacer losing 1 ms a frame
	}
	assert.True(t, h.summary().Behind(), "%+v", h.summary())
}

// stallWire holds the caller's frame clock once, as a process stopped by
// the scheduler or a collector would.
type stallWire struct {
	nullWire
	at    int
	stall time.Duration
	once  sync.Once
	sent  chan int
}

func (w *stallWire) SendFrame(n int, _ time.Duration, _ []byte) error {
	if n == w.at {
		w.once.Do(func() { time.Sleep(w.stall) })
	}
	select {
	case w.sent <- n:
	default:
	}
	return nil
}

// A stall of the real pacer past the allowance marks the call, measured
// on the frames queued behind it.
func TestPacerStallIsBehind(t *testing.T) {
	w := &stallWire{at: 3, stall: 3 * callsim.JitterAllowance, sent: make(chan int, 1)}
	var c *Call
	c = New(Config{}, w, func() error { <-c.Done(); return nil })
	t.Cleanup(func() { _ = c.Shutdown(func() error { return nil }) })
	c.StartClock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		select {
		case n := <-w.sent:
			if n < w.at+2 {
				continue
			}
		case <-ctx.Done():
			t.Fatal("the pacer sent no frame after the stall")
		}
		break
	}
	l := c.Lateness()
	require.GreaterOrEqual(t, l.Max, 2*callsim.JitterAllowance, "the frame after the stall waited for it")
	assert.True(t, l.Behind(), "%+v", l)
}
