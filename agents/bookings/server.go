package bookings

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Server is the bookings desk as an http.Handler: each WebSocket request
// is one call, its variant named by the last path segment ("/" = steady).
type Server struct {
	client   *http.Client
	upgrader websocket.Upgrader

	base   context.Context // tool requests live until Close, not the call
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	calls  sync.WaitGroup
	tools  sync.WaitGroup
}

// NewServer returns a desk that serves calls until Close.
func NewServer() *Server {
	base, cancel := context.WithCancel(context.Background())
	return &Server{
		client: &http.Client{Transport: &http.Transport{
			Proxy:             nil,
			DisableKeepAlives: true, // a dropped answer must not poison a pooled connection
		}},
		upgrader: websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }},
		base:     base,
		cancel:   cancel,
	}
}

// ServeHTTP upgrades the request and runs the call until it ends.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := path.Base(r.URL.Path)
	if name == "/" || name == "." {
		name = ""
	}
	v, err := VariantByName(strings.TrimSpace(name))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "desk closed", http.StatusServiceUnavailable)
		return
	}
	s.calls.Add(1)
	s.mu.Unlock()
	defer s.calls.Done()

	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	sess := newSession(s, v, ws)
	sess.run()
}

// spawn runs a tool request outside the call's lifetime, tracked for Close.
func (s *Server) spawn(fn func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.tools.Add(1)
	go func() {
		defer s.tools.Done()
		fn()
	}()
	return true
}

// Close ends every call and tool request in progress and waits for them.
// Safe to call twice.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.calls.Wait()
	s.tools.Wait()
	s.client.CloseIdleConnections()
	return nil
}

// Running is a desk listening on a TCP address.
type Running struct {
	Base   string // ws://host:port
	srv    *Server
	http   *http.Server
	closed sync.Once
	err    error
}

// URL is the address that selects variant.
func (r *Running) URL(variant string) string { return r.Base + "/" + variant }

// Start serves a new desk on addr ("127.0.0.1:0" for any free port).
func Start(addr string) (*Running, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := NewServer()
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener closed under us; Close reports nothing more useful
		}
	}()
	return &Running{Base: "ws://" + ln.Addr().String(), srv: srv, http: hs}, nil
}

// Close stops listening, ends every call and waits. Safe to call twice.
func (r *Running) Close() error {
	r.closed.Do(func() {
		// Hijacked WebSocket connections are not closed by Shutdown: the
		// server's Close ends the calls.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err1 := r.http.Shutdown(ctx)
		err2 := r.srv.Close()
		r.err = errors.Join(err1, err2)
	})
	return r.err
}
