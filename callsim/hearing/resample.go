package hearing

import "math"

// upsample2 doubles the sample rate (8 kHz → 16 kHz) with a windowed-sinc
// half-band interpolator: even outputs are the input samples, odd outputs
// the filtered midpoints. pocketsphinx's en-us model is trained at 16 kHz;
// its 8 kHz mode heard nothing of μ-law speech in our trials.
//
// Kept local until callsim/audio offers a resampler.
//
// mirror adds the band's mirror image above 4 kHz at that gain (1 is plain
// zero-stuffing): the 16 kHz model leans on the upper band, and with it
// empty it heard "do on would our who" for "done order four four seven
// one"; with the mirror it heard the code (see docs/PERFORMANCE.md).
func upsample2(x []int16, mirror float64) []int16 {
	const taps = 8 // per side
	var c [taps]float64
	sum := 0.0
	for k := range c {
		t := float64(k) + 0.5
		w := 0.42 + 0.5*math.Cos(math.Pi*t/taps) + 0.08*math.Cos(2*math.Pi*t/taps) // Blackman, centred
		c[k] = math.Sin(math.Pi*t) / (math.Pi * t) * w
		sum += 2 * c[k]
	}
	for k := range c {
		c[k] /= sum
	}
	at := func(i int) float64 {
		if i < 0 || i >= len(x) {
			return 0
		}
		return float64(x[i])
	}
	out := make([]int16, 2*len(x))
	for n := range x {
		out[2*n] = clip16((1 + mirror) * float64(x[n]))
		v := 0.0
		for k := range c {
			v += c[k] * (at(n-k) + at(n+1+k))
		}
		out[2*n+1] = clip16((1 - mirror) * v) // (-1)^n modulation mirrors the spectrum about 4 kHz
	}
	return out
}

func clip16(v float64) int16 {
	switch {
	case v > math.MaxInt16:
		return math.MaxInt16
	case v < math.MinInt16:
		return math.MinInt16
	}
	return int16(math.Round(v))
}
