package hearing

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/internal/doccheck"
)

// The default pool leaves one core to the calls' frame clocks, as the
// docs say where they name it.
func TestDefaultPoolSizeAsDocumented(t *testing.T) {
	assert.Equal(t, max(runtime.NumCPU()-1, 1), DefaultPoolSize())
	assert.Equal(t, DefaultPoolSize(), NewPool(0).Size())
	assert.Equal(t, DefaultPoolSize(), NewPool(-3).Size())
	assert.Equal(t, 7, NewPool(7).Size())
	said := regexp.MustCompile("one fewer than the machine's cores and at least one \\(`hearing.DefaultPoolSize`")
	for _, doc := range []string{"../../docs/PROTOCOL.md", "../../docs/CLI.md"} {
		raw, err := os.ReadFile(doc)
		require.NoError(t, err)
		assert.Regexp(t, said, doccheck.Flat(string(raw)), doc)
	}
}

// A pool holds back the run past its size until a slot is released; a
// waiter gives up with its context; a nil pool bounds nothing.
func TestPoolBoundsRuns(t *testing.T) {
	p := NewPool(1)
	ctx := context.Background()
	release, err := p.acquire(ctx)
	require.NoError(t, err)
	assert.Equal(t, PoolStats{Running: 1}, p.Stats())

	got := heldBack(t, p, "a second run started in a pool of one")
	release()
	r2 := <-got
	assert.Equal(t, PoolStats{Running: 1, Done: 1}, p.Stats())

	cctx, cancel := context.WithCancelCause(ctx)
	cancel(context.DeadlineExceeded)
	_, err = p.acquire(cctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, PoolStats{Running: 1, Done: 1}, p.Stats(), "a waiter that gave up leaves no trace")
	r2()
	assert.Equal(t, PoolStats{Done: 2}, p.Stats())

	var none *Pool
	r, err := none.acquire(ctx)
	require.NoError(t, err)
	r()
	assert.Equal(t, PoolStats{}, none.Stats())
}

// The decoder's input file is a plain 16 kHz mono WAV that reads back as
// the samples written.
func TestWAV16kReadsBack(t *testing.T) {
	pcm := []int16{0, 1, -1, 32767, -32768, 1234, -4321}
	got, info, err := audio.DecodeWAV(bytes.NewReader(wav16k(pcm)))
	require.NoError(t, err)
	assert.Equal(t, pcm, got)
	assert.Equal(t, 16000, info.SampleRate)
	assert.Equal(t, 1, info.Channels)
}

// Preparation turns are one more than the slots and wait like slots.
func TestPoolBoundsPreparation(t *testing.T) {
	p := NewPool(1)
	ctx := context.Background()
	var releases []func()
	for range 2 {
		r, err := p.prepare(ctx)
		require.NoError(t, err)
		releases = append(releases, r)
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err := p.prepare(cctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "a third turn in a pool of one slot")
	releases[0]()
	r, err := p.prepare(ctx)
	require.NoError(t, err)
	r()
	releases[1]()
	var nilPool *Pool
	r, err = nilPool.prepare(ctx)
	require.NoError(t, err)
	r()
}

// The default pool holds to its size while a call is in real time and
// widens to a decoder per core once none is; an explicit size is fixed.
func TestPoolWidensAfterTheLastScript(t *testing.T) {
	assert.Equal(t, 3, NewPool(3).Wide())
	p := NewPool(0)
	require.Equal(t, max(runtime.NumCPU(), p.Size()), p.Wide())
	if p.Wide() == p.Size() {
		t.Skip("one core: nothing to widen")
	}
	ctx := context.Background()
	p.Live(true)
	var held []func()
	for range p.Size() {
		r, err := p.acquire(ctx)
		require.NoError(t, err)
		held = append(held, r)
	}
	got := heldBack(t, p, "a decoder past the pool's size while a call is in real time")
	p.Live(false)
	held = append(held, <-got)
	assert.Equal(t, p.Size()+1, p.Stats().Running)
	for _, r := range held {
		r()
	}
}

// heldBack asks p for a slot and checks it is not granted (yet); the
// returned channel gives the slot's release once it is.
func heldBack(t *testing.T, p *Pool, why string) <-chan func() {
	t.Helper()
	got := make(chan func(), 1)
	go func() {
		r, err := p.acquire(context.Background())
		assert.NoError(t, err)
		got <- r
	}()
	for p.Stats().Waiting != 1 {
		runtime.Gosched()
	}
	select {
	case <-got:
		t.Fatal(why)
	case <-time.After(20 * time.Millisecond):
	}
	return got
}
