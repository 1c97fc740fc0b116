package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-audio/audio"
	"github.com/go-audio/wav"
	"github.com/zaf/g711"
)

// MaxWAVBytes bounds what ReadWAV and DecodeWAV read: the whole file is held
// in memory while it is decoded. 256 MiB is about 25 minutes of 44.1 kHz
// stereo 16-bit audio and more than an hour of an 8 kHz call recording.
const MaxWAVBytes = 256 << 20

// ErrNotWAV is wrapped by every error about input that is not a WAV file
// this package can read (empty, truncated, malformed, or a non-PCM codec).
var ErrNotWAV = errors.New("not a readable PCM WAV file")

// WAV format tags (the fmt chunk's first field).
const (
	wavPCM        = 1
	wavFloat      = 3
	wavAlaw       = 6
	wavMulaw      = 7
	wavExtensible = 0xFFFE
)

// WAVInfo describes a decoded WAV file.
type WAVInfo struct {
	SampleRate int
	Channels   int
	BitDepth   int // of the file; decoded samples are always 16-bit
	Format     int // 1 PCM, 6 A-law, 7 μ-law (an extensible file's sub-format)
}

// ReadWAV reads a WAV file and returns it as PCM: mono (channels averaged)
// at SampleRate (resampled with Resample). It reads 8-, 16-, 24- and 32-bit
// integer PCM at any rate and channel count, and 8-bit μ-law and A-law
// files. Float and compressed files, empty or truncated headers and files
// without a data chunk give an error wrapping ErrNotWAV. A valid file whose
// data chunk is empty gives empty PCM and no error; a data chunk shorter
// than its header says (a writer that never fixed up its sizes) is read as
// far as it goes.
func ReadWAV(r io.ReadSeeker) (PCM, error) {
	samples, info, err := DecodeWAV(r)
	if err != nil {
		return nil, err
	}
	mono := downmix(samples, info.Channels)
	if info.SampleRate != SampleRate {
		mono = Resample(mono, info.SampleRate, SampleRate)
	}
	return PCM(mono), nil
}

// ReadWAVFile is ReadWAV on a file; errors name the file.
func ReadWAVFile(path string) (PCM, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := ReadWAV(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// DecodeWAV reads a WAV file without converting it: interleaved 16-bit
// samples at the file's own rate and channel count (deeper samples keep
// their top 16 bits; 8-bit and companded ones are expanded to 16). It
// reads from r's current position, which must be the file's start.
func DecodeWAV(r io.ReadSeeker) ([]int16, WAVInfo, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxWAVBytes+1))
	if err != nil {
		return nil, WAVInfo{}, err
	}
	if len(b) > MaxWAVBytes {
		return nil, WAVInfo{}, fmt.Errorf("wav: larger than %d bytes: %w", MaxWAVBytes, ErrNotWAV)
	}
	info, err := checkWAV(b)
	if err != nil {
		return nil, WAVInfo{}, fmt.Errorf("wav: %w: %w", err, ErrNotWAV)
	}
	samples, err := decodeSamples(b, info)
	if err != nil {
		return nil, WAVInfo{}, fmt.Errorf("wav: %w: %w", err, ErrNotWAV)
	}
	return samples, info, nil
}

// checkWAV walks the RIFF chunk list itself before go-audio/wav sees the
// bytes: that decoder ignores some read errors and reads past short
// chunks, so a broken file would otherwise decode as noise or as nothing.
func checkWAV(b []byte) (WAVInfo, error) {
	var info WAVInfo
	switch {
	case len(b) == 0:
		return info, errors.New("empty file")
	case len(b) < 12:
		return info, fmt.Errorf("truncated header (%d bytes)", len(b))
	case string(b[0:4]) == "RF64" || string(b[0:4]) == "RIFX":
		return info, fmt.Errorf("unsupported container %q (want little-endian RIFF)", b[0:4])
	case string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE":
		return info, errors.New("no RIFF/WAVE header")
	}
	var fmtChunk []byte
	haveData := false
	for off := 12; off+8 <= len(b); {
		id := string(b[off : off+4])
		size := int(binary.LittleEndian.Uint32(b[off+4 : off+8]))
		body := b[off+8:]
		if size <= len(body) {
			body = body[:size]
		} else if id != "data" {
			return info, fmt.Errorf("chunk %q at byte %d claims %d bytes, file has %d", id, off, size, len(body))
		}
		switch id {
		case "fmt ":
			if fmtChunk == nil {
				fmtChunk = body
			}
		case "data":
			if fmtChunk == nil {
				return info, errors.New("data chunk before fmt chunk")
			}
			haveData = true
		}
		if haveData {
			break
		}
		off += 8 + size + size%2
	}
	if fmtChunk == nil {
		return info, errors.New("no fmt chunk")
	}
	if len(fmtChunk) < 16 {
		return info, fmt.Errorf("fmt chunk of %d bytes (want at least 16)", len(fmtChunk))
	}
	info.Format = int(binary.LittleEndian.Uint16(fmtChunk[0:2]))
	info.Channels = int(binary.LittleEndian.Uint16(fmtChunk[2:4]))
	info.SampleRate = int(binary.LittleEndian.Uint32(fmtChunk[4:8]))
	info.BitDepth = int(binary.LittleEndian.Uint16(fmtChunk[14:16]))
	if info.Format == wavExtensible {
		if len(fmtChunk) < 40 {
			return info, errors.New("extensible fmt chunk without its sub-format")
		}
		info.Format = int(binary.LittleEndian.Uint16(fmtChunk[24:26]))
	}
	switch info.Format {
	case wavPCM:
		if d := info.BitDepth; d != 8 && d != 16 && d != 24 && d != 32 {
			return info, fmt.Errorf("unsupported PCM bit depth %d (want 8, 16, 24 or 32)", d)
		}
	case wavMulaw, wavAlaw:
		if info.BitDepth != 8 {
			return info, fmt.Errorf("G.711 with %d bits per sample (want 8)", info.BitDepth)
		}
	case wavFloat:
		return info, errors.New("IEEE float samples, not integer PCM (convert to 16-bit PCM)")
	default:
		return info, fmt.Errorf("format tag %#x is not PCM, μ-law or A-law", info.Format)
	}
	if info.Channels < 1 || info.Channels > 32 {
		return info, fmt.Errorf("%d channels", info.Channels)
	}
	if info.SampleRate < 1000 || info.SampleRate > 768000 {
		return info, fmt.Errorf("sample rate %d Hz out of range", info.SampleRate)
	}
	if !haveData {
		return info, errors.New("no data chunk")
	}
	return info, nil
}

func decodeSamples(b []byte, info WAVInfo) ([]int16, error) {
	d := wav.NewDecoder(bytes.NewReader(b))
	if err := d.FwdToPCM(); err != nil {
		return nil, err
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	if d.PCMChunk == nil {
		return nil, errors.New("no data chunk")
	}
	var conv func(int) int16
	switch {
	case info.Format == wavMulaw:
		conv = func(v int) int16 { return g711.DecodeUlawFrame(uint8(v)) }
	case info.Format == wavAlaw:
		conv = func(v int) int16 { return g711.DecodeAlawFrame(uint8(v)) }
	case info.BitDepth == 8: // unsigned, centred on 128
		conv = func(v int) int16 { return int16((v - 128) << 8) }
	case info.BitDepth == 16:
		conv = func(v int) int16 { return int16(v) }
	case info.BitDepth == 24:
		conv = func(v int) int16 { return int16(v >> 8) }
	default:
		conv = func(v int) int16 { return int16(v >> 16) }
	}
	// The header's size can be a streaming writer's placeholder (up to
	// 4 GiB): size the buffer by the bytes actually there.
	out := make([]int16, 0, min(d.PCMSize, len(b))/max(1, info.BitDepth/8))
	buf := &audio.IntBuffer{Data: make([]int, 4096*info.Channels)}
	for {
		n, err := d.PCMBuffer(buf)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		for _, v := range buf.Data[:n] {
			out = append(out, conv(v))
		}
	}
	// A truncated last frame (some channels missing) is dropped.
	return out[:len(out)-len(out)%info.Channels], nil
}

// downmix averages interleaved channels into one.
func downmix(samples []int16, channels int) []int16 {
	if channels == 1 {
		return samples
	}
	out := make([]int16, len(samples)/channels)
	for i := range out {
		sum := 0
		for _, s := range samples[i*channels : (i+1)*channels] {
			sum += int(s)
		}
		out[i] = int16(sum / channels)
	}
	return out
}

// WriteWAV writes p as a WAV file: 8 kHz mono 16-bit PCM. w must be at
// its start: the header is fixed up by seeking back.
func WriteWAV(w io.WriteSeeker, p PCM) error {
	return WriteWAVRate(w, p, SampleRate, 1)
}

// WriteWAVFile writes p to path (created or truncated) as WriteWAV does.
func WriteWAVFile(path string, p PCM) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteWAV(f, p); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WriteWAVRate writes interleaved 16-bit samples at any rate and channel
// count, e.g. 16 kHz mono for a recognizer that wants wideband input.
func WriteWAVRate(w io.WriteSeeker, samples []int16, rate, channels int) error {
	if channels < 1 || len(samples)%channels != 0 {
		return fmt.Errorf("wav: %d samples do not divide into %d channels", len(samples), channels)
	}
	if rate < 1 {
		return fmt.Errorf("wav: sample rate %d", rate)
	}
	e := wav.NewEncoder(w, rate, 16, channels, wavPCM)
	const chunk = 4096
	buf := &audio.IntBuffer{Format: &audio.Format{NumChannels: channels, SampleRate: rate}, SourceBitDepth: 16}
	// At least one Write, even for no samples: the encoder writes the data
	// chunk header only on Write, and a file without one is not a WAV.
	for first := true; first || len(samples) > 0; first = false {
		n := min(len(samples), chunk*channels)
		buf.Data = buf.Data[:0]
		for _, s := range samples[:n] {
			buf.Data = append(buf.Data, int(s))
		}
		if err := e.Write(buf); err != nil {
			return fmt.Errorf("wav: %w", err)
		}
		samples = samples[n:]
	}
	if err := e.Close(); err != nil {
		return fmt.Errorf("wav: %w", err)
	}
	return nil
}
