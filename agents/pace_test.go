package agents

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
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
	l := p.snapshot(trace.WireTimes{})
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

// stepClock is a dialClock that also keeps each timer's delay.
type stepClock struct {
	dialClock
	delays []time.Duration
}

func (c *stepClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	c.delays = append(c.delays, d)
	c.mu.Unlock()
	return c.dialClock.AfterFunc(d, f)
}

// Each word is due on its utterance's schedule: a word timer that fired
// late is followed by the next word at its own time, so the lateness of
// one timer is not added to every later word (speech drift stays the
// one late timer's, however long the utterance).
func TestWordsKeepTheirSchedule(t *testing.T) {
	clock := &stepClock{dialClock: dialClock{now: time.Unix(1_800_000_000, 0)}}
	cfg := Careful()
	cfg.Clock = clock
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := &session{ctx: ctx, cancel: cancel, inbox: make(chan any, 64), outbox: make(chan any, 1024), tw: textWire{}}
	e := newEngine(cfg.withDefaults(), http.DefaultClient, s)
	s.eng = e
	e.frame(native.Message{Event: native.EventStart, Start: &native.Start{CallID: "c1", TimeScale: 1,
		Tools: native.Tools{BaseURL: "http://127.0.0.1:1/tools", Catalog: defaultCatalog()}}})
	u := e.speaking
	require.NotNil(t, u, "the greeting is under way")
	require.Greater(t, len(u.words), 3)
	wt := u.wordTime
	late := 5 * time.Millisecond
	for k := 1; k < len(u.words); k++ {
		require.Equal(t, wt-time.Duration(min(k-1, 1))*late, clock.delays[len(clock.delays)-1], "word %d's timer", k)
		clock.move(clock.delays[len(clock.delays)-1] + late) // every timer fires 5 ms late
		clock.fire(len(clock.fs) - 1)
		require.False(t, e.handle(<-s.inbox))
	}
	l := e.pace.snapshot(trace.WireTimes{})
	assert.Equal(t, late, l.Speech.Max, "the drift is one timer's lateness, not the sum of all of them")
	assert.Equal(t, late, l.Timers.Max)
}

// The caller's frames are matched to the agent's reads, and the agent's
// frames to the caller's reads, in order (one WebSocket, in order both
// ways): each read's lateness is its reader's time less its sender's,
// frames only one side timed are not counted, and the worst counts in
// script time like a timer's.
func TestPaceMatchesWireTimes(t *testing.T) {
	assert.Equal(t, 1<<14, trace.MaxWireTimes, "docs/PERFORMANCE.md, Agent lateness")
	t0 := time.Unix(1_800_000_000, 0)
	at := func(ms ...int) []time.Time {
		var ts []time.Time
		for _, m := range ms {
			ts = append(ts, t0.Add(time.Duration(m)*time.Millisecond))
		}
		return ts
	}
	p := newPace(nil)
	p.setScale(0.05)
	p.reads = at(5, 30)   // the first two caller frames, taken 5 and 20 ms late
	p.sends = at(1, 2, 3) // three frames of its own, the third never read
	l := p.snapshot(trace.WireTimes{Sent: at(0, 10, 20), Received: at(41, 12)})
	assert.Equal(t, trace.LatenessStat{N: 2, Max: 20 * time.Millisecond}, l.Reads)
	assert.Equal(t, trace.LatenessStat{N: 2, Max: 40 * time.Millisecond}, l.Sends)
	assert.Equal(t, 1200*time.Millisecond, l.Worst, "the latest read and send together, 60 ms real at scale 0.05")
	p.departed(time.Now().Add(-30 * time.Millisecond))
	l = p.snapshot(trace.WireTimes{})
	assert.Zero(t, l.Reads.N+l.Sends.N, "no wire times, nothing matched")
	assert.Equal(t, 1, l.Tools.N)
	assert.GreaterOrEqual(t, l.Tools.Max, 30*time.Millisecond)
	assert.GreaterOrEqual(t, l.Worst, 600*time.Millisecond, "a late departure counts like a late timer")
}
