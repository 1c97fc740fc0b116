package mockbackend

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/callproof/callproof/trace"
	"github.com/stretchr/testify/require"
)

func TestAuthRefusalsStayOnTheServer(t *testing.T) {
	s := testServer(t, Options{})
	a := openCall(t, s, "a", nil)
	b := openCall(t, s, "b", nil)
	require.NotEqual(t, a.call.Token(), b.call.Token())
	require.True(t, strings.HasPrefix(a.call.BaseURL(), "http://127.0.0.1:"), a.call.BaseURL())
	require.True(t, strings.HasSuffix(a.call.BaseURL(), "/calls/a/tools"), a.call.BaseURL())

	cases := []struct {
		name    string
		opt     hdr
		status  int
		typ     string
		tokenOf string
	}{
		{"missing", withToken(""), http.StatusUnauthorized, "unauthorized", ""},
		{"wrong", withToken("nope"), http.StatusForbidden, "forbidden", ""},
		{"other call's token", withToken(b.call.Token()), http.StatusForbidden, "forbidden", "b"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := a.post("update_order", update("5590", "2026-12-03"), tc.opt)
			require.NoError(t, r.err)
			require.Equal(t, tc.status, r.status, r.body)
			require.Equal(t, tc.typ, r.errType(t))
			log := s.Rejected()
			require.Len(t, log, i+1)
			e := log[i]
			require.Equal(t, tc.status, e.Status)
			require.Equal(t, "a", e.CallID)
			require.Equal(t, "/calls/a/tools/update_order", e.Path)
			require.Equal(t, http.MethodPost, e.Method)
			require.NotEmpty(t, e.Remote)
			require.Equal(t, tc.tokenOf, e.TokenOf)
			require.NotEmpty(t, e.Reason)
		})
	}
	require.Empty(t, a.rec.Events(), "a refused request is no call's evidence")
	require.Empty(t, b.rec.Events(), "b's token used on a's URL is not recorded in b either")
	require.Empty(t, a.call.Ledger())
	require.Equal(t, int64(3), s.RejectedCount())
	require.Equal(t, orderRecords()[0].Fields, a.record("orders", "5590").Fields)
	// Refusals take no request numbers: a's first real request is r1.
	require.Equal(t, http.StatusOK, a.post("get_order", map[string]any{"order_number": "5590"}).status)
	require.Equal(t, "r1", a.call.Ledger()[0].Ref)
}

// raw sends one request and returns its status and body.
func raw(t *testing.T, client *http.Client, method, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(`{"order_number":"5590"}`))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

func TestCrossCallAnswersRevealNothing(t *testing.T) {
	s := testServer(t, Options{})
	victim := openCall(t, s, "victim", nil)
	attacker := openCall(t, s, "attacker", nil)
	ended := openCall(t, s, "ended", nil)
	endedToken := ended.call.Token()
	ended.call.Close()

	// Every way of naming a call that is not yours, with a wrong token:
	// open, over, never existed; another call's token or a made-up one.
	for _, tool := range []string{"tools/get_order", "ledger"} {
		method := http.MethodPost
		if tool == "ledger" {
			method = http.MethodGet
		}
		var first string
		for _, id := range []string{"victim", "ended", "never-was"} {
			for _, tok := range []string{attacker.call.Token(), "0123456789abcdef0123456789abcdef"} {
				status, body := raw(t, attacker.client, method, s.URL()+"/calls/"+id+"/"+tool, tok)
				require.Equal(t, http.StatusForbidden, status, "%s %s", id, tool)
				if first == "" {
					first = body
				}
				require.Equal(t, first, body, "%s %s: the answer must not depend on the call", id, tool)
			}
		}
		// No token at all: one answer for every id too.
		var noTok string
		for _, id := range []string{"victim", "ended", "never-was"} {
			status, body := raw(t, attacker.client, method, s.URL()+"/calls/"+id+"/"+tool, "")
			require.Equal(t, http.StatusUnauthorized, status)
			if noTok == "" {
				noTok = body
			}
			require.Equal(t, noTok, body)
		}
	}
	require.Empty(t, victim.rec.Events())
	require.Empty(t, victim.call.Ledger())
	require.Empty(t, attacker.rec.Events())
	var fromAttacker int
	for _, e := range s.Rejected() {
		if e.TokenOf == "attacker" {
			fromAttacker++
		}
	}
	require.Equal(t, 6, fromAttacker, "the server log names whose token it was")

	// The ended call's own token still learns its call is over.
	status, _ := raw(t, attacker.client, http.MethodPost, s.URL()+"/calls/ended/tools/get_order", endedToken)
	require.Equal(t, http.StatusGone, status)
	// The victim works normally and its request numbers start at r1.
	require.Equal(t, http.StatusOK, victim.post("get_order", map[string]any{"order_number": "5590"}).status)
	require.Equal(t, "r1", tev(one(t, victim.rec, kindOf(trace.KindToolReceived, ""))).Ref)
}

func TestRejectedLogIsBounded(t *testing.T) {
	s := testServer(t, Options{RejectedLogSize: 4})
	f := openCall(t, s, "c1", nil)
	for i := range 10 {
		status, _ := raw(t, f.client, http.MethodPost, s.URL()+"/calls/c1/tools/t"+strconv.Itoa(i), "bad")
		require.Equal(t, http.StatusForbidden, status)
	}
	log := s.Rejected()
	require.Len(t, log, 4)
	for i, e := range log {
		require.Equal(t, "/calls/c1/tools/t"+strconv.Itoa(6+i), e.Path, "newest kept, oldest first")
	}
	require.Equal(t, int64(10), s.RejectedCount())
}

func TestRouting(t *testing.T) {
	f := newFixture(t, nil)

	t.Run("unknown call", func(t *testing.T) {
		status, _ := raw(t, f.client, http.MethodPost, f.srv.URL()+"/calls/zzz/tools/get_order", f.call.Token())
		require.Equal(t, http.StatusForbidden, status, "another call's token is not valid here")
		status, _ = raw(t, f.client, http.MethodGet, f.srv.URL()+"/nowhere", f.call.Token())
		require.Equal(t, http.StatusNotFound, status)
	})

	t.Run("unknown tool is recorded", func(t *testing.T) {
		r := f.post("cancel_everything", map[string]any{})
		require.Equal(t, http.StatusNotFound, r.status)
		ref := tev(waitFor(t, f.rec, kindOf(trace.KindToolRejected, ""))).Ref
		require.Equal(t, []trace.Kind{trace.KindToolReceived, trace.KindToolRejected}, kinds(f.rec, ref))
	})

	t.Run("ledger endpoint needs the token", func(t *testing.T) {
		url := f.srv.URL() + "/calls/c1/ledger"
		res, err := f.client.Get(url)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusUnauthorized, res.StatusCode)

		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Bearer "+f.call.Token())
		res, err = f.client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		var rows []LedgerRow
		b, _ := io.ReadAll(res.Body)
		require.NoError(t, json.Unmarshal(b, &rows))
		want, _ := json.Marshal(f.call.Ledger())
		got, _ := json.Marshal(rows)
		require.JSONEq(t, string(want), string(got))
		require.NotEmpty(t, rows)
	})

	t.Run("closed call answers 410", func(t *testing.T) {
		g := openCall(t, f.srv, "short", nil)
		g.call.Close()
		g.call.Close() // safe twice
		r := g.post("get_order", map[string]any{"order_number": "5590"})
		require.Equal(t, http.StatusGone, r.status, r.body)
		_, err := f.srv.Open(CallConfig{ID: "short", Tools: orderTools()})
		require.NoError(t, err, "an id is free again once its call closed")
	})

	t.Run("duplicate open id", func(t *testing.T) {
		_, err := f.srv.Open(CallConfig{ID: "c1", Tools: orderTools()})
		require.Error(t, err)
	})
}

func TestOpenValidates(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	bad := []CallConfig{
		{ID: ""},
		{ID: "x", Tools: []trace.ToolSpec{{Name: "t", Effect: "delete", Table: "x"}}},
		{ID: "x", Tools: []trace.ToolSpec{{Name: "t", Effect: trace.EffectUpdate, Table: "x"}}},
		{ID: "x", Tools: []trace.ToolSpec{{Name: "t", Effect: trace.EffectRead, Table: "x", KeyArg: "k", Args: []trace.ArgSpec{{Name: "k", Pattern: "("}}}}},
		{ID: "x", Records: []trace.Record{{Table: "orders"}}},
		{ID: "x", Faults: []trace.Fault{{Kind: "gremlins"}}},
		{ID: "x", Faults: []trace.Fault{{Kind: trace.FaultStatus, Probability: 2}}},
		{ID: "x", Faults: []trace.Fault{{Kind: trace.FaultWrongRecord}}},
	}
	for i, cfg := range bad {
		_, err := s.Open(cfg)
		require.Error(t, err, "case %d", i)
	}
}
