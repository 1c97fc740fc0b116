package audio

import (
	"testing"
)

// One second of audio per iteration: ns/op divided by 1e9 is the share of
// one core that one real-time stream costs.

func BenchmarkMulawFrames(b *testing.B) {
	p := PCM(tone(440, 0.3, SampleRate, SampleRate))
	b.ReportAllocs()
	for b.Loop() {
		MulawFrames(p)
	}
}

func BenchmarkDecodeMulaw(b *testing.B) {
	enc := EncodeMulaw(PCM(tone(440, 0.3, SampleRate, SampleRate)))
	b.ReportAllocs()
	for b.Loop() {
		DecodeMulaw(enc)
	}
}

func BenchmarkVAD(b *testing.B) {
	frames := Frames(PCM(tone(440, 0.3, SampleRate, SampleRate)))
	v := NewVAD(DefaultVADConfig())
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range frames {
			v.Push(f)
		}
	}
}

func BenchmarkResample(b *testing.B) {
	for _, r := range []struct {
		name     string
		from, to int
	}{{"16k-8k", 16000, 8000}, {"22.05k-8k", 22050, 8000}, {"44.1k-8k", 44100, 8000}, {"8k-16k", 8000, 16000}} {
		in := tone(440, 0.3, r.from, r.from)
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Resample(in, r.from, r.to)
			}
		})
	}
}
