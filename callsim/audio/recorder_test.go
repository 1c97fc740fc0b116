package audio

import (
	"errors"
	"math"
	"sync"
	"testing"
	"time"
)

func TestRecorderPlacement(t *testing.T) {
	r := NewRecorder()
	caller := level(-20, 5) // 100 ms
	agent := level(-10, 10) // 200 ms
	r.Caller(100*time.Millisecond, caller)
	r.Agent(250*time.Millisecond, agent)
	r.Caller(100*time.Millisecond, caller) // overlapping pieces add up
	r.Agent(-50*time.Millisecond, level(-30, 5))

	if d := r.Duration(); d != 450*time.Millisecond {
		t.Errorf("Duration = %v, want 450ms", d)
	}
	var m memFile
	if err := r.WriteWAV(&m); err != nil {
		t.Fatal(err)
	}
	samples, info, err := DecodeWAV(m.reader())
	if err != nil {
		t.Fatal(err)
	}
	if info.Channels != 2 || info.SampleRate != SampleRate || info.BitDepth != 16 {
		t.Fatalf("recording format %+v", info)
	}
	n := len(samples) / 2
	left, right := make(PCM, n), make(PCM, n)
	for i := 0; i < n; i++ {
		left[i], right[i] = samples[2*i], samples[2*i+1]
	}
	at := func(d time.Duration) int { return Samples(d) }
	checks := []struct {
		name     string
		p        PCM
		from, to time.Duration
		level    float64 // dBFS, or SilenceDBFS
	}{
		{"left before caller", left, 0, 100 * time.Millisecond, SilenceDBFS},
		{"left caller twice", left, 100 * time.Millisecond, 200 * time.Millisecond, -20 + 6.02},
		{"left after caller", left, 200 * time.Millisecond, 450 * time.Millisecond, SilenceDBFS},
		{"right: the part after call start", right, 0, 50 * time.Millisecond, -30},
		{"right gap", right, 50 * time.Millisecond, 250 * time.Millisecond, SilenceDBFS},
		{"right agent", right, 250 * time.Millisecond, 450 * time.Millisecond, -10},
	}
	for _, c := range checks {
		got := LevelDBFS(c.p[at(c.from):at(c.to)])
		if (c.level == SilenceDBFS && got != SilenceDBFS) || (c.level != SilenceDBFS && (got < c.level-0.1 || got > c.level+0.1)) {
			t.Errorf("%s: %.2f dBFS, want %v", c.name, got, c.level)
		}
	}
	cl, ag := r.Channels()
	if !equalPCM(cl, left) || !equalPCM(ag, right) {
		t.Error("Channels differs from the written file")
	}
	if r.Truncated() {
		t.Error("Truncated without a cap hit")
	}
}

func TestRecorderCap(t *testing.T) {
	if NewRecorder().max != Samples(MaxRecording) || MaxRecording != 30*time.Minute {
		t.Errorf("default cap %d samples, want 30 min", NewRecorder().max)
	}
	r := NewRecorderLimit(time.Second)
	r.Caller(900*time.Millisecond, level(-20, 10)) // 200 ms: half fits
	r.Agent(time.Hour, level(-20, 10))             // nothing fits
	r.Agent(time.Duration(math.MaxInt64), level(-20, 10))
	r.Agent(time.Duration(math.MinInt64), level(-20, 10))
	if !r.Truncated() {
		t.Error("not Truncated")
	}
	if d := r.Duration(); d != time.Second {
		t.Errorf("Duration = %v, want the 1 s cap", d)
	}
	var m memFile
	err := r.WriteWAV(&m)
	if !errors.Is(err, ErrRecordingTruncated) {
		t.Errorf("WriteWAV: %v, want ErrRecordingTruncated", err)
	}
	samples, info, derr := DecodeWAV(m.reader())
	if derr != nil || info.Channels != 2 || len(samples) != 2*SampleRate {
		t.Errorf("the capped file: %v, %+v, %d samples", derr, info, len(samples))
	}
}

func TestRecorderConcurrent(t *testing.T) {
	r := NewRecorder()
	var wg sync.WaitGroup
	frame := level(-20, 1)
	for _, place := range []func(time.Duration, PCM){r.Caller, r.Agent} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				place(time.Duration(i)*FrameDuration, frame)
			}
		}()
	}
	wg.Wait()
	cl, ag := r.Channels()
	if len(cl) != 500*FrameSamples || !equalPCM(cl, ag) {
		t.Errorf("channels of %d and %d samples, want 10 s each, equal", len(cl), len(ag))
	}
}
