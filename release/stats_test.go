package release

import (
	"math"
	"testing"
)

func TestPassK(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		c, n, k int
		want    float64
	}{
		{3, 3, 3, 1},
		{2, 3, 2, 1.0 / 3},    // C(2,2)/C(3,2)
		{4, 5, 3, 0.4},        // C(4,3)/C(5,3) = 4/10
		{7, 10, 2, 42.0 / 90}, // C(7,2)/C(10,2) = 21/45
		{3, 5, 1, 0.6},        // k=1 is the plain pass rate
		{5, 5, 1, 1},          //
		{2, 5, 3, 0},          // c < k: no k passes to draw
		{0, 5, 1, 0},          //
		{999, 1000, 500, 0.5}, // C(n-1,k)/C(n,k) = (n-k)/n; C(1000,500) alone overflows a float64
		{1000, 1000, 1000, 1}, //
		{900, 1000, 1, 0.9},   //
		{2, 2, 3, nan},        // n < k: undefined
		{0, 0, 1, nan},        //
		{1, 3, 0, nan},        // k < 1
		{4, 3, 2, nan},        // c > n
		{-1, 3, 2, nan},       //
	} {
		got := PassK(tc.c, tc.n, tc.k)
		if math.IsNaN(tc.want) {
			if !math.IsNaN(got) {
				t.Errorf("PassK(%d,%d,%d) = %v, want NaN", tc.c, tc.n, tc.k, got)
			}
			continue
		}
		if math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("PassK(%d,%d,%d) = %v, want %v", tc.c, tc.n, tc.k, got, tc.want)
		}
	}
}

func TestWilson(t *testing.T) {
	for _, tc := range []struct {
		s, n   int
		lo, hi float64
	}{
		{0, 10, 0, 0.2775},
		{5, 10, 0.2366, 0.7634},
		{10, 10, 0.7225, 1},
		{81, 263, 0.2553, 0.3662}, // Wilson's own worked example (Wikipedia, "Binomial proportion confidence interval")
		{4, 5, 0.3755, 0.9638},    // docs: 4/5 passes is [0.38, 0.96]
		{30, 30, 0.8865, 1},
		{20, 30, 0.4878, 0.8077},
		{1, 1, 0.2065, 1},
		{0, 0, 0, 1}, // no trials: nothing known
	} {
		lo, hi := Wilson(tc.s, tc.n, Z95)
		if math.Abs(lo-tc.lo) > 5e-5 || math.Abs(hi-tc.hi) > 5e-5 {
			t.Errorf("Wilson(%d,%d) = [%.5f, %.5f], want [%.4f, %.4f]", tc.s, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
}

// TestWilsonStraightPasses: proving a 0.95 lower bound takes 73 straight
// passes (docs): 72 is not enough.
func TestWilsonStraightPasses(t *testing.T) {
	if lo, _ := Wilson(72, 72, Z95); lo >= 0.95 {
		t.Errorf("Wilson(72,72) lower bound %v, want below 0.95", lo)
	}
	if lo, _ := Wilson(73, 73, Z95); lo < 0.95 {
		t.Errorf("Wilson(73,73) lower bound %v, want at least 0.95", lo)
	}
}

// TestWilsonProperties: inside [0,1], containing the rate, and mirrored
// (the interval of failures is one minus the interval of passes).
func TestWilsonProperties(t *testing.T) {
	for n := 1; n <= 60; n++ {
		for s := 0; s <= n; s++ {
			lo, hi := Wilson(s, n, Z95)
			p := float64(s) / float64(n)
			if lo < 0 || hi > 1 || lo > p || hi < p {
				t.Fatalf("Wilson(%d,%d) = [%v,%v] for rate %v", s, n, lo, hi, p)
			}
			flo, fhi := Wilson(n-s, n, Z95)
			if math.Abs(lo-(1-fhi)) > 1e-12 || math.Abs(hi-(1-flo)) > 1e-12 {
				t.Fatalf("Wilson(%d,%d) = [%v,%v] is not the mirror of [%v,%v]", s, n, lo, hi, flo, fhi)
			}
		}
	}
}

func TestTally(t *testing.T) {
	tl := NewTally(5, 10)
	if tl.Rate() != 0.5 || math.Abs(tl.Lo-0.2366) > 5e-5 || math.Abs(tl.Hi-0.7634) > 5e-5 {
		t.Errorf("NewTally(5,10) = %+v", tl)
	}
	if r := NewTally(0, 0).Rate(); r != 0 {
		t.Errorf("empty tally rate %v", r)
	}
}
