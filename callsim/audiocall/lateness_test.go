package audiocall

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
	assert.True(t, l.Behind(), "47 ms is more than one 20 ms frame")
	h = newHistogram()
	h.add(20 * time.Millisecond)
	assert.False(t, h.summary().Behind(), "exactly one frame late is not behind")
	h.add(2 * time.Second)
	assert.Equal(t, 2*time.Second, h.summary().Max)
}
