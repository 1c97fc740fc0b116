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
)

// Options configure a Server.
type Options struct {
	// Addr to listen on; default 127.0.0.1:0 (loopback, any free port).
	Addr string
	// Clock for recorders the server makes itself (calls opened without
	// one); default trace.SystemClock.
	Clock trace.Clock
	// IdempotencyMismatchStatus answers a reused key with different
	// parameters: 400 (Stripe, the default), or 409 / 422 to mimic other
	// vendors.
	IdempotencyMismatchStatus int
}

// Server routes tool requests to the calls opened on it.
type Server struct {
	opts Options
	mux  *http.ServeMux

	mu     sync.Mutex
	calls  map[string]*Call
	gone   map[string]struct{} // ids of closed calls, answered 410
	ln     net.Listener
	hs     *http.Server
	url    string
	closed bool
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
	s := &Server{opts: opts, calls: map[string]*Call{}, gone: map[string]struct{}{}}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /calls/{id}/tools/{tool}", s.serveTool)
	s.mux.HandleFunc("GET /calls/{id}/ledger", s.serveLedger)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusNotFound, errorBody("not_found", "no such endpoint", ""))
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
	s.hs = &http.Server{Handler: s.mux, ReadHeaderTimeout: 10 * time.Second}
	go s.hs.Serve(ln) //nolint:errcheck // returns ErrServerClosed on Close
	return nil
}

// URL is the server's base URL ("" until Start).
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Handler serves the tool API, for mounting on a server of your own.
func (s *Server) Handler() http.Handler { return s.mux }

// Close closes every open call (failing held requests with 503) and stops
// listening. It is safe to call twice.
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
	for _, c := range calls {
		c.Close()
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
	s.calls[cfg.ID] = c
	delete(s.gone, cfg.ID)
	return c, nil
}

// forget unregisters a closing call, leaving a tombstone so late requests
// learn the call is over rather than unknown.
func (s *Server) forget(c *Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls[c.id] == c {
		delete(s.calls, c.id)
		s.gone[c.id] = struct{}{}
	}
}

// lookup finds an open call, or writes the 404/410 answer and returns nil.
func (s *Server) lookup(w http.ResponseWriter, id string) *Call {
	s.mu.Lock()
	c := s.calls[id]
	_, gone := s.gone[id]
	s.mu.Unlock()
	switch {
	case c != nil:
		return c
	case gone:
		writeJSON(w, http.StatusGone, errorBody("call_closed", fmt.Sprintf("call %q is over", id), ""))
	default:
		writeJSON(w, http.StatusNotFound, errorBody("not_found", fmt.Sprintf("no call %q", id), ""))
	}
	return nil
}

func (s *Server) serveTool(w http.ResponseWriter, r *http.Request) {
	c := s.lookup(w, r.PathValue("id"))
	if c == nil {
		return
	}
	if !c.enter() {
		writeJSON(w, http.StatusGone, errorBody("call_closed", "the call is over", ""))
		return
	}
	defer c.leave()
	c.serveTool(w, r, r.PathValue("tool"))
}

func (s *Server) serveLedger(w http.ResponseWriter, r *http.Request) {
	c := s.lookup(w, r.PathValue("id"))
	if c == nil {
		return
	}
	if status, typ, msg := c.authorize(r); status != 0 {
		writeJSON(w, status, errorBody(typ, msg, ""))
		return
	}
	writeJSON(w, http.StatusOK, mustJSON(c.Ledger()))
}
