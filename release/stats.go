package release

import "math"

// Z95 is the two-sided 95 % normal quantile every interval here uses.
const Z95 = 1.959964

// PassK is pass^k = C(c,k) / C(n,k): the chance that k trials drawn without
// replacement from n recorded trials, c of which passed, all pass. It
// estimates the chance that k independent tries of the scenario all succeed,
// which is what a caller meeting the agent k times experiences; the plain
// pass rate c/n hides how often at least one of those tries goes wrong.
//
// It is 0 when c < k and NaN when undefined (k < 1, n < k, or c outside
// [0, n]). The ratio is computed as the product of (c-i)/(n-i), i < k, so no
// binomial coefficient is ever formed and n in the thousands cannot overflow.
func PassK(c, n, k int) float64 {
	if k < 1 || n < k || c < 0 || c > n {
		return math.NaN()
	}
	if c < k {
		return 0
	}
	p := 1.0
	for i := 0; i < k; i++ {
		p *= float64(c-i) / float64(n-i)
	}
	return p
}

// Wilson is the Wilson score interval for a rate of successes out of n at
// normal quantile z (Z95 for 95 %). Unlike the normal approximation it stays
// inside [0,1] and is not degenerate at 0/n or n/n, which is where small
// suites live. With no trials it is [0,1]: nothing is known.
func Wilson(successes, n int, z float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	s := min(max(successes, 0), n)
	nf := float64(n)
	p := float64(s) / nf
	z2 := z * z
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z / den * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lo, hi = center-half, center+half
	// The formula's endpoints at 0/n and n/n are exactly 0 and 1; rounding
	// can leave them a hair outside.
	if s == 0 {
		lo = 0
	}
	if s == n {
		hi = 1
	}
	return max(lo, 0), min(hi, 1)
}

// Tally is a count of passes out of n with its 95 % Wilson interval.
type Tally struct {
	Pass int     `json:"pass"`
	N    int     `json:"n"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

// NewTally counts pass of n and computes the interval.
func NewTally(pass, n int) Tally {
	lo, hi := Wilson(pass, n, Z95)
	return Tally{Pass: pass, N: n, Lo: lo, Hi: hi}
}

// Rate is Pass/N, 0 when N is 0.
func (t Tally) Rate() float64 {
	if t.N == 0 {
		return 0
	}
	return float64(t.Pass) / float64(t.N)
}
