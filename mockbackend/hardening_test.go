package mockbackend

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callproof/callproof/trace"
	"github.com/stretchr/testify/require"
)

// inFlight counts the requests a call is serving.
func (c *Call) inFlightCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.inflight)
}

// stalled is a raw TCP client that announces a 100-byte body and sends
// only part of it: all at once (partial) or one byte a second (slow).
type stalled struct {
	conn net.Conn
	stop chan struct{}
	wg   sync.WaitGroup
}

func startStalled(t *testing.T, f *fixture, slow bool) *stalled {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.srv.URL(), "http://"))
	require.NoError(t, err)
	s := &stalled{conn: conn, stop: make(chan struct{})}
	t.Cleanup(func() {
		close(s.stop)
		conn.Close()
		s.wg.Wait()
	})
	head := "POST /calls/" + f.call.ID() + "/tools/update_order HTTP/1.1\r\nHost: backend\r\n" +
		"Authorization: Bearer " + f.call.Token() + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
	_, err = conn.Write([]byte(head))
	require.NoError(t, err)
	body := `{"order_number":"5590","delivery_date":"2026-12-03"}`
	if !slow {
		_, err = conn.Write([]byte(body[:20]))
		require.NoError(t, err)
		return s
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for i := 0; i < len(body); i++ {
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				return
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// status reads the status line of the answer on the connection.
func (s *stalled) status(t *testing.T) int {
	t.Helper()
	require.NoError(t, s.conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	res, err := http.ReadResponse(bufio.NewReader(s.conn), nil)
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode
}

func waitInFlight(t *testing.T, c *Call, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.inFlightCount() != n {
		require.True(t, time.Now().Before(deadline), "never %d requests in flight", n)
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCloseCutsAStalledBody(t *testing.T) {
	for _, slow := range []bool{false, true} {
		t.Run(map[bool]string{false: "partial body", true: "one byte a second"}[slow], func(t *testing.T) {
			f := newFixture(t, nil) // time scale 1: the body deadline (10 s) is far off
			client := startStalled(t, f, slow)
			waitInFlight(t, f.call, 1)

			start := time.Now()
			f.call.Close()
			require.Less(t, time.Since(start), CloseWait, "Close waits for the cut request, not for its body")

			require.Equal(t, []trace.Kind{trace.KindToolReceived, trace.KindToolCancelled, trace.KindToolResponded}, kinds(f.rec, "r1"))
			c := tev(one(t, f.rec, kindOf(trace.KindToolCancelled, "r1")))
			require.Equal(t, "call closed while the request body was arriving", c.Reason)
			require.Equal(t, http.StatusServiceUnavailable, tev(one(t, f.rec, kindOf(trace.KindToolResponded, "r1"))).Status)
			row := ledgerRow(t, f.call, "r1")
			require.NotNil(t, row.Cancelled)
			require.Nil(t, row.Committed)
			require.Equal(t, http.StatusServiceUnavailable, client.status(t))
			require.Equal(t, 1, f.record("orders", "5590").Version)
		})
	}
}

func TestSlowBodyTimesOut(t *testing.T) {
	// At scale 0.01 the 10 s body deadline would be 100 ms: MinBodyTimeout
	// (1 s) applies, so a body at one byte a second is cut after a second.
	f := newFixture(t, func(c *CallConfig) { c.TimeScale = 0.01 })
	require.Equal(t, MinBodyTimeout, f.call.bodyDeadline())
	start := time.Now()
	client := startStalled(t, f, true)
	require.Equal(t, http.StatusRequestTimeout, client.status(t))
	took := time.Since(start)
	require.GreaterOrEqual(t, took, MinBodyTimeout)
	require.Less(t, took, MinBodyTimeout+5*time.Second)

	require.Equal(t, []trace.Kind{trace.KindToolReceived, trace.KindToolRejected}, kinds(f.rec, "r1"))
	rej := tev(one(t, f.rec, kindOf(trace.KindToolRejected, "r1")))
	require.Equal(t, http.StatusRequestTimeout, rej.Status)
	require.Contains(t, rej.Error, "did not arrive within 1s")
	waitInFlight(t, f.call, 0)

	start = time.Now()
	f.call.Close()
	require.Less(t, time.Since(start), time.Second)
}

func TestBodyDeadlineScales(t *testing.T) {
	f := newFixture(t, func(c *CallConfig) { c.TimeScale = 0.5; c.BodyTimeout = 4 * time.Second })
	require.Equal(t, 2*time.Second, f.call.bodyDeadline())
	_, err := f.srv.Open(CallConfig{ID: "neg", BodyTimeout: -1})
	require.Error(t, err)
}

func TestOversizedBodyIsRefused(t *testing.T) {
	f := newFixture(t, nil)
	big := fmt.Sprintf(`{"order_number":"5590","delivery_date":"%s"}`, strings.Repeat("x", MaxBodyBytes))
	r := f.post("update_order", big)
	require.NoError(t, r.err)
	require.Equal(t, http.StatusRequestEntityTooLarge, r.status, r.body)
	require.Equal(t, "request_too_large", r.errType(t))
	require.Equal(t, []trace.Kind{trace.KindToolReceived, trace.KindToolRejected}, kinds(f.rec, "r1"))
	require.Equal(t, http.StatusRequestEntityTooLarge, ledgerRow(t, f.call, "r1").Status)
	// A body of exactly the limit is read (and judged on its content).
	exact := `{"order_number":"5590","delivery_date":"` + strings.Repeat("x", MaxBodyBytes-42) + `"}`
	require.Equal(t, MaxBodyBytes, len(exact))
	r = f.post("update_order", exact)
	require.Equal(t, http.StatusBadRequest, r.status, r.body)
	require.Equal(t, "delivery_date", r.json(t)["error"].(map[string]any)["param"])
}

func TestClientLeavingMidBodyIsCancelled(t *testing.T) {
	f := newFixture(t, nil)
	client := startStalled(t, f, false)
	waitInFlight(t, f.call, 1)
	require.NoError(t, client.conn.Close())
	e := waitFor(t, f.rec, kindOf(trace.KindToolCancelled, "r1"))
	require.Equal(t, "client gave up", tev(e).Reason)
	waitInFlight(t, f.call, 0)
	require.Equal(t, []trace.Kind{trace.KindToolReceived, trace.KindToolCancelled}, kinds(f.rec, "r1"))
}

func TestCloseGivesUpAfterCloseWait(t *testing.T) {
	f := newFixture(t, nil)
	// A request that cannot finish (as if its answer could not be written).
	f.call.wg.Add(1)
	defer f.call.wg.Done()
	untrack := f.call.track("r9", "update_order")
	defer untrack()

	start := time.Now()
	f.call.Close()
	took := time.Since(start)
	require.GreaterOrEqual(t, took, CloseWait)
	require.Less(t, took, CloseWait+2*time.Second)
	ns := notes(f.rec)
	require.Len(t, ns, 1)
	require.Contains(t, ns[0], "1 request(s) still in flight")
	require.Contains(t, ns[0], "r9 update_order")

	start = time.Now()
	f.call.Close()
	require.Less(t, time.Since(start), 100*time.Millisecond, "a second Close returns at once")
}
