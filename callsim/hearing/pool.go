package hearing

import (
	"context"
	"runtime"
	"sync/atomic"
)

// Pool bounds how many decoder runs are under way at once across the
// Recognizers sharing it (a whole run's calls): every call's utterances
// wait their turn instead of each starting a decoder that competes with
// the calls' 20 ms frame clocks. It also bounds the utterances being
// prepared (resampled, written out, hashed) to one more than its slots:
// when many calls end their scripts together, a thousand utterances
// prepared at once would take the harness's own CPU and memory (and the
// collector's work) from the calls still in real time, all at one moment.
// Its counters are for progress reports. The zero Pool is not usable; a
// nil *Pool bounds nothing.
type Pool struct {
	slots   chan struct{}
	prep    chan struct{}
	waiting atomic.Int64
	running atomic.Int64
	done    atomic.Int64
}

// DefaultPoolSize is the decoder runs a pool allows at once: one core
// fewer than the machine has (at least one), the one left to the calls'
// frame clocks and the agent.
func DefaultPoolSize() int { return max(runtime.NumCPU()-1, 1) }

// NewPool returns a pool of n slots (n ≤ 0: DefaultPoolSize).
func NewPool(n int) *Pool {
	if n <= 0 {
		n = DefaultPoolSize()
	}
	return &Pool{slots: make(chan struct{}, n), prep: make(chan struct{}, n+1)}
}

// Size is how many decoder runs the pool allows at once.
func (p *Pool) Size() int { return cap(p.slots) }

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
	select {
	case p.slots <- struct{}{}:
		p.waiting.Add(-1)
	case <-ctx.Done():
		p.waiting.Add(-1)
		return nil, context.Cause(ctx)
	}
	p.running.Add(1)
	return func() {
		p.running.Add(-1)
		p.done.Add(1)
		<-p.slots
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
