package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/callproof/callproof/mockbackend"
	"github.com/callproof/callproof/trace"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits of a call's MCP endpoint.
const (
	// DefaultMaxSessions bounds a call's open MCP sessions (opened and not
	// ended by DELETE): an agent needs one; a request without a session
	// past the bound is refused with 503.
	DefaultMaxSessions = 4
	// MaxMessageBytes bounds one HTTP request to the endpoint (one JSON-RPC
	// message or batch): a tool call's arguments (mockbackend.MaxBodyBytes)
	// and their envelope. Larger requests are refused with 413.
	MaxMessageBytes = 2 * mockbackend.MaxBodyBytes
	// DropWait bounds how long (real time) a drop_response fault waits for
	// the stream it cuts to be released by the SDK.
	DropWait = 2 * time.Second
)

// streamHeader tags each POST the endpoint hands the SDK, which passes a
// request's headers to its tool handler: the handler then knows the HTTP
// stream its answer goes out on (to cut it for drop_response). Any value a
// client sends is replaced.
const streamHeader = "X-Callproof-Mcp-Stream"

// sessionHeader names a request's MCP session (streamable HTTP).
const sessionHeader = "Mcp-Session-Id"

// Handler is the MCP endpoint of call c; pass it as
// mockbackend.Options.MCP. The server authenticates each request before
// it gets here.
func Handler(c *mockbackend.Call) http.Handler {
	e := &endpoint{c: c, streams: map[string]*stream{}, sessions: map[string]map[int]context.CancelFunc{}, open: map[string]bool{}}
	e.srv = mcp.NewServer(&mcp.Implementation{Name: "callproof-mock-backend", Version: "1"}, nil)
	for _, sp := range c.Catalog() {
		e.srv.AddTool(&mcp.Tool{Name: sp.Name, Description: sp.Description, InputSchema: inputSchema(sp)}, e.callTool(sp))
	}
	e.h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return e.srv }, &mcp.StreamableHTTPOptions{
		MaxRequestBodyBytes: MaxMessageBytes,
	})
	// Sessions end with the call: their in-flight tool calls have ended
	// (the call's context), and nothing may keep their goroutines.
	go func() {
		<-c.Done()
		for ss := range e.srv.Sessions() {
			_ = ss.Close()
		}
	}()
	return e
}

type endpoint struct {
	c   *mockbackend.Call
	srv *mcp.Server
	h   *mcp.StreamableHTTPHandler

	mu       sync.Mutex
	next     int
	streams  map[string]*stream                    // open POSTs, by tag
	sessions map[string]map[int]context.CancelFunc // in-flight tool calls per session
	open     map[string]bool                       // sessions opened and not deleted
	opening  int                                   // requests that may open one
}

// stream is one POST being served.
type stream struct {
	remote string
	cut    context.CancelFunc // ends the SDK's wait for the answer
	cutted bool
	done   chan struct{} // closed once the SDK has let go of the stream
	tools  []string      // the tool calls it carries, while they run
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Header.Del(streamHeader)
	switch r.Method {
	case http.MethodDelete:
		// Ending a session withdraws its in-flight tool calls: nobody can
		// read their answers any more.
		e.withdraw(r.Header.Get(sessionHeader))
	case http.MethodPost:
		method, params := peek(r)
		if method == "notifications/cancelled" {
			e.note("notifications/cancelled for request %s", params)
		}
		if r.Header.Get(sessionHeader) == "" && method == "initialize" {
			// It opens a session: count it before it does.
			if !e.reserve() {
				http.Error(w, "too many MCP sessions on this call", http.StatusServiceUnavailable)
				return
			}
			defer func() { e.opened(w.Header().Get(sessionHeader)) }()
		}
		client := r.Context()
		ctx, cut := context.WithCancel(client)
		defer cut()
		st := &stream{remote: r.RemoteAddr, cut: cut, done: make(chan struct{})}
		e.mu.Lock()
		e.next++
		tag := strconv.Itoa(e.next)
		e.streams[tag] = st
		e.mu.Unlock()
		r = r.WithContext(ctx)
		r.Header.Set(streamHeader, tag)
		defer func() {
			e.mu.Lock()
			delete(e.streams, tag)
			cutted, tools := st.cutted, st.tools
			e.mu.Unlock()
			if client.Err() != nil && !cutted {
				// The client closed the stream before its answers (alone,
				// not a cancellation: the call runs on).
				for _, name := range tools {
					e.note("the stream of tools/call %s closed before its answer", name)
				}
			}
			close(st.done)
			if cutted {
				// The answer is not sent: close the connection under it.
				panic(http.ErrAbortHandler)
			}
		}()
	}
	e.h.ServeHTTP(w, r)
}

// peek reads the method of a POST's JSON-RPC message ("" for a batch or
// anything else) and, for notifications/cancelled, the request it names
// and why. It reads the body (at most MaxMessageBytes, the SDK's own
// bound) and puts it back.
func peek(r *http.Request) (method, cancelled string) {
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxMessageBytes+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
	if err != nil {
		return "", ""
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		} `json:"params"`
	}
	if json.Unmarshal(b, &msg) != nil {
		return "", ""
	}
	cancelled = string(msg.Params.RequestID)
	if msg.Params.Reason != "" {
		cancelled += " (" + strconv.Quote(msg.Params.Reason) + ")"
	}
	return msg.Method, cancelled
}

// note records what arrived at the endpoint that bears on a tool call's
// fate (a cancellation, a closed stream, an ended session) in the call's
// history, so a timeline shows what the client really did.
func (e *endpoint) note(format string, args ...any) {
	e.c.Recorder().Record(trace.SourceBackend, trace.KindNote, &trace.Note{Text: "mcp: " + fmt.Sprintf(format, args...)})
}

// reserve counts a request that may open a session; false past the bound.
func (e *endpoint) reserve() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.open)+e.opening >= DefaultMaxSessions {
		return false
	}
	e.opening++
	return true
}

// opened settles a reservation: id is the session the request opened
// ("" for none).
func (e *endpoint) opened(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.opening--
	if id != "" {
		e.open[id] = true
	}
}

// withdraw cancels a session's in-flight tool calls as it ends, and stops
// counting it.
func (e *endpoint) withdraw(session string) {
	e.mu.Lock()
	calls := e.sessions[session]
	delete(e.sessions, session)
	delete(e.open, session)
	e.mu.Unlock()
	if len(calls) > 0 {
		e.note("session ended (DELETE) with %d tool call(s) in flight", len(calls))
	}
	for _, cancel := range calls {
		cancel()
	}
}

// track registers a tool call in flight on its session, for withdraw.
func (e *endpoint) track(session string, cancel context.CancelFunc) func() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.next++
	id := e.next
	if e.sessions[session] == nil {
		e.sessions[session] = map[int]context.CancelFunc{}
	}
	e.sessions[session][id] = cancel
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		delete(e.sessions[session], id)
		if len(e.sessions[session]) == 0 {
			delete(e.sessions, session)
		}
	}
}

// errNoAnswer ends a tool call that answers nothing (withdrawn, or its
// stream cut): the SDK has nobody to send it to.
var errNoAnswer = errors.New("mcptools: the request answers nothing")

func (e *endpoint) callTool(sp trace.ToolSpec) mcp.ToolHandler {
	name := sp.Name
	// The two arguments a consequential tool declares beside its own,
	// unless its catalogue has an argument of that name (then it is an
	// ordinary one, and only _meta can carry the key or the version).
	keyArg := sp.Consequential && !declares(sp, ArgIdempotencyKey)
	versionArg := sp.Consequential && !declares(sp, ArgStateVersion)
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tr := mockbackend.ToolRequest{Tool: name}
		tr.Args, tr.Key, tr.StateVersion = splitArgs(req.Params.Arguments, req.Params.Meta, keyArg, versionArg)
		var tag string
		if req.Extra != nil && req.Extra.Header != nil {
			tag = req.Extra.Header.Get(streamHeader)
		}
		e.mu.Lock()
		st := e.streams[tag]
		if st != nil {
			tr.Remote = st.remote
			st.tools = append(st.tools, name)
		}
		e.mu.Unlock()
		if st != nil {
			defer func() {
				e.mu.Lock()
				defer e.mu.Unlock()
				if i := slices.Index(st.tools, name); i >= 0 {
					st.tools = slices.Delete(st.tools, i, i+1)
				}
			}()
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		if req.Session != nil {
			defer e.track(req.Session.ID(), cancel)()
		}
		ans := e.c.ServeTool(ctx, tr)
		switch {
		case ans.Gone:
			return nil, errNoAnswer
		case ans.Drop:
			e.cut(tag)
			return nil, errNoAnswer
		}
		return toolResult(ans), nil
	}
}

// cut ends the stream tagged tag without its answer and waits, bounded,
// until the SDK has let go of it, so the answer cannot go out on it.
func (e *endpoint) cut(tag string) {
	e.mu.Lock()
	st := e.streams[tag]
	if st != nil {
		st.cutted = true
	}
	e.mu.Unlock()
	if st == nil {
		return // the stream is gone already: the answer has nowhere to go
	}
	st.cut()
	t := time.NewTimer(DropWait)
	defer t.Stop()
	select {
	case <-st.done:
	case <-t.C:
	}
}

// splitArgs takes the idempotency key and state version out of a call's
// _meta and, when keyArg and versionArg say the tool declares them, out of
// its arguments (an argument wins), drops null arguments, and returns the
// rest as an HTTP body: the key and the version never reach the arguments
// the backend validates, writes and records. Arguments that are not a
// JSON object are passed on as they are, for the backend to refuse as it
// refuses such a body.
func splitArgs(raw json.RawMessage, meta mcp.Meta, keyArg, versionArg bool) (body []byte, key, version string) {
	if s, ok := meta[MetaIdempotencyKey].(string); ok {
		key = s
	}
	version = versionString(meta[MetaStateVersion])
	var args map[string]json.RawMessage
	if len(raw) == 0 || string(raw) == "null" {
		return nil, key, version
	}
	if err := json.Unmarshal(raw, &args); err != nil || args == nil {
		return raw, key, version
	}
	// A client that makes every argument required (OpenAI's strict
	// schemas) writes null for one it leaves out: absent, here.
	for k, v := range args {
		if string(v) == "null" {
			delete(args, k)
		}
	}
	if v, ok := args[ArgIdempotencyKey]; ok && keyArg {
		var s string
		if json.Unmarshal(v, &s) == nil {
			key = s
			delete(args, ArgIdempotencyKey)
		}
	}
	if v, ok := args[ArgStateVersion]; ok && versionArg {
		var x any
		if json.Unmarshal(v, &x) == nil {
			if s := versionString(x); s != "" {
				version = s
				delete(args, ArgStateVersion)
			}
		}
	}
	return marshalArgs(args, raw), key, version
}

// declares reports whether sp's catalogue has an argument named name.
func declares(sp trace.ToolSpec, name string) bool {
	return slices.ContainsFunc(sp.Args, func(a trace.ArgSpec) bool { return a.Name == name })
}

// marshalArgs writes args back as a body; raw if that fails.
func marshalArgs(args map[string]json.RawMessage, raw json.RawMessage) []byte {
	b, err := json.Marshal(args)
	if err != nil {
		return raw
	}
	return b
}

// versionString writes a state version as X-State-Version carries it:
// a JSON number or string as sent, anything else as none.
func versionString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// toolResult is an answer as MCP content: the HTTP body as text and, when
// it is a JSON object, as structured content; an error status is a tool
// error the model sees. _meta.httpStatus is the status.
func toolResult(ans mockbackend.ToolAnswer) *mcp.CallToolResult {
	res := &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: string(ans.Body)}},
		IsError: ans.Status >= 400,
		Meta:    mcp.Meta{"httpStatus": ans.Status},
	}
	var obj map[string]any
	if json.Unmarshal(ans.Body, &obj) == nil && obj != nil {
		res.StructuredContent = obj
	}
	return res
}
