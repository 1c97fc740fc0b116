package realtime

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// maxClientMessage bounds one client event: appends of a second of padding
// silence are ~11 KB, session.update with tool schemas a few KB.
const maxClientMessage = 4 << 20

// closeWait bounds Close's wait for connection goroutines.
const closeWait = 3 * time.Second

// Server is a fake Realtime server on a loopback port.
type Server struct {
	http *httptest.Server
	up   websocket.Upgrader
	rec  *recorder

	mu     sync.Mutex
	script Script // for new connections
	conns  map[*session]struct{}
	nconn  int
	closed bool
	wg     sync.WaitGroup
}

// NewServer starts a fake Realtime server playing script on every
// connection. Close it when done.
func NewServer(script Script) *Server {
	s := &Server{
		script: script.withDefaults(),
		rec:    newRecorder(),
		conns:  map[*session]struct{}{},
		up: websocket.Upgrader{
			// Browsers ask for "realtime" (with the key and SDK version as
			// further subprotocols); Node clients send headers and none.
			Subprotocols: []string{"realtime"},
			CheckOrigin:  func(*http.Request) bool { return true },
		},
	}
	s.http = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// SetScript makes connections accepted from now on play script;
// connections already open keep theirs. It lets one client process (an
// agent dialled once per call) meet differently scripted models in turn.
func (s *Server) SetScript(script Script) {
	s.mu.Lock()
	s.script = script.withDefaults()
	s.mu.Unlock()
}

// URL is the WebSocket URL to give the client, e.g. as session.connect's
// url. Any path is accepted.
func (s *Server) URL() string {
	return "ws" + strings.TrimPrefix(s.http.URL, "http") + "/v1/realtime?model=fake-realtime"
}

// Events is everything recorded so far, in order.
func (s *Server) Events() []Event {
	evs, _ := s.rec.snapshot()
	return evs
}

// WaitFor returns the first recorded event (past or future) matching pred,
// or ctx's error when it ends first.
func (s *Server) WaitFor(ctx context.Context, pred func(Event) bool) (Event, error) {
	return s.rec.waitFor(ctx, pred)
}

// Close closes every connection and the listener, waiting a bounded time
// for the connections' goroutines.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.close()
	}
	s.mu.Unlock()
	s.http.CloseClientConnections()
	s.http.Close()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeWait):
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	ws, err := s.up.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ws.Close()
		return
	}
	s.nconn++
	c := newSession(s.nconn, ws, s.script, s.rec) // s.script is read under s.mu
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()

	info, _ := json.Marshal(map[string]any{
		"path":          r.URL.Path,
		"query":         r.URL.RawQuery,
		"authorization": r.Header.Get("Authorization"),
		"user_agent":    r.Header.Get("User-Agent"),
		"sdk":           r.Header.Get("X-OpenAI-Agents-SDK"),
		"subprotocols":  websocket.Subprotocols(r),
	})
	s.rec.add(Event{Conn: c.id, Dir: Note, Type: "connect", Raw: info})
	c.run()
	s.rec.add(Event{Conn: c.id, Dir: Note, Type: "disconnect"})

	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.wg.Done()
}
