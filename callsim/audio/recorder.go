package audio

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// MaxRecording is the default cap on a Recorder: 30 minutes of stereo
// 8 kHz 16-bit is about 55 MiB in memory. Audio placed beyond the cap is
// dropped and reported, so a call that never hangs up cannot exhaust memory.
const MaxRecording = 30 * time.Minute

// ErrRecordingTruncated is returned by Recorder.WriteWAV (wrapped) when
// audio placed beyond the recorder's cap was dropped.
var ErrRecordingTruncated = errors.New("audio: recording truncated at its length cap")

// Recorder builds the stereo recording of one call on one timeline: the
// caller on the left channel, the agent on the right, each piece placed at
// its offset from call start (to the sample: 1/8 ms), silence where
// nothing was placed. Pieces
// that overlap on one channel are mixed (added, saturating), so noise and
// speech placed separately both appear. Safe for concurrent use: the
// caller's writer and the agent's reader may record at once.
type Recorder struct {
	mu        sync.Mutex
	max       int // samples per channel
	left      []int16
	right     []int16
	truncated bool
}

// NewRecorder returns a recorder capped at MaxRecording.
func NewRecorder() *Recorder { return NewRecorderLimit(MaxRecording) }

// NewRecorderLimit returns a recorder capped at limit (at least one frame).
func NewRecorderLimit(limit time.Duration) *Recorder {
	return &Recorder{max: max(Samples(limit), FrameSamples)}
}

// Caller places caller audio at offset at from call start (real time).
func (r *Recorder) Caller(at time.Duration, p PCM) { r.place(&r.left, at, p) }

// Agent places agent audio at offset at from call start (real time).
func (r *Recorder) Agent(at time.Duration, p PCM) { r.place(&r.right, at, p) }

func (r *Recorder) place(ch *[]int16, at time.Duration, p PCM) {
	if len(p) == 0 {
		return
	}
	if at >= samplesToDuration(r.max) { // also keeps at*SampleRate from overflowing
		r.mu.Lock()
		r.truncated = true
		r.mu.Unlock()
		return
	}
	if at <= -p.Duration() { // wholly before the call started
		return
	}
	start := int(at * SampleRate / time.Second)
	if start < 0 { // audio before the call started: keep what falls after 0
		if -start >= len(p) {
			return
		}
		p, start = p[-start:], 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	end := start + len(p)
	if end > r.max {
		r.truncated = true
		end = r.max
		if start >= end {
			return
		}
		p = p[:end-start]
	}
	if end > len(*ch) {
		*ch = append(*ch, make([]int16, end-len(*ch))...)
	}
	Mix((*ch)[start:end], p, 0)
}

// Duration is the length of the recording so far (the longer channel).
func (r *Recorder) Duration() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return samplesToDuration(max(len(r.left), len(r.right)))
}

// Truncated reports whether any audio was dropped at the cap.
func (r *Recorder) Truncated() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.truncated
}

// Channels returns copies of the caller and agent channels, padded with
// silence to one length.
func (r *Recorder) Channels() (caller, agent PCM) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := max(len(r.left), len(r.right))
	caller, agent = make(PCM, n), make(PCM, n)
	copy(caller, r.left)
	copy(agent, r.right)
	return caller, agent
}

// WriteWAV writes the recording as a stereo 8 kHz 16-bit WAV, caller left
// and agent right. If audio was dropped at the cap the file is still
// complete (up to the cap) and the error wraps ErrRecordingTruncated.
func (r *Recorder) WriteWAV(w io.WriteSeeker) error {
	caller, agent := r.Channels()
	inter := make([]int16, 2*len(caller))
	for i := range caller {
		inter[2*i], inter[2*i+1] = caller[i], agent[i]
	}
	if err := WriteWAVRate(w, inter, SampleRate, 2); err != nil {
		return err
	}
	if r.Truncated() {
		return fmt.Errorf("%w (%v)", ErrRecordingTruncated, samplesToDuration(r.max))
	}
	return nil
}
