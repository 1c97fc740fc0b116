package mockbackend

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/hashicorp/go-memdb"

	"github.com/callproof/callproof/trace"
)

// execute is the innermost stage: it reads, updates, creates, cancels or
// deletes a record with trace.Apply and commits the change with its ledger
// facts in one memdb transaction.
func (c *Call) execute(x *exchange) reply {
	// Last look before committing: a client that left, or a call that
	// closed, while the request waited must not change state.
	if x.ctx.Err() != nil || c.ctx.Err() != nil {
		return x.abandon()
	}
	spec := x.tool.spec
	txn := c.db.Txn(true)
	defer txn.Abort()
	if spec.Effect == trace.EffectRead {
		key := x.args[spec.KeyArg]
		r := storedRecord(txn, spec.Table, key)
		if r == nil {
			return errorReply(http.StatusNotFound, "not_found", fmt.Sprintf("no %s record %q", spec.Table, key), spec.KeyArg)
		}
		return reply{status: http.StatusOK, body: recordBody(r.Clone())}
	}

	before := tableRecords(txn, spec.Table)
	known := before
	if spec.Effect == trace.EffectCreate {
		// Deleted records count too, so a created record never takes the
		// key of one that was deleted.
		known = slices.Concat(before, tableRows(txn, tabDeleted, spec.Table))
	}
	after, err := trace.Apply(known, spec, x.args)
	if err != nil {
		return errorReply(http.StatusNotFound, "not_found", err.Error(), spec.KeyArg)
	}
	if spec.Effect == trace.EffectDelete {
		return c.remove(x, txn, before)
	}
	var old, rec trace.Record
	var stored map[string]string // old's fields as stored, for the ledger
	switch spec.Effect {
	case trace.EffectUpdate, trace.EffectCancel:
		key := x.args[spec.KeyArg]
		old, _ = findRecord(before, spec.Table, key)
		rec, _ = findRecord(after, spec.Table, key)
		if r := storedRecord(txn, spec.Table, key); r != nil {
			stored = r.Fields
		}
	case trace.EffectCreate:
		rec = after[len(after)-1]
		if _, taken := findRecord(before, rec.Table, rec.Key); taken {
			return errorReply(http.StatusConflict, "conflict", fmt.Sprintf("%s record %q already exists", rec.Table, rec.Key), "")
		}
	}
	must(txn.Insert(tabRecords, &rec))
	at := c.rec.Since()
	amendLedger(txn, x.id, func(r *LedgerRow) {
		r.Committed = ptr(at)
		r.Table, r.Key = rec.Table, rec.Key
		// The row shares the maps of the records stored before and after
		// (never changed once stored; Ledger hands out copies), so a write
		// costs the ledger no copy of its record.
		r.Before, r.After = stored, rec.Fields
		r.VersionBefore, r.VersionAfter = old.Version, rec.Version
	})
	txn.Commit()
	// Recorded after the commit so whoever reacts to the event sees the state.
	x.emit(trace.KindToolCommitted, trace.ToolEvent{
		Table: rec.Table, Key: rec.Key, Before: cloneFields(old.Fields), After: cloneFields(rec.Fields),
		VersionBefore: old.Version, VersionAfter: rec.Version,
	})
	return reply{status: http.StatusOK, body: recordBody(rec)}
}

// remove commits a delete: the record leaves the records table for the
// deleted one, and the ledger and tool.committed say so (Before: its last
// fields). The answer is the record as it was, marked deleted.
func (c *Call) remove(x *exchange, txn *memdb.Txn, before []trace.Record) reply {
	spec := x.tool.spec
	key := x.args[spec.KeyArg]
	old, _ := findRecord(before, spec.Table, key)
	stored := storedRecord(txn, spec.Table, key)
	must(txn.Delete(tabRecords, stored))
	must(txn.Insert(tabDeleted, stored))
	at := c.rec.Since()
	amendLedger(txn, x.id, func(r *LedgerRow) {
		r.Committed = ptr(at)
		r.Table, r.Key, r.Deleted = old.Table, old.Key, true
		r.Before, r.VersionBefore = stored.Fields, old.Version
	})
	txn.Commit()
	x.emit(trace.KindToolCommitted, trace.ToolEvent{
		Table: old.Table, Key: old.Key, Deleted: true, Before: cloneFields(old.Fields), VersionBefore: old.Version,
	})
	return reply{status: http.StatusOK, body: deletedBody(old)}
}

// admit claims x's idempotency key, or answers from it: the stored first
// response when the parameters match, an error when they differ or the
// first request is still running.
func (c *Call) admit(x *exchange) (rep reply, admitted bool) {
	fp := fingerprint(x.name, x.args)
	x.fp = fp // storeKey's too
	txn := c.db.Txn(true)
	defer txn.Abort()
	raw, err := txn.First(tabIdem, idxID, x.key)
	must(err)
	if raw == nil {
		must(txn.Insert(tabIdem, &idemEntry{Key: x.key, Fingerprint: fp, Ref: x.ref}))
		txn.Commit()
		return reply{}, true
	}
	txn.Abort()
	e := raw.(*idemEntry)
	switch {
	case e.Fingerprint != fp:
		return rejectReply(c.mismatch, "idempotency_error",
			"Keys for idempotent requests can only be used with the same parameters they were first used with.",
			""), false
	case !e.Done:
		return rejectReply(http.StatusConflict, "idempotency_key_in_use",
			"There is currently another in-progress request using this Idempotency-Key; try again later.", ""), false
	}
	x.emit(trace.KindToolReplayed, trace.ToolEvent{ReplayOf: e.Ref, Status: e.Status})
	x.amend(func(r *LedgerRow) { r.ReplayOf = e.Ref })
	rep = reply{status: e.Status, body: e.Body}
	if e.Status >= 400 {
		rep.errMsg = errorMessage(e.Body)
	}
	return rep, false
}

// storeKey stores the first answer under its key for replays.
func (c *Call) storeKey(x *exchange, rep reply) {
	txn := c.db.Txn(true)
	defer txn.Abort()
	must(txn.Insert(tabIdem, &idemEntry{Key: x.key, Fingerprint: x.fp, Ref: x.ref, Done: true, Status: rep.status, Body: rep.body}))
	txn.Commit()
}

// freeKey forgets a claimed key whose request will answer nothing, so a
// retry executes instead of replaying.
func (c *Call) freeKey(x *exchange) {
	if !x.ownsKey {
		return
	}
	x.ownsKey = false
	txn := c.db.Txn(true)
	defer txn.Abort()
	must(txn.Delete(tabIdem, &idemEntry{Key: x.key}))
	txn.Commit()
}

// fingerprint identifies a request's parameters for key reuse checks.
func fingerprint(tool string, args map[string]string) string {
	var b strings.Builder
	b.WriteString(tool)
	for _, k := range trace.SortedKeys(args) {
		fmt.Fprintf(&b, "\x00%s\x01%s", k, args[k])
	}
	return b.String()
}

type recordEnvelope struct {
	OK      bool          `json:"ok"`
	Record  *trace.Record `json:"record,omitempty"`
	Deleted bool          `json:"deleted,omitempty"` // the record, as it was, is gone
}

type errorEnvelope struct {
	OK    bool     `json:"ok"`
	Error apiError `json:"error"`
}

type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Param   string `json:"param,omitempty"`
}

type pendingEnvelope struct {
	OK        bool   `json:"ok"`
	Status    string `json:"status"`
	Operation string `json:"operation"`
}

func recordBody(r trace.Record) []byte {
	if r.Fields == nil {
		r.Fields = map[string]string{}
	}
	return mustJSON(recordEnvelope{OK: true, Record: &r})
}

func deletedBody(r trace.Record) []byte {
	if r.Fields == nil {
		r.Fields = map[string]string{}
	}
	return mustJSON(recordEnvelope{OK: true, Record: &r, Deleted: true})
}

func errorBody(typ, msg, param string) []byte {
	return mustJSON(errorEnvelope{Error: apiError{Type: typ, Message: msg, Param: param}})
}

func pendingBody(op string) []byte {
	return mustJSON(pendingEnvelope{OK: true, Status: "pending", Operation: op})
}

func errorMessage(body []byte) string {
	var e errorEnvelope
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Error.Message
}

// errorType names an injected or scripted failure by its status class.
func errorType(status int) string {
	if status >= 500 {
		return "server_error"
	}
	return "request_failed"
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("mockbackend: encode %T: %v", v, err))
	}
	return b
}
