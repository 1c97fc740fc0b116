package main

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/callsim/pipecateval"
	"github.com/callproof/callproof/callsim/twilio"
	"github.com/callproof/callproof/callsim/webrtc"
	"github.com/callproof/callproof/harness"
)

// Wire dialects of --transport.
const (
	transportNative = "native"
	transportTwilio = "twilio"
	transportWebRTC = "webrtc"
	// transportPipecatEval is Pipecat's eval wire, in text mode.
	transportPipecatEval = "pipecat-eval"
)

func audioDefaultVoice() string { return audio.DefaultVoice }

// check validates the dialect flags against the time scale.
func (a audioFlags) check(scale float64) error {
	switch a.transport {
	case "", transportNative:
		if a.voice != "" || a.cache != "" || a.record {
			return fmt.Errorf("--voice, --speech-cache and --record are for audio: add --transport %s or %s", transportTwilio, transportWebRTC)
		}
		if a.pool != 0 {
			return fmt.Errorf("--recognizers is for audio: add --transport %s or %s", transportTwilio, transportWebRTC)
		}
	case transportPipecatEval:
		if a.voice != "" || a.cache != "" || a.record || a.pool != 0 {
			return fmt.Errorf("--voice, --speech-cache, --record and --recognizers are for audio: --transport %s plays the caller in text", transportPipecatEval)
		}
		if scale != 1 {
			return fmt.Errorf("--transport %s runs in real time: --scale must be 1, not %v", a.transport, scale)
		}
	case transportTwilio, transportWebRTC, transportLiveKit:
		if scale != 1 {
			return fmt.Errorf("--transport %s runs in real time: --scale must be 1, not %v", a.transport, scale)
		}
		if a.voice != "" {
			if _, err := audio.NewSynth(a.voice); err != nil {
				return fmt.Errorf("--voice: %w", err)
			}
		}
	default:
		return fmt.Errorf("--transport %q: want %s, %s, %s, %s or %s", a.transport, transportNative, transportTwilio, transportWebRTC, transportLiveKit, transportPipecatEval)
	}
	if err := a.livekit.check(a.transport); err != nil {
		return err
	}
	if a.pool < 0 {
		return fmt.Errorf("--recognizers %d: want at least 1 (0: one fewer than the machine's cores)", a.pool)
	}
	if a.twilioAPI != "" && a.transport != transportTwilio {
		return fmt.Errorf("--twilio-api is for --transport %s", transportTwilio)
	}
	if a.transport != transportWebRTC && (a.signaling != "" || a.trickle) {
		return fmt.Errorf("--signaling and --trickle are for --transport %s", transportWebRTC)
	}
	if err := webrtc.CheckSignaling(a.signaling); err != nil {
		return fmt.Errorf("--%w", err)
	}
	return nil
}

// setMeta records the dialect in a run's manifest.
func (a audioFlags) setMeta(m *harness.Meta) {
	m.Transport = a.name()
	if a.name() == transportWebRTC {
		m.Signaling = a.signaling
		if m.Signaling == "" {
			m.Signaling = webrtc.SignalingSmallWebRTC
		}
		m.Trickle = a.trickle
	}
	if a.name() == transportLiveKit {
		m.LiveKitAgentName = a.livekit.agentName
	}
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
	if t != transportNative && t != transportTwilio && t != transportWebRTC && t != transportLiveKit && t != transportPipecatEval {
		return fmt.Errorf("%s/%s: unknown transport %q", p.out, harness.MetaFile, meta.Transport)
	}
	p.audio.transport, p.audio.signaling, p.audio.trickle = t, meta.Signaling, meta.Trickle
	if t == transportLiveKit && p.audio.livekit.agentName == "" {
		// The agent the run dispatched, unless the resume names another:
		// without it the server's automatic dispatch would bring none.
		p.audio.livekit.agentName = meta.LiveKitAgentName
	}
	return p.audio.check(p.scale)
}

// setUp puts the chosen dialect into env, and returns the run's
// recognizer of agent speech (nil in text mode). Recognition runs at the
// end of each call's script, queued in the run's pool: a call waits up to
// harness.HearingFlushTimeout for it.
func (a audioFlags) setUp(env *harness.Env, out string) (*harness.Hearing, error) {
	switch a.name() {
	case transportNative:
		return nil, nil
	case transportPipecatEval:
		// Text both ways: no voice and no recognizer.
		env.Transport, env.TransportName = &pipecateval.Transport{}, transportPipecatEval
		return nil, nil
	}
	h := harness.NewHearing(a.pool)
	env.Simulator = callsim.New(callsim.Options{Clock: env.Clock, FlushTimeout: harness.HearingFlushTimeout})
	o := harness.AudioOptions{SpeechCache: a.cache, Voice: a.voice, Hearing: h.For}
	if a.record {
		o.RecordDir = filepath.Join(out, harness.RecordingsDir)
	}
	if a.name() == transportLiveKit {
		t, err := liveKitTransport(o, a.livekit)
		if err != nil {
			return nil, err
		}
		env.Transport, env.TransportName = t, transportLiveKit
		return h, nil
	}
	if a.name() == transportWebRTC {
		t, err := harness.WebRTCTransport(o, harness.WebRTCOptions{Signaling: a.signaling, Trickle: a.trickle})
		if err != nil {
			return nil, err
		}
		env.Transport, env.TransportName = t, transportWebRTC
		return h, nil
	}
	t, err := harness.TwilioTransport(o)
	if err != nil {
		return nil, err
	}
	t.REST = a.rest
	env.Transport, env.TransportName = t, transportTwilio
	return h, nil
}

// serveTwilioAPI serves the stub of Twilio's REST call update
// (twilio.REST) on a.twilioAPI for the run's calls; stop closes it.
func (a *audioFlags) serveTwilioAPI() (stop func(), err error) {
	ln, err := net.Listen("tcp", a.twilioAPI)
	if err != nil {
		return nil, err
	}
	a.rest = twilio.NewREST()
	srv := &http.Server{Handler: a.rest, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close() }, nil
}
