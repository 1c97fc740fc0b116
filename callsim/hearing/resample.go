package hearing

import (
	"math"

	"github.com/callproof/callproof/callsim/audio"
)

// upsample2 doubles the sample rate (8 kHz → 16 kHz) for the en-us model,
// which is trained at 16 kHz (its 8 kHz mode heard nothing of μ-law speech
// in our trials), and fills the empty upper band with the lower band's
// mirror image at gain mirror: even outputs are (1+mirror)·x, odd outputs
// (1-mirror)·the band-limited midpoint, i.e. the clean signal plus
// mirror·(-1)^n·itself, which mirrors the spectrum about 4 kHz.
//
// The model leans on the upper band: with it empty (mirror 0) it heard
// "do on would our who" for "done order four four seven one"; with the
// full image (mirror 1, plain zero-stuffing) it heard the code, and half
// the image did worse (docs/PERFORMANCE.md).
func upsample2(x []int16, mirror float64) []int16 {
	out := make([]int16, 2*len(x))
	var mid []int16
	if mirror != 1 {
		mid = audio.Resample(x, 8000, 16000)
	}
	for n, s := range x {
		out[2*n] = clip16((1 + mirror) * float64(s))
		if mid != nil && 2*n+1 < len(mid) {
			out[2*n+1] = clip16((1 - mirror) * float64(mid[2*n+1]))
		}
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
