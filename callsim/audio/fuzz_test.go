package audio

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzReadWAV: any bytes either decode or give an ErrNotWAV error; none
// panics or hangs.
func FuzzReadWAV(f *testing.F) {
	var m memFile
	if err := WriteWAV(&m, PCM(tone(440, 0.3, 400, SampleRate))); err != nil {
		f.Fatal(err)
	}
	f.Add(m.b)
	f.Add(rawWAV(1, 2, 44100, 24, nil, make([]byte, 60)))
	f.Add(rawWAV(7, 1, 8000, 8, nil, make([]byte, 33)))
	f.Add(rawWAV(0xFFFE, 1, 16000, 16, extensible(1), make([]byte, 64)))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVE"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ReadWAV(bytes.NewReader(b))
		if err != nil && !errors.Is(err, ErrNotWAV) {
			t.Fatalf("error not wrapping ErrNotWAV: %v", err)
		}
		if err == nil && len(p) > len(b) {
			t.Fatalf("%d samples from %d bytes", len(p), len(b))
		}
	})
}
