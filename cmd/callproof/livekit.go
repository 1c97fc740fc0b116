package main

import (
	"errors"
	"os"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/livekit"
	"github.com/callproof/callproof/harness"
)

// transportLiveKit calls an agent in a LiveKit room (callsim/livekit):
// --agent is the LiveKit server's URL.
const transportLiveKit = "livekit"

// liveKitFlags are --transport livekit's own: the agent to dispatch and
// the server's credentials (default: LiveKit's environment variables).
type liveKitFlags struct {
	agentName, apiKey, apiSecret string
}

// addLiveKitFlags registers them on c.
func addLiveKitFlags(c *cli, f *liveKitFlags) {
	c.StringVar(&f.agentName, "livekit-agent-name", "", "livekit: dispatch this agent explicitly into each call's room (default: the server's automatic dispatch)")
	c.StringVar(&f.apiKey, "livekit-api-key", "", "livekit: the server's API key (default $"+livekit.EnvAPIKey+")")
	c.StringVar(&f.apiSecret, "livekit-api-secret", "", "livekit: the server's API secret (default $"+livekit.EnvAPISecret+")")
}

// keys are the flags' credentials, or the environment's.
func (f liveKitFlags) keys() (string, string) {
	key, secret := f.apiKey, f.apiSecret
	if key == "" {
		key = os.Getenv(livekit.EnvAPIKey)
	}
	if secret == "" {
		secret = os.Getenv(livekit.EnvAPISecret)
	}
	return key, secret
}

// check says what is missing for --transport livekit.
func (f liveKitFlags) check(transport string) error {
	if transport != transportLiveKit {
		if f != (liveKitFlags{}) {
			return errors.New("--livekit-agent-name, --livekit-api-key and --livekit-api-secret are for --transport livekit")
		}
		return nil
	}
	if key, secret := f.keys(); key == "" || secret == "" {
		return errors.New("--transport livekit needs the server's API key and secret (--livekit-api-key and --livekit-api-secret, or $" +
			livekit.EnvAPIKey + " and $" + livekit.EnvAPISecret + ")")
	}
	return nil
}

// liveKitAgentURL is --agent, or $LIVEKIT_URL for --transport livekit.
func liveKitAgentURL(transport, agent string) string {
	if agent == "" && transport == transportLiveKit {
		return os.Getenv(livekit.EnvURL)
	}
	return agent
}

// liveKitTransport is the LiveKit caller for o.
func liveKitTransport(o harness.AudioOptions, f liveKitFlags) (*livekit.Transport, error) {
	cfg, err := o.Config()
	if err != nil {
		return nil, err
	}
	livekit.QuietSDK()
	key, secret := f.keys()
	return &livekit.Transport{Config: cfg, APIKey: key, APISecret: secret, AgentName: f.agentName,
		RecordDir: o.RecordDir, HearingFor: o.Hearing}, nil
}

// liveKitProbe is a LiveKit transport fit for preflight only.
func liveKitProbe(f liveKitFlags) callsim.Transport {
	livekit.QuietSDK()
	key, secret := f.keys()
	return &livekit.Transport{APIKey: key, APISecret: secret}
}
