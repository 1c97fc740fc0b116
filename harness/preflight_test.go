package harness_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/webrtc"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/trace"
)

// refusedURL is a loopback address where nothing listens.
func refusedURL(t *testing.T, scheme string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	u := scheme + "://" + l.Addr().String() + "/"
	require.NoError(t, l.Close())
	return u
}

// wsAgent upgrades every connection and reports the first thing it reads:
// a message's text, or the close code the peer sent.
func wsAgent(t *testing.T) (string, <-chan string) {
	t.Helper()
	got := make(chan string, 4)
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, msg, err := ws.ReadMessage()
		var ce *websocket.CloseError
		switch {
		case errors.As(err, &ce):
			got <- "close " + closeCode(ce.Code)
		case err != nil:
			got <- "error " + err.Error()
		default:
			got <- "message " + string(msg)
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/", got
}

func closeCode(c int) string {
	if c == websocket.CloseNormalClosure {
		return "normal"
	}
	return "other"
}

func TestPreflightWebSocketDialects(t *testing.T) {
	for _, dialect := range []string{"native", "twilio"} {
		t.Run(dialect, func(t *testing.T) {
			tr, err := harness.ProbeTransport(dialect, "")
			require.NoError(t, err)
			url, got := wsAgent(t)
			require.NoError(t, harness.Preflight(context.Background(), tr, dialect, url, 0))
			// The agent saw the upgrade and then a normal close: no start,
			// no Twilio connected event, nothing a call would send.
			select {
			case g := <-got:
				assert.Equal(t, "close normal", g)
			case <-time.After(10 * time.Second):
				t.Fatal("the agent never saw the probe's connection end")
			}

			err = harness.Preflight(context.Background(), tr, dialect, refusedURL(t, "ws"), 0)
			var pe *harness.PreflightError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, dialect, pe.Dialect)
			assert.Contains(t, err.Error(), "no agent answers at "+pe.URL+" ("+dialect+" dialect)")
			assert.Contains(t, err.Error(), "connection refused")
		})
	}
}

// A server that answers HTTP but will not upgrade is no agent for a
// WebSocket dialect.
func TestPreflightNeedsTheUpgrade(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	tr, err := harness.ProbeTransport("native", "")
	require.NoError(t, err)
	err = harness.Preflight(context.Background(), tr, "native", "ws"+strings.TrimPrefix(srv.URL, "http")+"/", 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "HTTP 404")
}

// A listener that accepts and never answers: the probe ends at its bound.
func TestPreflightBounded(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	tr, err := harness.ProbeTransport("native", "")
	require.NoError(t, err)
	err = harness.Preflight(context.Background(), tr, "native", "ws://"+l.Addr().String()+"/", 100*time.Millisecond)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "timeout"), err.Error())
	select {
	case c := <-accepted:
		c.Close()
	default:
	}
}

// WebRTC: one OPTIONS to the signaling URL, with no offer; any HTTP
// answer (a 405 from a POST-only route) shows a server listens.
func TestPreflightWebRTC(t *testing.T) {
	for _, sig := range []string{webrtc.SignalingSmallWebRTC, webrtc.SignalingWHIP} {
		t.Run(sig, func(t *testing.T) {
			seen := make(chan string, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen <- r.Method
				http.Error(w, "POST an offer", http.StatusMethodNotAllowed)
			}))
			defer srv.Close()
			tr, err := harness.ProbeTransport("webrtc", sig)
			require.NoError(t, err)
			require.NoError(t, harness.Preflight(context.Background(), tr, "webrtc", srv.URL+"/api/offer", 0))
			assert.Equal(t, http.MethodOptions, <-seen)

			err = harness.Preflight(context.Background(), tr, "webrtc", refusedURL(t, "http")+"api/offer", 0)
			require.ErrorIs(t, err, webrtc.ErrSignal)
			assert.Contains(t, err.Error(), "(webrtc dialect)")
		})
	}
}

// A transport that cannot probe is not checked.
func TestPreflightSkipsTransportsWithoutProbe(t *testing.T) {
	var tr callsim.Transport = dialOnly{}
	assert.NoError(t, harness.Preflight(context.Background(), tr, "custom", refusedURL(t, "ws"), 0))
}

type dialOnly struct{}

func (dialOnly) Dial(context.Context, string) (callsim.Conn, error) {
	return nil, errors.New("not used")
}

// history records a call's events and its end.
func history(id string, o trace.Outcome, reason string, src ...trace.Source) *trace.History {
	rec := trace.NewRecorder(id, trace.SystemClock{})
	rec.Record(trace.SourceHarness, trace.KindCallStart, &trace.CallStart{ScenarioID: id})
	for _, s := range src {
		rec.Record(s, trace.KindNote, &trace.Note{Text: "x"})
	}
	rec.Record(trace.SourceHarness, trace.KindSnapshot, &trace.Snapshot{})
	rec.Record(trace.SourceHarness, trace.KindCallEnd, &trace.CallEnd{Outcome: o, Reason: reason})
	return rec.Close()
}

func TestUnreachedFromTheEvidence(t *testing.T) {
	refused := "dial: connection refused"
	hs := []*trace.History{
		history("b", trace.OutcomeAgentError, refused, trace.SourceHarness),
		history("a", trace.OutcomeAgentError, refused),
		history("c", trace.OutcomeAgentError, "agent closed the connection: EOF"),
		// Reached: the caller spoke, the agent answered, a tool was called.
		history("d", trace.OutcomeAgentError, "agent closed the connection: EOF", trace.SourceCaller),
		history("e", trace.OutcomeAgentError, "flood", trace.SourceAgent),
		history("f", trace.OutcomeAgentError, refused, trace.SourceBackend),
		// Not an agent error.
		history("g", trace.OutcomeScored, ""),
		history("h", trace.OutcomeHarnessError, harness.ReasonCancelled),
	}
	u := harness.FindUnreached(hs)
	assert.Equal(t, []string{"a", "b", "c"}, u.Calls)
	assert.Equal(t, len(hs), u.Total)
	assert.Equal(t, []harness.ReasonCount{{Reason: refused, N: 2}, {Reason: "agent closed the connection: EOF", N: 1}}, u.Reasons)
}
