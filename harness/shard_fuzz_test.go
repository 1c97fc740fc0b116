package harness

import "testing"

// --shard takes any string: it is a shard of a valid split or an error.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/1", "3/4", "999/1000", "4/4", "-1/4", "1/0", "01/04", " 1/4", "1/1001", "a/b", "1/2/3", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		i, n, err := ParseShard(s)
		if err != nil {
			return
		}
		if n < 1 || n > MaxShards || i < 0 || i >= n {
			t.Fatalf("ParseShard(%q) = %d/%d", s, i, n)
		}
		if got := ShardOf(s, n); got < 0 || got >= n {
			t.Fatalf("ShardOf(%q, %d) = %d", s, n, got)
		}
	})
}
