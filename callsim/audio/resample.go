package audio

import (
	"fmt"
	"math"
)

// Resampler design. A windowed-sinc interpolator (Smith's bandlimited
// interpolation): each output sample is the input convolved with a
// low-pass sinc centred on the output's exact position in the input, so
// any rate pair works, not just integer ratios. The cutoff sits below the
// lower of the two Nyquist frequencies, so downsampling does not fold
// energy above the new Nyquist back into the band (aliasing is what makes
// resampled speech hiss and whistle) and upsampling adds no images.
const (
	// resampleCutoff is the -6 dB point as a fraction of the lower Nyquist:
	// 3.68 kHz for 8 kHz, above the 3.4 kHz telephone band.
	resampleCutoff = 0.92
	// resampleTransition is the full transition width, also as a fraction
	// of the lower Nyquist: the passband ends near 3.36 kHz and the
	// stopband starts at 4 kHz for an 8 kHz side.
	resampleTransition = 0.16
	// resampleAttenuation is the stopband target in dB (Kaiser design).
	resampleAttenuation = 80.0
	// resampleTableStep is the kernel table's resolution in entries per
	// input sample; linear interpolation between entries keeps the kernel
	// error near -100 dB without a table per output phase.
	resampleTableStep = 256
)

// Resample converts mono 16-bit samples from one rate to another (Hz).
// Output length is len(p)*to/from rounded down. Equal rates return a copy.
// The filter keeps 0–3.3 kHz flat (within 0.1 dB) when either side is
// 8 kHz and attenuates everything above the lower Nyquist by 80 dB or more.
// It panics on a rate below 1, a programming error.
func Resample(p []int16, from, to int) []int16 {
	if from < 1 || to < 1 {
		panic(fmt.Sprintf("audio.Resample: rates %d -> %d", from, to))
	}
	if from == to {
		return append([]int16(nil), p...)
	}
	g := gcd(from, to)
	from, to = from/g, to/g
	// Filter frequencies in cycles per input sample.
	lowNyq := 0.5 * float64(min(from, to)) / float64(from)
	cutoff := resampleCutoff * lowNyq
	transition := resampleTransition * lowNyq
	beta := 0.1102 * (resampleAttenuation - 8.7)
	// Kaiser's length estimate, N = (A-8)/(2.285·2π·Δf), as a half-width.
	half := int(math.Ceil((resampleAttenuation - 8) / (2.285 * 2 * math.Pi * transition) / 2))
	x := make([]float64, len(p))
	for i, s := range p {
		x[i] = float64(s)
	}
	n := int(int64(len(p)) * int64(to) / int64(from))
	out := make([]int16, n)
	// Output j sits at input position j*from/to: whole part i, fraction
	// phase/to. There are only `to` distinct fractions, so for the usual
	// rate pairs (16k->8k: 1, 44.1k->8k: 80) every phase's taps are
	// computed once and each output is a plain dot product. Odd pairs with
	// many phases interpolate a finely sampled kernel instead.
	var taps [][]float64
	var table []float64
	if to <= maxPhases {
		taps = make([][]float64, to)
		for ph := range taps {
			taps[ph] = make([]float64, 2*half)
			for m := range taps[ph] {
				taps[ph][m] = kernel(math.Abs(float64(half-1-m)+float64(ph)/float64(to)), cutoff, half, beta)
			}
		}
	} else {
		table = kernelTable(cutoff, half, beta)
	}
	for j := range out {
		num := int64(j) * int64(from)
		i := int(num / int64(to))
		ph := int(num % int64(to))
		first := i - half + 1 // input index of tap 0
		lo, hi := max(first, 0), min(i+half, len(x)-1)
		var acc float64
		if taps != nil {
			w := taps[ph][lo-first:]
			for k, v := range x[lo : hi+1] {
				acc += v * w[k]
			}
		} else {
			frac := float64(ph) / float64(to)
			for k := lo; k <= hi; k++ {
				acc += x[k] * kernelAt(table, math.Abs(float64(i-k)+frac))
			}
		}
		out[j] = clip16(acc)
	}
	return out
}

// maxPhases bounds the per-phase tap tables (phases × 2·half floats).
const maxPhases = 1024

// kernel is the windowed sinc h(t) = 2fc·sinc(2fc·t)·kaiser(t/half) at
// distance t (input samples) from the centre.
func kernel(t, cutoff float64, half int, beta float64) float64 {
	if t >= float64(half) {
		return 0
	}
	r := t / float64(half)
	return 2 * cutoff * sinc(2*cutoff*t) * besselI0(beta*math.Sqrt(1-r*r)) / besselI0(beta)
}

// kernelTable samples the windowed sinc h(t) = 2fc·sinc(2fc·t)·kaiser(t/half)
// for t in [0, half] at resampleTableStep points per input sample.
func kernelTable(cutoff float64, half int, beta float64) []float64 {
	n := half*resampleTableStep + 2
	t := make([]float64, n)
	for k := range t {
		t[k] = kernel(float64(k)/resampleTableStep, cutoff, half, beta)
	}
	return t
}

// kernelAt interpolates the table at distance d (input samples) from the centre.
func kernelAt(table []float64, d float64) float64 {
	pos := d * resampleTableStep
	k := int(pos)
	if k+1 >= len(table) {
		return 0
	}
	f := pos - float64(k)
	return table[k] + f*(table[k+1]-table[k])
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

// besselI0 is the zeroth-order modified Bessel function of the first kind,
// by its power series (converges fast for the β values of a Kaiser window).
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	for k := 1; k < 50; k++ {
		term *= (x / (2 * float64(k))) * (x / (2 * float64(k)))
		sum += term
		if term < sum*1e-12 {
			break
		}
	}
	return sum
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
