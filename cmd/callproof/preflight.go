package main

import (
	"context"
	"fmt"
	"io"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/harness"
)

// noPreflightUsage is the --no-preflight flag's help, the same on every
// command that places calls.
const noPreflightUsage = "place the calls without first checking that the agent answers (each unanswered call then ends agent_error)"

// preflight checks that the agent answers on its dialect before a
// command places anything (docs/CLI.md, "Preflight"). It prints why not
// and returns false: the command then exits exitNoAgent.
func preflight(cmd string, af audioFlags, agentURL string, stderr io.Writer) bool {
	tr, err := harness.ProbeTransport(af.name(), af.signaling)
	if af.name() == transportLiveKit {
		tr, err = liveKitProbe(af.livekit), nil
	}
	if err == nil {
		err = harness.Preflight(context.Background(), tr, af.name(), agentURL, callsim.DefaultDialTimeout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "callproof %s: preflight: %v: no call was placed (start the agent or correct --agent; --no-preflight places the calls anyway)\n", cmd, err)
		return false
	}
	return true
}
