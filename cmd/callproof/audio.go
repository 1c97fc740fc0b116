package main

import (
	"fmt"
	"path/filepath"

	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/harness"
)

// Wire dialects of --transport.
const (
	transportNative = "native"
	transportTwilio = "twilio"
)

func audioDefaultVoice() string { return audio.DefaultVoice }

// check validates the dialect flags against the time scale.
func (a audioFlags) check(scale float64) error {
	switch a.transport {
	case "", transportNative:
		if a.voice != "" || a.cache != "" || a.record {
			return fmt.Errorf("--voice, --speech-cache and --record are for audio: add --transport %s", transportTwilio)
		}
	case transportTwilio:
		if scale != 1 {
			return fmt.Errorf("--transport %s runs in real time: --scale must be 1, not %v", transportTwilio, scale)
		}
		if a.voice != "" {
			if _, err := audio.NewSynth(a.voice); err != nil {
				return fmt.Errorf("--voice: %w", err)
			}
		}
	default:
		return fmt.Errorf("--transport %q: want %s or %s", a.transport, transportNative, transportTwilio)
	}
	return nil
}

func (a audioFlags) name() string {
	if a.transport == "" {
		return transportNative
	}
	return a.transport
}

// audioFromMeta checks a resumed run's dialect: it is the run's own, from
// its meta.json; the flags may only repeat it (voice, cache and recording
// may change).
func (p *runPlan) audioFromMeta() error {
	meta, err := harness.ReadMeta(p.out)
	if err != nil {
		return err
	}
	t := meta.Transport
	if t == "" {
		t = transportNative
	}
	if t != transportNative && t != transportTwilio {
		return fmt.Errorf("%s/%s: unknown transport %q", p.out, harness.MetaFile, meta.Transport)
	}
	p.audio.transport = t
	return p.audio.check(p.scale)
}

// setUp puts the chosen dialect into env.
func (a audioFlags) setUp(env *harness.Env, out string) error {
	if a.name() != transportTwilio {
		return nil
	}
	o := harness.AudioOptions{SpeechCache: a.cache, Voice: a.voice, Hearing: harness.DefaultHearing()}
	if a.record {
		o.RecordDir = filepath.Join(out, harness.RecordingsDir)
	}
	t, err := harness.TwilioTransport(o)
	if err != nil {
		return err
	}
	env.Transport, env.TransportName = t, transportTwilio
	return nil
}
