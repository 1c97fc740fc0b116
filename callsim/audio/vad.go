package audio

// VAD defaults, measured on flite speech: DefaultVADConfig says why, and
// TestVADDefaults pins them.
const (
	DefaultOnsetDBFS      = -40.0
	DefaultOffsetDBFS     = -48.0
	DefaultOnsetFrames    = 6
	DefaultHangoverFrames = 25
)

// VADConfig sets the energy detector's hysteresis. A frame is loud at or
// above OnsetDBFS and quiet below OffsetDBFS (RMS, as LevelDBFS). A frame
// between the two breaks a loud run while idle and a quiet run while
// speaking: it keeps the detector in whatever state it is in.
type VADConfig struct {
	// OnsetDBFS is the level a frame must reach to count toward an onset.
	OnsetDBFS float64
	// OffsetDBFS is the level below which a frame counts toward an offset.
	// Keep it below OnsetDBFS: the gap is the hysteresis.
	OffsetDBFS float64
	// OnsetFrames is how many loud frames in a row make an onset.
	OnsetFrames int
	// HangoverFrames is how many quiet frames in a row end speech.
	HangoverFrames int
}

// DefaultVADConfig is tuned for clean synthesized or agent speech on the
// wire, not for a microphone in a noisy room:
//
//   - OnsetDBFS -40, OffsetDBFS -48: flite speech runs at -15 to -30
//     dBFS in voiced frames; the gaps between words fall to digital
//     silence or near it. μ-law's quietest codes sit far below -48.
//   - OnsetFrames 6 (120 ms): a spoken word holds energy longer than
//     that, while a 100 ms cough or a door slam's loud part does not, so
//     neither is reported as speech (the onset time is still the run's
//     first frame, so waiting costs no timing accuracy).
//   - HangoverFrames 25 (500 ms): longer than the pauses flite leaves
//     between words, at commas (up to 340 ms below OffsetDBFS, measured
//     through μ-law on kal, kal16, rms, slt and awb) and between two
//     sentences of one turn (up to 380 ms), so a sentence, or a turn of
//     several, is one utterance; a turn's end is reported 500 ms after
//     its last loud frame (OffsetFrame still marks the real end).
func DefaultVADConfig() VADConfig {
	return VADConfig{
		OnsetDBFS:      DefaultOnsetDBFS,
		OffsetDBFS:     DefaultOffsetDBFS,
		OnsetFrames:    DefaultOnsetFrames,
		HangoverFrames: DefaultHangoverFrames,
	}
}

// VADEvent is what one frame changed.
type VADEvent int

const (
	VADNone   VADEvent = iota // no change
	VADOnset                  // speech started (at OnsetFrame)
	VADOffset                 // speech ended (at OffsetFrame)
)

func (e VADEvent) String() string {
	switch e {
	case VADNone:
		return "none"
	case VADOnset:
		return "onset"
	case VADOffset:
		return "offset"
	}
	return "VADEvent(?)"
}

// VAD is an energy voice-activity detector over 20 ms frames with
// hysteresis: OnsetFrames loud frames in a row start speech, HangoverFrames
// quiet frames in a row end it. It is not safe for concurrent use; give
// each stream its own.
type VAD struct {
	c        VADConfig
	frames   int // frames pushed so far
	speaking bool
	run      int // current loud run (idle) or quiet run (speaking)
	onset    int
	offset   int
}

// NewVAD returns a detector with config c. Counts below 1 are taken as 1.
func NewVAD(c VADConfig) *VAD {
	c.OnsetFrames = max(c.OnsetFrames, 1)
	c.HangoverFrames = max(c.HangoverFrames, 1)
	return &VAD{c: c, onset: -1, offset: -1}
}

// Push feeds one frame (normally FrameSamples samples) and reports whether
// it completed an onset or an offset. The event is reported on the frame
// that decides it; OnsetFrame and OffsetFrame say where speech really
// started and stopped.
func (v *VAD) Push(frame PCM) VADEvent {
	idx := v.frames
	v.frames++
	level := LevelDBFS(frame)
	if !v.speaking {
		if level >= v.c.OnsetDBFS {
			v.run++
		} else {
			v.run = 0
		}
		if v.run >= v.c.OnsetFrames {
			v.speaking = true
			v.onset = idx - v.run + 1
			v.run = 0
			return VADOnset
		}
		return VADNone
	}
	if level < v.c.OffsetDBFS {
		v.run++
	} else {
		v.run = 0
	}
	if v.run >= v.c.HangoverFrames {
		v.speaking = false
		v.offset = idx - v.run + 1
		v.run = 0
		return VADOffset
	}
	return VADNone
}

// Speaking reports whether the detector is inside an utterance.
func (v *VAD) Speaking() bool { return v.speaking }

// Frames is the number of frames pushed so far; frame i starts at
// i*FrameDuration from the first.
func (v *VAD) Frames() int { return v.frames }

// OnsetFrame is the index of the first loud frame of the run that made the
// latest onset, or -1 before any onset.
func (v *VAD) OnsetFrame() int { return v.onset }

// OffsetFrame is the index of the first quiet frame of the run that made
// the latest offset (the frame after the last speech), or -1 before any.
func (v *VAD) OffsetFrame() int { return v.offset }

// Reset forgets all state, keeping the config.
func (v *VAD) Reset() { *v = VAD{c: v.c, onset: -1, offset: -1} }
