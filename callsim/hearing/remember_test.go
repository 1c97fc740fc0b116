package hearing

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeDecoder writes a stand-in for pocketsphinx_continuous that logs
// each run to a file and prints one word.
func fakeDecoder(t *testing.T) (*Recognizer, func() int) {
	t.Helper()
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	bin := filepath.Join(dir, "decoder")
	script := "#!/bin/sh\necho run >> " + runs + "\nsleep 0.2\necho 'yes 0.10 0.50 1.000000'\n"
	require.NoError(t, os.WriteFile(bin, []byte(script), 0o755))
	dict := filepath.Join(dir, "dict")
	require.NoError(t, os.WriteFile(dict, []byte("yes Y EH S\n"), 0o600))
	count := func() int {
		b, _ := os.ReadFile(runs)
		return strings.Count(string(b), "run")
	}
	return &Recognizer{Bin: bin, Dict: dict, HMM: dir, Flite: "-"}, count
}

// Copies of a scenario hear the same synthesized replies: identical
// samples under one grammar are decoded once, however many calls ask at
// once; other samples, or the cross-check's other runs, decode anew.
func TestIdenticalDecodesRunOnce(t *testing.T) {
	r, runs := fakeDecoder(t)
	g := BuildGrammar(nil, nil)
	pcm := make([]int16, 1600)
	for i := range pcm {
		pcm[i] = int16(i % 300)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			res, err := r.Decode(ctx, pcm, g)
			assert.NoError(t, err)
			assert.Equal(t, []string{"yes"}, res.Words)
		})
	}
	wg.Wait()
	assert.Equal(t, 1, runs(), "eight identical decodes, one decoder run")
	assert.EqualValues(t, 7, r.Remembered())

	other := append([]int16(nil), pcm...)
	other[0]++
	_, err := r.Decode(ctx, other, g)
	require.NoError(t, err)
	assert.Equal(t, 2, runs(), "other samples decode anew")

	res, err := r.Check(ctx, pcm, g, Result{Words: []string{"yes"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"yes"}, res.Check)
	assert.Equal(t, 4, runs(), "the cross-check's two runs are runs of their own")
	_, err = r.Check(ctx, pcm, g, Result{Words: []string{"yes"}})
	require.NoError(t, err)
	assert.Equal(t, 4, runs())
	assert.EqualValues(t, 9, r.Remembered())
}

// A failed run is not remembered: the next identical decode runs again.
func TestFailedDecodeIsForgotten(t *testing.T) {
	r, runs := fakeDecoder(t)
	g := BuildGrammar(nil, nil)
	pcm := make([]int16, 800)
	pcm[1] = 99
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.Decode(ctx, pcm, g)
	require.Error(t, err)
	_, err = r.Decode(context.Background(), pcm, g)
	require.NoError(t, err)
	assert.Equal(t, 1, runs())
	assert.Zero(t, r.Remembered())
}
