package agents

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Server is one reference agent as an http.Handler: a request to any path
// is upgraded to a WebSocket and runs one call, except, in audio mode, a
// plain GET of EarStatsPath (the ear's counts, EarReport). In WebRTC mode
// (AudioConfig.Wire WireWebRTC) there is no WebSocket: calls are offered at
// OfferPath (SmallWebRTC) or WHIPPath (WHIP).
type Server struct {
	cfg      Config
	client   *http.Client
	upgrader websocket.Upgrader

	base   context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	calls  sync.WaitGroup

	// Audio mode (cfg.Audio set): what the calls share, or why it could
	// not be set up.
	audio    *audioSide
	audioErr error
	// WebRTC mode: the pion API and the calls in progress.
	rtc *rtcSide
	// paces: how late each call's timers ran (Lateness).
	paces *paceLog
}

// NewServer returns an agent that serves calls until Close.
func NewServer(cfg Config) *Server {
	cfg = cfg.withDefaults()
	cfg.paces = newPaceLog(0)
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Transport: &http.Transport{
			Proxy:               nil,
			DisableKeepAlives:   true,
			TLSHandshakeTimeout: 5 * time.Second,
		}}
	}
	base, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg:    cfg,
		client: client,
		// The harness is the only client, on loopback; any origin is fine.
		upgrader: websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }},
		base:     base,
		cancel:   cancel,
		paces:    cfg.paces,
	}
	if cfg.Audio != nil {
		s.audio, s.audioErr = newAudioSide(*cfg.Audio)
		if s.audio != nil && s.audio.cfg.Wire == WireWebRTC {
			if s.rtc, s.audioErr = newRTCSide(); s.audioErr != nil {
				s.audio = nil
			}
		}
		if s.audio != nil {
			// Warm up off the call path: index the speech cache and
			// synthesize the fixed phrases.
			a := s.audio
			s.calls.Add(1)
			go func() {
				defer s.calls.Done()
				a.index.rescan(true)
				if err := warmPhrases(base, a.voice, fixedPhrases()); err != nil && base.Err() == nil {
					a.cfg.logf("cannot synthesize: %v", err)
				}
			}()
		}
	}
	return s
}

// EarStats returns what the ear heard in each call that has ended, oldest
// first (audio mode; nil in text mode). A long-running server keeps the
// latest AudioConfig.KeepEarStats (default DefaultKeepEarStats).
func (s *Server) EarStats() []EarStats {
	if s.audio == nil {
		return nil
	}
	return s.audio.ears.list()
}

// Config returns the agent's configuration (with defaults filled in).
func (s *Server) Config() Config { return s.cfg }

// ServeHTTP upgrades the request and runs the call until it ends (in
// WebRTC mode, it answers signaling requests).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "agent closed", http.StatusServiceUnavailable)
		return
	}
	s.calls.Add(1)
	s.mu.Unlock()
	defer s.calls.Done()

	if s.audio != nil && r.URL.Path == EarStatsPath && !websocket.IsWebSocketUpgrade(r) {
		s.serveEarStats(w, r)
		return
	}
	if s.audioErr != nil {
		http.Error(w, s.audioErr.Error(), http.StatusInternalServerError)
		return
	}
	if s.rtc != nil {
		s.serveRTC(w, r)
		return
	}
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	var tw wire // nil: native text
	if s.audio != nil {
		tw = newTwilioCall(s.audio, s.cfg.Clock)
	}
	runSession(s.base, s.cfg, s.client, ws, tw)
}

// Close ends every call in progress and waits for them. Safe to call twice.
// Later requests are refused (503).
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.calls.Wait()
	if s.cfg.HTTPClient == nil {
		s.client.CloseIdleConnections()
	}
	return nil
}

// Running is an agent listening on a TCP address.
type Running struct {
	// URL is where the harness calls: ws://host:port/, or in WebRTC mode
	// http://host:port/api/offer (OfferPath; WHIP at WHIPPath).
	URL string

	agent *Server
	http  *http.Server
	serve chan error
	done  chan struct{}
	once  sync.Once
	err   error
}

// Start serves cfg on addr (for example "127.0.0.1:0") until ctx ends or
// Close is called.
func Start(ctx context.Context, cfg Config, addr string) (*Running, error) {
	if cfg.Audio != nil {
		// Fail now on a bad voice or cache rather than on the first call;
		// this also puts the fixed phrases in the agent's speech cache.
		a, err := newAudioSide(*cfg.Audio)
		if err != nil {
			return nil, err
		}
		if a.cfg.Wire == WireWebRTC {
			if _, err := newRTCSide(); err != nil {
				return nil, err
			}
		}
		began := time.Now()
		phrases := fixedPhrases()
		if err := warmPhrases(ctx, a.voice, phrases); err != nil {
			return nil, fmt.Errorf("agents: audio mode: %w", err)
		}
		a.cfg.logf("voice %s: %d phrases ready in %s", a.voice.Synth.Name(), len(phrases), time.Since(began).Round(time.Millisecond))
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	agent := NewServer(cfg)
	url := "ws://" + ln.Addr().String() + "/"
	if agent.rtc != nil {
		url = "http://" + ln.Addr().String() + OfferPath
	}
	r := &Running{
		URL:   url,
		agent: agent,
		http:  &http.Server{Handler: agent, ReadHeaderTimeout: 5 * time.Second},
		serve: make(chan error, 1),
		done:  make(chan struct{}),
	}
	go func() { r.serve <- r.http.Serve(ln) }()
	go func() {
		select {
		case <-ctx.Done():
			_ = r.Close()
		case <-r.done:
		}
	}()
	return r, nil
}

// Agent is the agent being served.
func (r *Running) Agent() *Server { return r.agent }

// Close stops listening, ends the calls in progress and waits for them.
// Safe to call twice.
func (r *Running) Close() error {
	r.once.Do(func() {
		err := r.http.Close()
		_ = r.agent.Close()
		if serr := <-r.serve; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		r.err = err
		close(r.done)
	})
	return r.err
}
