package mockbackend

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/callproof/callproof/trace"
	"github.com/hashicorp/go-memdb"
)

// memdb tables. Objects in them are never mutated after insert: an update
// inserts a changed copy, so earlier read transactions stay consistent.
// Other holders rely on it too: calls opened with the same records share
// the template's records (Server.startStore), and a ledger row shares its
// maps with the records it names and with its earlier versions.
const (
	tabRecords = "records"     // *trace.Record, unique by (Table, Key)
	tabDeleted = "deleted"     // *trace.Record as it was when deleted, unique by (Table, Key)
	tabLedger  = "ledger"      // *LedgerRow, unique by ID
	tabIdem    = "idempotency" // *idemEntry, unique by Key
	idxID      = "id"
)

// LedgerRow is one HTTP request that reached a call. A row is appended
// when the request arrives and afterwards only gains facts (hold, commit,
// response); rows are never removed. The commit facts are written in the
// same memdb transaction as the state change they describe.
//
// Times are on the call's clock and equal the At of the matching event,
// except Committed, which is taken inside the commit transaction and so is
// at or just before tool.committed. Each fact is written just after its
// event (tool.committed: just before), so read a row once its request has
// finished (its client has the answer, or the call is closed). nil means
// the step never happened.
type LedgerRow struct {
	ID             int               `json:"id"`
	Ref            string            `json:"ref"` // the Ref of this request's trace events
	Tool           string            `json:"tool"`
	Args           map[string]string `json:"args,omitempty"`
	IdempotencyKey string            `json:"idem_key,omitempty"`
	BuiltFrom      *int              `json:"built_from,omitempty"` // X-State-Version sent by the agent
	Remote         string            `json:"remote,omitempty"`
	Reason         string            `json:"reason,omitempty"`       // e.g. "duplicate delivery"
	DuplicateOf    string            `json:"duplicate_of,omitempty"` // ref of the delivery this one repeats

	Received  time.Duration  `json:"received"`
	Held      *time.Duration `json:"held,omitempty"`
	Released  *time.Duration `json:"released,omitempty"`
	Committed *time.Duration `json:"committed,omitempty"`
	Responded *time.Duration `json:"responded,omitempty"`
	Cancelled *time.Duration `json:"cancelled,omitempty"`

	Hold      string            `json:"hold,omitempty"`
	Faults    []trace.FaultKind `json:"faults,omitempty"` // in the order they took effect
	Status    int               `json:"status,omitempty"` // as sent (or as it would have been, if Dropped)
	Error     string            `json:"error,omitempty"`
	Dropped   bool              `json:"dropped,omitempty"`
	Deleted   bool              `json:"deleted,omitempty"` // the commit removed Table/Key (Before: its last fields)
	ReplayOf  string            `json:"replay_of,omitempty"`
	Operation string            `json:"operation,omitempty"` // late_success operation id

	Table         string            `json:"table,omitempty"`
	Key           string            `json:"key,omitempty"`
	Before        map[string]string `json:"before,omitempty"`
	After         map[string]string `json:"after,omitempty"`
	VersionBefore int               `json:"version_before,omitempty"`
	VersionAfter  int               `json:"version_after,omitempty"`
}

func (r LedgerRow) clone() LedgerRow {
	r.Args = cloneFields(r.Args)
	r.Before = cloneFields(r.Before)
	r.After = cloneFields(r.After)
	r.Faults = slices.Clone(r.Faults)
	return r
}

// idemEntry is one idempotency key. While Done is false the request that
// first used it (Ref) is still running.
type idemEntry struct {
	Key         string
	Fingerprint string
	Ref         string
	Done        bool
	Status      int
	Body        []byte
}

// newSchema is the store's schema. A Server builds it once: memdb only
// reads a schema, so every call's store shares it.
func newSchema() *memdb.DBSchema {
	byRecord := func() map[string]*memdb.IndexSchema {
		return map[string]*memdb.IndexSchema{
			idxID: {Name: idxID, Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
				&memdb.StringFieldIndex{Field: "Table"},
				&memdb.StringFieldIndex{Field: "Key"},
			}}},
		}
	}
	return &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		tabRecords: {Name: tabRecords, Indexes: byRecord()},
		// Deleted records: their keys are never given to a created record.
		tabDeleted: {Name: tabDeleted, Indexes: byRecord()},
		tabLedger: {Name: tabLedger, Indexes: map[string]*memdb.IndexSchema{
			idxID: {Name: idxID, Unique: true, Indexer: &memdb.IntFieldIndex{Field: "ID"}},
		}},
		tabIdem: {Name: tabIdem, Indexes: map[string]*memdb.IndexSchema{
			idxID: {Name: idxID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Key"}},
		}},
	}}
}

// newStore makes a store holding copies of records (version 0 becomes 1).
func newStore(schema *memdb.DBSchema, records []trace.Record) (*memdb.MemDB, error) {
	db, err := memdb.NewMemDB(schema)
	if err != nil {
		return nil, fmt.Errorf("mockbackend: %w", err)
	}
	txn := db.Txn(true)
	defer txn.Abort()
	for _, r := range records {
		if r.Table == "" || r.Key == "" {
			return nil, fmt.Errorf("mockbackend: record %q/%q needs a table and a key", r.Table, r.Key)
		}
		r = r.Clone()
		if r.Version == 0 {
			r.Version = 1
		}
		must(txn.Insert(tabRecords, &r))
	}
	txn.Commit()
	return db, nil
}

// must turns a memdb error into a panic. With a fixed schema and inputs
// validated at Open, memdb only fails on a programming error.
func must(err error) {
	if err != nil {
		panic(fmt.Sprintf("mockbackend: memdb: %v", err))
	}
}

func cloneFields(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// tableRecords returns clones of one table's records, in key order.
func tableRecords(txn *memdb.Txn, table string) []trace.Record {
	return tableRows(txn, tabRecords, table)
}

// tableRows returns clones of one table's rows of a memdb table (records
// or deleted), in key order.
func tableRows(txn *memdb.Txn, tab, table string) []trace.Record {
	it, err := txn.Get(tab, idxID+"_prefix", table)
	must(err)
	var out []trace.Record
	for raw := it.Next(); raw != nil; raw = it.Next() {
		r := raw.(*trace.Record)
		if r.Table == table { // the prefix also matches longer table names
			out = append(out, r.Clone())
		}
	}
	return out
}

func findRecord(rs []trace.Record, table, key string) (trace.Record, bool) {
	for _, r := range rs {
		if r.Table == table && r.Key == key {
			return r, true
		}
	}
	return trace.Record{}, false
}

func lookupRecord(txn *memdb.Txn, table, key string) (trace.Record, bool) {
	raw, err := txn.First(tabRecords, idxID, table, key)
	must(err)
	if raw == nil {
		return trace.Record{}, false
	}
	return raw.(*trace.Record).Clone(), true
}

// storedRecord is the record of exactly that table and key as stored, or
// nil: read it, never change it. (The index joins table and key with NUL,
// so a table and key that hold NULs could name another record.)
func storedRecord(txn *memdb.Txn, table, key string) *trace.Record {
	raw, err := txn.First(tabRecords, idxID, table, key)
	must(err)
	if raw == nil {
		return nil
	}
	if r := raw.(*trace.Record); r.Table == table && r.Key == key {
		return r
	}
	return nil
}

func allRecords(txn *memdb.Txn) []trace.Record {
	it, err := txn.Get(tabRecords, idxID)
	must(err)
	var out []trace.Record
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out = append(out, raw.(*trace.Record).Clone())
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Table != out[j].Table {
			return out[i].Table < out[j].Table
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// amendLedger applies fn to a copy of row id and stores the copy. The copy
// shares the stored row's maps: no fn changes a map in place (each sets
// fields), and a stored row is never changed. Only Faults is clipped, so
// appending to it copies rather than writing into the stored row's array.
func amendLedger(txn *memdb.Txn, id int, fn func(*LedgerRow)) {
	raw, err := txn.First(tabLedger, idxID, id)
	must(err)
	if raw == nil {
		return
	}
	row := *raw.(*LedgerRow)
	row.Faults = slices.Clip(row.Faults)
	fn(&row)
	must(txn.Insert(tabLedger, &row))
}

func ledgerRows(txn *memdb.Txn) []LedgerRow {
	it, err := txn.Get(tabLedger, idxID)
	must(err)
	var out []LedgerRow
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out = append(out, raw.(*LedgerRow).clone())
	}
	return out
}

// ptr copies a time into its own variable for a ledger field.
func ptr(d time.Duration) *time.Duration { return &d }
