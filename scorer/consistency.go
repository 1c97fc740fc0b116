package scorer

import (
	"fmt"
	"slices"

	"github.com/callproof/callproof/trace"
)

// inconsistency checks that the final snapshot follows from the starting
// records and the committed ledger rows, replayed in order. A history
// where they disagree was damaged or recorded wrong: judging the agent on
// it would be judging our own fault, so the call becomes a harness_error
// with the reason returned here ("" when consistent, or when there is no
// snapshot to check).
func inconsistency(h *trace.History, start *trace.CallStart) string {
	state := map[[2]string]*trace.Record{}
	var order [][2]string
	for _, r := range start.Records {
		c := r.Clone()
		k := [2]string{r.Table, r.Key}
		if state[k] == nil {
			order = append(order, k)
		}
		state[k] = &c
	}
	var snap *trace.Snapshot
	for i := range h.Events {
		e := &h.Events[i]
		switch d := e.Data.(type) {
		case *trace.Snapshot:
			snap = d
		case *trace.ToolEvent:
			if e.Kind != trace.KindToolCommitted {
				continue
			}
			k := [2]string{d.Table, d.Key}
			cur := state[k]
			if cur == nil {
				if len(d.Before) > 0 || d.VersionBefore != 0 {
					return fmt.Sprintf("commit #%d updates %s/%s, which neither the starting records nor an earlier commit hold", e.Seq, d.Table, d.Key)
				}
				cur = &trace.Record{Table: d.Table, Key: d.Key}
				state[k] = cur
				order = append(order, k)
			} else {
				if d.VersionBefore != cur.Version {
					return fmt.Sprintf("commit #%d says %s/%s was at version %d, the replay holds version %d", e.Seq, d.Table, d.Key, d.VersionBefore, cur.Version)
				}
				for _, f := range trace.SortedKeys(d.Before) {
					if cur.Fields[f] != d.Before[f] {
						return fmt.Sprintf("commit #%d says %s/%s.%s was %q, the replay holds %q", e.Seq, d.Table, d.Key, f, d.Before[f], cur.Fields[f])
					}
				}
			}
			if d.Deleted {
				delete(state, k)
				order = slices.DeleteFunc(order, func(o [2]string) bool { return o == k })
				continue
			}
			cur.Fields = make(map[string]string, len(d.After))
			for f, x := range d.After {
				cur.Fields[f] = x
			}
			cur.Version = d.VersionAfter
		}
	}
	if snap == nil {
		return ""
	}
	replayed := make([]trace.Record, 0, len(order))
	for _, k := range order {
		replayed = append(replayed, *state[k])
	}
	if d := trace.Diff(replayed, snap.Records); len(d) > 0 {
		return "the snapshot does not follow from the starting records and the committed ledger rows: " + diffText(d)
	}
	for _, r := range snap.Records {
		if w := state[[2]string{r.Table, r.Key}]; w != nil && w.Version != r.Version {
			return fmt.Sprintf("the snapshot holds %s/%s at version %d, the replayed ledger at version %d", r.Table, r.Key, r.Version, w.Version)
		}
	}
	return ""
}
