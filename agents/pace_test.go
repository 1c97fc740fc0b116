package agents

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dialClock's time moves only when the test moves it; its timers fire
// only when the test fires them.
type dialClock struct {
	mu  sync.Mutex
	now time.Time
	fs  []func()
}

func (c *dialClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *dialClock) AfterFunc(_ time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fs = append(c.fs, f)
	return func() bool { return false }
}

func (c *dialClock) move(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *dialClock) fire(i int) {
	c.mu.Lock()
	f := c.fs[i]
	c.mu.Unlock()
	f()
}

// A call's pace records each timer's lateness against when it was due
// (none for one fired early or on time), each word's against its
// utterance's schedule, and settles the worst at the call's scale.
func TestPaceRecordsLateness(t *testing.T) {
	clock := &dialClock{now: time.Unix(1_800_000_000, 0)}
	p := newPace(clock)
	p.setScale(0.5)
	ran := 0
	p.AfterFunc(100*time.Millisecond, func() { ran++ })
	p.AfterFunc(300*time.Millisecond, func() { ran++ })
	began := p.Now()
	clock.move(100 * time.Millisecond)
	clock.fire(0) // on time
	clock.move(250 * time.Millisecond)
	clock.fire(1) // 50 ms late
	assert.Equal(t, 2, ran, "each timer's func runs")
	p.spoke(began.Add(200 * time.Millisecond)) // now is began+350ms: 150 ms behind
	p.spoke(began.Add(time.Second))            // ahead of its time: not late
	l := p.snapshot()
	assert.Equal(t, 2, l.Timers.N)
	assert.Equal(t, 50*time.Millisecond, l.Timers.Max)
	assert.Equal(t, 2, l.Speech.N)
	assert.Equal(t, 150*time.Millisecond, l.Speech.Max)
	assert.Equal(t, 300*time.Millisecond, l.Worst, "150 ms real at scale 0.5")
}

// A server keeps the latest call of each id, DefaultKeepPaces calls in
// all, oldest out first.
func TestPaceLogKeepsLatest(t *testing.T) {
	assert.Equal(t, 10000, DefaultKeepPaces)
	l := newPaceLog(2)
	a, b, c, a2 := newPace(nil), newPace(nil), newPace(nil), newPace(nil)
	l.put("a", a)
	l.put("b", b)
	l.put("a", a2)
	got, ok := l.get("a")
	require.True(t, ok)
	assert.Same(t, a2, got, "the latest call of the id")
	l.put("c", c)
	_, ok = l.get("b")
	assert.False(t, ok, "the oldest dropped")
	got, ok = l.get("a")
	assert.True(t, ok)
	assert.Same(t, a2, got)
	_, ok = (*paceLog)(nil).get("a")
	assert.False(t, ok)
	assert.Equal(t, DefaultKeepPaces, newPaceLog(0).keep)
}
