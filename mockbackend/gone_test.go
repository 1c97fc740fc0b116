package mockbackend

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/callproof/callproof/trace"
	"github.com/stretchr/testify/require"
)

// rawPost sends a tool request on a connection of its own, which the test
// closes to withdraw it (as an agent cancelling its request does).
func (f *fixture) rawPost(tool string, args any, key string) net.Conn {
	f.t.Helper()
	u, err := url.Parse(f.call.BaseURL() + "/" + tool)
	require.NoError(f.t, err)
	body, err := json.Marshal(args)
	require.NoError(f.t, err)
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	require.NoError(f.t, err)
	f.t.Cleanup(func() { _ = conn.Close() })
	_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nIdempotency-Key: %s\r\nContent-Length: %d\r\n\r\n%s",
		u.Path, u.Host, f.call.Token(), key, len(body), body)
	require.NoError(f.t, err)
	return conn
}

// withdrawHeld opens call id with a hold, sends it a request the hold
// catches (r1, key k1) and closes that request's connection.
func withdrawHeld(t *testing.T, s *Server, id string) *fixture {
	t.Helper()
	f := openCall(t, s, id, nil)
	require.NoError(t, f.call.Hold("h", matchUpdate, time.Hour))
	old := f.rawPost("update_order", update("5590", "2026-12-03"), "k1")
	waitFor(t, f.rec, kindOf(trace.KindToolHeld, "r1"))
	require.NoError(t, old.Close())
	return f
}

// An agent that withdraws a held request (closes its connection) and at
// once resends it gets the withdrawal recorded first and its key freed,
// every time: the call reads the old socket before recording the resend,
// instead of leaving the order to when net/http notices the close.
func TestWithdrawalRecordedBeforeResend(t *testing.T) {
	s := testServer(t, Options{})
	for i := range 30 {
		f := withdrawHeld(t, s, fmt.Sprintf("w%d", i))
		r := f.post("update_order", update("5590", "2026-12-03"), withKey("k1"))
		require.Equal(t, http.StatusOK, r.status, "%d: the withdrawn request's key is free: %s\n%s", i, r.body, dump(f.rec))
		cancelled := seqOf(t, f, trace.KindToolCancelled, "r1")
		received := seqOf(t, f, trace.KindToolReceived, "r2")
		require.Less(t, cancelled, received, "%d: the withdrawal comes before the resend\n%s", i, dump(f.rec))
		require.Empty(t, find(f.rec, kindOf(trace.KindToolCommitted, "r1")), i)
	}
}

// A hold released after its client has closed the connection does not
// commit, however soon after the close the release comes: the call reads
// the socket before letting the request go.
func TestReleaseAfterWithdrawalDoesNotCommit(t *testing.T) {
	s := testServer(t, Options{})
	for i := range 30 {
		f := withdrawHeld(t, s, fmt.Sprintf("r%d", i))
		require.NoError(t, f.call.Release("h"))
		e := tev(waitFor(t, f.rec, kindOf(trace.KindToolCancelled, "r1")))
		require.Equal(t, "client gave up", e.Reason, i)
		require.Empty(t, find(f.rec, kindOf(trace.KindToolReleased, "r1")), "%d: released after the withdrawal\n%s", i, dump(f.rec))
		require.Empty(t, find(f.rec, kindOf(trace.KindToolCommitted, "r1")), i)
		require.Equal(t, 1, f.record("orders", "5590").Version, i)
	}
}
