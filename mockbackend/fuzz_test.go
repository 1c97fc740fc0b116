package mockbackend

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// Authorization modes of a fuzzed request.
const (
	fzNoAuth = iota
	fzValid
	fzGarbage
	fzOtherCall
	fzEmptyBearer
	fzLowerCase
	fzModes
)

// FuzzToolRequest sends one arbitrary request (method, path, headers,
// body) to the backend's handler on a fresh call with the order catalogue
// and an injected 502 on ship_order. It checks that the handler never
// panics, never answers 5xx except through the injected fault, and leaves
// a consistent ledger and history: refused requests leave no trace in the
// call, every request that reached the call has one row that ended, its
// events start with tool.received and end in exactly one answer, and
// state changes only through committed rows.
//
// A path starting with "@" is taken relative to the call ("@tools/get_order"
// is /calls/fz/tools/get_order); "#" names another open call.
func FuzzToolRequest(f *testing.F) {
	seeds := []struct {
		method, path string
		auth         uint8
		key, version string
		body         string
	}{
		{"POST", "@tools/update_order", fzValid, "", "", `{"order_number":"5590","delivery_date":"2026-12-03"}`},
		{"POST", "@tools/update_order", fzValid, "k1", "4", `{"order_number":"5590","quantity":3}`},
		{"POST", "@tools/update_order", fzValid, "", "x", `{"order_number":"5590","quantity":1e400}`},
		{"POST", "@tools/get_order", fzValid, "", "", `{"order_number":5590}`},
		{"POST", "@tools/get_order", fzLowerCase, "", "", `{"order_number":"5599"}`},
		{"POST", "@tools/ship_order", fzValid, strings.Repeat("k", 300), "", `{"order_number":"5590"}`},
		{"POST", "@tools/ship_order", fzValid, "", "", `{"order_number":"5590"} {}`},
		{"POST", "@tools/nope", fzValid, "", "", `[]`},
		{"POST", "@tools/get_order", fzValid, "", "", `{"order_number":null}`},
		{"POST", "@tools/get_order", fzValid, "", "", "\x00\xff"},
		{"POST", "@tools/update_order", fzNoAuth, "", "", `{}`},
		{"POST", "@tools/update_order", fzGarbage, "", "", `{}`},
		{"POST", "#tools/update_order", fzOtherCall, "", "", `{}`},
		{"POST", "@tools/update_order", fzOtherCall, "", "", `{}`},
		{"POST", "@tools/update_order", fzEmptyBearer, "", "", `{}`},
		{"GET", "@ledger", fzValid, "", "", ""},
		{"GET", "@ledger", fzGarbage, "", "", ""},
		{"GET", "@tools/get_order", fzValid, "", "", ""},
		{"DELETE", "/calls/fz", fzValid, "", "", ""},
		{"POST", "/calls/fz/tools/../ledger", fzValid, "", "", ""},
		{"POST", "/calls/%2e%2e/tools/x", fzValid, "", "", ""},
		{"P OST", "//", fzValid, "", "", ""},
		{"POST", "/calls/fz/tools/get_order?x=1#frag", fzValid, "", "", `{"order_number":"5590"}`},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.auth, s.key, s.version, []byte(s.body))
	}
	srv := New(Options{})
	other, err := srv.Open(CallConfig{ID: "other", Tools: orderTools()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = srv.Close() })

	f.Fuzz(func(t *testing.T, method, path string, auth uint8, key, version string, body []byte) {
		rec := trace.NewRecorder("fz", nil)
		c, err := srv.Open(CallConfig{
			ID: "fz", Tools: orderTools(), Records: orderRecords(), Recorder: rec, Seed: 3,
			Faults: []trace.Fault{{Kind: trace.FaultStatus, Status: http.StatusBadGateway, Probability: 0.5,
				Match: &trace.ToolMatch{Tool: "ship_order"}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()

		switch {
		case strings.HasPrefix(path, "@"):
			path = "/calls/fz/" + path[1:]
		case strings.HasPrefix(path, "#"):
			path = "/calls/other/" + path[1:]
		}
		u, err := url.ParseRequestURI(path)
		if err != nil {
			u = &url.URL{Path: path}
		}
		req := (&http.Request{
			Method: method, URL: u, RequestURI: path, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Host: "backend", RemoteAddr: "192.0.2.1:1234",
			Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
		}).WithContext(context.Background())
		switch auth % fzModes {
		case fzValid:
			req.Header.Set("Authorization", "Bearer "+c.Token())
		case fzGarbage:
			req.Header.Set("Authorization", "Bearer "+key)
		case fzOtherCall:
			req.Header.Set("Authorization", "Bearer "+other.Token())
		case fzEmptyBearer:
			req.Header.Set("Authorization", "Bearer ")
		case fzLowerCase:
			req.Header.Set("Authorization", "bearer "+c.Token())
		}
		if key != "" {
			req.Header.Set(native.HeaderIdempotencyKey, key)
		}
		if version != "" {
			req.Header.Set(native.HeaderStateVersion, version)
		}

		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, req)
		checkFuzzAnswer(t, c, rec, w)
	})
}

// checkFuzzAnswer checks one answer against the call's ledger and history.
func checkFuzzAnswer(t *testing.T, c *Call, rec *trace.Recorder, w *httptest.ResponseRecorder) {
	t.Helper()
	// ServeMux answers an unclean path ("//x", "/a/../b") with its own
	// redirect to the clean one; everything else we answer is JSON.
	redirect := w.Code == http.StatusTemporaryRedirect || w.Code == http.StatusMovedPermanently
	if w.Body.Len() > 0 && !redirect && !json.Valid(w.Body.Bytes()) {
		t.Fatalf("answer %d is not JSON: %q", w.Code, w.Body.String())
	}
	rows := c.Ledger()
	events := rec.Events()
	if len(rows) == 0 {
		if len(events) != 0 {
			t.Fatalf("events without a ledger row: %s", dump(rec))
		}
		if w.Code >= 500 {
			t.Fatalf("refused with %d: %s", w.Code, w.Body.String())
		}
		if w.Code == http.StatusOK && !strings.HasPrefix(w.Body.String(), "[") {
			t.Fatalf("200 outside a tool call: %s", w.Body.String())
		}
		if !equalRecords(c.Snapshot(), orderRecords()) {
			t.Fatal("state changed with no request recorded")
		}
		return
	}
	if len(rows) > 2 {
		t.Fatalf("one request made %d ledger rows", len(rows))
	}
	byRef := map[string][]trace.Kind{}
	for _, e := range events {
		if te := tev(e); te != nil {
			byRef[te.Ref] = append(byRef[te.Ref], e.Kind)
		}
	}
	commits := 0
	for _, row := range rows {
		ks := byRef[row.Ref]
		if len(ks) < 2 || ks[0] != trace.KindToolReceived {
			t.Fatalf("%s: events %v", row.Ref, ks)
		}
		answers := 0
		for _, k := range ks {
			if k == trace.KindToolResponded || k == trace.KindToolRejected {
				answers++
			}
		}
		if answers != 1 || row.Responded == nil {
			t.Fatalf("%s: %d answers, row %+v", row.Ref, answers, row)
		}
		if row.Committed != nil {
			commits++
			if row.VersionAfter != row.VersionBefore+1 {
				t.Fatalf("%s: version %d -> %d", row.Ref, row.VersionBefore, row.VersionAfter)
			}
		}
	}
	first := rows[0]
	if first.Status != w.Code {
		t.Fatalf("ledger says %d, the client got %d", first.Status, w.Code)
	}
	if w.Code >= 500 && !slices.Contains(first.Faults, trace.FaultStatus) {
		t.Fatalf("%d without an injected fault: %s", w.Code, w.Body.String())
	}
	if commits == 0 && !equalRecords(c.Snapshot(), orderRecords()) {
		t.Fatal("state changed without a commit")
	}
}

func equalRecords(a, b []trace.Record) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}
