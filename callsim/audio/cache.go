package audio

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Cache keeps synthesized speech as WAV files in Dir so a suite synthesizes
// each sentence once, across calls, runs and processes. A file is named by
// sha256(Synth.Name() + "\n" + text) (hex) + ".wav", with the text beside
// it in a ".txt" of the same name for people browsing the directory.
//
// It is safe for concurrent use: within a process, identical requests in
// flight at once synthesize once and share the result; across processes,
// files are written under a temporary name and renamed into place, so a
// reader sees a whole file or none (two processes may both synthesize the
// same text; the last rename wins, with the same content). A file that
// does not read back as a WAV is synthesized again and replaced.
//
// The zero value is not usable: set Dir and Synth (Key and Lookup need
// Synth). Dir is created on first use.
type Cache struct {
	Dir   string
	Synth Synth

	mu     sync.Mutex
	flight map[string]*cacheCall
	// mem keeps recently spoken texts decoded, so a text said on every
	// call of a large run is read from disk once, not once per call.
	mem   map[string]PCM
	order []string // mem's keys, oldest first
}

// MemEntries bounds the texts a Cache keeps decoded in memory (a sentence
// is about 80 KB of PCM, so at most about 20 MB).
const MemEntries = 256

type cacheCall struct {
	done chan struct{}
	pcm  PCM
	err  error
}

// Key is the file name stem for text: the hex sha256 of the synth's name,
// a newline, and the text exactly as given (no normalisation).
func (c *Cache) Key(text string) string {
	sum := sha256.Sum256([]byte(c.Synth.Name() + "\n" + text))
	return hex.EncodeToString(sum[:])
}

// Lookup reports the WAV file for text if it is in the cache. It does not
// validate the file; Speech does.
func (c *Cache) Lookup(text string) (path string, ok bool) {
	path = filepath.Join(c.Dir, c.Key(text)+".wav")
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return path, true
}

// Speech returns text spoken by c.Synth at SampleRate, from the cache when
// it can. Each caller gets its own copy (PCM is often mixed in place).
func (c *Cache) Speech(ctx context.Context, text string) (PCM, error) {
	if c.Synth == nil || c.Dir == "" {
		return nil, errors.New("audio: Cache needs Dir and Synth")
	}
	key := c.Key(text)
	for {
		c.mu.Lock()
		if p, ok := c.mem[key]; ok {
			c.mu.Unlock()
			return clonePCM(p), nil
		}
		call, joined := c.flight[key]
		if !joined {
			if c.flight == nil {
				c.flight = make(map[string]*cacheCall)
			}
			call = &cacheCall{done: make(chan struct{})}
			c.flight[key] = call
		}
		c.mu.Unlock()

		if !joined {
			call.pcm, call.err = c.load(ctx, key, text)
			c.mu.Lock()
			delete(c.flight, key)
			if call.err == nil {
				c.remember(key, call.pcm)
			}
			c.mu.Unlock()
			close(call.done)
			return clonePCM(call.pcm), call.err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-call.done:
		}
		// The leader's context ended its synthesis, not ours: try again
		// (as leader, or joining whoever is leader now).
		if errors.Is(call.err, context.Canceled) || errors.Is(call.err, context.DeadlineExceeded) {
			continue
		}
		return clonePCM(call.pcm), call.err
	}
}

// remember keeps p decoded under key, dropping the oldest beyond
// MemEntries; c.mu is held.
func (c *Cache) remember(key string, p PCM) {
	if c.mem == nil {
		c.mem = make(map[string]PCM)
	}
	if _, ok := c.mem[key]; !ok {
		c.order = append(c.order, key)
	}
	c.mem[key] = p
	for len(c.order) > MemEntries {
		delete(c.mem, c.order[0])
		c.order = c.order[1:]
	}
}

func (c *Cache) load(ctx context.Context, key, text string) (PCM, error) {
	wavPath := filepath.Join(c.Dir, key+".wav")
	if p, err := ReadWAVFile(wavPath); err == nil {
		return p, nil
	}
	// Missing, or unreadable (a corrupted or foreign file): synthesize.
	p, err := c.Synth.Synthesize(ctx, text)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, err
	}
	// Sidecar first: a WAV in the cache always has its text beside it.
	if err := writeAtomic(c.Dir, key+".txt", func(f *os.File) error {
		_, err := f.WriteString(text + "\n")
		return err
	}); err != nil {
		return nil, err
	}
	if err := writeAtomic(c.Dir, key+".wav", func(f *os.File) error { return WriteWAV(f, p) }); err != nil {
		return nil, err
	}
	return p, nil
}

// writeAtomic writes dir/name through a temporary file in dir and a rename,
// so no reader, in this process or another, sees a partial file.
func writeAtomic(dir, name string, write func(*os.File) error) error {
	f, err := os.CreateTemp(dir, ".tmp-"+name+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("audio: cache write %s: %w", name, err)
	}
	return nil
}

func clonePCM(p PCM) PCM {
	if p == nil {
		return nil
	}
	return append(PCM(nil), p...)
}
