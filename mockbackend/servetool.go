package mockbackend

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/callproof/callproof/trace"
)

// ToolRequest is one tool request that came by another transport than an
// HTTP POST to the tool's URL (the MCP endpoint, package mcptools), its
// body already read. It takes the same path as an HTTP request.
type ToolRequest struct {
	Tool string
	// Args is the arguments as an HTTP request's body: one JSON object
	// (empty for none).
	Args []byte
	// Key and StateVersion are what the Idempotency-Key and
	// X-State-Version headers carry over HTTP ("" for none).
	Key, StateVersion string
	Remote            string
}

// ToolAnswer is what a ToolRequest answers: an HTTP status and body as
// the same request over HTTP would get, unless the request answers
// nothing.
type ToolAnswer struct {
	Status int
	Body   []byte
	// Drop: a drop_response fault; the write landed and the transport must
	// cut the answer's stream without it.
	Drop bool
	// Gone: the request was withdrawn (ctx ended) before it committed, or
	// the call closed; it is recorded as tool.cancelled and answers nothing.
	Gone bool
}

// ServeTool runs one tool request through the budget, validation, the
// ledger, idempotency, holds, faults and execution, exactly as an HTTP
// request, and returns its answer once recorded. Cancelling ctx is the
// agent withdrawing the request (as closing an HTTP request's connection
// is). A request over the budget answers 429 and is not recorded; one on
// a closed call answers 410.
func (c *Call) ServeTool(ctx context.Context, req ToolRequest) ToolAnswer {
	if !c.enter() {
		return ToolAnswer{Status: http.StatusGone, Body: errorBody("call_closed", "the call is over", "")}
	}
	defer c.leave()
	if violation, ok := c.spend(req.Tool); !ok {
		return ToolAnswer{Status: http.StatusTooManyRequests, Body: overBudgetBody(violation)}
	}
	id, ref := c.nextRef()
	defer c.track(ref, req.Tool)()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	x := &exchange{c: c, ctx: ctx, stop: stop, id: id, ref: ref, name: req.Tool, remote: req.Remote}
	how := bodyOK
	if len(req.Args) > MaxBodyBytes {
		how = bodyTooLarge
	}
	rep := c.handle(x, req.Args, how, nil, req.Key, req.StateVersion)
	drop := c.respond(x, rep, trace.ToolEvent{}, true)
	// The answer is recorded; the transport sends it next. Late commits
	// start their delay from here.
	for _, fn := range x.after {
		fn()
	}
	if rep.gone {
		return ToolAnswer{Gone: true}
	}
	return ToolAnswer{Status: rep.status, Body: rep.body, Drop: drop}
}

// Done is closed when the call closes.
func (c *Call) Done() <-chan struct{} { return c.ctx.Done() }

// Catalog is the call's tools, sorted by name.
func (c *Call) Catalog() []trace.ToolSpec {
	out := make([]trace.ToolSpec, 0, len(c.tools))
	for _, t := range c.tools {
		out = append(out, cloneSpec(t.spec))
	}
	slices.SortFunc(out, func(a, b trace.ToolSpec) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// MCPPath is the last segment of a call's MCP endpoint, under its tools
// URL: {BaseURL}/mcp. No tool may take this name.
const MCPPath = "mcp"

// MCPURL is the call's MCP endpoint, {BaseURL}/mcp, or "" when the
// server has none (Options.MCP unset).
func (c *Call) MCPURL() string {
	if c.mcp == nil {
		return ""
	}
	return c.BaseURL() + "/" + MCPPath
}

// serveMCP hands an authenticated request for the call's MCP endpoint to
// its handler (Options.MCP). The endpoint's requests are not tool
// requests: only the tool calls they carry go through ServeTool.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	c := s.authorize(w, r)
	if c == nil {
		return
	}
	if c.mcp == nil {
		s.refuse(w, r, "", http.StatusNotFound, "not_found", "no such endpoint", "")
		return
	}
	c.mcp.ServeHTTP(w, r)
}
