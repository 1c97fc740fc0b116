package payments

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Line is the payments line as an http.Handler: each WebSocket request is
// one call, its variant named by the last path segment ("/" = careful).
type Line struct {
	client   *http.Client
	upgrader websocket.Upgrader
	base     context.Context // tool requests outlive the call that sent them
	stop     context.CancelFunc

	mu     sync.Mutex
	closed bool
	work   sync.WaitGroup // calls and tool requests
}

// NewLine returns a line that serves calls until Close.
func NewLine() *Line {
	base, stop := context.WithCancel(context.Background())
	return &Line{
		client:   &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}},
		upgrader: websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }},
		base:     base,
		stop:     stop,
	}
}

// track counts fn as work in progress, or refuses it after Close.
func (l *Line) track(fn func()) bool {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false
	}
	l.work.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.work.Done()
		fn()
	}()
	return true
}

// ServeHTTP upgrades the request and serves the call until it ends.
func (l *Line) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := path.Base(r.URL.Path)
	if name == "/" || name == "." {
		name = ""
	}
	v, err := VariantByName(name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	ws, err := l.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	done := make(chan struct{})
	if !l.track(func() { defer close(done); newCall(l, v, ws).serve() }) {
		_ = ws.Close()
		return
	}
	<-done
}

// Close ends every call and tool request and waits for them. Safe twice.
func (l *Line) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.stop()
	l.work.Wait()
	return nil
}

// Listening is a line served on a TCP address.
type Listening struct {
	Base string // ws://host:port
	line *Line
	srv  *http.Server
	once sync.Once
	err  error
}

// URL selects a variant.
func (l *Listening) URL(variant string) string { return l.Base + "/" + variant }

// Listen serves a new line on addr ("127.0.0.1:0" for a free port).
func Listen(addr string) (*Listening, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	line := NewLine()
	srv := &http.Server{Handler: line, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &Listening{Base: "ws://" + ln.Addr().String(), line: line, srv: srv}, nil
}

// Close stops listening and ends every call. Safe twice.
func (l *Listening) Close() error {
	l.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err := l.srv.Shutdown(ctx)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		l.err = errors.Join(err, l.line.Close())
	})
	return l.err
}
