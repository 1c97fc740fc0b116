package harness

import (
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// MaxShards bounds --shard's N: more shards than this are more machines
// than calls in any suite worth splitting.
const MaxShards = 1000

// Shard is one of Count disjoint parts of a suite's calls, as a sharded
// run records it in its meta.json: which part, and what the whole was, so
// a merge can check that its shards come from one suite and cover it.
type Shard struct {
	Index int `json:"index"` // 0-based
	Count int `json:"count"`
	// SuiteHash is the content hash of the whole suite (PackHash over
	// every scenario the unsharded run would place).
	SuiteHash string `json:"suite_hash"`
	// SuiteCalls lists every call of the unsharded run, in its order.
	SuiteCalls []string `json:"suite_calls"`
}

// String is "I/N".
func (s Shard) String() string { return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count) }

// ParseShard reads --shard's "I/N": shard I (0-based) of N.
func ParseShard(s string) (index, count int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		index, err = strconv.Atoi(a)
		if err == nil {
			count, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || count < 1 || count > MaxShards || index < 0 || index >= count {
		return 0, 0, fmt.Errorf("--shard %q: want I/N, shard I (0-based) of N shards, N 1..%d", s, MaxShards)
	}
	return index, count, nil
}

// ShardOf is the shard of count that places a call: a stable hash of its
// id (the scenario id and the trial), so shards are disjoint, cover the
// suite, and keep their calls when unrelated scenarios come or go.
func ShardOf(callID string, count int) int {
	h := fnv.New64a()
	h.Write([]byte(callID))
	return int(h.Sum64() % uint64(count))
}

// ShardPlacements keeps the placements of shard index of count, in order.
func ShardPlacements(ps []Placement, index, count int) []Placement {
	var out []Placement
	for _, p := range ps {
		if ShardOf(p.CallID(), count) == index {
			out = append(out, p)
		}
	}
	return out
}

// checkShards says whether the shards recorded by runs (dirs[i]'s
// shards[i]) are one suite's, each index exactly once, and each complete
// (missing[i] lists the calls dirs[i] planned and has no history of). It
// returns the suite's calls.
func checkShards(dirs []string, shards []*Shard, missing [][]string) ([]string, error) {
	first := -1
	for i, s := range shards {
		if s == nil {
			continue
		}
		if first < 0 {
			first = i
		}
	}
	if first < 0 {
		return nil, nil
	}
	ref := shards[first]
	seen := map[int]string{}
	for i, s := range shards {
		if s == nil {
			return nil, fmt.Errorf("merge: %s is a shard (%s) but %s is not: merge the shards of one sharded run, then re-runs of it", dirs[first], ref, dirs[i])
		}
		if s.Count != ref.Count {
			return nil, fmt.Errorf("merge: %s is shard %s but %s is shard %s: not one split of the suite", dirs[first], ref, dirs[i], s)
		}
		if s.SuiteHash != ref.SuiteHash || !slices.Equal(s.SuiteCalls, ref.SuiteCalls) {
			return nil, fmt.Errorf("merge: %s (shard %s) and %s (shard %s) ran different versions of the suite (content hash %.12s against %.12s): not the same run",
				dirs[first], ref, dirs[i], s, ref.SuiteHash, s.SuiteHash)
		}
		if prev, dup := seen[s.Index]; dup {
			return nil, fmt.Errorf("merge: shard %s appears twice: %s and %s", s, prev, dirs[i])
		}
		seen[s.Index] = dirs[i]
		if n := len(missing[i]); n > 0 {
			sort.Strings(missing[i])
			return nil, fmt.Errorf("merge: shard %s (%s) is incomplete: %d planned calls have no history (%s): finish it with run --resume %s",
				s, dirs[i], n, strings.Join(first3(missing[i]), ", "), dirs[i])
		}
	}
	var absent []string
	for k := range ref.Count {
		if _, ok := seen[k]; !ok {
			absent = append(absent, strconv.Itoa(k)+"/"+strconv.Itoa(ref.Count))
		}
	}
	if len(absent) > 0 {
		return nil, fmt.Errorf("merge: shard %s missing: the suite's calls are not all here", strings.Join(absent, ", "))
	}
	return ref.SuiteCalls, nil
}

func first3(ids []string) []string {
	if len(ids) > 3 {
		return append(ids[:3:3], "…")
	}
	return ids
}
