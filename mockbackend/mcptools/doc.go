// Package mcptools serves a call's tools as an MCP server: one endpoint
// per call at {toolsBaseUrl}/mcp, streamable HTTP with sessions, built on
// the official Go SDK. tools/list is the call's catalogue with a JSON
// Schema per tool; tools/call takes the very path of an HTTP tool request
// (mockbackend.Call.ServeTool), so validation, the ledger, idempotency,
// holds, faults and budgets are the same whichever way the agent calls.
//
// Use Handler as mockbackend.Options.MCP. docs/PROTOCOL.md "Tools over
// MCP" is the contract.
package mcptools
