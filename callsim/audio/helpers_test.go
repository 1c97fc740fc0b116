package audio

import (
	"math"
	"os/exec"

	"github.com/zaf/g711"
	"testing"
)

// tone is a sine of freq Hz at amplitude amp (of full scale) for n samples
// at rate.
func tone(freq, amp float64, n, rate int) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(math.Round(amp * 32767 * math.Sin(2*math.Pi*freq*float64(i)/float64(rate))))
	}
	return out
}

// toneLevel is the amplitude of freq in p (rate Hz) by correlation with a
// quadrature pair, so other frequencies barely count; the edges are
// skipped to keep filter start-up out.
func toneLevel(p []int16, freq float64, rate int) float64 {
	skip := len(p) / 10
	p = p[skip : len(p)-skip]
	var c, s float64
	for i, v := range p {
		ph := 2 * math.Pi * freq * float64(i) / float64(rate)
		c += float64(v) * math.Cos(ph)
		s += float64(v) * math.Sin(ph)
	}
	return 2 * math.Hypot(c, s) / float64(len(p)) / 32767
}

// dominantFreq finds the strongest frequency in p between lo and hi Hz in
// step Hz steps.
func dominantFreq(p []int16, rate int, lo, hi, step float64) float64 {
	best, bestF := -1.0, 0.0
	for f := lo; f <= hi; f += step {
		if l := toneLevel(p, f, rate); l > best {
			best, bestF = l, f
		}
	}
	return bestF
}

func db(ratio float64) float64 { return 20 * math.Log10(ratio) }

func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed (scripts/install-speech.sh installs it): %v", name, err)
	}
}

func alaw(p PCM) []byte {
	out := make([]byte, len(p))
	for i, s := range p {
		out[i] = g711.EncodeAlawFrame(s)
	}
	return out
}
