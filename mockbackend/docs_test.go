package mockbackend

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/callproof/callproof/internal/doccheck"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/trace"
)

// docs/PROTOCOL.md states a checked value as VALUE (`pkg.Name`); this file
// checks the mockbackend ones, the table of tool answers and the claims
// the page makes about Go clients.

// backendDocConsts is every agent-visible constant of mockbackend by the
// name the docs use (maxKeyLen is unexported but stated).
func backendDocConsts() map[string]any {
	return map[string]any{
		"mockbackend.DefaultRequestsPerSecond":   DefaultRequestsPerSecond,
		"mockbackend.DefaultRequestsPerCall":     DefaultRequestsPerCall,
		"mockbackend.ReasonToolFlood":            ReasonToolFlood,
		"mockbackend.ReasonStalledBody":          ReasonStalledBody,
		"mockbackend.MaxBodyBytes":               MaxBodyBytes,
		"mockbackend.DefaultBodyTimeout":         DefaultBodyTimeout,
		"mockbackend.MinBodyTimeout":             MinBodyTimeout,
		"mockbackend.ServerReadHeaderTimeout":    ServerReadHeaderTimeout,
		"mockbackend.ServerReadTimeout":          ServerReadTimeout,
		"mockbackend.ServerIdleTimeout":          ServerIdleTimeout,
		"mockbackend.DefaultHoldMax":             DefaultHoldMax,
		"mockbackend.LateSuccessActWait":         LateSuccessActWait,
		"mockbackend.maxKeyLen":                  maxKeyLen,
		"mockbackend.DefaultMaxConnsPerCall":     DefaultMaxConnsPerCall,
		"mockbackend.DefaultMaxHeaderBytes":      DefaultMaxHeaderBytes,
		"mockbackend.DefaultHeaderTimeout":       DefaultHeaderTimeout,
		"mockbackend.DefaultMaxIdleConnsPerCall": DefaultMaxIdleConnsPerCall,
		"mockbackend.ClosedLinger":               ClosedLinger,
		"mockbackend.ReasonConnBound":            ReasonConnBound,
		"mockbackend.MCPPath":                    MCPPath,
	}
}

// backendUndocumented are exported constants PROTOCOL.md leaves out on
// purpose, with why.
var backendUndocumented = map[string]string{
	"mockbackend.DefaultRejectedLogSize": "the server's own log of refused requests, invisible to an agent",
	"mockbackend.CloseWait":              "how long closing a call waits for its requests, invisible to an agent",
}

func readProtocolDoc(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../docs/PROTOCOL.md")
	require.NoError(t, err)
	return string(raw)
}

// docRefs reads every VALUE (`pkg.Name`) of the doc for pkg.
func docRefs(doc, pkg string) map[string][]string { return doccheck.Refs(doc, pkg) }

// docValue reads a written value as the type of want.
func docValue(want any, s string) (any, error) { return doccheck.Value(want, s) }

func exportedBackendConsts(t *testing.T) []string {
	t.Helper()
	names, err := doccheck.ExportedConsts(".", "mockbackend")
	require.NoError(t, err)
	return names
}

func TestProtocolDocMatchesBackend(t *testing.T) {
	code := backendDocConsts()
	for _, name := range exportedBackendConsts(t) {
		_, mapped := code[name]
		_, skipped := backendUndocumented[name]
		assert.True(t, mapped || skipped, "%s: a new constant; add it to docs/PROTOCOL.md and backendDocConsts (or backendUndocumented, with why)", name)
	}
	doc := docRefs(readProtocolDoc(t), "mockbackend")
	for name, want := range code {
		written, ok := doc[name]
		if !assert.True(t, ok, "docs/PROTOCOL.md never states %s as VALUE (`%s`)", name, name) {
			continue
		}
		for _, w := range written {
			got, err := docValue(want, w)
			if assert.NoError(t, err, "%s: value %q", name, w) {
				assert.EqualValues(t, want, got, "%s: docs/PROTOCOL.md says %s", name, w)
			}
		}
	}
	for name := range doc {
		_, ok := code[name]
		assert.True(t, ok, "docs/PROTOCOL.md refers to %s, which backendDocConsts does not know", name)
	}
	// Budget{} takes the stated defaults.
	m := newMeter(Budget{})
	assert.EqualValues(t, DefaultRequestsPerSecond, m.rate)
	assert.Equal(t, DefaultRequestsPerCall, m.perCall)
}

// answerRow is one row of PROTOCOL.md's table of tool answers.
type answerRow struct {
	status int
	typ    string
}

var answerLine = regexp.MustCompile("^\\| ([0-9]{3}) \\| `([a-z_]+)` \\|")

// docAnswers reads the rows with one status and one error type from the
// table under ### Responses.
func docAnswers(t *testing.T) map[answerRow]bool {
	t.Helper()
	_, sec, ok := strings.Cut(readProtocolDoc(t), "\n### Responses\n")
	require.True(t, ok, "docs/PROTOCOL.md has no ### Responses")
	sec, _, _ = strings.Cut(sec, "\n### ")
	out := map[answerRow]bool{}
	for _, line := range strings.Split(sec, "\n") {
		if m := answerLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			out[answerRow{n, m[2]}] = true
		}
	}
	require.NotEmpty(t, out)
	return out
}

// TestProtocolDocAnswers provokes every error answer the table lists and
// checks the table lists exactly those.
func TestProtocolDocAnswers(t *testing.T) {
	s := testServer(t, Options{})
	n := 0
	open := func(mod func(*CallConfig)) *fixture {
		n++
		return openCall(t, s, fmt.Sprintf("doc-%d", n), mod)
	}
	got := map[answerRow]string{}
	note := func(what string, r resp) {
		t.Helper()
		require.NoError(t, r.err, what)
		got[answerRow{r.status, r.errType(t)}] = what
	}
	order := func(num string) map[string]any { return map[string]any{"order_number": num} }

	f := open(nil)
	note("missing argument", f.post("update_order", map[string]any{"delivery_date": "2026-12-03"}))
	note("bad X-State-Version", f.post("get_order", order("5590"), withVersion("five")))
	note("long key", f.post("get_order", order("5590"), withKey(strings.Repeat("k", maxKeyLen+1))))
	require.Equal(t, http.StatusOK, f.post("update_order", update("5590", "2026-12-03"), withKey("k")).status)
	note("key reused", f.post("update_order", update("5590", "2026-12-05"), withKey("k")))
	note("no token", f.post("get_order", order("5590"), withToken("")))
	note("another token", f.post("get_order", order("5590"), withToken(open(nil).call.Token())))
	note("unknown tool", f.post("cancel_everything", order("5590")))
	note("no record", f.post("get_order", order("9999")))
	note("too large", f.post("get_order", `{"order_number":"`+strings.Repeat("1", MaxBodyBytes)+`"}`))

	req, err := http.NewRequest(http.MethodGet, f.call.BaseURL()+"/get_order", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+f.call.Token())
	res, err := f.client.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "GET on a tool: no 405")

	// A body that never arrives.
	slow := open(func(c *CallConfig) { c.BodyTimeout = time.Millisecond })
	note("slow body", rawPost(t, slow, "get_order", 10, `{"ord`))

	held := open(nil)
	require.NoError(t, held.call.Hold("h", nil, 0))
	first := held.async(context.Background(), "update_order", update("5590", "2026-12-03"), withKey("k"))
	waitFor(t, held.rec, kindOf(trace.KindToolHeld, "r1"))
	note("key in use", held.post("update_order", update("5590", "2026-12-03"), withKey("k")))
	held.call.Close()
	note("closed while held", recv(t, first))
	note("call over", held.post("get_order", order("5590")))

	f = open(func(c *CallConfig) {
		c.Records = append(c.Records, trace.Record{Table: "shipments", Key: "shipments-2", Version: 1})
	})
	note("create over an existing key", f.post("ship_order", order("5590")))

	f = open(func(c *CallConfig) { c.Budget = Budget{PerCall: 1} })
	require.Equal(t, http.StatusOK, f.post("get_order", order("5590")).status)
	note("over the budget", f.post("get_order", order("5590")))

	f = open(func(c *CallConfig) { c.Faults = []trace.Fault{{Kind: trace.FaultStatus, Status: 503}} })
	require.Equal(t, answerRow{503, "server_error"}, func() answerRow { r := f.post("get_order", order("5590")); return answerRow{r.status, r.errType(t)} }())
	f = open(func(c *CallConfig) { c.Faults = []trace.Fault{{Kind: trace.FaultStatus, Status: 418}} })
	require.Equal(t, answerRow{418, "request_failed"}, func() answerRow { r := f.post("get_order", order("5590")); return answerRow{r.status, r.errType(t)} }())

	f = open(func(c *CallConfig) { c.Faults = []trace.Fault{{Kind: trace.FaultLateSuccess, Delay: time.Millisecond}} })
	r := f.post("update_order", update("5590", "2026-12-03"))
	require.Equal(t, http.StatusAccepted, r.status)
	require.Equal(t, map[string]any{"ok": true, "status": "pending", "operation": "op-1"}, r.json(t))

	doc := docAnswers(t)
	for row, what := range got {
		assert.True(t, doc[row], "%s answers %d %s, which docs/PROTOCOL.md's table of answers lacks", what, row.status, row.typ)
	}
	for row := range doc {
		_, ok := got[row]
		assert.True(t, ok, "docs/PROTOCOL.md lists %d %s, which this test never provoked", row.status, row.typ)
	}
}

// rawPost sends headers promising n bytes of body, then only part, and
// returns the answer.
func rawPost(t *testing.T, f *fixture, tool string, n int, part string) resp {
	t.Helper()
	u, err := url.Parse(f.call.BaseURL() + "/" + tool)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s",
		u.Path, u.Host, f.call.Token(), n, part)
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(20*time.Second)))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer res.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(res.Body)
	return resp{status: res.StatusCode, body: b.String()}
}

// TestProtocolDocGoRetry checks what PROTOCOL.md says about Go's
// Transport: after a dropped response on a reused connection it re-sends a
// request that carries an Idempotency-Key (which is then replayed), and
// not one whose GetBody is cleared.
func TestProtocolDocGoRetry(t *testing.T) {
	for _, tc := range []struct {
		name      string
		noGetBody bool
		retried   bool
	}{{"keyed request is re-sent", false, true}, {"GetBody nil is not", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(c *CallConfig) {
				c.Faults = []trace.Fault{{Kind: trace.FaultDropResp, Match: &trace.ToolMatch{Tool: "update_order"}, Times: 1}}
			})
			// Warm the connection so the next request goes over a reused one.
			require.Equal(t, http.StatusOK, f.post("get_order", map[string]any{"order_number": "5590"}).status)
			body, _ := json.Marshal(update("5590", "2026-12-03"))
			req, err := http.NewRequest(http.MethodPost, f.call.BaseURL()+"/update_order", bytes.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+f.call.Token())
			req.Header.Set("Idempotency-Key", "k")
			if tc.noGetBody {
				req.GetBody = nil
			}
			res, err := f.client.Do(req)
			if tc.retried {
				require.NoError(t, err, "the Transport hides the drop")
				res.Body.Close()
				require.Equal(t, http.StatusOK, res.StatusCode)
				one(t, f.rec, kindOf(trace.KindToolReplayed, "r3"))
			} else {
				require.Error(t, err, "the drop is seen")
				require.Empty(t, find(f.rec, kindOf(trace.KindToolReceived, "r3")))
			}
			require.Equal(t, 2, f.record("orders", "5590").Version, "one commit either way")
		})
	}
}

// spoken matches d as prose writes it: 300 ms, 10 s, 2 min.
func spoken(d time.Duration) string { return doccheck.Spoken(d) }

func flatDoc(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile("../docs/" + name)
	require.NoError(t, err)
	return doccheck.Flat(string(raw))
}

// TestProtocolDocBackendProse checks the backend values PROTOCOL.md
// repeats in its prose and answer table.
func TestProtocolDocBackendProse(t *testing.T) {
	flat := flatDoc(t, "PROTOCOL.md")
	for _, p := range []string{
		fmt.Sprintf(`did not fully arrive within %s \(script time, at least %s real\)`, spoken(DefaultBodyTimeout), spoken(MinBodyTimeout)),
		fmt.Sprintf(`a body over %d KiB`, MaxBodyBytes>>10),
		fmt.Sprintf(`At most %d characters\.`, maxKeyLen),
		fmt.Sprintf("`Idempotency-Key` over %d characters", maxKeyLen),
		fmt.Sprintf(`a connection idle for %s just as you send`, spoken(ServerIdleTimeout)),
	} {
		assert.True(t, regexp.MustCompile(p).MatchString(flat), "docs/PROTOCOL.md: no %q", p)
	}
}

// TestScenariosDocBudgetDefaults checks the mockbackend defaults that
// docs/SCENARIOS.md's `limits` table names as `pkg.Name` (VALUE).
func TestScenariosDocBudgetDefaults(t *testing.T) {
	code := backendDocConsts()
	n := 0
	for _, m := range regexp.MustCompile("`(mockbackend\\.\\w+)` \\(([^)]+)\\)").FindAllStringSubmatch(flatDoc(t, "SCENARIOS.md"), -1) {
		n++
		want, ok := code[m[1]]
		if !assert.True(t, ok, "docs/SCENARIOS.md refers to %s, which backendDocConsts does not know", m[1]) {
			continue
		}
		got, err := docValue(want, m[2])
		if assert.NoError(t, err, "%s: %q", m[1], m[2]) {
			assert.EqualValues(t, want, got, "%s: docs/SCENARIOS.md says %s", m[1], m[2])
		}
	}
	assert.NotZero(t, n, "docs/SCENARIOS.md names no mockbackend default")
}

// routeRe reads a route the server registers with a literal pattern.
var routeRe = regexp.MustCompile(`HandleFunc\("([A-Z]+) (/calls/[^"]+)"`)

// TestProtocolDocNamesEveryEndpoint: every endpoint the server gives an
// agent (issue 25: the ledger's was once undocumented) is in
// docs/PROTOCOL.md, and nothing there names one it does not serve. The
// tool route is written against `baseUrl`, whose example is the route's
// prefix; any other as METHOD PATH in code font.
func TestProtocolDocNamesEveryEndpoint(t *testing.T) {
	src, err := os.ReadFile("server.go")
	require.NoError(t, err)
	doc := readProtocolDoc(t)
	routes := routeRe.FindAllStringSubmatch(string(src), -1)
	require.NotEmpty(t, routes)
	served := map[string]bool{}
	for _, m := range routes {
		route := m[1] + " " + m[2]
		served[route] = true
		if route == "POST /calls/{id}/tools/{tool}" {
			assert.Contains(t, doc, "POST {baseUrl}/{name}")
			assert.Regexp(t, `"baseUrl":"http://127\.0\.0\.1:\d+/calls/[^/"]+/tools"`, doc, "the example baseUrl is the tool route's prefix")
			continue
		}
		assert.Contains(t, doc, "`"+route+"`", "docs/PROTOCOL.md never names %s", route)
	}
	for _, m := range regexp.MustCompile("`((?:GET|POST|DELETE) /calls/[^`]+)`").FindAllStringSubmatch(doc, -1) {
		assert.True(t, served[m[1]], "docs/PROTOCOL.md names %s, which the server does not serve", m[1])
	}
	// The relative form an agent is given resolves to the route.
	base, err := url.Parse("http://127.0.0.1:1/calls/c1/tools/")
	require.NoError(t, err)
	rel, err := url.Parse("../ledger")
	require.NoError(t, err)
	assert.Equal(t, "/calls/c1/ledger", base.ResolveReference(rel).Path)
	assert.Contains(t, doc, "GET {baseUrl}/../ledger")
}
