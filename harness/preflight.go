package harness

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/nativews"
	"github.com/callproof/callproof/callsim/pipecateval"
	"github.com/callproof/callproof/callsim/twilio"
	"github.com/callproof/callproof/callsim/webrtc"
	"github.com/callproof/callproof/trace"
)

// PreflightError says that no agent answered the preflight: nothing was
// placed.
type PreflightError struct {
	URL     string // the agent URL probed
	Dialect string // native, twilio, webrtc
	Err     error  // what the probe met
}

func (e *PreflightError) Error() string {
	return fmt.Sprintf("no agent answers at %s (%s dialect): %v", e.URL, e.Dialect, e.Err)
}

func (e *PreflightError) Unwrap() error { return e.Err }

// Preflight checks, before any call is placed, that an agent answers at
// agentURL in tr's dialect: one probe (callsim.Prober), bounded by
// timeout (0: callsim.DefaultDialTimeout, the calls' own dial bound),
// scored and recorded nowhere. A transport that cannot probe is not
// checked. The error is a *PreflightError.
func Preflight(ctx context.Context, tr callsim.Transport, dialect, agentURL string, timeout time.Duration) error {
	p, ok := tr.(callsim.Prober)
	if !ok {
		return nil
	}
	if timeout <= 0 {
		timeout = callsim.DefaultDialTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := p.Probe(pctx, agentURL); err != nil {
		if dialect == "" {
			dialect = "native"
		}
		return &PreflightError{URL: agentURL, Dialect: dialect, Err: err}
	}
	return nil
}

// ProbeTransport is a transport of a dialect (native, twilio, webrtc
// with its signaling) fit for Preflight only: it has no caller voice, so
// it needs no speech engine.
func ProbeTransport(dialect, signaling string) (callsim.Transport, error) {
	switch dialect {
	case "", "native":
		return &nativews.Transport{}, nil
	case "twilio":
		return &twilio.Transport{}, nil
	case "webrtc":
		return &webrtc.Transport{Signaling: signaling}, nil
	case "pipecat-eval":
		return &pipecateval.Transport{}, nil
	}
	return nil, fmt.Errorf("transport %q: want native, twilio, webrtc or pipecat-eval", dialect)
}

// Unreached says whether a call never reached the agent: it ended
// agent_error and its history holds no caller, agent or backend event —
// nothing was said, heard or requested (a failed dial, or an agent gone
// before the first word). The evidence decides, not the reason's text.
func Unreached(h *trace.History) bool {
	end := h.End()
	if end == nil || end.Outcome != trace.OutcomeAgentError {
		return false
	}
	for _, e := range h.Events {
		if e.Source != trace.SourceHarness {
			return false
		}
	}
	return true
}

// UnreachedCalls are a run's calls that never reached the agent.
type UnreachedCalls struct {
	Calls   []string      // their ids, sorted
	Total   int           // the run's calls
	Reasons []ReasonCount // their end reasons, most common first
}

// ReasonCount is how many calls ended with one reason.
type ReasonCount struct {
	Reason string
	N      int
}

// FindUnreached lists the calls of hs that never reached the agent.
func FindUnreached(hs []*trace.History) UnreachedCalls {
	u := UnreachedCalls{Total: len(hs)}
	counts := map[string]int{}
	for _, h := range hs {
		if Unreached(h) {
			u.Calls = append(u.Calls, h.Call)
			counts[h.End().Reason]++
		}
	}
	sort.Strings(u.Calls)
	for r, n := range counts {
		u.Reasons = append(u.Reasons, ReasonCount{Reason: r, N: n})
	}
	sort.Slice(u.Reasons, func(i, j int) bool {
		if u.Reasons[i].N != u.Reasons[j].N {
			return u.Reasons[i].N > u.Reasons[j].N
		}
		return u.Reasons[i].Reason < u.Reasons[j].Reason
	})
	return u
}
