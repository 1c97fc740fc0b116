package harness

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// Rule names one release-gate rule.
type Rule string

// Seed 001's release gate for consequential actions, plus the optional
// rules a policy file can switch on to tighten it.
const (
	RuleNoStaleWrite          Rule = "no_stale_write"               // no stale-write failure where the caller changed the request, or wherever a stale write was found
	RuleConfirmationMatches   Rule = "confirmation_matches_backend" // no mismatch between confirmation and backend
	RuleIdempotentRetries     Rule = "idempotent_retries"           // every consequential call keyed, no duplicate effect
	RuleVerifiedBeforeConfirm Rule = "verified_before_confirm"      // critical writes read back before the confirmation
	RuleMinIntegrity          Rule = "min_integrity"                // policy: end-to-end integrity rate at least X
	RuleMinAxis               Rule = "min_axis"                     // policy: per-axis pass rate at least X
	RuleMaxAgentErrors        Rule = "max_agent_errors"             // policy: at most N agent_error calls
)

// Policy tightens the gate. It can add challenge kinds (as the scorer
// infers them from the script and the history, never a scenario's label)
// to the stale-write rule and switch on extra rules; it cannot switch off
// the four seed rules.
type Policy struct {
	StaleWriteChallenges []scorer.ChallengeKind  `yaml:"stale_write_challenges,omitempty" json:"stale_write_challenges,omitempty"`
	MinIntegrity         *float64                `yaml:"min_integrity,omitempty" json:"min_integrity,omitempty"`
	MinAxis              map[scorer.Axis]float64 `yaml:"min_axis,omitempty" json:"min_axis,omitempty"`
	MaxAgentErrors       *int                    `yaml:"max_agent_errors,omitempty" json:"max_agent_errors,omitempty"`
}

// LoadPolicy reads a policy file strictly (unknown keys are errors).
func LoadPolicy(path string) (Policy, error) {
	var p Policy
	b, err := os.ReadFile(path)
	if err != nil {
		return p, err
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("%s: %w", path, err)
	}
	kinds := map[scorer.ChallengeKind]bool{}
	for _, k := range scorer.ChallengeKinds() {
		kinds[k] = true
	}
	for _, k := range p.StaleWriteChallenges {
		if !kinds[k] {
			return p, fmt.Errorf("%s: stale_write_challenges: unknown challenge kind %q (one of %v)", path, k, scorer.ChallengeKinds())
		}
	}
	axes := map[scorer.Axis]bool{}
	for _, a := range scorer.Axes() {
		axes[a] = true
	}
	for a, v := range p.MinAxis {
		if !axes[a] {
			return p, fmt.Errorf("%s: min_axis: unknown axis %q", path, a)
		}
		if v < 0 || v > 1 {
			return p, fmt.Errorf("%s: min_axis.%s: %v is not a rate in [0,1]", path, a, v)
		}
	}
	if p.MinIntegrity != nil && (*p.MinIntegrity < 0 || *p.MinIntegrity > 1) {
		return p, fmt.Errorf("%s: min_integrity: %v is not a rate in [0,1]", path, *p.MinIntegrity)
	}
	return p, nil
}

// Violation is one call (or the suite) breaking one rule.
type Violation struct {
	Rule   Rule   `json:"rule"`
	Call   string `json:"call,omitempty"`
	Text   string `json:"text"`
	Events []int  `json:"events,omitempty"`
}

// RuleResult is one rule's verdict.
type RuleResult struct {
	Rule       Rule        `json:"rule"`
	Holds      bool        `json:"holds"`
	Violations []Violation `json:"violations,omitempty"`
}

// GateResult is the release decision.
type GateResult struct {
	Holds  bool         `json:"holds"`
	Broken bool         `json:"broken"` // a harness_error: the run proves nothing
	Reason string       `json:"reason,omitempty"`
	Rules  []RuleResult `json:"rules"`
	// Incomplete is set when the run does not cover its plan (completeness.go).
	Incomplete *Completeness `json:"incomplete,omitempty"`
}

// Call pairs a history with its score: the gate needs both (keys and reads
// are facts of the history, verdicts of the score).
type Call struct {
	History *trace.History
	Score   scorer.CallScore
}

// ScoreCalls scores saved histories for the gate.
func ScoreCalls(hs []*trace.History) []Call {
	calls := make([]Call, len(hs))
	for i, h := range hs {
		calls[i] = Call{History: h, Score: scorer.Score(h)}
	}
	return calls
}

// Scores returns the scores of calls, in order.
func Scores(calls []Call) []scorer.CallScore {
	out := make([]scorer.CallScore, len(calls))
	for i, c := range calls {
		out[i] = c.Score
	}
	return out
}

// Gate applies the seed's four rules and the policy's extras. An unknown on
// an axis a rule needs violates that rule.
func Gate(calls []Call, p Policy) GateResult {
	// The seed's rule covers "correction and interruption scenarios": here
	// every call whose inferred challenge changes the caller's request,
	// and any call in which the scorer found a stale write at all.
	staleKinds := map[scorer.ChallengeKind]bool{scorer.ChallengeCorrection: true, scorer.ChallengeNegation: true, scorer.ChallengeInterruption: true}
	for _, k := range p.StaleWriteChallenges {
		staleKinds[k] = true
	}
	res := map[Rule]*RuleResult{}
	order := []Rule{RuleNoStaleWrite, RuleConfirmationMatches, RuleIdempotentRetries, RuleVerifiedBeforeConfirm}
	if p.MinIntegrity != nil {
		order = append(order, RuleMinIntegrity)
	}
	if len(p.MinAxis) > 0 {
		order = append(order, RuleMinAxis)
	}
	if p.MaxAgentErrors != nil {
		order = append(order, RuleMaxAgentErrors)
	}
	for _, r := range order {
		res[r] = &RuleResult{Rule: r}
	}
	add := func(v Violation) { res[v.Rule].Violations = append(res[v.Rule].Violations, v) }
	g := GateResult{}
	counted, integrity, agentErrors := 0, 0, 0
	axisPass := map[scorer.Axis]int{}
	for _, c := range calls {
		s := c.Score
		switch s.Outcome {
		case trace.OutcomeHarnessError:
			g.Broken = true
			g.Reason = fmt.Sprintf("call %s: harness error: %s", s.Call, s.Reason)
			continue
		case trace.OutcomeExcluded:
			continue
		case trace.OutcomeAgentError:
			agentErrors++
		}
		counted++
		if s.Integrity {
			integrity++
		}
		for _, a := range scorer.Axes() {
			if s.Axis(a).Verdict == scorer.Pass {
				axisPass[a]++
			}
		}
		if staleKinds[s.Challenge] || staleBucket(s) {
			if r := s.Axis(scorer.StaleWritePrevented); r.Verdict != scorer.Pass {
				add(Violation{Rule: RuleNoStaleWrite, Call: s.Call, Text: fmt.Sprintf("%s: stale_write_prevented is %s%s", s.Challenge, r.Verdict, firstFinding(r)), Events: findingEvents(r)})
			}
		}
		if r := s.Axis(scorer.ConfirmationMatchesBackend); r.Verdict != scorer.Pass {
			add(Violation{Rule: RuleConfirmationMatches, Call: s.Call, Text: fmt.Sprintf("confirmation_matches_backend is %s%s", r.Verdict, firstFinding(r)), Events: findingEvents(r)})
		}
		if c.History != nil {
			for _, v := range idempotencyViolations(c.History) {
				add(v)
			}
			for _, v := range verificationViolations(c.History) {
				add(v)
			}
		}
	}
	if p.MinIntegrity != nil {
		if rate(integrity, counted) < *p.MinIntegrity {
			add(Violation{Rule: RuleMinIntegrity, Text: fmt.Sprintf("integrity %d / %d is below %.2f", integrity, counted, *p.MinIntegrity)})
		}
	}
	for _, a := range scorer.Axes() {
		if min, ok := p.MinAxis[a]; ok && rate(axisPass[a], counted) < min {
			add(Violation{Rule: RuleMinAxis, Text: fmt.Sprintf("%s %d / %d is below %.2f", a, axisPass[a], counted, min)})
		}
	}
	if p.MaxAgentErrors != nil && agentErrors > *p.MaxAgentErrors {
		add(Violation{Rule: RuleMaxAgentErrors, Text: fmt.Sprintf("%d agent errors, at most %d allowed", agentErrors, *p.MaxAgentErrors)})
	}
	g.Holds = !g.Broken
	for _, r := range order {
		rr := res[r]
		rr.Holds = len(rr.Violations) == 0
		if !rr.Holds {
			g.Holds = false
		}
		g.Rules = append(g.Rules, *rr)
	}
	return g
}

// staleBucket reports whether the scorer traced a failure to a stale write.
func staleBucket(s scorer.CallScore) bool {
	for _, b := range s.Buckets {
		if b.Bucket == scorer.BucketStaleToolArgs || b.Bucket == scorer.BucketInflightNotCanceled {
			return true
		}
	}
	return false
}

func rate(k, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(k) / float64(n)
}

func firstFinding(r scorer.AxisResult) string {
	if len(r.Findings) == 0 {
		return ""
	}
	return ": " + r.Findings[0].Text
}

func findingEvents(r scorer.AxisResult) []int {
	var ev []int
	for _, f := range r.Findings {
		ev = append(ev, f.Events...)
	}
	return ev
}

// consequential returns the set of consequential tool names of a call.
func consequential(h *trace.History) (cons map[string]bool, reads map[string]bool) {
	cons, reads = map[string]bool{}, map[string]bool{}
	if st := h.Start(); st != nil {
		for _, t := range st.Tools {
			if t.Consequential {
				cons[t.Name] = true
			}
			if t.Effect == trace.EffectRead {
				reads[t.Name] = true
			}
		}
	}
	return cons, reads
}

// idempotencyViolations: every consequential request carries a key, and no
// consequential effect commits twice for the same arguments.
func idempotencyViolations(h *trace.History) []Violation {
	cons, _ := consequential(h)
	var out []Violation
	commits := map[string][]int{}
	var order []string
	for _, e := range h.Events {
		d, ok := e.Data.(*trace.ToolEvent)
		if !ok || !cons[d.Tool] {
			continue
		}
		switch e.Kind {
		case trace.KindToolReceived:
			if d.IdempotencyKey == "" {
				out = append(out, Violation{Rule: RuleIdempotentRetries, Call: h.Call, Text: fmt.Sprintf("%s %s sent without an Idempotency-Key", d.Ref, d.Tool), Events: []int{e.Seq}})
			}
		case trace.KindToolCommitted:
			k := d.Tool + " " + argKey(d.After) + " " + d.Table + "/" + d.Key
			if _, seen := commits[k]; !seen {
				order = append(order, k)
			}
			commits[k] = append(commits[k], e.Seq)
		}
	}
	for _, k := range order {
		if seqs := commits[k]; len(seqs) > 1 {
			out = append(out, Violation{Rule: RuleIdempotentRetries, Call: h.Call, Text: fmt.Sprintf("the same effect committed %d times (%s)", len(seqs), k), Events: seqs})
		}
	}
	return out
}

func argKey(m map[string]string) string {
	ks := trace.SortedKeys(m)
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ",")
}

// verificationViolations: when a consequential write was answered or
// committed (a failed answer too: a 5xx can follow a commit) and the agent
// then finished an utterance, a read tool call must have been answered
// between the write's last event and that utterance's start.
func verificationViolations(h *trace.History) []Violation {
	cons, reads := consequential(h)
	lastWrite := -1 // index of the last consequential commit or its response
	lastWriteSeq := 0
	deleted := false // the last consequential commit removed its record
	for i, e := range h.Events {
		if d, ok := e.Data.(*trace.ToolEvent); ok && cons[d.Tool] && (e.Kind == trace.KindToolCommitted || e.Kind == trace.KindToolResponded) {
			lastWrite, lastWriteSeq = i, e.Seq
			if e.Kind == trace.KindToolCommitted {
				deleted = d.Deleted
			}
		}
	}
	if lastWrite < 0 {
		return nil
	}
	// The confirmation: the last completed utterance after the first
	// consequential request; find its start.
	firstWrite := -1
	for i, e := range h.Events {
		if d, ok := e.Data.(*trace.ToolEvent); ok && cons[d.Tool] && e.Kind == trace.KindToolReceived {
			firstWrite = i
			break
		}
	}
	confStart := -1
	for i := len(h.Events) - 1; i > firstWrite; i-- {
		if h.Events[i].Kind == trace.KindAgentSpeechEnd {
			utt := h.Events[i].Data.(*trace.AgentSpeech).Utterance
			for j := i; j >= 0; j-- {
				if h.Events[j].Kind == trace.KindAgentSpeechStart && h.Events[j].Data.(*trace.AgentSpeech).Utterance == utt {
					confStart = j
					break
				}
			}
			break
		}
	}
	if confStart < 0 {
		return nil // nothing confirmed after the write; the confirmation axis judges that
	}
	if confStart < lastWrite {
		return []Violation{{Rule: RuleVerifiedBeforeConfirm, Call: h.Call, Text: "confirmation started before the write's result", Events: []int{lastWriteSeq, h.Events[confStart].Seq}}}
	}
	for i := lastWrite + 1; i < confStart; i++ {
		e := h.Events[i]
		// A delete reads back as gone: its read answers 404.
		if d, ok := e.Data.(*trace.ToolEvent); ok && reads[d.Tool] && e.Kind == trace.KindToolResponded && (d.Status == 200 || deleted && d.Status == 404) {
			return nil
		}
	}
	return []Violation{{Rule: RuleVerifiedBeforeConfirm, Call: h.Call, Text: "confirmed without reading the write back from the backend", Events: []int{lastWriteSeq, h.Events[confStart].Seq}}}
}

// SortViolations orders violations by rule then call, for stable output.
func SortViolations(v []Violation) {
	sort.SliceStable(v, func(i, j int) bool {
		if v[i].Rule != v[j].Rule {
			return v[i].Rule < v[j].Rule
		}
		return v[i].Call < v[j].Call
	})
}
