package webrtc

import (
	"context"
	"net/http"

	"github.com/callproof/callproof/callsim"
)

var _ callsim.Prober = (*Transport)(nil)

// Probe sends one OPTIONS request to the signaling URL. OPTIONS is safe
// by HTTP's rules, carries no offer and so starts no session: Pipecat's
// SmallWebRTC route and a WHIP endpoint answer it (200, or 404/405 from
// a server that routes POST only). Any HTTP status proves a signaling
// server listens; only no answer at all — connection refused, an
// unknown host, a TLS failure, ctx's deadline — fails. Whether the
// route takes offers is the call's to find out. A transport with its own
// Signaler (a test's) has no URL of ours to probe: nil.
func (t *Transport) Probe(ctx context.Context, agentURL string) error {
	if t.Signaler != nil {
		return nil
	}
	client := t.HTTPClient
	if client == nil {
		client = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodOptions, agentURL, nil)
	if err != nil {
		return signalErr("OPTIONS %s: %v", agentURL, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return signalErr("OPTIONS %s: %v", agentURL, err)
	}
	_, _ = readBody(resp.Body) // bounded; the status alone is the answer
	return resp.Body.Close()
}
