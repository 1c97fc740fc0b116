package mockbackend

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"io"
	"slices"
	"sync"

	"github.com/callproof/callproof/trace"
	"github.com/hashicorp/go-memdb"
)

// sharedCacheSize bounds how many compiled catalogues, and separately how
// many starting stores, a Server keeps for calls to share. A suite uses a
// handful of each; a server fed more distinct ones only compiles again
// what it evicted.
const sharedCacheSize = 64

// digest names a configuration by its content: calls configured alike
// share what was built from it.
type digest [sha256.Size]byte

// shared is a bounded, least-recently-used cache of read-only values
// built from part of a call's configuration, safe for concurrent use.
// Only successful builds are kept, so a bad configuration fails the same
// way every time.
type shared[V any] struct {
	max int

	mu    sync.Mutex
	order list.List // of *sharedEntry[V], most recently used first
	byKey map[digest]*list.Element
}

type sharedEntry[V any] struct {
	key digest
	val V
}

// get returns the value for key, building it (outside the lock: building
// may be slow) when it is not kept.
func (c *shared[V]) get(key digest, build func() (V, error)) (V, error) {
	if v, ok := c.lookup(key); ok {
		return v, nil
	}
	v, err := build()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok { // another Open built it meanwhile: keep one
		c.order.MoveToFront(e)
		return e.Value.(*sharedEntry[V]).val, nil
	}
	if c.byKey == nil {
		c.byKey = make(map[digest]*list.Element, c.max)
	}
	c.byKey[key] = c.order.PushFront(&sharedEntry[V]{key, v})
	if c.order.Len() > c.max {
		delete(c.byKey, c.order.Remove(c.order.Back()).(*sharedEntry[V]).key)
	}
	return v, nil
}

func (c *shared[V]) lookup(key digest) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*sharedEntry[V]).val, true
}

func (c *shared[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// digester hashes values unambiguously: every string and list is preceded
// by its length, so no two different configurations write the same bytes.
// (JSON would not do: it folds invalid UTF-8 into U+FFFD.)
type digester struct {
	h   hash.Hash
	buf [binary.MaxVarintLen64]byte
}

func newDigester() *digester { return &digester{h: sha256.New()} }

func (d *digester) num(n int64) { d.h.Write(binary.AppendVarint(d.buf[:0], n)) }

func (d *digester) str(s string) {
	d.num(int64(len(s)))
	_, _ = io.WriteString(d.h, s) // a hash never fails to write
}

func (d *digester) flag(b bool) {
	if b {
		d.num(1)
	} else {
		d.num(0)
	}
}

func (d *digester) sum() (k digest) {
	d.h.Sum(k[:0])
	return k
}

// catalogueDigest covers every field of a catalogue, descriptions included
// (the compiled tools keep the specs whole); TestDigestsCoverEveryField
// fails when trace adds a field it misses.
func catalogueDigest(specs []trace.ToolSpec) digest {
	d := newDigester()
	d.num(int64(len(specs)))
	for _, sp := range specs {
		d.str(sp.Name)
		d.str(sp.Description)
		d.str(string(sp.Effect))
		d.str(sp.Table)
		d.str(sp.KeyArg)
		d.str(sp.StatusField)
		d.str(sp.StatusValue)
		d.flag(sp.Consequential)
		d.num(int64(len(sp.Args)))
		for _, a := range sp.Args {
			d.str(a.Name)
			d.str(a.Type)
			d.flag(a.Required)
			d.num(int64(len(a.Enum)))
			for _, e := range a.Enum {
				d.str(e)
			}
			d.str(a.Pattern)
			d.str(a.Description)
		}
	}
	return d.sum()
}

// recordsDigest covers every field of the starting records, in their
// order (a later record of the same table and key replaces an earlier one).
func recordsDigest(records []trace.Record) digest {
	d := newDigester()
	d.num(int64(len(records)))
	for _, r := range records {
		d.str(r.Table)
		d.str(r.Key)
		d.num(int64(r.Version))
		d.num(int64(len(r.Fields)))
		for _, k := range trace.SortedKeys(r.Fields) {
			d.str(k)
			d.str(r.Fields[k])
		}
	}
	return d.sum()
}

// catalogue returns the compiled tools for specs, shared with every call
// opened with the same catalogue. The tools are never written after
// compileTools returns.
func (s *Server) catalogue(specs []trace.ToolSpec) (map[string]*tool, error) {
	return s.catalogues.get(catalogueDigest(specs), func() (map[string]*tool, error) { return compileTools(specs) })
}

// startStore returns a new store holding records. Calls opened with the
// same records start from snapshots of one template: memdb's trees are
// immutable, so a call's writes copy only the nodes they change and no
// call sees another's. Snapshots also skip the watch channels a primary
// memdb notifies on every commit, which nothing here uses.
func (s *Server) startStore(records []trace.Record) (*memdb.MemDB, error) {
	tmpl, err := s.stores.get(recordsDigest(records), func() (*memdb.MemDB, error) { return newStore(s.schema, records) })
	if err != nil {
		return nil, err
	}
	return tmpl.Snapshot(), nil
}

// cloneSpec copies a tool's spec deeply, so a compiled tool shared by many
// calls never aliases the slices of the catalogue it was compiled from.
func cloneSpec(sp trace.ToolSpec) trace.ToolSpec {
	sp.Args = slices.Clone(sp.Args)
	for i := range sp.Args {
		sp.Args[i].Enum = slices.Clone(sp.Args[i].Enum)
	}
	return sp
}
