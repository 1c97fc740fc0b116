package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/toolimport"
)

// isURL says whether --tools names a live MCP server rather than a file.
func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// bearerTransport adds an Authorization header to every request.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// fetchMCPTools lists a live MCP server's tools (streamable HTTP, every
// page) and returns them as a tools/list result, for toolimport.ParseMCP.
func fetchMCPTools(ctx context.Context, url, token string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, toolimport.MCPTimeout)
	defer cancel()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	var rt http.RoundTripper = tr
	if token != "" {
		rt = bearerTransport{token: token, next: tr}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "callproof-init", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1}, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting to the MCP server: %w", err)
	}
	defer cs.Close()
	var res mcp.ListToolsResult
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		if len(res.Tools) == scenarios.MaxItems {
			return nil, fmt.Errorf("the server lists more than %d tools: a catalogue holds at most %d", scenarios.MaxItems, scenarios.MaxItems)
		}
		res.Tools = append(res.Tools, t)
	}
	return json.Marshal(&res)
}
