package audio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingSynth counts calls to a real synth; gate, if set, holds each
// call until it is closed or the call's context ends.
type countingSynth struct {
	Synth
	calls atomic.Int32
	gate  chan struct{}
}

func (c *countingSynth) Synthesize(ctx context.Context, text string) (PCM, error) {
	c.calls.Add(1)
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-ctx.Done():
			return nil, fmt.Errorf("held: %w", ctx.Err())
		}
	}
	return c.Synth.Synthesize(ctx, text)
}

func newTestCache(t *testing.T, dir string) (*Cache, *countingSynth) {
	t.Helper()
	needTool(t, "flite")
	s := &countingSynth{Synth: Flite("kal16")}
	return &Cache{Dir: dir, Synth: s}, s
}

func TestCacheSynthesizesOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tts") // created on first use
	c, s := newTestCache(t, dir)
	ctx := context.Background()
	if _, ok := c.Lookup("hello there"); ok {
		t.Fatal("Lookup before any synthesis")
	}
	first, err := c.Speech(ctx, "hello there")
	if err != nil {
		t.Fatal(err)
	}
	first[0] = 12345 // callers own their copy
	second, err := c.Speech(ctx, "hello there")
	if err != nil {
		t.Fatal(err)
	}
	if n := s.calls.Load(); n != 1 {
		t.Errorf("%d syntheses for one text", n)
	}
	if second[0] == 12345 {
		t.Error("a caller's change to its PCM leaked into the cache")
	}
	path, ok := c.Lookup("hello there")
	if !ok || filepath.Dir(path) != dir || filepath.Base(path) != c.Key("hello there")+".wav" {
		t.Fatalf("Lookup = %q, %v", path, ok)
	}
	text, err := os.ReadFile(strings.TrimSuffix(path, ".wav") + ".txt")
	if err != nil || string(text) != "hello there\n" {
		t.Errorf("sidecar: %q, %v", text, err)
	}
	if other := (&Cache{Dir: dir, Synth: Flite("rms")}); other.Key("hello there") == c.Key("hello there") {
		t.Error("two voices share a cache key")
	}

	// A new Cache on the same directory (a new process) reuses the file.
	c2, s2 := newTestCache(t, dir)
	p, err := c2.Speech(ctx, "hello there")
	if err != nil || s2.calls.Load() != 0 || !equalPCM(p, second) {
		t.Errorf("new Cache: %d syntheses, %v", s2.calls.Load(), err)
	}
}

func TestCacheConcurrent(t *testing.T) {
	dir := t.TempDir()
	// Two Caches on one directory stand for two processes: they share no
	// memory, only files.
	c1, s1 := newTestCache(t, dir)
	c2, s2 := newTestCache(t, dir)
	texts := []string{"one two three", "four five six", "seven eight nine"}
	var wg sync.WaitGroup
	results := make([][]PCM, len(texts))
	var mu sync.Mutex
	errs := make(chan error, 64)
	for _, c := range []*Cache{c1, c2} {
		for i, text := range texts {
			for range 5 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p, err := c.Speech(context.Background(), text)
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					results[i] = append(results[i], p)
					mu.Unlock()
				}()
			}
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Within one Cache each text is synthesized at most once; across the
	// two, at most twice (both "processes" may race to the same file).
	for _, s := range []*countingSynth{s1, s2} {
		if n := s.calls.Load(); n > int32(len(texts)) {
			t.Errorf("%d syntheses in one Cache for %d texts", n, len(texts))
		}
	}
	for i, rs := range results {
		for _, p := range rs[1:] {
			if !equalPCM(p, rs[0]) {
				t.Errorf("%q: callers got different audio", texts[i])
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2*len(texts) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("cache dir holds %v, want one .wav and one .txt per text", names)
	}
}

func TestCacheResynthesizesCorruptFile(t *testing.T) {
	dir := t.TempDir()
	c, _ := newTestCache(t, dir)
	ctx := context.Background()
	want, err := c.Speech(ctx, "broken record")
	if err != nil {
		t.Fatal(err)
	}
	path, _ := c.Lookup("broken record")
	if err := os.WriteFile(path, []byte("RIFF\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The same Cache answers from memory; another one (another process)
	// reads the file, finds it broken and synthesizes again.
	if got, err := c.Speech(ctx, "broken record"); err != nil || !equalPCM(got, want) {
		t.Fatalf("from memory: %v", err)
	}
	c2, s2 := newTestCache(t, dir)
	got, err := c2.Speech(ctx, "broken record")
	if err != nil || !equalPCM(got, want) {
		t.Fatalf("after corruption: %v", err)
	}
	if n := s2.calls.Load(); n != 1 {
		t.Errorf("%d syntheses, want 1 (the corrupt file replaced)", n)
	}
	if _, err := ReadWAVFile(path); err != nil {
		t.Errorf("file not repaired: %v", err)
	}
}

// A text spoken on every call is decoded once: later calls come from
// memory, each its own copy; the memory is bounded.
func TestCacheKeepsRecentSpeechInMemory(t *testing.T) {
	dir := t.TempDir()
	c, _ := newTestCache(t, dir)
	ctx := context.Background()
	a, err := c.Speech(ctx, "again and again")
	if err != nil {
		t.Fatal(err)
	}
	path, _ := c.Lookup("again and again")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	b, err := c.Speech(ctx, "again and again")
	if err != nil || !equalPCM(a, b) {
		t.Fatalf("from memory: %v", err)
	}
	b[0]++
	if again, _ := c.Speech(ctx, "again and again"); equalPCM(again, b) {
		t.Error("callers share the remembered PCM")
	}
	for i := range MemEntries + 10 {
		if _, err := c.Speech(ctx, fmt.Sprintf("text %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	n, _ := len(c.mem), len(c.order)
	c.mu.Unlock()
	if n != MemEntries {
		t.Errorf("%d texts in memory, want %d", n, MemEntries)
	}
}

func TestCacheLeaderCancelled(t *testing.T) {
	c, s := newTestCache(t, t.TempDir())
	s.gate = make(chan struct{})
	leaderCtx, cancelLeader := context.WithCancel(context.Background())
	leaderErr := make(chan error, 1)
	go func() {
		_, err := c.Speech(leaderCtx, "patience")
		leaderErr <- err
	}()
	for s.calls.Load() == 0 { // the leader is inside Synthesize
		time.Sleep(time.Millisecond)
	}
	follower := make(chan error, 1)
	go func() {
		_, err := c.Speech(context.Background(), "patience")
		follower <- err
	}()
	time.Sleep(50 * time.Millisecond) // let the follower join the flight
	cancelLeader()
	if err := <-leaderErr; !errors.Is(err, context.Canceled) {
		t.Errorf("leader: %v", err)
	}
	close(s.gate)
	if err := <-follower; err != nil {
		t.Errorf("a follower must not inherit the leader's cancellation: %v", err)
	}
}

func TestCacheNeedsConfig(t *testing.T) {
	if _, err := (&Cache{}).Speech(context.Background(), "x"); err == nil {
		t.Error("zero Cache: want an error")
	}
}
