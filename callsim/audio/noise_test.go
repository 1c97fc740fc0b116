package audio

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestNoiseDeterministic(t *testing.T) {
	for _, kind := range NoiseKinds() {
		a, err := Noise(kind, 2*time.Second, 7)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Noise(kind, 2*time.Second, 7)
		c, _ := Noise(kind, 2*time.Second, 8)
		if len(a) != 16000 {
			t.Errorf("%s: %d samples for 2 s", kind, len(a))
		}
		if !equalPCM(a, b) {
			t.Errorf("%s: two runs with one seed differ", kind)
		}
		if equalPCM(a, c) {
			t.Errorf("%s: seeds 7 and 8 give the same noise", kind)
		}
	}
	tv, _ := Noise("tv", time.Second, 7)
	cough, _ := Noise("cough", time.Second, 7)
	if equalPCM(tv[:800], cough[:800]) {
		t.Error("kinds share their random numbers")
	}
}

func frameLevels(p PCM) []float64 {
	var out []float64
	for _, f := range Frames(p) {
		out = append(out, LevelDBFS(f))
	}
	return out
}

func TestNoiseLevels(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		// Steady kinds: level over the whole duration.
		for _, tt := range []struct {
			kind  string
			level float64
		}{{"tv", -24}, {"hum", -30}, {"hum50", -30}, {"hum60", -30}, {"music", -26}, {"traffic", -28}} {
			p, _ := Noise(tt.kind, 3*time.Second, seed)
			if l := LevelDBFS(p); math.Abs(l-tt.level) > 0.5 {
				t.Errorf("%s seed %d: %.1f dBFS, want %v", tt.kind, seed, l, tt.level)
			}
		}
		// Events: loudest frame, and silence after the event.
		for _, tt := range []struct {
			kind  string
			peak  float64
			until time.Duration
		}{{"cough", -14, 340 * time.Millisecond}, {"door", -12, 500 * time.Millisecond}} {
			p, _ := Noise(tt.kind, 2*time.Second, seed)
			levels := frameLevels(p)
			peak := math.Inf(-1)
			for _, l := range levels {
				peak = max(peak, l)
			}
			if math.Abs(peak-tt.peak) > 0.5 {
				t.Errorf("%s seed %d: loudest frame %.1f dBFS, want %v", tt.kind, seed, peak, tt.peak)
			}
			if l := LevelDBFS(p[Samples(tt.until):]); l != SilenceDBFS {
				t.Errorf("%s seed %d: %.1f dBFS after %v, want silence", tt.kind, seed, l, tt.until)
			}
			if levels[0] < tt.peak-10 {
				t.Errorf("%s seed %d: first frame %.1f dBFS, want a sharp start", tt.kind, seed, levels[0])
			}
		}
	}
}

func TestNoiseCharacter(t *testing.T) {
	// Hum: steady, at the mains frequency.
	for _, tt := range []struct {
		kind string
		seed int64
		f0   float64
	}{{"hum", 2, 60}, {"hum", 3, 50}, {"hum50", 2, 50}, {"hum60", 3, 60}} {
		p, _ := Noise(tt.kind, 2*time.Second, tt.seed)
		if f := dominantFreq(p, SampleRate, 40, 70, 1); f != tt.f0 {
			t.Errorf("%s seed %d: fundamental %v Hz, want %v", tt.kind, tt.seed, f, tt.f0)
		}
		if toneLevel(p, 3*tt.f0, SampleRate) < 0.3*toneLevel(p, tt.f0, SampleRate) {
			t.Errorf("%s: no third harmonic", tt.kind)
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, l := range frameLevels(p[:len(p)/FrameSamples*FrameSamples]) {
			lo, hi = min(lo, l), max(hi, l)
		}
		if hi-lo > 2 {
			t.Errorf("%s: frame levels span %.1f dB, want steady", tt.kind, hi-lo)
		}
	}
	// TV babble: modulated like speech (loud syllables, dips between them),
	// not steady noise.
	p, _ := Noise("tv", 5*time.Second, 1)
	levels := frameLevels(p)
	var loud, quiet int
	for _, l := range levels {
		if l > -24 {
			loud++
		}
		if l < -34 {
			quiet++
		}
	}
	if loud < len(levels)/5 || quiet < len(levels)/20 {
		t.Errorf("tv: %d loud and %d quiet frames of %d: not speech-like modulation", loud, quiet, len(levels))
	}
}

func TestNoiseErrors(t *testing.T) {
	_, err := Noise("applause", time.Second, 1)
	if err == nil || !strings.Contains(err.Error(), "cough, door, hum, hum50, hum60, music, traffic, tv") {
		t.Errorf("unknown kind: %v (want the kinds listed)", err)
	}
	if _, err := Noise("tv", -time.Second, 1); err == nil {
		t.Error("negative duration: want an error")
	}
	for _, kind := range NoiseKinds() {
		if p, err := Noise(kind, 0, 1); err != nil || len(p) != 0 {
			t.Errorf("%s of 0 s: %d samples, %v", kind, len(p), err)
		}
		if p, err := Noise(kind, 100*time.Millisecond, 1); err != nil || len(p) != 800 {
			t.Errorf("%s of 100 ms: %d samples, %v", kind, len(p), err)
		}
	}
}
