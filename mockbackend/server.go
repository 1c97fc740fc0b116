package mockbackend

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/callproof/callproof/trace"
	"github.com/hashicorp/go-memdb"
)

// Limits of the HTTP server Start runs. A tool request's body also has its
// own, shorter deadline (DefaultBodyTimeout, scaled). Once a body has been
// read to its end net/http lifts the read deadline, so a request held for
// a long time is never cut by ServerReadTimeout.
const (
	// ServerReadHeaderTimeout bounds reading a request's headers (real time).
	ServerReadHeaderTimeout = 10 * time.Second
	// ServerReadTimeout bounds reading a whole request, body included, for
	// endpoints that do not read a body themselves, and bounds draining an
	// unread body after the answer (real time).
	ServerReadTimeout = 60 * time.Second
	// ServerIdleTimeout closes keep-alive connections idle this long.
	ServerIdleTimeout = 2 * time.Minute
	// DefaultRejectedLogSize is how many refused requests Server.Rejected
	// keeps (the newest); older ones are only counted.
	DefaultRejectedLogSize = 256
)

// Options configure a Server.
type Options struct {
	// Addr to listen on; default 127.0.0.1:0 (loopback, any free port).
	Addr string
	// Clock for recorders the server makes itself (calls opened without
	// one) and for the times in Rejected; default trace.SystemClock.
	Clock trace.Clock
	// IdempotencyMismatchStatus answers a reused key with different
	// parameters: 400 (Stripe, the default), or 409 / 422 to mimic other
	// vendors.
	IdempotencyMismatchStatus int
	// RejectedLogSize bounds the server's log of refused requests;
	// 0 means DefaultRejectedLogSize.
	RejectedLogSize int
	// SharedListener serves every call on the server's one listener, as
	// before calls had their own (listener.go): no per-call connection
	// bounds then, only the server's.
	SharedListener bool
	// MCP, when set, makes a call's MCP endpoint (Call.MCPURL): called once
	// per call at Open, its handler serves the requests to that endpoint
	// that carry the call's bearer token (package mcptools).
	MCP func(*Call) http.Handler
}

// RejectedRequest is a request the server refused before it reached any
// call: no bearer token, a token not valid for the call its path names
// (another call's token included), a call that is over, or no such
// endpoint. Such requests are never recorded in a call's history, so one
// call's agent cannot write into another call's evidence.
type RejectedRequest struct {
	At     time.Time `json:"at"` // on Options.Clock
	Method string    `json:"method"`
	Path   string    `json:"path"`              // first 256 bytes
	CallID string    `json:"call_id,omitempty"` // as the path names it; it may never have existed
	Remote string    `json:"remote,omitempty"`
	Status int       `json:"status"`
	Reason string    `json:"reason"`
	// TokenOf names the call whose token was used, when it belongs to
	// another call (open or over): that call's agent sent the request.
	TokenOf string `json:"token_of,omitempty"`
}

// maxLoggedPath bounds RejectedRequest.Path.
const maxLoggedPath = 256

// Server routes tool requests to the calls opened on it.
type Server struct {
	opts Options
	mux  *http.ServeMux

	mu     sync.Mutex
	calls  map[string]*Call
	gone   map[string]string // ids of closed calls → their token (410 for the token holder)
	owners map[string]string // token → id of the call (open or closed) it belongs to
	ln     net.Listener
	hs     *http.Server
	url    string
	closed bool
	// listeners are the calls' own, open and lingering (listener.go).
	listeners map[*callListener]bool

	// The log of refused requests: a ring of the newest, and a count.
	logMu    sync.Mutex
	rejected []RejectedRequest
	rejNext  int
	rejTotal int64

	// Read-only parts that calls configured alike share, so an open call
	// costs little more than its own state: the store schema, compiled
	// catalogues and starting stores (see shared.go).
	schema     *memdb.DBSchema
	catalogues shared[map[string]*tool]
	stores     shared[*memdb.MemDB]
}

// New makes a server; Start it or mount Handler on your own.
func New(opts Options) *Server {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Clock == nil {
		opts.Clock = trace.SystemClock{}
	}
	if opts.IdempotencyMismatchStatus == 0 {
		opts.IdempotencyMismatchStatus = http.StatusBadRequest
	}
	if opts.RejectedLogSize <= 0 {
		opts.RejectedLogSize = DefaultRejectedLogSize
	}
	s := &Server{
		opts: opts, calls: map[string]*Call{}, gone: map[string]string{}, owners: map[string]string{},
		listeners: map[*callListener]bool{},
		schema:    newSchema(), catalogues: shared[map[string]*tool]{max: sharedCacheSize}, stores: shared[*memdb.MemDB]{max: sharedCacheSize},
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /calls/{id}/tools/{tool}", s.serveTool)
	s.mux.HandleFunc("GET /calls/{id}/ledger", s.serveLedger)
	// More specific than the tool route, so they win over it for "mcp".
	for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		s.mux.HandleFunc(m+" /calls/{id}/tools/"+MCPPath, s.serveMCP)
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.refuse(w, r, "", http.StatusNotFound, "not_found", "no such endpoint", "")
	})
	return s
}

// Start listens on Options.Addr and serves in the background.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("mockbackend: server closed")
	}
	if s.ln != nil {
		return errors.New("mockbackend: server already started")
	}
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("mockbackend: listen: %w", err)
	}
	s.ln = ln
	s.url = "http://" + ln.Addr().String()
	s.hs = &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: ServerReadHeaderTimeout,
		ReadTimeout:       ServerReadTimeout,
		IdleTimeout:       ServerIdleTimeout,
		// Each request can then read its own socket (gone.go).
		ConnContext: withConn,
	}
	go s.hs.Serve(ln) //nolint:errcheck // returns ErrServerClosed on Close
	return nil
}

// URL is the server's base URL ("" until Start).
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Handler serves the tool API, for mounting on a server of your own. Body
// deadlines need a ResponseWriter that supports
// http.ResponseController.SetReadDeadline (net/http's does); without it a
// stalled body still ends the request on time, but the read itself is only
// cut when your server closes the connection.
func (s *Server) Handler() http.Handler { return s.mux }

// Close closes every open call (failing held requests with 503, each call
// waiting at most CloseWait) and stops listening. It is safe to call twice.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	calls := make([]*Call, 0, len(s.calls))
	for _, c := range s.calls {
		calls = append(calls, c)
	}
	hs := s.hs
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Go(c.Close)
	}
	wg.Wait()
	s.mu.Lock()
	lingering := make([]*callListener, 0, len(s.listeners))
	for l := range s.listeners {
		lingering = append(lingering, l)
	}
	s.mu.Unlock()
	for _, l := range lingering {
		l.close()
	}
	if hs != nil {
		if err := hs.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	return nil
}

// Open starts serving one call's tools. The ID must be unique among open
// calls; an ID may be reused once its previous call is closed.
func (s *Server) Open(cfg CallConfig) (*Call, error) {
	if cfg.ID == "" || strings.ContainsAny(cfg.ID, "/?#") {
		return nil, fmt.Errorf("mockbackend: bad call id %q", cfg.ID)
	}
	c, err := newCall(s, cfg)
	if err != nil {
		return nil, err
	}
	if s.opts.MCP != nil {
		c.mcp = s.opts.MCP(c)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.cancel()
		return nil, errors.New("mockbackend: server closed")
	}
	if _, dup := s.calls[cfg.ID]; dup {
		c.cancel()
		return nil, fmt.Errorf("mockbackend: call %q is already open", cfg.ID)
	}
	if s.ln != nil && !s.opts.SharedListener {
		if err := s.listen(c, cfg.Conns); err != nil {
			c.cancel()
			return nil, err
		}
	}
	if old, ok := s.gone[cfg.ID]; ok {
		delete(s.owners, old)
		delete(s.gone, cfg.ID)
	}
	s.calls[cfg.ID] = c
	s.owners[c.token] = c.id
	return c, nil
}

// current reports whether c is the open call of its id.
func (s *Server) current(c *Call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[c.id] == c
}

// forget unregisters a closing call, leaving a tombstone so that its own
// agent (and only it: the tombstone keeps the token) learns the call is
// over.
func (s *Server) forget(c *Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls[c.id] == c {
		delete(s.calls, c.id)
		s.gone[c.id] = c.token
	}
}

// Rejected returns the newest refused requests (at most
// Options.RejectedLogSize), oldest first. They belong to no call.
func (s *Server) Rejected() []RejectedRequest {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	n := len(s.rejected)
	out := make([]RejectedRequest, 0, n)
	if n < s.opts.RejectedLogSize {
		return append(out, s.rejected...)
	}
	out = append(out, s.rejected[s.rejNext:]...)
	return append(out, s.rejected[:s.rejNext]...)
}

// RejectedCount is how many requests the server has refused in all,
// including those no longer kept by Rejected.
func (s *Server) RejectedCount() int64 {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.rejTotal
}

// refuse answers a request that reaches no call and logs it on the server.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, tokenOf string, status int, typ, msg, reason string) {
	if reason == "" {
		reason = msg
	}
	path := r.URL.EscapedPath()
	if len(path) > maxLoggedPath {
		path = path[:maxLoggedPath]
	}
	method := r.Method
	if len(method) > maxLoggedPath {
		method = method[:maxLoggedPath]
	}
	e := RejectedRequest{
		At: s.opts.Clock.Now(), Method: method, Path: path, CallID: clip(r.PathValue("id"), maxLoggedPath),
		Remote: r.RemoteAddr, Status: status, Reason: reason, TokenOf: tokenOf,
	}
	s.logMu.Lock()
	s.rejTotal++
	if len(s.rejected) < s.opts.RejectedLogSize {
		s.rejected = append(s.rejected, e)
	} else {
		s.rejected[s.rejNext] = e
		s.rejNext = (s.rejNext + 1) % len(s.rejected)
	}
	s.logMu.Unlock()
	writeJSON(w, status, errorBody(typ, msg, ""))
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Answers to requests that authenticate for no open call. They depend only
// on the request's own Authorization header, never on whether the call in
// the path exists, existed or never did.
const (
	msgNoToken  = "missing bearer token"
	msgBadToken = "token is not valid for this call"
)

// authorize finds the open call the request's path names and checks its
// bearer token. Anything else is refused on the server: 401 without a
// token, 403 with a token that is not this call's (the same answer whether
// the call is open, over or unknown), 410 only to the holder of a closed
// call's token. It returns nil when it answered.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) *Call {
	id := r.PathValue("id")
	tok, has := bearerToken(r)
	s.mu.Lock()
	c := s.calls[id]
	goneTok, gone := s.gone[id]
	owner := ""
	if has {
		owner = s.owners[tok]
	}
	s.mu.Unlock()
	switch {
	case has && c != nil && tokenEqual(tok, c.token):
		return c
	case has && gone && tokenEqual(tok, goneTok):
		s.refuse(w, r, "", http.StatusGone, "call_closed", "the call is over", "")
	case !has:
		s.refuse(w, r, "", http.StatusUnauthorized, "unauthorized", msgNoToken, "")
	default:
		reason := msgBadToken
		if owner != "" && owner != id {
			reason = fmt.Sprintf("token of call %q used on call %q", owner, clip(id, maxLoggedPath))
		} else {
			owner = ""
		}
		s.refuse(w, r, owner, http.StatusForbidden, "forbidden", msgBadToken, reason)
	}
	return nil
}

func (s *Server) serveTool(w http.ResponseWriter, r *http.Request) {
	c := s.authorize(w, r)
	if c == nil {
		return
	}
	if !c.enter() {
		s.refuse(w, r, "", http.StatusGone, "call_closed", "the call is over", "")
		return
	}
	defer c.leave()
	c.serveTool(w, r, r.PathValue("tool"))
}

func (s *Server) serveLedger(w http.ResponseWriter, r *http.Request) {
	c := s.authorize(w, r)
	if c == nil {
		return
	}
	rows := c.Ledger()
	if rows == nil {
		rows = []LedgerRow{} // an empty ledger is [], not null
	}
	writeJSON(w, http.StatusOK, mustJSON(rows))
}

// bearerToken is the token of an "Authorization: Bearer" header.
func bearerToken(r *http.Request) (string, bool) {
	tok, ok := cutPrefixFold(r.Header.Get("Authorization"), "Bearer ")
	return tok, ok && tok != ""
}
