package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/scenarios"
)

// init lists a live MCP server's tools (on loopback) and writes a
// catalogue whose effects come from the annotations; the token is sent.
func TestInitLiveMCP(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "clinic", Version: "1"}, nil)
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	schema := json.RawMessage(`{"type":"object","properties":{"visit_id":{"type":"string"},"day":{"type":"string","format":"date"}},"required":["visit_id"]}`)
	no := false
	server.AddTool(&mcp.Tool{Name: "visit", Description: "A visit.", InputSchema: schema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, noop)
	server.AddTool(&mcp.Tool{Name: "shift_visit", Description: "Another day.", InputSchema: schema,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &no, IdempotentHint: true}}, noop)
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	var sawToken atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer s3cret" {
			sawToken.Store(true)
		}
		handler.ServeHTTP(w, r)
	}))
	defer ts.Close()

	var stdout, stderr bytes.Buffer
	code := run([]string{"init", "--tools", ts.URL, "--token", "s3cret"}, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	assert.True(t, sawToken.Load())
	tools, err := scenarios.LoadCatalogBytes("c.yaml", stdout.Bytes())
	require.NoError(t, err, stdout.String())
	require.Len(t, tools, 2)
	byName := map[string]scenarios.Tool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	assert.Equal(t, "read", byName["visit"].Effect)
	assert.Equal(t, "update", byName["shift_visit"].Effect)
	assert.Equal(t, "visit_id", byName["shift_visit"].KeyArg)
	assert.Contains(t, stdout.String(), "# review: effect read: MCP readOnlyHint")
	assert.Contains(t, stdout.String(), "# review: effect update: MCP idempotentHint")
	assert.Contains(t, stdout.String(), "(mcp)")

	// Nothing listening: exit 2, naming the URL.
	ts.Close()
	stdout.Reset()
	stderr.Reset()
	code = run([]string{"init", "--tools", ts.URL}, &stdout, &stderr)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr.String(), "callproof init: "+ts.URL+": connecting to the MCP server")
}
