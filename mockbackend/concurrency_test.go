package mockbackend

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/callproof/callproof/trace"
	"github.com/stretchr/testify/require"
)

func TestConcurrentCallsAreIsolated(t *testing.T) {
	const calls, writes = 64, 5
	s := testServer(t, Options{})
	fs := make([]*fixture, calls)
	for i := range fs {
		fs[i] = openCall(t, s, fmt.Sprintf("call-%d", i), nil)
	}
	var wg sync.WaitGroup
	errs := make(chan error, calls*writes)
	for i, f := range fs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range writes {
				date := fmt.Sprintf("2026-12-%02d", 1+(i+w)%28)
				r := f.postCtx(context.Background(), "update_order", update("5590", date))
				if r.err != nil || r.status != http.StatusOK {
					errs <- fmt.Errorf("call %d write %d: %v %d %s", i, w, r.err, r.status, r.body)
				}
			}
			// Each call also hears another call's token as forbidden.
			other := fs[(i+1)%calls].call.Token()
			if r := f.postCtx(context.Background(), "get_order", map[string]any{"order_number": "5590"}, withToken(other)); r.status != http.StatusForbidden {
				errs <- fmt.Errorf("call %d: cross token got %d", i, r.status)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, f := range fs {
		rec := f.record("orders", "5590")
		require.Equal(t, 1+writes, rec.Version, "call %d", i)
		require.Equal(t, fmt.Sprintf("2026-12-%02d", 1+(i+writes-1)%28), rec.Fields["delivery_date"], "call %d", i)
		require.Len(t, f.call.Ledger(), writes, "another call's token is refused on the server, not recorded here")
		require.Len(t, find(f.rec, kindOf(trace.KindToolCommitted, "")), writes)
		for _, e := range f.rec.Events() {
			require.Equal(t, f.call.ID(), e.Call)
		}
	}
}

func TestConcurrentRequestsOnOneCall(t *testing.T) {
	// Unkeyed creates racing on one call: every one commits, keys unique.
	f := newFixture(t, unlimited)
	const n = 32
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.postCtx(context.Background(), "ship_order", map[string]any{"order_number": "5590"})
		}()
	}
	wg.Wait()
	require.Len(t, f.call.Snapshot(), 2+n)
	versions := map[string]bool{}
	for _, row := range f.call.Ledger() {
		require.NotNil(t, row.Committed)
		require.False(t, versions[row.Key], "key %s committed twice", row.Key)
		versions[row.Key] = true
	}
}
