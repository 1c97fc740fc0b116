package twilio

import (
	"context"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/internal/wsprobe"
)

var _ callsim.Prober = (*Transport)(nil)

// Probe upgrades the WebSocket as Dial does and closes it before the
// connected event: it needs no caller voice.
func (t *Transport) Probe(ctx context.Context, agentURL string) error {
	return wsprobe.Probe(ctx, t.Dialer, agentURL, t.Header)
}
