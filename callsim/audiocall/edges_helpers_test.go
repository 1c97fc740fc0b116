package audiocall

import (
	"math"
	"time"

	"github.com/callproof/callproof/callsim/audio"
)

func tone(hz float64, d time.Duration, dbfs float64) audio.PCM {
	n := audio.Samples(d)
	amp := math.Pow(10, dbfs/20) * 32767 * math.Sqrt2
	p := make(audio.PCM, n)
	for i := range p {
		p[i] = int16(amp * math.Sin(2*math.Pi*hz*float64(i)/audio.SampleRate))
	}
	return p
}
