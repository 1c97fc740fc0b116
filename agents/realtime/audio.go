package realtime

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/zaf/g711"
)

// frameMs is the VAD's frame: the Twilio frame size, and fine enough for
// onsets of tens of milliseconds.
const frameMs = 20

// audioFormat is a session's input or output audio format.
type audioFormat struct {
	codec string // "pcmu", "pcma" or "pcm" (16-bit little-endian)
	rate  int
}

// defaultFormat is the GA API's default: 24 kHz PCM16.
func defaultFormat() audioFormat { return audioFormat{codec: "pcm", rate: 24000} }

// parseFormat reads a format as the GA API writes it ({"type":"audio/pcmu"},
// {"type":"audio/pcm","rate":24000}) or as the beta API did ("g711_ulaw",
// "pcm16").
func parseFormat(v any) (audioFormat, bool) {
	var name string
	rate := 0
	switch f := v.(type) {
	case string:
		name = f
	case map[string]any:
		name, _ = f["type"].(string)
		if r, ok := f["rate"].(float64); ok {
			rate = int(r)
		}
	default:
		return audioFormat{}, false
	}
	switch name {
	case "audio/pcmu", "g711_ulaw":
		return audioFormat{codec: "pcmu", rate: 8000}, true
	case "audio/pcma", "g711_alaw":
		return audioFormat{codec: "pcma", rate: 8000}, true
	case "audio/pcm", "pcm16":
		if rate <= 0 {
			rate = 24000
		}
		return audioFormat{codec: "pcm", rate: rate}, true
	}
	return audioFormat{}, false
}

// wire names the format as the GA API does.
func (f audioFormat) wire() map[string]any {
	switch f.codec {
	case "pcmu":
		return map[string]any{"type": "audio/pcmu"}
	case "pcma":
		return map[string]any{"type": "audio/pcma"}
	}
	return map[string]any{"type": "audio/pcm", "rate": f.rate}
}

// decode turns input audio into samples.
func (f audioFormat) decode(b []byte) []int16 {
	var lin []byte
	switch f.codec {
	case "pcmu":
		lin = g711.DecodeUlaw(b)
	case "pcma":
		lin = g711.DecodeAlaw(b)
	default:
		lin = b
	}
	out := make([]int16, len(lin)/2)
	for i := range out {
		out[i] = int16(binary.LittleEndian.Uint16(lin[2*i:]))
	}
	return out
}

// encode turns 8 kHz μ-law into this format. PCM is upsampled by linear
// interpolation, which is plenty for test audio.
func (f audioFormat) encode(ulaw []byte) []byte {
	switch f.codec {
	case "pcmu":
		return append([]byte(nil), ulaw...)
	case "pcma":
		return g711.Ulaw2Alaw(ulaw)
	}
	in := make([]float64, len(ulaw))
	for i, b := range ulaw {
		in[i] = float64(g711.DecodeUlawFrame(b))
	}
	n := len(in) * f.rate / 8000
	out := make([]byte, 2*n)
	for i := 0; i < n; i++ {
		x := float64(i) * 8000 / float64(f.rate)
		j := int(x)
		v := in[j]
		if j+1 < len(in) {
			v += (in[j+1] - in[j]) * (x - float64(j))
		}
		binary.LittleEndian.PutUint16(out[2*i:], uint16(int16(v)))
	}
	return out
}

// vad finds speech by energy: a 20 ms frame is loud when its RMS reaches
// the threshold; enough loud frames in a row start speech, enough quiet
// ones end it. Positions are in input audio time, counted from the first
// append, so detection does not depend on how fast audio arrives.
type vad struct {
	threshold     float64
	onsetFrames   int
	silenceFrames int
	rate          int
	pending       []int16
	frames        int64 // whole frames seen
	speaking      bool
	run           int   // loud frames in a row (quiet) or quiet ones (speaking)
	runStart      int64 // frame where the run began
}

// vadEvent is a detected onset (start) or offset, at ms of input audio.
type vadEvent struct {
	start bool
	ms    int64
}

func newVAD(cfg VAD, rate int) *vad {
	frames := func(d time.Duration) int {
		return max(1, int(math.Ceil(float64(d)/float64(frameMs*time.Millisecond))))
	}
	return &vad{threshold: cfg.Threshold, onsetFrames: frames(cfg.Onset), silenceFrames: frames(cfg.Silence), rate: rate}
}

// setRate follows a change of input format; a partial frame is dropped.
func (v *vad) setRate(rate int) {
	if rate != v.rate {
		v.rate, v.pending = rate, nil
	}
}

// ms is the input audio time at the end of the frames seen.
func (v *vad) ms() int64 { return v.frames * frameMs }

func (v *vad) feed(samples []int16) []vadEvent {
	var evs []vadEvent
	size := v.rate * frameMs / 1000
	v.pending = append(v.pending, samples...)
	for len(v.pending) >= size {
		loud := rms(v.pending[:size]) >= v.threshold
		v.pending = v.pending[size:]
		v.frames++
		// A frame that continues the current state resets the run.
		if loud == v.speaking {
			v.run = 0
			continue
		}
		if v.run == 0 {
			v.runStart = v.frames - 1
		}
		v.run++
		switch {
		case !v.speaking && v.run >= v.onsetFrames:
			v.speaking, v.run = true, 0
			evs = append(evs, vadEvent{start: true, ms: v.runStart * frameMs})
		case v.speaking && v.run >= v.silenceFrames:
			v.speaking, v.run = false, 0
			evs = append(evs, vadEvent{start: false, ms: v.ms()})
		}
	}
	// Keep the slice from growing without bound behind the consumed part.
	v.pending = append(v.pending[:0:0], v.pending...)
	return evs
}

func rms(s []int16) float64 {
	var sum float64
	for _, x := range s {
		f := float64(x)
		sum += f * f
	}
	return math.Sqrt(sum / float64(len(s)))
}
