package harness_test

import (
	"testing"

	"github.com/callproof/callproof/harness"
)

// FuzzParseSweepParam: any --param text is either refused with an error
// or gives a range that Values walks in at most MaxSweepPoints steps,
// never a panic or an endless loop.
func FuzzParseSweepParam(f *testing.F) {
	for _, s := range []string{
		"correct.delay=0..2000/100", "a.b=1s..2s/1ms", "x.duration=0ms..0ms/1ns", "correct.delay=-1..5/1",
		"correct.delay=0..600000/1", "s.fallback=10..1/1", "=..", "a.timeout=1..2/0", "a.delay=1e3..2/1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := harness.ParseSweepParam(s)
		if err != nil {
			return
		}
		if p.By <= 0 || p.From < 0 || p.To < p.From {
			t.Fatalf("%q: accepted %+v", s, p)
		}
		if n := len(p.Values()); n < 1 || n > harness.MaxSweepPoints {
			t.Fatalf("%q: %d values", s, n)
		}
	})
}
