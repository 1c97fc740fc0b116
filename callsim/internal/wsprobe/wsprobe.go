package wsprobe

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
)

// CloseGrace bounds the close frame Probe sends after the upgrade: an
// agent that reads nothing cannot hold the probe.
const CloseGrace = 500 * time.Millisecond

// Probe upgrades a WebSocket to agentURL with d (nil: the default
// dialer) and closes it with a normal-closure frame. Only a completed
// upgrade counts: an HTTP server that refuses the upgrade (a 404 on the
// path, a plain web server) is as unusable to a call as no server.
func Probe(ctx context.Context, d *websocket.Dialer, agentURL string, h http.Header) error {
	ws, err := Dial(ctx, d, agentURL, h)
	if err != nil {
		return err
	}
	msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "callproof preflight")
	_ = ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(CloseGrace))
	return ws.Close()
}

// Dial upgrades a WebSocket to agentURL with d (nil: the default dialer);
// a refused upgrade's error names the HTTP status.
func Dial(ctx context.Context, d *websocket.Dialer, agentURL string, h http.Header) (*websocket.Conn, error) {
	if d == nil {
		d = websocket.DefaultDialer
	}
	ws, resp, err := d.DialContext(ctx, agentURL, h)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("%w (HTTP %d)", err, resp.StatusCode)
		}
		return nil, err
	}
	return ws, nil
}
