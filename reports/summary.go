package reports

import (
	"sort"
	"strings"
	"time"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// AxisCount is one axis's tally over the scored calls.
type AxisCount struct {
	Axis    scorer.Axis `json:"axis"`
	Pass    int         `json:"pass"`
	Fail    int         `json:"fail"`
	Unknown int         `json:"unknown"`
}

// BucketCount is how many failed calls have a bucket as their primary cause.
type BucketCount struct {
	Bucket    scorer.Bucket `json:"bucket"`
	Primary   int           `json:"primary"`
	Secondary int           `json:"secondary"`
}

// FailedCall is one line of the failed-call list.
type FailedCall struct {
	Call      string        `json:"call"`
	Scenario  string        `json:"scenario"`
	Outcome   trace.Outcome `json:"outcome"`
	FirstAxis scorer.Axis   `json:"first_failing_axis,omitempty"`
	Bucket    scorer.Bucket `json:"bucket,omitempty"`
	Reason    string        `json:"reason,omitempty"`
}

// Summary is a suite's figures. Axes count scored and agent_error calls
// (an agent that crashed failed its caller); harness_error and excluded
// calls are reported apart and count nowhere else.
type Summary struct {
	Calls     int                   `json:"calls"`
	Counted   int                   `json:"counted"` // N in "k / N"
	Outcomes  map[trace.Outcome]int `json:"outcomes"`
	Axes      []AxisCount           `json:"axes"`
	Integrity int                   `json:"integrity"`
	Buckets   []BucketCount         `json:"buckets"`
	Failed    []FailedCall          `json:"failed"`
	// Latency diagnostics over the counted calls, in script time (real
	// time divided by the call's time scale), beside the axes: never
	// verdicts. Zero when no call measured one.
	Latency Latency `json:"latency"`
	// Audio is turn-taking measured from the audio of audio-dialect calls
	// (real time), beside the axes; nil when no call was an audio call.
	Audio *AudioTurns `json:"audio,omitempty"`
	// Harness is how late the harness's own timers fired, over every call
	// that measured it (overloaded ones included); nil when none did.
	Harness *HarnessLate `json:"harness_lateness,omitempty"`
}

// HarnessLate summarises the harness's own scheduling lateness across
// calls: each call's worst (trace.HarnessLateness.Worst, script time).
type HarnessLate struct {
	Calls      int           `json:"calls"`
	P50        time.Duration `json:"worst_p50"`
	P99        time.Duration `json:"worst_p99"`
	Max        time.Duration `json:"worst_max"`
	WorstCall  string        `json:"worst_call,omitempty"`
	Overloaded int           `json:"overloaded"` // calls marked harness_error for it
	// CPU pressure (trace.HarnessLateness.CPUPressure) over the calls that
	// measured it: the median and the worst share of a call's wall time
	// the machine was CPU-stalled.
	PressureCalls int     `json:"pressure_calls,omitempty"`
	PressureP50   float64 `json:"cpu_pressure_p50,omitempty"`
	PressureMax   float64 `json:"cpu_pressure_max,omitempty"`
}

// BusyPressure is the median CPU pressure at which a run's table says the
// machine was busy: for half its calls or more, some task waited for a CPU
// at least this share of the time. An agent on the same machine was
// starved with the harness, and verdicts that hang on its timing may have
// moved: in the runs measured (docs/PERFORMANCE.md, "Text calls at
// scale") the first ones did at a median of 60-65%, always to unknown.
const BusyPressure = 0.6

// Busy says whether the machine was busy during the run (BusyPressure).
func (h *HarnessLate) Busy() bool {
	return h != nil && h.PressureCalls > 0 && h.PressureP50 >= BusyPressure
}

// AudioTurns summarises what the audio of the counted calls showed.
type AudioTurns struct {
	Calls       int           `json:"calls"`
	ResponseP50 time.Duration `json:"response_p50,omitempty"` // caller's end of speech to the agent's first audio
	ResponseP95 time.Duration `json:"response_p95,omitempty"`
	YieldP50    time.Duration `json:"yield_p50,omitempty"` // barge-in onset to the agent's audio stopping
	YieldP95    time.Duration `json:"yield_p95,omitempty"`
	Yields      int           `json:"yields"`
	BargeIns    int           `json:"barge_ins"`
	FalseYields int           `json:"false_yields"` // clears while the caller made only noise
	// WorstLateness is the latest any caller frame went out.
	WorstLateness time.Duration `json:"worst_lateness"`
}

// Latency summarises response and yield latency across calls.
type Latency struct {
	ResponseP50 time.Duration `json:"response_p50,omitempty"`
	ResponseP95 time.Duration `json:"response_p95,omitempty"`
	YieldP50    time.Duration `json:"yield_p50,omitempty"`
	YieldP95    time.Duration `json:"yield_p95,omitempty"`
	Yields      int           `json:"yields"` // calls with a barge-in to yield to
}

// Accumulator builds a Summary one score at a time.
type Accumulator struct {
	scores []scorer.CallScore
}

// Add takes one call's score.
func (a *Accumulator) Add(s scorer.CallScore) { a.scores = append(a.scores, s) }

// Summary computes the figures for everything added so far.
func (a *Accumulator) Summary() Summary { return Summarize(a.scores) }

// Summarize computes a suite's figures. The result is deterministic: failed
// calls are listed by call id, buckets by count then precedence.
func Summarize(scores []scorer.CallScore) Summary {
	s := Summary{Outcomes: map[trace.Outcome]int{}}
	axes := scorer.Axes()
	counts := make([]AxisCount, len(axes))
	for i, ax := range axes {
		counts[i].Axis = ax
	}
	prim := map[scorer.Bucket]int{}
	sec := map[scorer.Bucket]int{}
	for _, c := range scores {
		s.Calls++
		s.Outcomes[c.Outcome]++
		if !countsInSuite(c) {
			s.Failed = append(s.Failed, FailedCall{Call: c.Call, Scenario: c.Scenario, Outcome: c.Outcome, Reason: c.Reason})
			continue
		}
		s.Counted++
		for i, ax := range axes {
			switch c.Axis(ax).Verdict {
			case scorer.Pass:
				counts[i].Pass++
			case scorer.Fail:
				counts[i].Fail++
			default:
				counts[i].Unknown++
			}
		}
		if c.Integrity {
			s.Integrity++
			continue
		}
		f := FailedCall{Call: c.Call, Scenario: c.Scenario, Outcome: c.Outcome, Bucket: c.Primary, Reason: c.Reason}
		for _, ax := range axes {
			if c.Axis(ax).Verdict != scorer.Pass {
				f.FirstAxis = ax
				break
			}
		}
		s.Failed = append(s.Failed, f)
		if c.Primary != "" {
			prim[c.Primary]++
		}
		for _, b := range c.Secondary {
			sec[b]++
		}
	}
	s.Axes = counts
	s.Latency = latency(scores)
	s.Audio = audioTurns(scores)
	s.Harness = harnessLate(scores)
	order := map[scorer.Bucket]int{}
	for i, b := range scorer.Buckets() {
		order[b] = i
	}
	for b, n := range prim {
		s.Buckets = append(s.Buckets, BucketCount{Bucket: b, Primary: n, Secondary: sec[b]})
	}
	for b, n := range sec {
		if prim[b] == 0 {
			s.Buckets = append(s.Buckets, BucketCount{Bucket: b, Secondary: n})
		}
	}
	sort.Slice(s.Buckets, func(i, j int) bool {
		x, y := s.Buckets[i], s.Buckets[j]
		if x.Primary != y.Primary {
			return x.Primary > y.Primary
		}
		return order[x.Bucket] < order[y.Bucket]
	})
	sort.Slice(s.Failed, func(i, j int) bool { return s.Failed[i].Call < s.Failed[j].Call })
	return s
}

// latency computes script-time percentiles of the counted calls' diagnostics.
func latency(scores []scorer.CallScore) Latency {
	var resp, yield []time.Duration
	script := func(d time.Duration, scale float64) time.Duration {
		if scale <= 0 {
			scale = 1
		}
		return time.Duration(float64(d) / scale)
	}
	for _, c := range scores {
		if !countsInSuite(c) {
			continue
		}
		if c.Diag.ResponseLatency > 0 {
			resp = append(resp, script(c.Diag.ResponseLatency, c.Diag.TimeScale))
		}
		if c.Diag.YieldLatency > 0 {
			yield = append(yield, script(c.Diag.YieldLatency, c.Diag.TimeScale))
		}
	}
	return Latency{
		ResponseP50: percentile(resp, 50), ResponseP95: percentile(resp, 95),
		YieldP50: percentile(yield, 50), YieldP95: percentile(yield, 95), Yields: len(yield),
	}
}

// OverloadedPrefix starts the harness_error reason of a call whose
// harness lateness was over the overload bound (harness.ReasonOverloaded).
const OverloadedPrefix = "overloaded"

// harnessLate gathers every call's harness lateness.
func harnessLate(scores []scorer.CallScore) *HarnessLate {
	var out HarnessLate
	var worst []time.Duration
	var press []float64
	for _, c := range scores {
		if c.Outcome == trace.OutcomeHarnessError && strings.HasPrefix(c.Reason, OverloadedPrefix+":") {
			out.Overloaded++
		}
		l := c.Diag.Lateness
		if l == nil {
			continue
		}
		if l.CPUPressure != nil {
			press = append(press, *l.CPUPressure)
		}
		out.Calls++
		worst = append(worst, l.Worst)
		if out.WorstCall == "" || l.Worst > out.Max {
			out.Max, out.WorstCall = l.Worst, c.Call
		}
	}
	if out.Calls == 0 && out.Overloaded == 0 {
		return nil
	}
	out.P50, out.P99 = percentile(worst, 50), percentile(worst, 99)
	if len(press) > 0 {
		sort.Float64s(press)
		out.PressureCalls = len(press)
		out.PressureP50 = press[(len(press)-1)/2]
		out.PressureMax = press[len(press)-1]
	}
	return &out
}

// audioTurns gathers the audio diagnostics of the counted calls.
func audioTurns(scores []scorer.CallScore) *AudioTurns {
	var out AudioTurns
	var resp, yield []time.Duration
	for _, c := range scores {
		d := c.Diag.Audio
		if d == nil || !countsInSuite(c) {
			continue
		}
		out.Calls++
		resp = append(resp, d.Responses...)
		yield = append(yield, d.Yields...)
		out.BargeIns += d.BargeIns
		out.FalseYields += d.FalseYields
		out.WorstLateness = max(out.WorstLateness, d.LatenessMax)
	}
	if out.Calls == 0 {
		return nil
	}
	out.ResponseP50, out.ResponseP95 = percentile(resp, 50), percentile(resp, 95)
	out.YieldP50, out.YieldP95, out.Yields = percentile(yield, 50), percentile(yield, 95), len(yield)
	return &out
}

// percentile is the nearest-rank percentile, 0 for no data.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := (p*len(s) + 99) / 100
	if rank < 1 {
		rank = 1
	}
	return s[rank-1]
}

// countsInSuite says whether a call's axes count in the suite figures.
func countsInSuite(c scorer.CallScore) bool {
	return c.Outcome == trace.OutcomeScored || c.Outcome == trace.OutcomeAgentError
}

// Axis returns one axis's tally.
func (s Summary) Axis(a scorer.Axis) AxisCount {
	for _, c := range s.Axes {
		if c.Axis == a {
			return c
		}
	}
	return AxisCount{Axis: a}
}

// PrimaryCount returns how many failed calls have b as primary bucket.
func (s Summary) PrimaryCount(b scorer.Bucket) int {
	for _, c := range s.Buckets {
		if c.Bucket == b {
			return c.Primary
		}
	}
	return 0
}
