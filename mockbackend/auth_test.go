package mockbackend

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/callproof/callproof/trace"
	"github.com/stretchr/testify/require"
)

func TestAuthRejectsAndRecords(t *testing.T) {
	s := testServer(t, Options{})
	a := openCall(t, s, "a", nil)
	b := openCall(t, s, "b", nil)
	require.NotEqual(t, a.call.Token(), b.call.Token())
	require.True(t, strings.HasPrefix(a.call.BaseURL(), "http://127.0.0.1:"), a.call.BaseURL())
	require.True(t, strings.HasSuffix(a.call.BaseURL(), "/calls/a/tools"), a.call.BaseURL())

	cases := []struct {
		name   string
		opt    hdr
		status int
		typ    string
	}{
		{"missing", withToken(""), http.StatusUnauthorized, "unauthorized"},
		{"wrong", withToken("nope"), http.StatusForbidden, "forbidden"},
		{"other call's token", withToken(b.call.Token()), http.StatusForbidden, "forbidden"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := a.post("update_order", update("5590", "2026-12-03"), tc.opt)
			require.NoError(t, r.err)
			require.Equal(t, tc.status, r.status, r.body)
			require.Equal(t, tc.typ, r.errType(t))
			ref := "r" + string(rune('1'+i))
			e := one(t, a.rec, kindOf(trace.KindToolRejected, ref))
			require.Equal(t, tc.status, tev(e).Status)
			require.Equal(t, "update_order", tev(e).Tool)
			require.NotEmpty(t, tev(e).Remote)
			require.Equal(t, r.body, tev(e).Body)
			require.Empty(t, find(a.rec, kindOf(trace.KindToolReceived, ref)), "an unauthenticated request is never received")
			row := ledgerRow(t, a.call, ref)
			require.Equal(t, tc.status, row.Status)
			require.Nil(t, row.Committed)
		})
	}
	require.Empty(t, b.rec.Events(), "b's token used on a's URL is a's evidence only")
	require.Equal(t, orderRecords()[0].Fields, a.record("orders", "5590").Fields)
}

func TestRouting(t *testing.T) {
	f := newFixture(t, nil)

	t.Run("unknown call", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL()+"/calls/zzz/tools/get_order", strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+f.call.Token())
		res, err := f.client.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusNotFound, res.StatusCode)
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
