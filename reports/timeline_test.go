package reports

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

func TestWriteTimelineGolden(t *testing.T) {
	_, hs, _ := fixtureSummary(t)
	for _, call := range []string{"corr-02", "tf-06", "corr-01"} {
		t.Run(call, func(t *testing.T) {
			h := findHistory(t, hs, call)
			var b bytes.Buffer
			if err := WriteTimeline(&b, h, scorer.Score(h)); err != nil {
				t.Fatal(err)
			}
			noTrailingBlanks(t, b.String())
			golden(t, "timeline_"+call, b.Bytes())
		})
	}
}

// The timeline lists every event once, in seq order, and every seq an axis
// or bucket cites is one of them.
func TestWriteTimelineCitesItsEvents(t *testing.T) {
	_, hs, _ := fixtureSummary(t)
	h := findHistory(t, hs, "corr-02")
	s := scorer.Score(h)
	var b bytes.Buffer
	WriteTimeline(&b, h, s)
	out := b.String()

	row := regexp.MustCompile(`(?m)^ {0,3}(\d+) +[0-9.]+ms +(\w+) +([a-z_.]+)`)
	rows := row.FindAllStringSubmatch(out, -1)
	if len(rows) != len(h.Events) {
		t.Fatalf("%d event rows, want %d", len(rows), len(h.Events))
	}
	for i, r := range rows {
		e := h.Events[i]
		if r[1] != strconv.Itoa(e.Seq) || r[2] != string(e.Source) || r[3] != string(e.Kind) {
			t.Errorf("row %d = %v, want seq %d %s %s", i, r[1:], e.Seq, e.Source, e.Kind)
		}
	}
	cite := regexp.MustCompile(`#(\d+)`)
	cited := 0
	for _, m := range cite.FindAllStringSubmatch(out[strings.Index(out, "\naxes\n"):], -1) {
		cited++
		seq, _ := strconv.Atoi(m[1])
		if h.BySeq(seq) == nil {
			t.Errorf("cites #%d, which is not in the history", seq)
		}
	}
	if cited == 0 {
		t.Error("a failed call's axes cite no events")
	}
	for _, a := range scorer.Axes() {
		want := regexp.MustCompile(`(?m)^  ` + string(a) + ` +` + string(s.Axis(a).Verdict) + `$`)
		if !want.MatchString(out) {
			t.Errorf("no line for axis %s with verdict %s", a, s.Axis(a).Verdict)
		}
	}
	if !strings.Contains(out, "\n  stale_tool_args (primary)\n") {
		t.Errorf("root cause missing:\n%s", out)
	}
}

// Findings without "[#" in their text get the seq list appended.
func TestWriteTimelineAppendsSeqs(t *testing.T) {
	h := &trace.History{Call: "x", Events: []trace.Event{
		{Call: "x", Seq: 1, Source: trace.SourceHarness, Kind: trace.KindCallStart, Data: &trace.CallStart{ScenarioID: "s"}},
		{Call: "x", Seq: 2, Source: trace.SourceHarness, Kind: trace.KindCallEnd, Data: &trace.CallEnd{Outcome: trace.OutcomeAgentError, Reason: "socket closed"}},
	}}
	s := scorer.CallScore{Call: "x", Scenario: "s", Category: "dtmf", Outcome: trace.OutcomeAgentError, Reason: "socket closed",
		Axes: []scorer.AxisResult{
			{Axis: scorer.Captured, Verdict: scorer.Unknown, Findings: []scorer.Finding{{Text: "no evidence", Events: []int{1, 2}}}},
			{Axis: scorer.BackendCorrect, Verdict: scorer.Fail, Findings: []scorer.Finding{{Text: "already cited [#2 call.end]", Events: []int{2}}}},
		},
		Primary: scorer.BucketNotExecuted,
		Buckets: []scorer.BucketHit{
			{Bucket: scorer.BucketNotExecuted, Findings: []scorer.Finding{{Text: "nothing committed"}}},
			{Bucket: scorer.BucketWrongRecord, Findings: []scorer.Finding{{Text: "decoy", Events: []int{2}}}},
		},
		Diff: []trace.FieldDiff{{Table: "orders", Key: "5519", Want: "absent", Got: "present"}},
	}
	var b bytes.Buffer
	if err := WriteTimeline(&b, h, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"call x · scenario s (dtmf) · outcome agent_error (socket closed)\n",
		"   2        0.0ms  harness  call.end    agent_error: socket closed\n",
		"      no evidence  [#1 #2]\n",
		"      already cited [#2 call.end]\n",
		"  end-to-end integrity           no\n",
		"  action_not_executed (primary)\n      nothing committed\n",
		"  wrong_record (secondary)\n      decoy  [#2]\n",
		"  orders/5519 (record): want \"absent\", got \"present\"\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("timeline lacks %q\n%s", want, out)
		}
	}
	noTrailingBlanks(t, out)
}

func TestDescribe(t *testing.T) {
	v3 := 3
	tests := []struct {
		kind trace.Kind
		data any
		want string
	}{
		{trace.KindCallEnd, &trace.CallEnd{}, "completed"},
		{trace.KindCallEnd, &trace.CallEnd{Outcome: trace.OutcomeHarnessError, Reason: "backend died"}, "harness_error: backend died"},
		{trace.KindTriggerFired, &trace.TriggerNote{Step: "correct", On: "agent.tool_intent", Cause: 28}, "step correct on agent.tool_intent (by #28)"},
		{trace.KindTriggerMissed, &trace.TriggerNote{Step: "correct", Reason: "timed out"}, "step correct: timed out"},
		{trace.KindSnapshot, &trace.Snapshot{Records: []trace.Record{{Table: "orders", Key: "5590", Version: 2, Fields: map[string]string{"b": "2", "a": "1"}}, {Table: "orders", Key: "5599", Version: 1}}}, "orders/5590 v2 {a=1 b=2}; orders/5599 v1 {}"},
		{trace.KindNote, &trace.Note{Text: "hello"}, "hello"},
		{trace.KindCallerSpeechStart, &trace.CallerSpeech{Act: trace.ActCorrect, Text: "ignored at onset"}, "[correct] onset"},
		{trace.KindCallerSpeechPartial, &trace.CallerSpeech{Act: trace.ActSay, Text: "Hi", Intent: &trace.Intent{Version: 1}}, `[say] "Hi"`},
		{trace.KindCallerSpeechFinal, &trace.CallerSpeech{Act: trace.ActInterrupt, Text: "Stop.", Invalidates: true, Intent: &trace.Intent{Version: 2, Action: "ship_order", Slots: map[string]string{"order_number": "5590"}}}, `[interrupt] "Stop." intent v2 ship_order execute=false {order_number=5590} (invalidates)`},
		{trace.KindCallerNoiseStart, &trace.CallerNoise{Sound: "cough"}, "cough"},
		{trace.KindCallerDTMF, &trace.CallerDTMF{Digits: "55#"}, "55#"},
		{trace.KindAgentSpeechStart, &trace.AgentSpeech{Utterance: "a1"}, "a1"},
		{trace.KindAgentSpeechEnd, &trace.AgentSpeech{Utterance: "a1", Text: "Done."}, `a1 "Done."`},
		{trace.KindAgentToolIntent, &trace.AgentToolIntent{Tool: "get_order"}, "get_order {}"},
		{trace.KindAgentState, &trace.AgentState{Version: 2, Slots: map[string]string{"q": "4"}, Pending: "update_order"}, "v2 {q=4} pending update_order"},
		{trace.KindToolReceived, &trace.ToolEvent{Ref: "r1", Tool: "update_order", Args: map[string]string{"q": "4"}, IdempotencyKey: "k1", BuiltFrom: &v3, Hold: "h1"}, "r1 update_order {q=4} key=k1 built-from=v3 hold=h1"},
		{trace.KindToolReceived, &trace.ToolEvent{Ref: "r2", Tool: "get_order"}, "r2 get_order {} (no key)"},
		{trace.KindToolCommitted, &trace.ToolEvent{Ref: "r1", Tool: "update_order", Table: "orders", Key: "5590", VersionBefore: 1, VersionAfter: 2, Before: map[string]string{"q": "1"}, After: map[string]string{"q": "4"}}, "r1 update_order orders/5590 v1->v2 {q=1} -> {q=4}"},
		{trace.KindToolCommitted, &trace.ToolEvent{Ref: "r2", Tool: "unship", Table: "shipments", Key: "shipments-1", Deleted: true, VersionBefore: 1, Before: map[string]string{"order_number": "5590"}}, "r2 unship shipments/shipments-1 v1 {order_number=5590} -> deleted"},
		{trace.KindToolResponded, &trace.ToolEvent{Ref: "r1", Tool: "update_order", Status: 200, Dropped: true}, "r1 update_order 200 (dropped)"},
		{trace.KindToolRejected, &trace.ToolEvent{Ref: "r3", Tool: "update_order", Status: 409, Error: "stale state", Reason: "built from v1"}, "r3 update_order 409 stale state (built from v1)"},
		{trace.KindFaultApplied, &trace.ToolEvent{Ref: "r1", Tool: "update_order", Fault: "status"}, "r1 update_order status"},
		{trace.KindToolReplayed, &trace.ToolEvent{Ref: "r4", Tool: "update_order", ReplayOf: "r1"}, "r4 update_order replay of r1"},
		{trace.KindToolCancelled, &trace.ToolEvent{Ref: "r1", Tool: "update_order", Reason: "client went away"}, "r1 update_order (client went away)"},
		{"future.kind", []byte(`{}`), ""},
	}
	for _, tt := range tests {
		if got := Describe(trace.Event{Kind: tt.kind, Data: tt.data}); got != tt.want {
			t.Errorf("Describe(%s) = %q, want %q", tt.kind, got, tt.want)
		}
	}
}
