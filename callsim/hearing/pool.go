package hearing

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Pool bounds how many decoder runs are under way at once across the
// Recognizers sharing it (a whole run's calls): every call's utterances
// wait their turn instead of each starting a decoder that competes with
// the calls' 20 ms frame clocks. It also bounds the utterances being
// prepared (resampled, written out, hashed) to one more than its widest:
// when many calls end their scripts together, a thousand utterances
// prepared at once would take the harness's own CPU and memory (and the
// collector's work) from the calls still in real time, all at one moment.
// Its counters are for progress reports. The zero Pool is not usable; a
// nil *Pool bounds nothing.
type Pool struct {
	// n decoders at once while some call sharing the pool is in its
	// real-time part, wide once none is (Live).
	n, wide int
	prep    chan struct{}
	mu      sync.Mutex
	live    int
	busy    int           // decoder runs under way (under mu)
	wake    chan struct{} // closed when a slot frees or the bound widens
	waiting atomic.Int64
	running atomic.Int64
	done    atomic.Int64
}

// DefaultPoolSize is the decoder runs a pool allows at once: one core
// fewer than the machine has (at least one), the one left to the calls'
// frame clocks and the agent.
func DefaultPoolSize() int { return max(runtime.NumCPU()-1, 1) }

// NewPool returns a pool of n slots. n ≤ 0 means DefaultPoolSize while
// any call sharing the pool is in its real-time part (Live) and one per
// core once none is: the recognition left after the last script then
// has the whole machine.
func NewPool(n int) *Pool {
	wide := n
	if n <= 0 {
		n = DefaultPoolSize()
		wide = max(runtime.NumCPU(), n)
	}
	return &Pool{n: n, wide: wide, prep: make(chan struct{}, wide+1), wake: make(chan struct{})}
}

// Size is how many decoder runs the pool allows at once while a call is
// in real time.
func (p *Pool) Size() int { return p.n }

// Wide is how many it allows once no call is.
func (p *Pool) Wide() int { return p.wide }

// Live counts a call sharing the pool into (true) or out of (false) its
// real-time part; each call says each once.
func (p *Pool) Live(on bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.live++
		return
	}
	p.live--
	if p.live == 0 {
		p.wakeLocked()
	}
}

func (p *Pool) wakeLocked() {
	close(p.wake)
	p.wake = make(chan struct{})
}

// PoolStats is a pool's work so far.
type PoolStats struct {
	Waiting, Running int   // decoder runs queued and under way now
	Done             int64 // decoder runs finished (or failed)
}

// Stats reports the pool's work so far.
func (p *Pool) Stats() PoolStats {
	if p == nil {
		return PoolStats{}
	}
	return PoolStats{Waiting: int(p.waiting.Load()), Running: int(p.running.Load()), Done: p.done.Load()}
}

// acquire waits for a slot (or ctx) and returns its release.
func (p *Pool) acquire(ctx context.Context) (func(), error) {
	if p == nil {
		return func() {}, nil
	}
	p.waiting.Add(1)
	for {
		p.mu.Lock()
		bound := p.wide
		if p.live > 0 {
			bound = p.n
		}
		if p.busy < bound {
			p.busy++
			p.mu.Unlock()
			break
		}
		wake := p.wake
		p.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			p.waiting.Add(-1)
			return nil, context.Cause(ctx)
		}
	}
	p.waiting.Add(-1)
	p.running.Add(1)
	return func() {
		p.running.Add(-1)
		p.done.Add(1)
		p.mu.Lock()
		p.busy--
		p.wakeLocked()
		p.mu.Unlock()
	}, nil
}

// prepare waits for a turn to prepare and decode one utterance (or ctx)
// and returns its release. It is held across the utterance's decoder
// runs, each of which takes a slot (acquire) of its own: a turn never
// waits for another turn, so the two bounds cannot deadlock.
func (p *Pool) prepare(ctx context.Context) (func(), error) {
	if p == nil {
		return func() {}, nil
	}
	select {
	case p.prep <- struct{}{}:
		return func() { <-p.prep }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}
