package scorer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/callproof/callproof/entity"
	"github.com/callproof/callproof/trace"
)

// An audio dialect knows an utterance's words only once it has been heard
// to the end and transcribed: its text event comes after its end, often
// after events that happened while it was being spoken. The text belongs
// to the utterance, at the utterance's place on the timeline.
func TestTextAfterEndBelongsToItsUtterance(t *testing.T) {
	const claim = "Done. Order 5590 now has quantity 2."
	build := func(late bool) *trace.History {
		b := newCall("early-audio", "tool_failure", nil, domain(),
			say("s1", trace.ActSay, reqQty5590, qty5590),
			trace.Step{ID: "h1", Do: trace.StepHold, Hold: "h1", Match: &trace.ToolMatch{Tool: "update_order"}},
			trace.Step{ID: "rel", Do: trace.StepRelease, Hold: "h1", On: trace.Trigger{Delay: time.Second}})
		b.caller("s1").state(1, "update_order", "order_number", "5590", "quantity", "2").
			toolIntent("update_order", "order_number", "5590", "quantity", "2").
			recv("r1", "k-1", 1, "update_order", "order_number", "5590", "quantity", "2").held("r1", "h1")
		if !late {
			b.speak("a1", claim)
		} else {
			b.emit(trace.SourceAgent, trace.KindAgentSpeechStart, &trace.AgentSpeech{Utterance: "a1"})
			b.emit(trace.SourceAgent, trace.KindAgentSpeechEnd, &trace.AgentSpeech{Utterance: "a1"})
		}
		b.fired("rel").released("r1", "h1").commit("r1").ok("r1")
		if late {
			// Transcribed after the write landed: still the early claim.
			b.emit(trace.SourceAgent, trace.KindAgentSpeechText, &trace.AgentSpeech{Utterance: "a1", Text: claim})
		}
		return b.done()
	}
	want := Score(build(false))
	got := Score(build(true))
	assert.Equal(t, "pppppf", vector(want))
	assert.Equal(t, vector(want), vector(got))
	assert.Equal(t, BucketEarlyConfirmation, got.Primary)
	assert.Equal(t, want.Primary, got.Primary)
}

// A transcript the recognizer could not vouch for never decides the
// confirmation axis: it is unknown (insufficient evidence), not a pass
// and not a fail, and its words name no values.
func TestUnclearTranscriptIsUndecided(t *testing.T) {
	build := func(text string) *trace.History { return confirmedQty2("audio-unclear", text) }
	clear := Score(build("Done. Order 5590 now has quantity 2."))
	assert.Equal(t, "pppppp", vector(clear))
	for _, text := range []string{
		trace.UnclearText + " Done. Order 5590 now has quantity 2.",
		trace.UnclearText + " Done. Order 5590 now has quantity 3.",
		trace.UnclearText + " moved it two wednesday",
	} {
		got := Score(build(text))
		assert.Equal(t, "pppppu", vector(got), text)
		axisSays(t, text, got, ConfirmationMatchesBackend, Unknown, InsufficientEvidence)
		assert.False(t, got.Integrity, text)
	}
	lx := newLexicon(orderTools)
	f := lx.read(trace.UnclearText + " order 5590 now has quantity 3")
	assert.Equal(t, claimUndecided, f.claim)
	assert.Empty(t, f.values(classID))
	assert.Empty(t, f.values(classCount))
	assert.Equal(t, "order 5590 now has quantity 3", f.text)
}

// A transcript a recognizer vouched for (trace.RecognizedText) is read as
// words: a matching confirmation passes and a claim of the wrong kind
// fails, but a value it names that the backend does not hold is no proof —
// recognizers mishear one number as another, consistently — so the axis
// is unknown, never failed on it.
func TestRecognizedTranscriptValues(t *testing.T) {
	build := func(text string) *trace.History { return confirmedQty2("audio-recognized", text) }
	for _, c := range []struct {
		text, vector string
		v            Verdict
		says         string
	}{
		{"Done. Order 5590 now has quantity 2.", "pppppp", Pass, "matches the backend"},
		// The same misheard value from the agent's own transcript fails.
		{"Done. Order 5519 now has quantity 2.", "pppppf", Fail, "confirmation names 5519"},
		{trace.RecognizedText + " Done. Order 5590 now has quantity 2.", "pppppp", Pass, "matches the backend"},
		{trace.RecognizedText + " Done. Order 5519 now has quantity 2.", "pppppu", Unknown, InsufficientEvidence + ": recognized from the agent's audio: confirmation names 5519"},
		{trace.RecognizedText + " done order 5590 now has quantity 3", "pppppu", Unknown, "confirmation names 3"},
		// The kind of claim still decides: "nothing was changed" while the
		// backend changed fails, recognized or not.
		{trace.RecognizedText + " Okay, nothing was changed.", "pppppf", Fail, "agent said nothing was changed"},
	} {
		got := Score(build(c.text))
		assert.Equal(t, c.vector, vector(got), c.text)
		axisSays(t, c.text, got, ConfirmationMatchesBackend, c.v, c.says)
	}
	lx := newLexicon(orderTools)
	f := lx.read(trace.RecognizedText + " order 5590 now has quantity 3")
	assert.True(t, f.recognized)
	assert.Equal(t, []string{"5590"}, f.values(classID))
	assert.Equal(t, "order 5590 now has quantity 3", f.text)
}

// confirmedQty2 is a call in which the caller asks for quantity 2 on order
// 5590, the write lands, and the agent's last words are text.
func confirmedQty2(id, text string) *trace.History {
	b := newCall(id, "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
	b.caller("s1").
		toolIntent("update_order", "order_number", "5590", "quantity", "2").
		call("r1", "k-1", "update_order", "order_number", "5590", "quantity", "2").
		speak("a1", text)
	return b.done()
}

// TestRecognizedTextReadBySameExtractors: a recognized utterance
// (trace.RecognizedText) is read by the same extractors as the agent's
// own transcript: callsim/hearing's normalized forms of amounts in words,
// am/pm times and relative days (TestSpokenFormsReadByEntity there) name
// the same values as the written forms, with the recognized mark kept.
func TestRecognizedTextReadBySameExtractors(t *testing.T) {
	lx := newLexicon(paymentTools)
	lx.ref = entity.Ref{Date: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	for heard, written := range map[string]string{
		"a refund of $215 goes out tomorrow at 9 am": "A refund of $215 goes out tomorrow at 9 am.",
		"a fee of $0.40":                          "a fee of forty cents",
		"booked for 9 am the day after tomorrow":  "booked for nine in the morning the day after tomorrow",
		"moved to tuesday the eighth":             "moved to Tuesday the 8th",
		"it is on the eighth":                     "it is on the 8th",
		"moved to next tuesday":                   "moved to next Tuesday",
		"$200.40 on the twenty first of december": "$200.40 on the 21st of December",
	} {
		rec := lx.read(trace.RecognizedText + " " + heard)
		want := lx.read(written)
		assert.True(t, rec.recognized, heard)
		assert.NotEmpty(t, want.named.cur, written)
		assert.Equal(t, want.named, rec.named, heard)
	}
}
