package conformance

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/mockbackend"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/trace"
)

// Level says how much a finding matters.
type Level string

// Levels.
const (
	OK   Level = "ok"   // conforms
	Warn Level = "warn" // optional behaviour missing, or a risk
	Fail Level = "fail" // must be fixed: suite results would be wrong or meaningless
)

// Item is one finding.
type Item struct {
	Call    string `json:"call"`
	Message string `json:"message"` // the protocol message or behaviour checked
	Level   Level  `json:"level"`
	Detail  string `json:"detail"`
}

// Report is the whole check.
type Report struct {
	Agent string `json:"agent"`
	Items []Item `json:"items"`
}

// Failed reports whether any item must be fixed.
func (r Report) Failed() bool {
	for _, it := range r.Items {
		if it.Level == Fail {
			return true
		}
	}
	return false
}

// Write prints the report, grouped by call.
func (r Report) Write(w io.Writer) {
	fmt.Fprintf(w, "conformance check of %s\n", r.Agent)
	last := ""
	fails, warns := 0, 0
	for _, it := range r.Items {
		if it.Call != last {
			fmt.Fprintf(w, "\n%s\n", it.Call)
			last = it.Call
		}
		mark := map[Level]string{OK: "  ok  ", Warn: "  warn", Fail: "  FAIL"}[it.Level]
		fmt.Fprintf(w, "%s %-22s %s\n", mark, it.Message, it.Detail)
		switch it.Level {
		case Fail:
			fails++
		case Warn:
			warns++
		}
	}
	fmt.Fprintf(w, "\n%d to fix, %d warnings\n", fails, warns)
}

// The check's calls: a plain request, a barge-in during the agent's
// read-back, and a cough during its speech. Written as ordinary scenario
// files so they run through the same path as any suite.
func checkCalls() []struct{ name, yaml string } {
	return []struct{ name, yaml string }{
		{"plain-request", `id: check-plain
category: combined
description: a plain request, no challenge
steps:
  - {id: ask, do: say, text: "Hi, I'd like to change the delivery date on order 5590 to December 3.", action: update_order, slots: {order_number: "5590", delivery_date: "2026-12-03"}, on: {event: agent.speech_end, timeout: 2s}}
  - {id: quiet, do: wait_quiet, on: {timeout: 12s}}
  - {id: bye, do: hangup}
expected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true, backend_correct: true, confirmation_matches_backend: true, should_execute: true}
`},
		{"barge-in", `id: check-barge-in
category: interruption
description: the caller talks over the agent's read-back
setup: {interrupt_stage: before_agent_finishes, invalidates: false}
expected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true, backend_correct: true, confirmation_matches_backend: true, should_execute: true}
`},
		{"noise", `id: check-noise
category: interruption
description: a cough while the agent speaks
setup: {interrupt_stage: background_noise, sound: cough}
expected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true, backend_correct: true, confirmation_matches_backend: true, should_execute: true}
`},
	}
}

// Options tune the check.
type Options struct {
	TimeScale float64 // offered to the agent; default 1.0
}

// Run places the check's calls against agentURL and judges each message.
func Run(ctx context.Context, env *harness.Env, agentURL string, o Options) (Report, error) {
	rep := Report{Agent: agentURL}
	var cases []*scenarios.Compiled
	calls := checkCalls()
	for _, c := range calls {
		s, err := scenarios.LoadBytes(c.name+".yaml", []byte(c.yaml))
		if err != nil {
			return rep, fmt.Errorf("conformance: built-in call %s: %w", c.name, err)
		}
		cc, err := scenarios.Compile(s)
		if err != nil {
			return rep, fmt.Errorf("conformance: built-in call %s: %w", c.name, err)
		}
		cases = append(cases, cc)
	}
	r := env.Runner()
	r.Concurrency = 1
	r.TimeScale = o.TimeScale
	r.Suite, r.Agent = "check", agentURL
	since := env.Clock.Now()
	results, err := r.Run(ctx, agentURL, cases)
	if err != nil {
		return rep, err
	}
	refused := env.Backend.Rejected()
	for i, res := range results {
		rep.Items = append(rep.Items, judge(calls[i].name, res.History, authRefusals(refused, res.History.Call, since))...)
	}
	return rep, nil
}

// authRefusals picks the requests the backend refused for want of a valid
// token (401, 403) on call id since the check began. Such requests never
// reach the call, so they are in the server's log, not in the history.
func authRefusals(log []mockbackend.RejectedRequest, id string, since time.Time) []mockbackend.RejectedRequest {
	var out []mockbackend.RejectedRequest
	for _, rr := range log {
		if rr.CallID == id && !rr.At.Before(since) && (rr.Status == http.StatusUnauthorized || rr.Status == http.StatusForbidden) {
			out = append(out, rr)
		}
	}
	return out
}

// toolOf is the tool a refused request's path names (…/tools/{tool}).
func toolOf(path string) string {
	if i := strings.LastIndex(path, "/tools/"); i >= 0 {
		return path[i+len("/tools/"):]
	}
	return path
}

// judge inspects one call's history message by message; refused are the
// call's requests the backend turned away before they reached it.
func judge(name string, h *trace.History, refused []mockbackend.RejectedRequest) []Item {
	var items []Item
	add := func(msg string, lv Level, format string, args ...any) {
		items = append(items, Item{Call: name, Message: msg, Level: lv, Detail: fmt.Sprintf(format, args...)})
	}
	end := h.End()
	if end != nil && end.Outcome == trace.OutcomeAgentError {
		if strings.HasPrefix(end.Reason, "dial") {
			add("connect", Fail, "could not open the WebSocket: %s", end.Reason)
			return items
		}
		add("call", Fail, "the call ended as agent_error: %s", end.Reason)
	} else if end != nil && end.Outcome == trace.OutcomeHarnessError {
		add("call", Warn, "our side failed (%s); this call proves nothing", end.Reason)
		return items
	} else {
		add("connect", OK, "accepted the WebSocket and the start frame")
	}
	start := h.Start()
	if end != nil && start != nil {
		if end.TimeScale == start.TimeScale && start.TimeScale != 1 {
			add("ack", OK, "acknowledged time scale %g", start.TimeScale)
		} else if start.TimeScale != 1 {
			add("ack", Warn, "no ack of time scale %g: the call ran at 1.0 (slower suites)", start.TimeScale)
		}
	}
	var (
		starts, ends, clears, texts, intents, states, unknown int
		open                                                  = map[string]bool{}
		orderErr                                              string
		received                                              []*trace.ToolEvent
		rejected                                              []*trace.ToolEvent
		speakingAtOnset                                       bool
		onsetAt                                               time.Duration
		yielded                                               bool
		clearedByNoise                                        bool
		inNoise                                               bool
		speaking                                              int
	)
	// The agent must stop within the scorer's yield bound (1500ms of
	// script time): ending the sentence long after is talking over the caller.
	scale := 1.0
	if end != nil && end.TimeScale > 0 {
		scale = end.TimeScale
	} else if start != nil && start.TimeScale > 0 {
		scale = start.TimeScale
	}
	yieldBound := time.Duration(float64(1500*time.Millisecond) * scale)
	cons := map[string]bool{}
	if start != nil {
		for _, t := range start.Tools {
			if t.Consequential {
				cons[t.Name] = true
			}
		}
	}
	for _, e := range h.Events {
		switch d := e.Data.(type) {
		case *trace.AgentSpeech:
			switch e.Kind {
			case trace.KindAgentSpeechStart:
				starts++
				if open[d.Utterance] && orderErr == "" {
					orderErr = fmt.Sprintf("utterance %q started twice (#%d)", d.Utterance, e.Seq)
				}
				open[d.Utterance] = true
				speaking++
			case trace.KindAgentSpeechText:
				texts++
				if !open[d.Utterance] && orderErr == "" {
					orderErr = fmt.Sprintf("text for utterance %q outside start..end (#%d)", d.Utterance, e.Seq)
				}
			case trace.KindAgentSpeechEnd, trace.KindAgentClear:
				if e.Kind == trace.KindAgentSpeechEnd {
					ends++
				} else {
					clears++
					if inNoise {
						clearedByNoise = true
					}
					if speakingAtOnset && e.At-onsetAt <= yieldBound {
						yielded = true
					}
				}
				if open[d.Utterance] {
					speaking--
				}
				if !open[d.Utterance] && e.Kind == trace.KindAgentSpeechEnd && orderErr == "" {
					orderErr = fmt.Sprintf("end for utterance %q that never started (#%d)", d.Utterance, e.Seq)
				}
				delete(open, d.Utterance)
				if e.Kind == trace.KindAgentSpeechEnd && speakingAtOnset && e.At-onsetAt <= yieldBound {
					yielded = true
				}
			}
		case *trace.CallerSpeech:
			if e.Kind == trace.KindCallerSpeechStart && d.Act == trace.ActInterrupt && speaking > 0 && !speakingAtOnset {
				speakingAtOnset, onsetAt = true, e.At
			}
		case *trace.CallerNoise:
			inNoise = e.Kind == trace.KindCallerNoiseStart
		case *trace.AgentToolIntent:
			intents++
		case *trace.AgentState:
			states++
		case *trace.Note:
			if e.Kind == trace.KindAgentUnknown {
				unknown++
			}
		case *trace.ToolEvent:
			switch e.Kind {
			case trace.KindToolReceived:
				received = append(received, d)
			case trace.KindToolRejected:
				rejected = append(rejected, d)
			}
		}
	}
	switch {
	case starts == 0:
		add("agent_speech", Fail, "the agent never spoke (no agent_speech start)")
	case orderErr != "":
		add("agent_speech", Fail, "%s: send start, then text, then end (or clear) per utterance id", orderErr)
	case texts == 0:
		add("agent_speech", Fail, "utterances carried no text phase: the words cannot be judged")
	default:
		add("agent_speech", OK, "%d utterances, start → text → end in order", starts)
	}
	if len(open) > 0 {
		add("agent_speech end", Warn, "%d utterance(s) never ended or cleared", len(open))
	}
	switch name {
	case "barge-in":
		switch {
		case !speakingAtOnset:
			add("clear (barge-in)", Warn, "the agent was not speaking when the caller barged in; barge-in not exercised")
		case yielded:
			add("clear (barge-in)", OK, "stopped speaking when the caller talked over it")
		default:
			add("clear (barge-in)", Fail, "kept speaking over the caller (no clear or end within %s): send clear when caller speech onset arrives", yieldBound)
		}
	case "noise":
		if clearedByNoise {
			add("sound", Fail, "stopped speaking for a cough: non-speech sound is not barge-in")
		} else {
			add("sound", OK, "kept speaking through the cough")
		}
	}
	for _, rr := range refused {
		add("tool auth", Fail, "%s %s refused %d (%s): send Authorization: Bearer <token from start.tools.token>", rr.Method, toolOf(rr.Path), rr.Status, rr.Reason)
	}
	for _, t := range rejected {
		switch t.Status {
		case 400:
			add("tool args", Fail, "%s %s rejected 400: %s", t.Ref, t.Tool, t.Error)
		default:
			add("tool request", Fail, "%s %s rejected %d: %s", t.Ref, t.Tool, t.Status, t.Error)
		}
	}
	if len(received) == 0 {
		add("tool calls", Fail, "no tool call reached the backend: POST {baseUrl}/{tool} with the catalogue's arguments")
	} else if len(rejected) == 0 && len(refused) == 0 {
		add("tool calls", OK, "%d tool call(s) authenticated and valid", len(received))
	}
	keyed, versioned, consN := 0, 0, 0
	for _, t := range received {
		if !cons[t.Tool] {
			continue
		}
		consN++
		if t.IdempotencyKey != "" {
			keyed++
		}
		if t.BuiltFrom != nil {
			versioned++
		}
	}
	if consN > 0 {
		if keyed == consN {
			add("Idempotency-Key", OK, "every consequential call keyed")
		} else {
			add("Idempotency-Key", Fail, "%d of %d consequential calls without an Idempotency-Key: retries can repeat the effect (the gate fails)", consN-keyed, consN)
		}
		if versioned == consN {
			add("X-State-Version", OK, "every consequential call says which slot version it was built from")
		} else {
			add("X-State-Version", Warn, "optional header missing on %d call(s): stale-build evidence then comes from arguments alone", consN-versioned)
		}
	}
	if intents == 0 {
		add("tool_intent", Warn, "optional notice never sent: 'during preparation' triggers fall back to a fixed offset")
	} else {
		add("tool_intent", OK, "%d notice(s)", intents)
	}
	if states == 0 {
		add("state", Warn, "optional self-report never sent: active state is judged from acts alone")
	} else {
		add("state", OK, "%d self-report(s)", states)
	}
	if unknown > 0 {
		add("unknown messages", Warn, "%d message(s) with an unknown event were ignored", unknown)
	}
	return items
}
