package audio

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// Noise kinds and their nominal levels. Each is generated, not recorded,
// so it is the same for the same seed on every machine; mix it under
// speech with Mix and a gain to set the signal-to-noise ratio.
//
//   - "cough": one cough at the start, min(d, ~300 ms) long (an explosive
//     burst, then a voiced tail), then silence; the first 20 ms frames
//     are about -14 dBFS RMS.
//   - "door": a door slam at the start, min(d, 500 ms): a click, a low
//     thump (door and frame modes near 60–300 Hz) and a rattle, loud for
//     about 100 ms and decaying fast, then silence; the loudest frame is
//     about -12 dBFS RMS.
//   - "tv": TV babble for all of d: two talkers' worth of speech-shaped
//     noise (voiced pulses and noise through moving formants, in 100–300
//     ms syllables with pauses), -24 dBFS RMS over d.
//   - "music": background music for all of d: a melody of plucked notes
//     (a fundamental and four decaying harmonics) over a sustained chord,
//     a note every 250–500 ms; -26 dBFS RMS over d.
//   - "traffic": passing road traffic for all of d: low-passed rumble
//     that swells and fades as vehicles pass every 1–3 s; -28 dBFS RMS.
//   - "hum": steady mains hum for all of d, 60 Hz for even seeds and 50 Hz
//     for odd ones, with its odd harmonics; -30 dBFS RMS. "hum50" and
//     "hum60" fix the frequency.
//
// The kinds are a switch, not a map, to keep package state immutable.
func noiseGen(kind string, seed int64) func(n int, rng *rand.Rand) PCM {
	switch kind {
	case "cough":
		return cough
	case "door":
		return doorSlam
	case "tv":
		return tvBabble
	case "hum":
		if seed%2 != 0 {
			return func(n int, rng *rand.Rand) PCM { return hum(n, 50, rng) }
		}
		return func(n int, rng *rand.Rand) PCM { return hum(n, 60, rng) }
	case "music":
		return music
	case "traffic":
		return traffic
	case "hum50":
		return func(n int, rng *rand.Rand) PCM { return hum(n, 50, rng) }
	case "hum60":
		return func(n int, rng *rand.Rand) PCM { return hum(n, 60, rng) }
	}
	return nil
}

// NoiseKinds lists the kinds Noise accepts, sorted.
func NoiseKinds() []string {
	return []string{"cough", "door", "hum", "hum50", "hum60", "music", "traffic", "tv"}
}

// Noise generates d of background noise of the given kind (see NoiseKinds
// and the levels above), deterministic for a seed.
func Noise(kind string, d time.Duration, seed int64) (PCM, error) {
	gen := noiseGen(kind, seed)
	if gen == nil {
		return nil, fmt.Errorf("audio: unknown noise kind %q (kinds: %s)", kind, strings.Join(NoiseKinds(), ", "))
	}
	if d < 0 {
		return nil, fmt.Errorf("audio: negative noise duration %v", d)
	}
	// The kind is mixed into the stream seed so "tv" and "cough" with one
	// seed are not built from the same random numbers.
	var h uint64 = 14695981039346656037
	for _, c := range []byte(kind) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	rng := rand.New(rand.NewPCG(uint64(seed), h))
	return gen(Samples(d), rng), nil
}

const rateF = float64(SampleRate)

// resonator is a two-pole band-pass filter: a formant or a body mode.
type resonator struct {
	a1, a2, g float64
	y1, y2    float64
}

func newResonator(freq, bandwidth float64) *resonator {
	r := &resonator{}
	r.tune(freq, bandwidth)
	return r
}

func (r *resonator) tune(freq, bandwidth float64) {
	rad := math.Exp(-math.Pi * bandwidth / rateF)
	r.a1 = -2 * rad * math.Cos(2*math.Pi*freq/rateF)
	r.a2 = rad * rad
	r.g = 1 - rad
}

func (r *resonator) step(x float64) float64 {
	y := r.g*x - r.a1*r.y1 - r.a2*r.y2
	r.y2, r.y1 = r.y1, y
	return y
}

// scaleTo scales x so its RMS is level dBFS and converts it to PCM.
func scaleTo(x []float64, level float64) PCM {
	var sum float64
	for _, v := range x {
		sum += v * v
	}
	out := make(PCM, len(x))
	if sum == 0 {
		return out
	}
	g := 32768 * math.Pow(10, level/20) / math.Sqrt(sum/float64(len(x)))
	for i, v := range x {
		out[i] = clip16(g * v)
	}
	return out
}

// scalePeakFrame scales x so its loudest 20 ms frame has RMS level dBFS.
func scalePeakFrame(x []float64, level float64) PCM {
	peak := 0.0
	for i := 0; i < len(x); i += FrameSamples {
		var sum float64
		f := x[i:min(i+FrameSamples, len(x))]
		for _, v := range f {
			sum += v * v
		}
		peak = max(peak, math.Sqrt(sum/float64(len(f))))
	}
	out := make(PCM, len(x))
	if peak == 0 {
		return out
	}
	g := 32768 * math.Pow(10, level/20) / peak
	for i, v := range x {
		out[i] = clip16(g * v)
	}
	return out
}

func cough(n int, rng *rand.Rand) PCM {
	out := make(PCM, n)
	length := min(n, Samples(time.Duration(260+rng.IntN(80))*time.Millisecond))
	if length == 0 {
		return out
	}
	x := make([]float64, length)
	burst := newResonator(600+rng.Float64()*600, 900)
	f1 := newResonator(450+rng.Float64()*200, 150)
	f2 := newResonator(1300+rng.Float64()*500, 250)
	pitch := 180 + rng.Float64()*80
	explosive := 0.3 * float64(length)
	phase := 0.0
	for i := range x {
		t := float64(i)
		env := math.Min(1, t/(0.008*rateF)) * math.Exp(-t/(0.25*float64(length)))
		noise := rng.NormFloat64()
		v := burst.step(noise) * 4
		if t > explosive*0.5 {
			// voiced tail: a glottal pulse train through two formants
			phase += pitch / rateF
			pulse := 0.0
			if phase >= 1 {
				phase--
				pulse = 1
			}
			v += (f1.step(pulse*8+0.3*noise) + f2.step(pulse*4)) * 3
		}
		x[i] = env * v
	}
	copy(out, scalePeakFrame(x, -14))
	return out
}

func doorSlam(n int, rng *rand.Rand) PCM {
	out := make(PCM, n)
	length := min(n, Samples(500*time.Millisecond))
	if length == 0 {
		return out
	}
	x := make([]float64, length)
	type mode struct{ f, tau, amp, phase float64 }
	modes := []mode{
		{60 + rng.Float64()*40, 0.025, 1, 0},
		{140 + rng.Float64()*60, 0.02, 0.6, 0},
		{230 + rng.Float64()*80, 0.015, 0.4, 0},
		{800 + rng.Float64()*400, 0.008, 0.3, 0},
	}
	for i := range modes {
		modes[i].phase = rng.Float64() * 2 * math.Pi
	}
	rattle := newResonator(2000+rng.Float64()*1000, 800)
	rattleEvery := int((0.03 + rng.Float64()*0.02) * rateF)
	for i := range x {
		t := float64(i) / rateF
		var v float64
		for _, m := range modes {
			v += m.amp * math.Exp(-t/m.tau) * math.Sin(2*math.Pi*m.f*t+m.phase)
		}
		if i < int(0.003*rateF) { // the click of the latch
			v += rng.NormFloat64() * 1.5
		}
		if i%rattleEvery < int(0.004*rateF) {
			v += rattle.step(rng.NormFloat64()) * 6 * math.Exp(-t/0.035)
		} else {
			v += rattle.step(0) * 6 * math.Exp(-t/0.035)
		}
		x[i] = v
	}
	copy(out, scalePeakFrame(x, -12))
	return out
}

func tvBabble(n int, rng *rand.Rand) PCM {
	x := make([]float64, n)
	for talker := 0; talker < 2; talker++ {
		addTalker(x, rng, 0.6+0.4*float64(1-talker))
	}
	return scaleTo(x, -24)
}

// addTalker adds one synthetic talker: syllables of voiced pulses and
// breath noise through three formants that jump per syllable, with
// pauses between syllables and longer ones between phrases.
func addTalker(x []float64, rng *rand.Rand, gain float64) {
	f1, f2, f3 := newResonator(500, 90), newResonator(1500, 120), newResonator(2500, 200)
	pitch := 100 + rng.Float64()*120
	phase := 0.0
	i := int(rng.Float64() * 0.3 * rateF)
	for i < len(x) {
		syl := int((0.1 + rng.Float64()*0.2) * rateF)
		f1.tune(300+rng.Float64()*500, 90)
		f2.tune(900+rng.Float64()*1400, 120)
		f3.tune(2300+rng.Float64()*700, 200)
		voiced := rng.Float64() < 0.8
		p := pitch * (0.9 + 0.2*rng.Float64())
		for k := 0; k < syl && i+k < len(x); k++ {
			env := math.Sin(math.Pi * float64(k) / float64(syl))
			var src float64
			if voiced {
				phase += p / rateF
				if phase >= 1 {
					phase--
					src = 10
				}
				src += 0.2 * rng.NormFloat64()
			} else {
				src = rng.NormFloat64()
			}
			v := f1.step(src) + 0.6*f2.step(src) + 0.3*f3.step(src)
			x[i+k] += gain * env * v
		}
		i += syl + int((0.03+rng.Float64()*0.08)*rateF)
		if rng.Float64() < 0.15 {
			i += int((0.3 + rng.Float64()*0.4) * rateF)
		}
	}
}

func hum(n int, f0 float64, rng *rand.Rand) PCM {
	x := make([]float64, n)
	harmonics := []struct{ k, amp float64 }{{1, 1}, {2, 0.15}, {3, 0.6}, {5, 0.35}, {7, 0.2}, {9, 0.1}, {11, 0.05}}
	phases := make([]float64, len(harmonics))
	for i := range phases {
		phases[i] = rng.Float64() * 2 * math.Pi
	}
	for i := range x {
		t := float64(i) / rateF
		var v float64
		for j, h := range harmonics {
			v += h.amp * math.Sin(2*math.Pi*h.k*f0*t+phases[j])
		}
		x[i] = v + 0.002*rng.NormFloat64()
	}
	return scaleTo(x, -30)
}

// music plays a random walk over a pentatonic scale above a held chord.
func music(n int, rng *rand.Rand) PCM {
	x := make([]float64, n)
	scale := []float64{262, 294, 330, 392, 440, 523, 587, 659}
	root := scale[rng.IntN(3)] / 2
	for i := range x {
		t := float64(i) / rateF
		x[i] = 0.15 * (math.Sin(2*math.Pi*root*t) + math.Sin(2*math.Pi*root*1.25*t) + math.Sin(2*math.Pi*root*1.5*t))
	}
	note := rng.IntN(len(scale))
	for i := 0; i < n; {
		length := int((0.25 + rng.Float64()*0.25) * rateF)
		f := scale[note]
		for k := 0; k < length && i+k < n; k++ {
			t := float64(k) / rateF
			env := math.Exp(-4 * t)
			var v float64
			for h := 1.0; h <= 5; h++ {
				v += math.Sin(2*math.Pi*f*h*t) / (h * h)
			}
			x[i+k] += env * v
		}
		i += length
		note = min(max(note+rng.IntN(5)-2, 0), len(scale)-1)
	}
	return scaleTo(x, -26)
}

// traffic is brown-ish rumble under a slow envelope of passing vehicles.
func traffic(n int, rng *rand.Rand) PCM {
	x := make([]float64, n)
	var lp float64
	next, peak, width := 0, 0, 1
	for i := range x {
		if i >= next {
			peak = i + int((0.5+rng.Float64())*rateF)
			width = int((0.6 + rng.Float64()*0.8) * rateF)
			next = i + int((1+rng.Float64()*2)*rateF)
		}
		lp += 0.02 * (rng.NormFloat64() - lp)
		d := float64(i-peak) / float64(width)
		env := 0.3 + math.Exp(-d*d*4)
		x[i] = env * lp
	}
	return scaleTo(x, -28)
}
