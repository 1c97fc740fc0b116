package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scorer"
)

// The suite as 4 shards, each `callproof run --shard I/4` in its own
// process, merges into a run with the unsharded run's calls, scores and
// gate; a missing or repeated shard makes merge fail naming it.
func TestShardsMergeIntoTheUnshardedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("places the core suite five times")
	}
	agent := fxAgent(t, "naive")
	args := []string{"run", "--agent", agent, "--suite", "core", "--trials", "2", "--scale", "0.25", "--concurrency", "8"}
	whole := t.TempDir()
	code, _, stderr := fxCLI(t, append(args, "--out", whole)...)
	require.Equal(t, exitOK, code, stderr)

	bin := callproofBinary(t)
	shards := make([]string, 4)
	cmds := make([]*exec.Cmd, 4)
	outs := make([]*bytes.Buffer, 4)
	for i := range shards {
		shards[i] = filepath.Join(t.TempDir(), fmt.Sprintf("shard-%d", i))
		cmds[i] = exec.Command(bin, append(slices.Clone(args), "--shard", fmt.Sprintf("%d/4", i), "--out", shards[i])...)
		outs[i] = &bytes.Buffer{}
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
		require.NoError(t, cmds[i].Start())
	}
	planned := 0
	for i, c := range cmds {
		require.NoError(t, c.Wait(), "shard %d: %s", i, outs[i])
		run, err := harness.LoadRun(shards[i])
		require.NoError(t, err)
		require.NotNil(t, run.Meta.Shard)
		assert.Equal(t, i, run.Meta.Shard.Index)
		assert.Len(t, run.Meta.Shard.SuiteCalls, 60)
		planned += len(run.Meta.Planned)
		for _, id := range run.Meta.Planned {
			assert.Equal(t, i, harness.ShardOf(id, 4), id)
		}
	}
	assert.Equal(t, 60, planned, "the shards are disjoint and cover the suite")

	merged := filepath.Join(t.TempDir(), "merged")
	code, _, stderr = fxCLI(t, append([]string{"merge", merged}, shards...)...)
	require.Equal(t, exitOK, code, stderr)
	a, err := harness.LoadRun(whole)
	require.NoError(t, err)
	b, err := harness.LoadRun(merged)
	require.NoError(t, err)
	assert.Equal(t, a.Meta.Planned, b.Meta.Planned, "the merged plan is the suite's")
	assert.Nil(t, b.Meta.Shard)
	assert.Equal(t, a.Meta.PackHash, b.Meta.PackHash)
	verdicts := func(r *harness.SavedRun) map[string]string {
		out := map[string]string{}
		for _, s := range scorer.ScoreAll(r.Histories) {
			out[s.Call] = verdictLine(s)
		}
		return out
	}
	assert.Equal(t, verdicts(a), verdicts(b))
	gateA, outA, _ := fxCLI(t, "gate", whole)
	gateB, outB, _ := fxCLI(t, "gate", merged)
	assert.Equal(t, gateA, gateB)
	assert.Equal(t, gateLines(outA, whole), gateLines(outB, merged))

	code, _, stderr = fxCLI(t, "merge", filepath.Join(t.TempDir(), "m"), shards[0], shards[1], shards[3])
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "shard 2/4 missing")
	code, _, stderr = fxCLI(t, "merge", filepath.Join(t.TempDir(), "m"), shards[0], shards[1], shards[1], shards[2], shards[3])
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "shard 1/4 appears twice: "+shards[1]+" and "+shards[1])
	code, _, stderr = fxCLI(t, "merge", filepath.Join(t.TempDir(), "m"), shards[0], whole)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "is a shard (0/4) but "+whole+" is not")
}

// gateLines is gate's output with the run's directory taken out.
func gateLines(out, dir string) string {
	return string(bytes.ReplaceAll([]byte(out), []byte(dir), []byte("DIR")))
}

// Shards are a pure function of the call id: adding scenarios moves no
// call, and every call has exactly one shard.
func TestShardOfIsStable(t *testing.T) {
	ids := []string{"corr-01", "corr-02.t1", "corr-02.t2", "int-05", "tf-10.t3"}
	for _, n := range []int{1, 2, 4, 7} {
		for _, id := range ids {
			s := harness.ShardOf(id, n)
			assert.True(t, s >= 0 && s < n)
			assert.Equal(t, s, harness.ShardOf(id, n))
		}
	}
	for _, bad := range []string{"", "4/4", "-1/4", "1/0", "1/1001", "a/b", "1/2/3"} {
		_, _, err := harness.ParseShard(bad)
		assert.Error(t, err, bad)
	}
	i, n, err := harness.ParseShard("3/1000")
	require.NoError(t, err)
	assert.Equal(t, []int{3, 1000}, []int{i, n})
}
