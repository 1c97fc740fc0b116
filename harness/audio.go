package harness

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/callsim/twilio"
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
	if o.Voice == "" {
		o.Voice = audio.DefaultVoice
	}
	if o.SpeechCache == "" {
		o.SpeechCache = DefaultSpeechCache()
	}
	synth, err := audio.NewSynth(o.Voice)
	if err != nil {
		return nil, err
	}
	if o.RecordDir != "" {
		if err := os.MkdirAll(o.RecordDir, 0o755); err != nil {
			return nil, fmt.Errorf("recordings: %w", err)
		}
	}
	return &twilio.Transport{
		Speech:     &audio.Cache{Dir: o.SpeechCache, Synth: synth},
		RecordDir:  o.RecordDir,
		HearingFor: o.Hearing,
	}, nil
}

// DefaultHearing is the recognizer the CLI uses for agents that send only
// audio. Until one is wired, agent utterances are timed but not
// transcribed.
func DefaultHearing() func(callsim.CallSetup) twilio.Hearer { return nil }
