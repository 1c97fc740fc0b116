package mockbackend

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// boundedCall opens a call whose connection bound violations arrive on
// the returned channel (CallConfig.OnExceeded).
func boundedCall(t *testing.T, s *Server, id string, lim ConnLimits) (*fixture, <-chan string) {
	t.Helper()
	passed := make(chan string, 1)
	f := openCall(t, s, id, func(c *CallConfig) {
		c.Conns = lim
		c.OnExceeded = func(v string) { passed <- v }
	})
	return f, passed
}

func hostOf(t *testing.T, c *Call) string {
	t.Helper()
	u, err := url.Parse(c.BaseURL())
	require.NoError(t, err)
	return u.Host
}

func waitReason(t *testing.T, passed <-chan string) string {
	t.Helper()
	select {
	case r := <-passed:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no connection bound was passed within 10s")
		return ""
	}
}

// postAt posts a get_order request to target with token and returns the
// status.
func postAt(t *testing.T, client *http.Client, target, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, target, strings.NewReader(`{"order_number":"5590"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := client.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	return res.StatusCode
}

func TestEachCallHasItsOwnListener(t *testing.T) {
	s := testServer(t, Options{})
	a := openCall(t, s, "a", nil)
	b := openCall(t, s, "b", nil)
	assert.NotEqual(t, hostOf(t, a.call), hostOf(t, b.call))
	assert.Equal(t, http.StatusOK, a.post("get_order", orderArgs("5590")).status)
	// Call b's path on call a's port, with b's token: refused, never served.
	assert.Equal(t, http.StatusNotFound, postAt(t, a.client, "http://"+hostOf(t, a.call)+"/calls/b/tools/get_order", b.call.Token()))
	assert.Empty(t, b.call.Ledger())
}

// floodEnv, set in a child test process, runs TestHeaderFloodEndsOnlyItsCall
// with the flood ("on") or without it ("off"), for TestHeaderFloodPeakRSS.
const floodEnv = "CALLPROOF_TEST_HEADER_FLOOD"

// TestHeaderFloodEndsOnlyItsCall is the flood of issue 25: 300
// connections for one call, each sending about 1 MB of headers and never
// finishing them. The call ends (agent_error, tool connections), another
// call is served throughout, and the heap grows by far less than 100 MB.
// With floodEnv "off" (a child of TestHeaderFloodPeakRSS) the same run
// goes without the flood.
func TestHeaderFloodEndsOnlyItsCall(t *testing.T) {
	flooding := os.Getenv(floodEnv) != "off"
	s := testServer(t, Options{})
	flood, passed := boundedCall(t, s, "flood", ConnLimits{})
	other := openCall(t, s, "other", nil)
	host := hostOf(t, flood.call)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	line := "X-Junk: " + strings.Repeat("j", 8<<10) + "\r\n"
	var wg sync.WaitGroup
	for range 300 {
		if !flooding {
			break
		}
		wg.Go(func() {
			nc, err := net.DialTimeout("tcp", host, 5*time.Second)
			if err != nil {
				return // refused once the call is over
			}
			defer nc.Close()
			_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := fmt.Fprintf(nc, "POST /calls/flood/tools/get_order HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n", flood.call.Token()); err != nil {
				return
			}
			for sent := 0; sent < 1<<20; sent += len(line) {
				if _, err := nc.Write([]byte(line)); err != nil {
					return
				}
			}
		})
	}
	if flooding {
		reason := waitReason(t, passed)
		assert.True(t, strings.HasPrefix(reason, ReasonConnBound+": "), reason)
		assert.Contains(t, notes(flood.rec), "tool connection bound passed: "+reason)
	}
	for range 5 {
		assert.Equal(t, http.StatusOK, other.post("get_order", orderArgs("5590")).status, "the other call is served during the flood")
	}
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	assert.Less(t, int64(after.HeapInuse)-int64(before.HeapInuse), int64(100<<20))
	assert.Less(t, int64(after.Sys)-int64(before.Sys), int64(100<<20))
	assert.Equal(t, http.StatusOK, other.post("get_order", orderArgs("5599")).status)
}

// TestHeaderFloodPeakRSS runs TestHeaderFloodEndsOnlyItsCall in a child
// process with the flood and in another without it: the flood's peak
// resident set (the kernel's count for the child, rusage maxrss) is at
// most the flood-free run's plus 100 MB.
func TestHeaderFloodPeakRSS(t *testing.T) {
	if os.Getenv(floodEnv) != "" {
		return // a child runs only the flood test
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	peak := func(mode string) int64 {
		cmd := exec.Command(exe, "-test.run=^TestHeaderFloodEndsOnlyItsCall$", "-test.count=1")
		cmd.Env = append(os.Environ(), floodEnv+"="+mode)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "child with the flood %s:\n%s", mode, out)
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		require.True(t, ok, "no rusage on this platform")
		return ru.Maxrss << 10 // KiB on Linux
	}
	quiet := peak("off")
	flooded := peak("on")
	t.Logf("peak RSS: %d MiB without the flood, %d MiB with it", quiet>>20, flooded>>20)
	assert.LessOrEqual(t, flooded, quiet+100<<20, "the flood's peak RSS")
}

func orderArgs(num string) map[string]any { return map[string]any{"order_number": num} }

func TestTooManyConnectionsEndTheCall(t *testing.T) {
	s := testServer(t, Options{})
	f, passed := boundedCall(t, s, "c", ConnLimits{MaxConns: 3})
	for range 4 {
		nc, err := net.Dial("tcp", hostOf(t, f.call))
		require.NoError(t, err)
		defer nc.Close()
	}
	assert.Equal(t, ReasonConnBound+": more than 3 connections open at once", waitReason(t, passed))
}

func TestOversizedHeadersEndTheCall(t *testing.T) {
	s := testServer(t, Options{})
	f, passed := boundedCall(t, s, "c", ConnLimits{MaxHeaderBytes: 1024})
	req, err := http.NewRequest(http.MethodPost, f.call.BaseURL()+"/get_order", strings.NewReader(`{"order_number":"5590"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+f.call.Token())
	req.Header.Set("X-Junk", strings.Repeat("j", 8<<10))
	res, err := f.client.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, res.StatusCode)
	assert.Equal(t, ReasonConnBound+": request headers over 1024 bytes", waitReason(t, passed))
}

func TestSlowHeadersEndTheCall(t *testing.T) {
	s := testServer(t, Options{})
	f, passed := boundedCall(t, s, "c", ConnLimits{HeaderTimeout: 100 * time.Millisecond})
	nc, err := net.Dial("tcp", hostOf(t, f.call))
	require.NoError(t, err)
	defer nc.Close()
	_, err = fmt.Fprintf(nc, "POST /calls/c/tools/get_order HTTP/1.1\r\nHost: x\r\n")
	require.NoError(t, err)
	assert.Equal(t, ReasonConnBound+": request headers not read within 100ms", waitReason(t, passed))
}

func TestIdleConnectionsPastTheBoundAreClosedByTheResponse(t *testing.T) {
	// With one idle connection allowed, the first connection is kept
	// alive; the second's response says "Connection: close" and the
	// server closes it after the answer, so a client never reuses a
	// connection the server is closing. The call goes on, a third
	// connection is served again once the first has gone.
	s := testServer(t, Options{})
	f, passed := boundedCall(t, s, "c", ConnLimits{MaxIdle: 1})
	ask := func() (net.Conn, *bufio.Reader, *http.Response) {
		nc, err := net.Dial("tcp", hostOf(t, f.call))
		require.NoError(t, err)
		body := `{"order_number":"5590"}`
		_, err = fmt.Fprintf(nc, "POST /calls/c/tools/get_order HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s", f.call.Token(), len(body), body)
		require.NoError(t, err)
		br := bufio.NewReader(nc)
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		return nc, br, res
	}
	first, _, res := ask()
	assert.False(t, res.Close, "the first connection is kept alive")
	second, br, res := ask()
	defer second.Close()
	assert.True(t, res.Close, "past the idle bound the response closes its connection")
	_, err := br.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "the server closes the second connection after its answer")
	require.NoError(t, first.Close())
	require.Eventually(t, func() bool {
		third, _, res := ask()
		defer third.Close()
		return !res.Close
	}, 10*time.Second, 10*time.Millisecond, "with the first gone, a connection is kept alive again")
	select {
	case r := <-passed:
		t.Fatalf("the call ended: %s", r)
	default:
	}
}

func TestClosedCallsListenerAnswers410ThenCloses(t *testing.T) {
	s := testServer(t, Options{})
	f := openCall(t, s, "c", nil)
	f.call.Close()
	assert.Equal(t, http.StatusGone, f.post("get_order", orderArgs("5590")).status)
	require.NoError(t, s.Close())
	_, err := net.DialTimeout("tcp", hostOf(t, f.call), time.Second)
	assert.Error(t, err, "Server.Close closes a lingering listener at once")
}

// A closed call's listener lingers; a request on it is never served to a
// new call of the same id, even with that call's token.
func TestLingeringListenerServesNoNewCall(t *testing.T) {
	s := testServer(t, Options{})
	old := openCall(t, s, "a", nil)
	oldURL := old.call.BaseURL()
	old.call.Close()
	fresh := openCall(t, s, "a", nil)
	require.NotEqual(t, oldURL, fresh.call.BaseURL())
	assert.Equal(t, http.StatusGone, postAt(t, fresh.client, oldURL+"/get_order", fresh.call.Token()))
	assert.Empty(t, fresh.call.Ledger())
	assert.Equal(t, http.StatusOK, fresh.post("get_order", orderArgs("5590")).status, "its own listener serves it")
}
