package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	goaudio "github.com/go-audio/audio"
	"github.com/go-audio/wav"
)

// memFile is an in-memory io.WriteSeeker + io.ReadSeeker.
type memFile struct {
	b   []byte
	off int64
}

func (m *memFile) Write(p []byte) (int, error) {
	if need := int(m.off) + len(p); need > len(m.b) {
		m.b = append(m.b, make([]byte, need-len(m.b))...)
	}
	copy(m.b[m.off:], p)
	m.off += int64(len(p))
	return len(p), nil
}

func (m *memFile) Read(p []byte) (int, error) {
	if m.off >= int64(len(m.b)) {
		return 0, io.EOF
	}
	n := copy(p, m.b[m.off:])
	m.off += int64(n)
	return n, nil
}

func (m *memFile) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		m.off = off
	case io.SeekCurrent:
		m.off += off
	case io.SeekEnd:
		m.off = int64(len(m.b)) + off
	}
	return m.off, nil
}

func (m *memFile) reader() *bytes.Reader { return bytes.NewReader(m.b) }

// encodeWith writes interleaved samples (already in the file's bit depth's
// range; 8-bit unsigned) with go-audio/wav's own encoder, so the reader is
// tested against a writer that is not ours.
func encodeWith(t *testing.T, data []int, rate, bits, channels int) *bytes.Reader {
	t.Helper()
	var m memFile
	e := wav.NewEncoder(&m, rate, bits, channels, 1)
	buf := &goaudio.IntBuffer{Data: data, Format: &goaudio.Format{NumChannels: channels, SampleRate: rate}}
	if err := e.Write(buf); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return m.reader()
}

// scaleTo converts a 16-bit sample to a bit depth's integer range.
func toDepth(s int16, bits int) int {
	switch bits {
	case 8:
		return int(s)>>8 + 128
	case 24:
		return int(s) << 8
	case 32:
		return int(s) << 16
	}
	return int(s)
}

func TestWAVRoundTripMono(t *testing.T) {
	p := PCM(tone(440, 0.3, 4000, SampleRate))
	p[0], p[1] = math.MaxInt16, math.MinInt16
	var m memFile
	if err := WriteWAV(&m, p); err != nil {
		t.Fatal(err)
	}
	got, err := ReadWAV(m.reader())
	if err != nil {
		t.Fatal(err)
	}
	if !equalPCM(got, p) {
		t.Fatalf("round trip changed the samples (%d -> %d)", len(p), len(got))
	}
	samples, info, err := DecodeWAV(m.reader())
	if err != nil || info != (WAVInfo{SampleRate: 8000, Channels: 1, BitDepth: 16, Format: 1}) || len(samples) != len(p) {
		t.Fatalf("DecodeWAV: %v %+v %d", err, info, len(samples))
	}

	// Empty audio is still a valid file.
	m = memFile{}
	if err := WriteWAV(&m, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadWAV(m.reader()); err != nil || len(got) != 0 {
		t.Fatalf("empty round trip: %d samples, %v", len(got), err)
	}

	path := filepath.Join(t.TempDir(), "x.wav")
	if err := WriteWAVFile(path, p); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadWAVFile(path); err != nil || !equalPCM(got, p) {
		t.Fatalf("file round trip: %v", err)
	}
}

func TestWAVRoundTripStereo(t *testing.T) {
	left, right := tone(500, 0.4, 800, 16000), tone(1500, 0.2, 800, 16000)
	inter := make([]int16, 0, 1600)
	for i := range left {
		inter = append(inter, left[i], right[i])
	}
	var m memFile
	if err := WriteWAVRate(&m, inter, 16000, 2); err != nil {
		t.Fatal(err)
	}
	got, info, err := DecodeWAV(m.reader())
	if err != nil {
		t.Fatal(err)
	}
	if info.Channels != 2 || info.SampleRate != 16000 || !slicesEqual(got, inter) {
		t.Fatalf("stereo round trip: %+v, %d samples", info, len(got))
	}
	if err := WriteWAVRate(&m, inter[:3], 16000, 2); err == nil {
		t.Error("3 samples in 2 channels: want an error")
	}
}

func slicesEqual(a, b []int16) bool { return equalPCM(a, b) }

func TestReadWAVConvertsFormats(t *testing.T) {
	const dur = 0.5 // seconds
	for _, rate := range []int{8000, 16000, 22050, 44100, 48000} {
		for _, bits := range []int{8, 16, 24, 32} {
			for _, channels := range []int{1, 2} {
				// Left 1 kHz at 0.5; right (if any) the same tone, so the
				// downmix keeps 0.5.
				src := tone(1000, 0.5, int(dur*float64(rate)), rate)
				data := make([]int, 0, len(src)*channels)
				for _, s := range src {
					for c := 0; c < channels; c++ {
						data = append(data, toDepth(s, bits))
					}
				}
				p, err := ReadWAV(encodeWith(t, data, rate, bits, channels))
				if err != nil {
					t.Errorf("%d Hz %d-bit %dch: %v", rate, bits, channels, err)
					continue
				}
				if want := int(dur * SampleRate); len(p) < want-1 || len(p) > want {
					t.Errorf("%d Hz %d-bit %dch: %d samples, want %d", rate, bits, channels, len(p), want)
				}
				if f := dominantFreq(p, SampleRate, 900, 1100, 10); f != 1000 {
					t.Errorf("%d Hz %d-bit %dch: tone at %v Hz", rate, bits, channels, f)
				}
				tol := 0.1
				if bits == 8 {
					tol = 0.3
				}
				if d := db(toneLevel(p, 1000, SampleRate) / 0.5); math.Abs(d) > tol {
					t.Errorf("%d Hz %d-bit %dch: level off by %.2f dB", rate, bits, channels, d)
				}
			}
		}
	}
}

func TestReadWAVDownmixesStereo(t *testing.T) {
	left, right := tone(500, 0.4, 16000, 16000), tone(1500, 0.2, 16000, 16000)
	data := make([]int, 0, 2*len(left))
	for i := range left {
		data = append(data, int(left[i]), int(right[i]))
	}
	p, err := ReadWAV(encodeWith(t, data, 16000, 16, 2))
	if err != nil {
		t.Fatal(err)
	}
	if l := toneLevel(p, 500, SampleRate); math.Abs(db(l/0.2)) > 0.1 {
		t.Errorf("left 500 Hz tone at %.3f, want half its 0.4", l)
	}
	if l := toneLevel(p, 1500, SampleRate); math.Abs(db(l/0.1)) > 0.1 {
		t.Errorf("right 1500 Hz tone at %.3f, want half its 0.2", l)
	}
	// Opposite channels cancel.
	data = data[:0]
	for _, s := range left {
		data = append(data, int(s), -int(s))
	}
	p, err = ReadWAV(encodeWith(t, data, 16000, 16, 2))
	if err != nil {
		t.Fatal(err)
	}
	if l := LevelDBFS(p); l > -90 {
		t.Errorf("L = -R downmixed to %.1f dBFS, want silence", l)
	}
}

// rawWAV builds a WAV file by hand: a fmt chunk (with extra bytes after
// the 16 standard ones) and, unless data is nil, a data chunk.
func rawWAV(format, channels, rate, bits int, extra, data []byte) []byte {
	var b bytes.Buffer
	le := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(0)) // fixed below
	b.WriteString("WAVEfmt ")
	le(uint32(16 + len(extra)))
	le(uint16(format))
	le(uint16(channels))
	le(uint32(rate))
	le(uint32(rate * channels * bits / 8))
	le(uint16(channels * bits / 8))
	le(uint16(bits))
	b.Write(extra)
	if data != nil {
		b.WriteString("data")
		le(uint32(len(data)))
		b.Write(data)
	}
	out := b.Bytes()
	binary.LittleEndian.PutUint32(out[4:8], uint32(len(out)-8))
	return out
}

// extensible is the WAVE_FORMAT_EXTENSIBLE tail of a fmt chunk for a
// sub-format tag.
func extensible(sub uint16) []byte {
	e := make([]byte, 24)
	binary.LittleEndian.PutUint16(e[0:2], 22)
	binary.LittleEndian.PutUint16(e[8:10], sub)
	copy(e[10:], "\x00\x00\x00\x00\x10\x00\x80\x00\x00\xAA\x00\x38\x9B\x71")
	return e
}

func TestReadWAVErrors(t *testing.T) {
	pcm16 := make([]byte, 320)
	good := rawWAV(1, 1, 8000, 16, nil, pcm16)
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "empty file"},
		{"short", []byte("RIFF"), "truncated header"},
		{"text", []byte("this is not a wav file at all"), "no RIFF/WAVE header"},
		{"AIFF-like", append([]byte("FORM\x00\x00\x00\x10AIFF"), make([]byte, 16)...), "no RIFF/WAVE header"},
		{"RF64", append([]byte("RF64"), good[4:]...), "unsupported container"},
		{"no fmt", []byte("RIFF\x04\x00\x00\x00WAVE"), "no fmt chunk"},
		{"no data", rawWAV(1, 1, 8000, 16, nil, nil), "no data chunk"},
		{"short fmt", []byte("RIFF\x10\x00\x00\x00WAVEfmt \x04\x00\x00\x00\x01\x00\x01\x00"), "fmt chunk of 4 bytes"},
		{"chunk overruns file", good[:30], "claims 16 bytes"},
		{"float", rawWAV(3, 1, 8000, 32, nil, make([]byte, 64)), "IEEE float"},
		{"extensible float", rawWAV(0xFFFE, 1, 8000, 32, extensible(3), make([]byte, 64)), "IEEE float"},
		{"mp3", rawWAV(0x55, 1, 8000, 16, []byte{0, 0}, make([]byte, 64)), "format tag 0x55"},
		{"ADPCM", rawWAV(2, 1, 8000, 4, nil, make([]byte, 64)), "format tag 0x2"},
		{"12-bit", rawWAV(1, 1, 8000, 12, nil, make([]byte, 64)), "bit depth 12"},
		{"16-bit μ-law", rawWAV(7, 1, 8000, 16, nil, make([]byte, 64)), "G.711 with 16 bits"},
		{"no channels", rawWAV(1, 0, 8000, 16, nil, make([]byte, 64)), "0 channels"},
		{"zero rate", rawWAV(1, 1, 0, 16, nil, make([]byte, 64)), "sample rate 0"},
		{"extensible without sub-format", rawWAV(0xFFFE, 1, 8000, 16, []byte{0, 0}, make([]byte, 64)), "without its sub-format"},
	}
	for _, tt := range tests {
		p, err := ReadWAV(bytes.NewReader(tt.file))
		if err == nil {
			t.Errorf("%s: no error (%d samples)", tt.name, len(p))
			continue
		}
		if !errors.Is(err, ErrNotWAV) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %q, want ErrNotWAV mentioning %q", tt.name, err, tt.want)
		}
	}

	_, err := ReadWAVFile(filepath.Join(t.TempDir(), "missing.wav"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	path := filepath.Join(t.TempDir(), "broken.wav")
	if err := os.WriteFile(path, []byte("RIFF junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadWAVFile(path); err == nil || !strings.Contains(err.Error(), "broken.wav") {
		t.Errorf("broken file: error %v should name the file", err)
	}
}

func TestReadWAVOtherValidShapes(t *testing.T) {
	// Extensible PCM, G.711 files, a data chunk shorter than its header
	// says, and a chunk before fmt.
	src := PCM(tone(1000, 0.5, 800, SampleRate))
	le := make([]byte, 2*len(src))
	for i, s := range src {
		binary.LittleEndian.PutUint16(le[2*i:], uint16(s))
	}
	truncated := rawWAV(1, 1, 8000, 16, nil, le)
	binary.LittleEndian.PutUint32(truncated[40:44], 0x7FFFFFF0) // a streaming writer's size
	withList := rawWAV(1, 1, 8000, 16, nil, le)
	list := []byte("LIST\x04\x00\x00\x00INFO")
	withList = append(append(append([]byte{}, withList[:12]...), list...), withList[12:]...)
	tests := []struct {
		name string
		file []byte
		tol  int // per-sample error allowed
	}{
		{"extensible PCM", rawWAV(0xFFFE, 1, 8000, 16, extensible(1), le), 0},
		{"μ-law", rawWAV(7, 1, 8000, 8, nil, EncodeMulaw(src)), 8 + 32768/32},
		{"A-law", rawWAV(6, 1, 8000, 8, nil, alaw(src)), 16 + 32768/32},
		{"oversized data chunk", truncated, 0},
		{"LIST before fmt", withList, 0},
	}
	for _, tt := range tests {
		p, err := ReadWAV(bytes.NewReader(tt.file))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if len(p) != len(src) {
			t.Errorf("%s: %d samples, want %d", tt.name, len(p), len(src))
			continue
		}
		for i := range p {
			if d := int(p[i]) - int(src[i]); d > tt.tol || -d > tt.tol {
				t.Errorf("%s: sample %d is %d, want %d", tt.name, i, p[i], src[i])
				break
			}
		}
	}
}
