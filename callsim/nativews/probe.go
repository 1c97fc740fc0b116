package nativews

import (
	"context"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/internal/wsprobe"
)

var _ callsim.Prober = (*Transport)(nil)

// Probe upgrades the WebSocket as Dial does and closes it before any
// frame: the agent sees a connection without a start.
func (t *Transport) Probe(ctx context.Context, agentURL string) error {
	d := t.Dialer
	if d == nil {
		d = t.defaultDialer()
	}
	return wsprobe.Probe(ctx, d, agentURL, t.Header)
}
