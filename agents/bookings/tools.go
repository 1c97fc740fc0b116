package bookings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/callproof/callproof/protocol/native"
)

// record is a booking (or refund) as the tool API returns it.
type record struct {
	Table   string            `json:"table"`
	Key     string            `json:"key"`
	Version int               `json:"version"`
	Fields  map[string]string `json:"fields"`
}

// answer is one tool request's outcome as the desk sees it.
type answer struct {
	status    int
	rec       *record
	pending   bool   // 202: accepted, lands later
	empty     bool   // 2xx without a readable record
	lost      bool   // no answer: timed out or the connection dropped
	aborted   bool   // we cancelled it ourselves
	errorType string // from an error body
}

// ok is a clean 200 with a record.
func (a answer) ok() bool { return a.status == http.StatusOK && a.rec != nil }

// transient is a failure worth trying again.
func (a answer) transient() bool {
	return a.lost || a.empty || a.status >= 500 || a.status == http.StatusTooManyRequests
}

// definite reports an error answer: the backend says it did nothing.
func (a answer) definite() bool { return !a.lost && a.status >= 400 }

// toolAPI posts tool requests for one call.
type toolAPI struct {
	client  *http.Client
	base    context.Context // outlives the call: a hang-up does not abort writes
	baseURL string
	token   string
}

// post sends one request. key "" sends no Idempotency-Key; version is the
// slot version the arguments were built from.
// w, when not nil, is told the request's connection so that an abort can
// close it (withdrawal).
func (t toolAPI) post(ctx context.Context, w *withdrawal, tool string, args map[string]string, key string, version int, timeout time.Duration) answer {
	body, err := json.Marshal(args)
	if err != nil {
		return answer{lost: true}
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if w != nil {
		rctx = httptrace.WithClientTrace(rctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { w.got(info.Conn) }})
		// Forgotten before the answer's body is closed (defers run last
		// first), which hands the connection back to the pool for other
		// requests.
		defer w.forget()
	}
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, strings.TrimRight(t.baseURL, "/")+"/"+tool, bytes.NewReader(body))
	if err != nil {
		return answer{lost: true}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.token)
	req.Header.Set(native.HeaderStateVersion, strconv.Itoa(version))
	if key != "" {
		req.Header.Set(native.HeaderIdempotencyKey, key)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return answer{aborted: true}
		}
		return answer{lost: true}
	}
	defer resp.Body.Close()
	if w != nil {
		defer w.forget()
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return answer{lost: true, status: resp.StatusCode}
	}
	a := answer{status: resp.StatusCode}
	var env struct {
		OK     bool    `json:"ok"`
		Status string  `json:"status"`
		Record *record `json:"record"`
		Error  *struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &env) != nil {
		a.empty = resp.StatusCode < 300
		return a
	}
	switch {
	case resp.StatusCode == http.StatusAccepted || env.Status == "pending":
		a.pending = true
	case env.Error != nil:
		a.errorType = env.Error.Type
	case env.Record != nil:
		a.rec = env.Record
		if a.rec.Fields == nil {
			a.rec.Fields = map[string]string{}
		}
	default:
		a.empty = resp.StatusCode < 300
	}
	return a
}

// holds reports whether rec is booking ref and carries every value of args
// (the key argument excepted).
func holds(rec *record, ref string, args map[string]string) bool {
	if rec == nil || (ref != "" && rec.Key != ref) {
		return false
	}
	for k, v := range args {
		if k == argRef {
			continue
		}
		if rec.Fields[k] != v {
			return false
		}
	}
	return true
}

// withdrawal aborts one request. Cancelling its context alone makes
// net/http close the connection on the transport's own goroutine, some
// time later; abort closes it at once, on the goroutine that aborts, so
// the close is in the backend's socket before anything the desk sends
// after it: its state report, which can release a held write
// (docs/PROTOCOL.md, "withdraw before you report").
type withdrawal struct {
	cancel context.CancelFunc

	mu      sync.Mutex
	conn    net.Conn
	aborted bool
}

// got tracks the request's connection; one got after the abort is closed
// at once.
func (w *withdrawal) got(c net.Conn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.aborted {
		_ = c.Close()
		return
	}
	w.conn = c
}

// forget stops tracking the connection: the request is over, and the
// connection may serve another one.
func (w *withdrawal) forget() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.conn = nil
}

// abort cancels the request and closes its connection.
func (w *withdrawal) abort() {
	w.cancel()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.aborted = true
	if w.conn != nil {
		_ = w.conn.Close()
		w.conn = nil
	}
}
