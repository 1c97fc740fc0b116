package harness_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/trace"
)

type fxBearer struct{ tok string }

func (b fxBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// start.tools.mcpUrl is the call's MCP endpoint: an agent that takes its
// tools from it with the SDK's client writes into the call's ledger.
func TestStartCarriesTheMCPEndpoint(t *testing.T) {
	env := fxEnv(t)
	rt := fxNewRouter(t, fxCareful(t))
	c := fxHostileCase(t, "mcp", "")
	got := make(chan error, 1)
	rt.serve[c.Scenario.ID] = func(ws *websocket.Conn, start native.Start) {
		got <- func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: start.Tools.MCPURL,
				HTTPClient: &http.Client{Transport: fxBearer{start.Tools.Token}}, MaxRetries: -1}, nil)
			if err != nil {
				return err
			}
			defer cs.Close()
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_order", Arguments: map[string]any{"order_number": "5590"}})
			return err
		}()
		_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"event":"hangup","hangup":{"reason":"done"}}`))
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
		}
	}
	out := fxRun(t, fxRunner(env), rt.URL, []*scenarios.Compiled{c})
	require.NoError(t, <-got)
	assert.Equal(t, rt.Peers()[0].BaseURL+"/mcp", rt.Peers()[0].MCPURL)
	resp := fxKinds(out[0].History, trace.KindToolResponded)
	require.Len(t, resp, 1)
	assert.Equal(t, 200, resp[0].Data.(*trace.ToolEvent).Status)
}
