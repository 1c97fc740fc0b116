package audio

import (
	"math"
	"time"

	"github.com/zaf/g711"
)

// SampleRate is the rate of every PCM value in this package, in Hz (mono).
const SampleRate = 8000

// FrameSamples is the number of samples in one 20 ms frame at SampleRate:
// one Twilio media message carries one such frame as 160 μ-law bytes.
const FrameSamples = 160

// FrameDuration is the length of one frame.
const FrameDuration = 20 * time.Millisecond

// MulawSilence is the μ-law byte for a zero sample. It pads the last frame
// of MulawFrames and is what a silent Twilio stream carries.
const MulawSilence byte = 0xFF

// PCM is 16-bit signed mono audio at SampleRate.
type PCM []int16

// Duration is the playing time of p at SampleRate.
func (p PCM) Duration() time.Duration {
	return samplesToDuration(len(p))
}

// Samples is the number of whole samples that fit in d at SampleRate
// (rounded down; negative durations give 0).
func Samples(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(d * SampleRate / time.Second)
}

func samplesToDuration(n int) time.Duration {
	return time.Duration(n) * time.Second / SampleRate
}

// EncodeMulaw encodes p as G.711 μ-law, one byte per sample.
func EncodeMulaw(p PCM) []byte {
	out := make([]byte, len(p))
	for i, s := range p {
		out[i] = g711.EncodeUlawFrame(s)
	}
	return out
}

// DecodeMulaw decodes G.711 μ-law bytes, one sample per byte.
func DecodeMulaw(b []byte) PCM {
	out := make(PCM, len(b))
	for i, c := range b {
		out[i] = g711.DecodeUlawFrame(c)
	}
	return out
}

// MulawFrames encodes p as μ-law and cuts it into FrameSamples-byte frames,
// padding the last one with MulawSilence, so every frame is a full 20 ms as
// Twilio sends them. Empty input gives no frames. The frames share one
// backing array; each is capped at its own length so an append cannot
// overwrite the next.
func MulawFrames(p PCM) [][]byte {
	if len(p) == 0 {
		return nil
	}
	n := (len(p) + FrameSamples - 1) / FrameSamples
	buf := make([]byte, n*FrameSamples)
	for i, s := range p {
		buf[i] = g711.EncodeUlawFrame(s)
	}
	for i := len(p); i < len(buf); i++ {
		buf[i] = MulawSilence
	}
	frames := make([][]byte, n)
	for i := range frames {
		frames[i] = buf[i*FrameSamples : (i+1)*FrameSamples : (i+1)*FrameSamples]
	}
	return frames
}

// Frames cuts p into FrameSamples-sample frames, zero-padding the last, for
// feeding a VAD or a recorder frame by frame. The frames share one backing
// array (capped like MulawFrames').
func Frames(p PCM) []PCM {
	if len(p) == 0 {
		return nil
	}
	n := (len(p) + FrameSamples - 1) / FrameSamples
	buf := make(PCM, n*FrameSamples)
	copy(buf, p)
	frames := make([]PCM, n)
	for i := range frames {
		frames[i] = buf[i*FrameSamples : (i+1)*FrameSamples : (i+1)*FrameSamples]
	}
	return frames
}

// Mix adds src into dst in place, scaled by gainDB (0 = unchanged, -6 ≈
// half amplitude), saturating at the int16 limits rather than wrapping.
// Only the overlap is mixed: src beyond len(dst) is ignored.
func Mix(dst, src PCM, gainDB float64) {
	g := math.Pow(10, gainDB/20)
	n := min(len(dst), len(src))
	for i := 0; i < n; i++ {
		dst[i] = clip16(float64(dst[i]) + g*float64(src[i]))
	}
}

// Gain scales p in place by gainDB, saturating.
func Gain(p PCM, gainDB float64) {
	g := math.Pow(10, gainDB/20)
	for i, s := range p {
		p[i] = clip16(g * float64(s))
	}
}

// WordsFloorDBFS is the level below which a frame of synthesized speech
// holds no words: the caller trims an utterance's quiet edges to it and
// the caller's words end, for everyone, at the last frame above it.
const WordsFloorDBFS = -50.0

// SilenceDBFS is what LevelDBFS reports for empty or all-zero audio: a
// finite floor, so levels can be compared and printed without -Inf.
const SilenceDBFS = -120.0

// LevelDBFS is the RMS level of p in dBFS, where a full-scale square wave
// is 0 dBFS (a full-scale sine is about -3 dBFS). Silence gives SilenceDBFS.
func LevelDBFS(p PCM) float64 {
	if len(p) == 0 {
		return SilenceDBFS
	}
	var sum float64
	for _, s := range p {
		v := float64(s)
		sum += v * v
	}
	rms := math.Sqrt(sum/float64(len(p))) / 32768
	if rms == 0 {
		return SilenceDBFS
	}
	return max(20*math.Log10(rms), SilenceDBFS)
}

// clip16 rounds v to the nearest int16, saturating.
func clip16(v float64) int16 {
	v = math.Round(v)
	if v > math.MaxInt16 {
		return math.MaxInt16
	}
	if v < math.MinInt16 {
		return math.MinInt16
	}
	return int16(v)
}

// Tone is a sine of hz, d long, at dbfs RMS: a stand-in for speech where
// only its level and length matter (tests, the load bot).
func Tone(hz float64, d time.Duration, dbfs float64) PCM {
	n := Samples(d)
	amp := math.Pow(10, dbfs/20) * 32767 * math.Sqrt2
	p := make(PCM, n)
	for i := range p {
		p[i] = int16(amp * math.Sin(2*math.Pi*hz*float64(i)/SampleRate))
	}
	return p
}
