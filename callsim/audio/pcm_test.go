package audio

import (
	"math"
	"testing"
	"time"
)

func TestConstants(t *testing.T) {
	if FrameSamples != SampleRate*int(FrameDuration/time.Millisecond)/1000 {
		t.Errorf("FrameSamples %d is not FrameDuration at SampleRate", FrameSamples)
	}
	if got := EncodeMulaw(PCM{0})[0]; got != MulawSilence {
		t.Errorf("μ-law of 0 is %#x, MulawSilence is %#x", got, MulawSilence)
	}
	if got := DecodeMulaw([]byte{MulawSilence})[0]; got != 0 {
		t.Errorf("MulawSilence decodes to %d", got)
	}
	if d := make(PCM, 12345).Duration(); d != 12345*time.Second/8000 {
		t.Errorf("Duration = %v", d)
	}
	if n := Samples(1500 * time.Millisecond); n != 12000 {
		t.Errorf("Samples(1.5s) = %d", n)
	}
}

func TestMulawRoundTripErrorBound(t *testing.T) {
	// G.711 μ-law keeps about 5 significant bits: the error is under 1/32
	// of the magnitude plus half the finest step, up to its clip level.
	const clip = 32124
	for x := math.MinInt16; x <= math.MaxInt16; x++ {
		y := int(DecodeMulaw(EncodeMulaw(PCM{int16(x)}))[0])
		mag := max(x, -x)
		if mag > clip {
			if want := clip * sign(x); y != want && y != want-sign(x)*4 {
				t.Fatalf("%d beyond the clip level decoded to %d", x, y)
			}
			continue
		}
		if e := max(y-x, x-y); float64(e) > 8+float64(mag+1)/32 {
			t.Fatalf("%d decoded to %d: error %d", x, y, e)
		}
	}
	// Every code is stable: decode, encode, decode gives the same sample
	// (0x7F, "negative zero", encodes back as 0xFF).
	for b := 0; b < 256; b++ {
		s := DecodeMulaw([]byte{byte(b)})
		if again := DecodeMulaw(EncodeMulaw(s)); again[0] != s[0] {
			t.Errorf("code %#x: %d then %d", b, s[0], again[0])
		}
	}
}

func sign(x int) int {
	if x < 0 {
		return -1
	}
	return 1
}

func TestMulawSpeechLevelSNR(t *testing.T) {
	// μ-law's SNR is near 38 dB over most of the range and falls off for
	// quiet signals, where the steps are coarse relative to the signal.
	for _, tt := range []struct{ level, minSNR float64 }{{-10, 35}, {-20, 35}, {-30, 33}, {-40, 28}} {
		level := tt.level
		amp := math.Pow(10, level/20)
		in := PCM(tone(1000, amp, 8000, SampleRate))
		out := DecodeMulaw(EncodeMulaw(in))
		var sig, noise float64
		for i := range in {
			sig += float64(in[i]) * float64(in[i])
			d := float64(out[i]) - float64(in[i])
			noise += d * d
		}
		if snr := 10 * math.Log10(sig/noise); snr < tt.minSNR {
			t.Errorf("1 kHz peaking at %v dBFS: SNR %.1f dB through μ-law, want >= %v", level, snr, tt.minSNR)
		}
	}
}

func TestMulawFrames(t *testing.T) {
	tests := []struct {
		samples, frames, padded int
	}{
		{0, 0, 0},
		{1, 1, 159},
		{159, 1, 1},
		{160, 1, 0},
		{161, 2, 159},
		{8000, 50, 0},
	}
	for _, tt := range tests {
		p := make(PCM, tt.samples)
		for i := range p {
			p[i] = 1000 // μ-law code other than silence
		}
		frames := MulawFrames(p)
		if len(frames) != tt.frames {
			t.Errorf("%d samples: %d frames, want %d", tt.samples, len(frames), tt.frames)
			continue
		}
		padded := 0
		for i, f := range frames {
			if len(f) != FrameSamples || cap(f) != FrameSamples {
				t.Errorf("%d samples: frame %d len %d cap %d", tt.samples, i, len(f), cap(f))
			}
			for _, b := range f {
				if b == MulawSilence {
					padded++
				}
			}
		}
		if padded != tt.padded {
			t.Errorf("%d samples: %d padding bytes, want %d", tt.samples, padded, tt.padded)
		}
		if tt.frames > 0 {
			var joined []byte
			for _, f := range frames {
				joined = append(joined, f...)
			}
			dec := DecodeMulaw(joined)
			for i := range p {
				if dec[i] != DecodeMulaw(EncodeMulaw(p[i : i+1]))[0] {
					t.Fatalf("%d samples: sample %d differs after framing", tt.samples, i)
				}
			}
		}
	}
	if got := Frames(make(PCM, 321)); len(got) != 3 || len(got[2]) != FrameSamples {
		t.Errorf("Frames(321 samples) = %d frames", len(got))
	}
}

func TestMixAndLevel(t *testing.T) {
	if got := LevelDBFS(nil); got != SilenceDBFS {
		t.Errorf("level of nothing = %v", got)
	}
	if got := LevelDBFS(make(PCM, 160)); got != SilenceDBFS {
		t.Errorf("level of zeros = %v", got)
	}
	full := make(PCM, 160)
	for i := range full {
		full[i] = math.MaxInt16
		if i%2 == 1 {
			full[i] = math.MinInt16
		}
	}
	if got := LevelDBFS(full); math.Abs(got) > 0.01 {
		t.Errorf("full-scale square = %.3f dBFS, want 0", got)
	}
	if got := LevelDBFS(PCM(tone(1000, 0.1, 8000, SampleRate))); math.Abs(got-(-23.01)) > 0.05 {
		t.Errorf("sine at 0.1 = %.2f dBFS, want -23.01", got)
	}

	dst := PCM{30000, -30000, 100, 5}
	Mix(dst, PCM{10000, -10000, 100, 5, 999}, 0)
	if want := (PCM{32767, -32768, 200, 10}); !equalPCM(dst, want) {
		t.Errorf("Mix at 0 dB = %v, want %v (saturated)", dst, want)
	}
	dst = PCM{0, 0}
	Mix(dst, PCM{1000, -1000}, -20)
	if want := (PCM{100, -100}); !equalPCM(dst, want) {
		t.Errorf("Mix at -20 dB = %v, want %v", dst, want)
	}
	p := PCM(tone(500, 0.2, 8000, SampleRate))
	before := LevelDBFS(p)
	Gain(p, -6)
	if d := LevelDBFS(p) - before; math.Abs(d+6) > 0.05 {
		t.Errorf("Gain -6 changed level by %.2f dB", d)
	}
}

func equalPCM(a, b PCM) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
