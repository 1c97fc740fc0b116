package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/callsim/audiocall"
	"github.com/callproof/callproof/callsim/hearing"
	"github.com/callproof/callproof/callsim/twilio"
	"github.com/callproof/callproof/callsim/webrtc"
)

// AudioOptions set up an audio dialect's caller.
type AudioOptions struct {
	// SpeechCache is where synthesized caller speech is kept (WAV files
	// keyed by voice and text); default DefaultSpeechCache().
	SpeechCache string
	// Voice is the caller's synth, "engine/voice"; default
	// audio.DefaultVoice.
	Voice string
	// RecordDir, when set, gets one stereo WAV per call.
	RecordDir string
	// Hearing builds a call's recognizer of the agent's speech; nil
	// leaves agent utterances timed but without words (the confirmation
	// axis is then unknown).
	Hearing func(callsim.CallSetup) twilio.Hearer
}

// DefaultSpeechCache is the user's cache directory's callproof/speech
// (or a folder under the system temp directory when there is none).
func DefaultSpeechCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "callproof", "speech")
}

// TwilioTransport returns the Twilio Media Streams caller for o.
func TwilioTransport(o AudioOptions) (*twilio.Transport, error) {
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	return &twilio.Transport{
		Speech:     cfg.Speech,
		RecordDir:  o.RecordDir,
		HearingFor: o.Hearing,
	}, nil
}

// WebRTCOptions choose a WebRTC caller's signaling.
type WebRTCOptions struct {
	Signaling string // webrtc.SignalingSmallWebRTC (default) or webrtc.SignalingWHIP
	Trickle   bool   // candidates after the offer
}

// WebRTCTransport returns the WebRTC caller for o.
func WebRTCTransport(o AudioOptions, w WebRTCOptions) (*webrtc.Transport, error) {
	switch w.Signaling {
	case "", webrtc.SignalingSmallWebRTC, webrtc.SignalingWHIP:
	default:
		return nil, fmt.Errorf("signaling %q: want %s or %s", w.Signaling, webrtc.SignalingSmallWebRTC, webrtc.SignalingWHIP)
	}
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	return &webrtc.Transport{Config: cfg, Signaling: w.Signaling, Trickle: w.Trickle,
		RecordDir: o.RecordDir, HearingFor: o.Hearing}, nil
}

// config is the audio call o sets up: the caller's voice (cached) and
// the recordings' directory made.
func (o AudioOptions) config() (audiocall.Config, error) {
	if o.Voice == "" {
		o.Voice = audio.DefaultVoice
	}
	if o.SpeechCache == "" {
		o.SpeechCache = DefaultSpeechCache()
	}
	synth, err := audio.NewSynth(o.Voice)
	if err != nil {
		return audiocall.Config{}, err
	}
	if o.RecordDir != "" {
		if err := os.MkdirAll(o.RecordDir, 0o755); err != nil {
			return audiocall.Config{}, fmt.Errorf("recordings: %w", err)
		}
	}
	return audiocall.Config{Speech: &audio.Cache{Dir: o.SpeechCache, Synth: synth}}, nil
}

// DefaultHearing is the recognizer of agent speech for agents that send
// only audio: Debian's pocketsphinx, one recognizer shared by every call,
// each call with a grammar built from its own catalogue and records.
func DefaultHearing() func(callsim.CallSetup) twilio.Hearer {
	// The cross-check decodes each utterance twice (at two language
	// weights) and marks it uncertain where they disagree: without it a
	// lost "not" or "should" can turn a failure into a pass.
	r := &hearing.Recognizer{CrossCheck: true}
	// Load the pronunciation dictionary now, not in the middle of the
	// first live call: it is megabytes parsed in this process, and the
	// garbage it makes would stall every call's frame clock at once.
	warm, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	_, _ = r.Recognize(warm, make([]int16, audio.FrameSamples), hearing.BuildGrammar(nil, nil))
	cancel()
	return func(c callsim.CallSetup) twilio.Hearer {
		return &grammarHearer{r: r, g: hearing.BuildGrammar(c.Tools, c.Records)}
	}
}

// grammarHearer hears one call's agent.
type grammarHearer struct {
	r *hearing.Recognizer
	g *hearing.Grammar
}

func (h *grammarHearer) Hear(ctx context.Context, pcm audio.PCM) (string, bool, error) {
	res, err := h.r.Recognize(ctx, pcm, h.g)
	if err != nil {
		return "", true, err
	}
	heard := h.g.Hear(res)
	return heard.Text, heard.Uncertain, nil
}
