package audiocall

import (
	"time"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
)

// histogram counts frame lateness in whole milliseconds, so a call of any
// length keeps the same few kilobytes; the worst is kept exactly.
type histogram struct {
	ms    [histogramMs + 1]int // the last bucket holds everything later
	n     int
	worst time.Duration
}

const histogramMs = 1000

func newHistogram() *histogram { return &histogram{} }

func (h *histogram) add(late time.Duration) {
	late = max(late, 0)
	h.n++
	h.worst = max(h.worst, late)
	h.ms[min(int(late/time.Millisecond), histogramMs)]++
}

// quantile is the lateness at or below which q of the frames went out
// (upper edge of its millisecond bucket, never above the worst).
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := int(q*float64(h.n) + 0.999999)
	rank = max(1, min(rank, h.n))
	seen := 0
	for ms, k := range h.ms {
		seen += k
		if seen >= rank {
			return min(time.Duration(ms+1)*time.Millisecond, h.worst)
		}
	}
	return h.worst
}

func (h *histogram) summary() callsim.Lateness {
	return callsim.Lateness{Frames: h.n, P50: h.quantile(0.5), P99: h.quantile(0.99), Max: h.worst, Frame: audio.FrameDuration}
}
