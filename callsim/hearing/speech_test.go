package hearing

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/zaf/g711"
)

// needTools skips when the decoder or the synthesizer is missing.
func needTools(t testing.TB) {
	t.Helper()
	for _, bin := range []string{DefaultBin, "flite"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed (Debian: apt-get install pocketsphinx pocketsphinx-en-us flite): %v", bin, err)
		}
	}
	if _, err := os.Stat(DefaultHMM); err != nil {
		t.Skipf("pocketsphinx-en-us model missing: %v", err)
	}
}

// studio speaks text with a flite voice at 16 kHz, untouched.
func studio(voice, text string) ([]int16, error) {
	pcm, rate, err := synth(voice, text)
	if err == nil && rate != 16000 {
		err = fmt.Errorf("flite %s: rate %d, want 16000", voice, rate)
	}
	return pcm, err
}

// telephone speaks text with a flite voice and returns it as a phone line
// delivers it: 8 kHz, through μ-law and back.
func telephone(voice, text string) ([]int16, error) {
	pcm, rate, err := synth(voice, text)
	if err != nil {
		return nil, err
	}
	switch rate {
	case 16000:
		pcm = downsample2(pcm)
	case 8000:
	default:
		return nil, fmt.Errorf("flite %s: unexpected rate %d", voice, rate)
	}
	le := make([]byte, 2*len(pcm))
	for i, s := range pcm {
		binary.LittleEndian.PutUint16(le[2*i:], uint16(s))
	}
	back := g711.DecodeUlaw(g711.EncodeUlaw(le))
	out := make([]int16, len(back)/2)
	for i := range out {
		out[i] = int16(binary.LittleEndian.Uint16(back[2*i:]))
	}
	return out, nil
}

// synth runs flite.
func synth(voice, text string) ([]int16, int, error) {
	dir, err := os.MkdirTemp("", "hearing-test-")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(dir)
	wav := filepath.Join(dir, "s.wav")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "flite", "-voice", voice, "-t", text, "-o", wav).CombinedOutput(); err != nil {
		return nil, 0, fmt.Errorf("flite %s: %v: %s", voice, err, out)
	}
	return readWAV(wav)
}

// readWAV reads flite's canonical 44-byte-header mono 16-bit WAV.
func readWAV(path string) ([]int16, int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	if len(b) < 44 || !bytes.Equal(b[:4], []byte("RIFF")) || !bytes.Equal(b[36:40], []byte("data")) {
		return nil, 0, errors.New("not a canonical WAV file: " + path)
	}
	rate := int(binary.LittleEndian.Uint32(b[24:28]))
	pcm := make([]int16, (len(b)-44)/2)
	for i := range pcm {
		pcm[i] = int16(binary.LittleEndian.Uint16(b[44+2*i:]))
	}
	return pcm, rate, nil
}

// downsample2 halves the rate with a windowed-sinc low-pass at 3.6 kHz.
func downsample2(x []int16) []int16 {
	const half = 16
	h := make([]float64, 2*half+1)
	sum := 0.0
	for k := -half; k <= half; k++ {
		t := float64(k)
		const fc = 3600.0 / 16000 // cutoff in cycles per input sample
		v := 2 * fc * sincf(2*fc*t)
		w := 0.42 + 0.5*math.Cos(math.Pi*t/half) + 0.08*math.Cos(2*math.Pi*t/half)
		h[k+half] = v * w
		sum += h[k+half]
	}
	out := make([]int16, len(x)/2)
	for n := range out {
		v := 0.0
		for k := -half; k <= half; k++ {
			if i := 2*n - k; i >= 0 && i < len(x) {
				v += h[k+half] / sum * float64(x[i])
			}
		}
		out[n] = clip16(v)
	}
	return out
}

func sincf(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}
