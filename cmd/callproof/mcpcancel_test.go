package main

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callproof/callproof/scorer"
)

// TestOpenAIAgentBargeInDuringTool measures what the OpenAI Agents SDK
// (JS) does with a tool call in flight when the caller barges in: core
// int-05, "Wait, stop, don't change anything." said while update_order is
// held, placed on agents/openai-twilio in both configurations (its own
// HTTP tool, and --tools mcp: the SDK's MCP client). The SDK runs a tool
// without an abort signal and cancels nothing on an interruption, so
// nothing reaches the backend: no closed request over HTTP, and over MCP
// no notifications/cancelled, no closed stream, no session DELETE (the
// MCP endpoint notes each in the history). The held write commits after
// the "stop" in both, which callproof scores inflight_not_cancelled, and
// both configurations score the call alike. docs/INTEROP.md, "Tools over
// MCP". Skipped in -short mode; a missing node fails it under make test
// and make interop (interop.Missing).
func TestOpenAIAgentBargeInDuringTool(t *testing.T) {
	ctx, node, root := openAIAgentSetup(t, 10*time.Minute)
	speech := t.TempDir()
	scores := map[string]scorer.CallScore{}
	for _, tools := range []string{"http", "mcp"} {
		t.Run("held-"+tools, func(t *testing.T) {
			timeline, score := runOpenAIInt05(ctx, t, node, root, speech, tools)
			t.Logf("show int-05 (%s tools):\n%s", tools, strings.Join(regexp.MustCompile(`(?m)^.*(tool\.|mcp: |agent\.clear).*$`).FindAllString(timeline, -1), "\n"))
			for _, re := range []string{
				`tool\.held +r1 update_order`,
				`tool\.committed +r1 update_order orders/5590 v1->v2`,
			} {
				if !regexp.MustCompile(re).MatchString(timeline) {
					t.Errorf("show int-05: no line matching %s", re)
				}
			}
			// Nothing withdrew the held call: no cancellation of any kind
			// reached the backend.
			for _, re := range []string{`tool\.cancelled +r1 `, `mcp: `} {
				if m := regexp.MustCompile(re).FindString(timeline); m != "" {
					t.Errorf("show int-05: %q: the SDK withdrew its call", m)
				}
			}
			if !hasBucket(score, "inflight_not_cancelled") {
				t.Errorf("int-05: %s: no inflight_not_cancelled", axesLine(score))
			}
			scores[tools] = score
		})
	}
	h, m := scores["http"], scores["mcp"]
	if len(h.Axes) == 0 || len(m.Axes) == 0 {
		return
	}
	t.Logf("interop openai-agents twilio mcp int-05: http %s, mcp %s", axesLine(h), axesLine(m))
	sameVerdicts(t, "int-05", h, m)
}

// hasBucket reports whether a call's root causes name bucket.
func hasBucket(s scorer.CallScore, bucket string) bool {
	return s.Primary == scorer.Bucket(bucket) || slices.Contains(s.Secondary, scorer.Bucket(bucket))
}

// runOpenAIInt05 places core int-05 on the OpenAI agent in one tools
// configuration, with OrderDesk as its model, and returns `show`'s
// timeline and the call's score.
func runOpenAIInt05(ctx context.Context, t *testing.T, node, root, speech, tools string) (string, scorer.CallScore) {
	_, agent := startOrderDesk(ctx, t, node, root, speech, tools)
	out := filepath.Join(t.TempDir(), "out")
	placeOpenAI(t, agent, out, speech, "--suite", "core", "--only", "int-05")
	code, timeline, stderr := fxCLI(t, "show", out, "int-05")
	if code != exitOK {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	return timeline, loadScore(t, out, "int-05")
}
