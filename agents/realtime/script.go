package realtime

import (
	"math"
	"time"

	"github.com/zaf/g711"
)

// Defaults for the zero values of Script and VAD.
const (
	DefaultThreshold   = 1000.0                 // RMS on the int16 scale, about -30 dBFS
	DefaultOnset       = 60 * time.Millisecond  // loud audio before speech_started
	DefaultSilence     = 400 * time.Millisecond // quiet audio before speech_stopped
	DefaultChunk       = 100 * time.Millisecond // audio per response.output_audio.delta
	DefaultSpeed       = 2.0                    // reply audio streams twice as fast as it plays
	DefaultToolTimeout = 10 * time.Second       // wait for function_call_output and response.create
	DefaultWriteWait   = 5 * time.Second        // one write to the client
)

// Script is what the fake model does on one connection. Every connection
// plays it from the first turn.
type Script struct {
	// Turns are played in order, one at each end of caller speech
	// (input_audio_buffer.speech_stopped). Speech after the last turn gets
	// no answer.
	Turns []Turn
	// VAD tunes the energy detector that finds speech in the input audio.
	VAD VAD
	// Chunk is how much audio one response.output_audio.delta carries
	// (DefaultChunk when zero). The Twilio transport forwards each delta as
	// one media frame followed by one mark, so it is also the granularity of
	// the client's playout reports.
	Chunk time.Duration
	// Speed is how many times faster than real time reply audio is streamed
	// (DefaultSpeed when zero): the real service also generates ahead of
	// playout, which is why clients need marks to know what was heard.
	Speed float64
	// ToolTimeout bounds the wait, after a turn's function calls, for their
	// outputs and the client's response.create (DefaultToolTimeout when
	// zero). When it passes the turn's reply is skipped and a note recorded.
	ToolTimeout time.Duration
}

// Turn is one answer of the fake model to one caller utterance.
type Turn struct {
	// Calls are function calls made in a first response; the reply then
	// comes in a second response, after the client has sent every call's
	// output and asked for it with response.create.
	Calls []FunctionCall
	// Reply is spoken after the calls (or at once when there are none).
	// An empty reply (no audio, no transcript) says nothing.
	Reply Reply
}

// FunctionCall is a function call the fake model makes.
type FunctionCall struct {
	Name string
	// Arguments is the JSON object of arguments, as the model writes it.
	Arguments string
	// CallID names the call (call_<n> when empty).
	CallID string
}

// Reply is a spoken answer.
type Reply struct {
	// Audio is 8 kHz μ-law; it is converted to the session's output format.
	Audio []byte
	// Transcript is sent as output_audio_transcript deltas (one per word)
	// and done.
	Transcript string
}

// VAD tunes the speech detector: input audio is cut into 20 ms frames and a
// frame is loud when its RMS reaches Threshold.
type VAD struct {
	// Threshold is the RMS, on the int16 scale, of a loud frame
	// (DefaultThreshold when zero).
	Threshold float64
	// Onset is how much uninterrupted loud audio starts speech
	// (DefaultOnset when zero).
	Onset time.Duration
	// Silence is how much uninterrupted quiet audio ends it (DefaultSilence
	// when zero).
	Silence time.Duration
}

func (s Script) withDefaults() Script {
	if s.VAD.Threshold <= 0 {
		s.VAD.Threshold = DefaultThreshold
	}
	if s.VAD.Onset <= 0 {
		s.VAD.Onset = DefaultOnset
	}
	if s.VAD.Silence <= 0 {
		s.VAD.Silence = DefaultSilence
	}
	if s.Chunk <= 0 {
		s.Chunk = DefaultChunk
	}
	if s.Speed <= 0 {
		s.Speed = DefaultSpeed
	}
	if s.ToolTimeout <= 0 {
		s.ToolTimeout = DefaultToolTimeout
	}
	return s
}

// Tone is d of a sine at hz with peak amplitude amp (int16 scale), as
// 8 kHz μ-law: a stand-in for speech that an energy detector hears.
func Tone(hz float64, d time.Duration, amp float64) []byte {
	n := int(d.Seconds() * 8000)
	out := make([]byte, n)
	for i := range out {
		v := amp * math.Sin(2*math.Pi*hz*float64(i)/8000)
		out[i] = g711.EncodeUlawFrame(int16(math.Max(math.MinInt16, math.Min(math.MaxInt16, v))))
	}
	return out
}

// Silence is d of digital silence as 8 kHz μ-law (0xFF, what Twilio sends).
func Silence(d time.Duration) []byte {
	out := make([]byte, int(d.Seconds()*8000))
	for i := range out {
		out[i] = 0xFF
	}
	return out
}
