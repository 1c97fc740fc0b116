package audio

import (
	"math"
	"testing"
)

func TestResampleKeepsInBandTone(t *testing.T) {
	tests := []struct {
		from, to int
		freq     float64
	}{
		{16000, 8000, 1000},
		{8000, 16000, 1000},
		{44100, 8000, 1000},
		{22050, 8000, 1000},
		{48000, 8000, 3000},
		{8000, 44100, 440},
		{16000, 8000, 3300},
		{11025, 8000, 250},
		{12345, 8000, 1000}, // 1600 phases: the interpolated-kernel path
		{8000, 11111, 1000},
	}
	for _, tt := range tests {
		in := tone(tt.freq, 0.5, tt.from/2, tt.from) // 0.5 s
		out := Resample(in, tt.from, tt.to)
		if want := len(in) * tt.to / tt.from; len(out) != want {
			t.Errorf("%d->%d: %d samples, want %d", tt.from, tt.to, len(out), want)
		}
		if f := dominantFreq(out, tt.to, tt.freq-100, tt.freq+100, 5); math.Abs(f-tt.freq) > 5 {
			t.Errorf("%d->%d: %v Hz tone came out at %v Hz", tt.from, tt.to, tt.freq, f)
		}
		lvl := toneLevel(out, tt.freq, tt.to)
		if d := db(lvl / 0.5); math.Abs(d) > 0.1 {
			t.Errorf("%d->%d: %v Hz tone level changed by %.3f dB", tt.from, tt.to, tt.freq, d)
		}
	}
}

func TestResampleRejectsAboveNyquist(t *testing.T) {
	// After 16k -> 8k the new Nyquist is 4 kHz: a tone above it must not
	// fold back into the band (4.5 kHz would alias to 3.5 kHz).
	tests := []struct {
		freq     float64
		maxDB    float64
		aliasesF float64
	}{
		{4000, -40, 4000},
		{4100, -60, 3900},
		{4500, -75, 3500},
		{6000, -75, 2000},
		{7900, -75, 100},
	}
	for _, tt := range tests {
		out := Resample(tone(tt.freq, 0.5, 8000, 16000), 16000, 8000)
		rms := LevelDBFS(PCM(out[400 : len(out)-400]))
		// A full-scale-0.5 sine is -9 dBFS RMS; measure relative to that.
		if got := rms - (-9.03); got > tt.maxDB {
			t.Errorf("%v Hz after 16k->8k: %.1f dB relative to input, want <= %v dB", tt.freq, got, tt.maxDB)
		}
	}
	// And a 3.9 kHz tone, inside the transition band, is attenuated too.
	out := Resample(tone(3900, 0.5, 8000, 16000), 16000, 8000)
	if got := db(toneLevel(out, 3900, 8000) / 0.5); got > -6 {
		t.Errorf("3.9 kHz after 16k->8k: %.1f dB, want attenuated by more than 6 dB", got)
	}
}

func TestResampleEdges(t *testing.T) {
	if got := Resample(nil, 16000, 8000); len(got) != 0 {
		t.Errorf("nil input: %d samples", len(got))
	}
	in := []int16{1, 2, 3}
	got := Resample(in, 8000, 8000)
	got[0] = 9
	if in[0] != 1 {
		t.Error("equal rates must return a copy")
	}
	// Full-scale input must saturate, not wrap.
	sq := make([]int16, 1600)
	for i := range sq {
		sq[i] = math.MaxInt16
		if i/20%2 == 0 {
			sq[i] = math.MinInt16
		}
	}
	out := Resample(sq, 16000, 8000)
	for j := 50; j < 750; j++ {
		i := 2 * j
		if i%20 != 10 { // the middle of each half period
			continue
		}
		if (out[j] < 0) != (sq[i] < 0) || out[j] > -30000 && out[j] < 30000 {
			t.Fatalf("sample %d: %d for input %d: wrapped or lost", j, out[j], sq[i])
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("rate 0 must panic")
		}
	}()
	Resample(in, 0, 8000)
}
