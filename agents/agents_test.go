package agents

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

const (
	reqDec3 = "Hi, I'd like to change the delivery date on order 5590 to December 3."
	doneDec = "Done. Order 5590 now has delivery date December 3."
)

// obs is what one scripted call left behind.
type obs struct {
	answer        string
	answerApplied bool // the backend held the 5590 write when the answer began
	b             *fakeBackend
	c             *fakeCaller
}

func (o obs) updates() []fakeReq { return o.b.requests("update_order") }

func isEvent(ev string) func(native.Message) bool {
	return func(m native.Message) bool { return m.Event == ev }
}

// (a) a correction while the call is being prepared.
func correctionDuringPrep(t *testing.T, cfg Config) obs {
	cfg.Prepare = 2 * time.Second // 100ms at testScale: room for the correction
	b := newFakeBackend(t, nil)
	c := dialCaller(t, startAgent(t, cfg).URL, b)
	c.greeted()
	c.say(reqDec3)
	c.waitFor("tool_intent", isEvent(native.EventToolIntent))
	c.say("Sorry, I meant order 5599.")
	ans, _ := c.answerText()
	c.hangUp()
	return obs{answer: ans, b: b, c: c}
}

// (b) a correction while the write is held in flight.
func correctionInFlight(t *testing.T, cfg Config) obs {
	cfg.ToolTimeout = 20 * time.Second
	b := newFakeBackend(t, func(tool string, n int) answer { return answer{hold: tool == "update_order" && n == 1} })
	c := dialCaller(t, startAgent(t, cfg).URL, b)
	c.greeted()
	c.say(reqDec3)
	b.waitRequest(t, "update_order")
	c.say("Sorry, make that December 5.")
	release := time.AfterFunc(300*time.Millisecond, b.releaseHolds)
	defer release.Stop()
	ans, _ := c.answerText()
	c.hangUp()
	return obs{answer: ans, b: b, c: c}
}

// (c) the first write fails with a 500.
func retryAfter500(t *testing.T, cfg Config) obs {
	b := newFakeBackend(t, func(tool string, n int) answer { return answer{status500: tool == "update_order" && n == 1} })
	return simpleUpdate(t, cfg, b)
}

// (d) the write is accepted with a 202 and lands later.
func pending202(t *testing.T, cfg Config) obs {
	b := newFakeBackend(t, func(tool string, n int) answer {
		if tool == "update_order" {
			return answer{pending: 300 * time.Millisecond}
		}
		return answer{}
	})
	return simpleUpdate(t, cfg, b)
}

// (e) the write lands but the response carries another record.
func wrongRecord(t *testing.T, cfg Config) obs {
	wrong := &trace.Record{Table: "orders", Key: "5591", Version: 7, Fields: map[string]string{"delivery_date": "2026-01-15"}}
	b := newFakeBackend(t, func(tool string, n int) answer {
		if tool == "update_order" {
			return answer{wrong: wrong}
		}
		return answer{}
	})
	return simpleUpdate(t, cfg, b)
}

func plainUpdate(t *testing.T, cfg Config) obs { return simpleUpdate(t, cfg, newFakeBackend(t, nil)) }

func simpleUpdate(t *testing.T, cfg Config, b *fakeBackend) obs {
	c := dialCaller(t, startAgent(t, cfg).URL, b)
	c.greeted()
	c.say(reqDec3)
	ans, first := c.answerText()
	c.hangUp()
	return obs{answer: ans, answerApplied: first.applied5, b: b, c: c}
}

// (f) a cough while the agent greets.
func soundDuringSpeech(t *testing.T, cfg Config) obs {
	b := newFakeBackend(t, nil)
	c := dialCaller(t, startAgent(t, cfg).URL, b)
	c.waitFor("greeting start", isSpeech(native.PhaseStart))
	c.sound()
	h := c.waitFor("end or clear", func(m native.Message) bool {
		return m.Event == native.EventClear || isSpeech(native.PhaseEnd)(m)
	})
	c.hangUp()
	return obs{answer: h.msg.Event, b: b, c: c}
}

// the caller starts talking while the agent greets.
func speechDuringSpeech(t *testing.T, cfg Config) obs {
	b := newFakeBackend(t, nil)
	c := dialCaller(t, startAgent(t, cfg).URL, b)
	c.waitFor("greeting start", isSpeech(native.PhaseStart))
	c.send(native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: "c1", Phase: native.PhaseOnset}})
	h := c.waitFor("end or clear", func(m native.Message) bool {
		return m.Event == native.EventClear || isSpeech(native.PhaseEnd)(m)
	})
	c.hangUp()
	return obs{answer: h.msg.Event, b: b, c: c}
}

// (g) "don't" while the shipment is being prepared.
func negationDuringPrep(t *testing.T, cfg Config) obs {
	cfg.Prepare = 2 * time.Second
	b := newFakeBackend(t, nil)
	c := dialCaller(t, startAgent(t, cfg).URL, b)
	c.greeted()
	c.say("Hi, please ship order 5590 today.")
	c.waitFor("tool_intent", isEvent(native.EventToolIntent))
	c.say("No, wait, don't do that.")
	ans, _ := c.answerText()
	c.hangUp()
	return obs{answer: ans, b: b, c: c}
}

// "don't" after the change was confirmed: careful puts it back.
func negationAfterDone(t *testing.T, cfg Config) obs {
	b := newFakeBackend(t, nil)
	c := dialCaller(t, startAgent(t, cfg).URL, b)
	c.greeted()
	c.say(reqDec3)
	first, _ := c.answerText()
	require.Equal(t, doneDec, first)
	c.say("No, wait, don't do that.")
	ans, _ := c.answerText()
	c.hangUp()
	return obs{answer: ans, b: b, c: c}
}

type matrixRow struct {
	name     string
	flaw     Flaw
	scenario func(*testing.T, Config) obs
	careful  func(*testing.T, obs) // what careful must do
	flawed   func(obs) bool        // the named failure shows
	naive    bool                  // naive has the flaw, so it must show there too
}

func matrix() []matrixRow {
	return []matrixRow{
		{
			name: "a correction during preparation", flaw: KeepsBuiltCalls, scenario: correctionDuringPrep, naive: true,
			careful: func(t *testing.T, o obs) {
				for _, u := range o.updates() {
					assert.Equal(t, "5599", u.Args["order_number"], "careful sent a call built from the old version")
				}
				assert.Equal(t, "Done. Order 5599 now has delivery date December 3.", o.answer)
				assert.Equal(t, "2026-12-03", o.b.field("5599", "delivery_date"))
				assert.Equal(t, "2026-11-20", o.b.field("5590", "delivery_date"))
			},
			flawed: func(o obs) bool { u := o.updates(); return len(u) > 0 && u[0].Args["order_number"] == "5590" },
		},
		{
			name: "b correction while in flight", flaw: KeepsSentCalls, scenario: correctionInFlight, naive: true,
			careful: func(t *testing.T, o obs) {
				u := o.updates()
				require.Len(t, u, 2)
				assert.True(t, u[0].Cancelled, "backend should see the stale request cancelled")
				assert.Equal(t, "2026-12-05", u[1].Args["delivery_date"])
				assert.Equal(t, "Done. Order 5590 now has delivery date December 5.", o.answer)
				assert.Equal(t, "2026-12-05", o.b.field("5590", "delivery_date"))
			},
			flawed: func(o obs) bool { u := o.updates(); return len(u) > 0 && !u[0].Cancelled },
		},
		{
			name: "c 500 then retry", flaw: UnkeyedRetries, scenario: retryAfter500, naive: true,
			careful: func(t *testing.T, o obs) {
				u := o.updates()
				require.Len(t, u, 2)
				assert.NotEmpty(t, u[0].Key)
				// A definite 500 with nothing landed: the backend would
				// replay the stored 500 for the same key, so the retry is a
				// new request under a derived key (timeouts keep the key).
				assert.NotEqual(t, u[0].Key, u[1].Key, "a retry after a definite, verified failure needs a fresh key")
				assert.True(t, strings.HasPrefix(u[1].Key, u[0].Key+"-r"), "the fresh key derives from the first: %s", u[1].Key)
				assert.True(t, readBetweenWrites(o), "careful checks the backend before retrying")
				assert.Equal(t, doneDec, o.answer)
			},
			flawed: func(o obs) bool {
				u := o.updates()
				return len(u) == 2 && u[0].Key == "" && u[1].Key == "" && !readBetweenWrites(o)
			},
		},
		{
			name: "d 202 pending", flaw: ConfirmsOnAccept, scenario: pending202, naive: true,
			careful: func(t *testing.T, o obs) {
				assert.Equal(t, doneDec, o.answer)
				assert.True(t, o.answerApplied, "careful confirmed before the write landed")
			},
			// and it reads nothing back after its claim, so the claim is
			// its first act after the 202 however it is scheduled
			flawed: func(o obs) bool {
				return strings.HasPrefix(o.answer, "Done.") && !o.answerApplied && requestsAfterWrite(o) == 0
			},
		},
		{
			name: "e wrong record", flaw: TrustsToolResults, scenario: wrongRecord, naive: true,
			careful: func(t *testing.T, o obs) {
				assert.Equal(t, doneDec, o.answer)
				assert.Equal(t, "2026-12-03", o.b.field("5590", "delivery_date"))
			},
			flawed: func(o obs) bool { return o.answer == "Done. Order 5591 now has delivery date January 15." },
		},
		{
			name: "f sound during speech", flaw: AnySoundBargesIn, scenario: soundDuringSpeech, naive: true,
			careful: func(t *testing.T, o obs) {
				assert.Equal(t, native.EventAgentSpeech, o.answer)
				assert.Zero(t, o.c.count(native.EventClear))
			},
			flawed: func(o obs) bool { return o.answer == native.EventClear },
		},
		{
			name: "g negation during preparation", flaw: KeepsBuiltCalls, scenario: negationDuringPrep, naive: true,
			careful: func(t *testing.T, o obs) {
				assert.Empty(t, o.b.requests("ship_order"))
				assert.Equal(t, "Okay, I won't make any change. Nothing was changed on order 5590.", o.answer)
			},
			flawed: func(o obs) bool { return len(o.b.requests("ship_order")) == 1 },
		},
		{
			name: "negation after commit", flaw: KeepsSentCalls, scenario: negationAfterDone, naive: true,
			careful: func(t *testing.T, o obs) {
				assert.Equal(t, "Okay, I won't make any change. Nothing was changed on order 5590.", o.answer)
				assert.Equal(t, "2026-11-20", o.b.field("5590", "delivery_date"))
				u := o.updates()
				require.Len(t, u, 2)
				assert.Equal(t, "2026-11-20", u[1].Args["delivery_date"])
				assert.NotEmpty(t, u[1].Key)
			},
			flawed: func(o obs) bool { return o.b.field("5590", "delivery_date") == "2026-12-03" },
		},
		{
			name: "correction ignored", flaw: IgnoresCorrections, scenario: correctionDuringPrep,
			careful: func(*testing.T, obs) {},
			flawed:  func(o obs) bool { return strings.Contains(o.answer, "5590") },
		},
		{
			name: "negation ignored", flaw: IgnoresNegation, scenario: negationDuringPrep,
			careful: func(*testing.T, obs) {},
			flawed: func(o obs) bool {
				return len(o.b.requests("ship_order")) == 1 && o.answer == "Done. Order 5590 has been shipped."
			},
		},
		{
			name: "barge-in ignored", flaw: IgnoresBargeIn, scenario: speechDuringSpeech,
			careful: func(t *testing.T, o obs) { assert.Equal(t, native.EventClear, o.answer) },
			flawed:  func(o obs) bool { return o.answer == native.EventAgentSpeech },
		},
		{
			name: "write skipped", flaw: SkipsWrite, scenario: plainUpdate,
			careful: func(t *testing.T, o obs) {
				assert.Len(t, o.updates(), 1)
				assert.Equal(t, doneDec, o.answer)
			},
			flawed: func(o obs) bool { return len(o.updates()) == 0 && o.answer == doneDec },
		},
		{
			name: "wrong value confirmed", flaw: ConfirmsWrongValue, scenario: plainUpdate,
			careful: func(*testing.T, obs) {},
			flawed:  func(o obs) bool { return o.answer == "Done. Order 5590 now has delivery date December 4." },
		},
	}
}

// requestsAfterWrite counts the requests after the first update_order.
func requestsAfterWrite(o obs) int {
	n, seen := 0, false
	for _, r := range o.b.requests("") {
		if seen {
			n++
		}
		seen = seen || r.Tool == "update_order"
	}
	return n
}

// readBetweenWrites: a get_order came between the first two update_order.
func readBetweenWrites(o obs) bool {
	seen := 0
	for _, r := range o.b.requests("") {
		switch {
		case r.Tool == "update_order":
			seen++
		case r.Tool == "get_order" && seen == 1:
			return true
		}
	}
	return false
}

// TestFlawMatrix runs each scenario against careful, careful with exactly
// one flaw switched on, and naive: careful does the right thing, and the
// flaw (alone, or among naive's) shows as the failure it names.
func TestFlawMatrix(t *testing.T) {
	t.Run("202 with trusting results only waits", func(t *testing.T) {
		// A 202 is not a result yet: TrustsToolResults alone still waits
		// for the write to land (the flaws are orthogonal).
		o := pending202(t, Careful().With(TrustsToolResults, true))
		assert.True(t, o.answerApplied, "answer %q before the write landed", o.answer)
	})
	for _, row := range matrix() {
		t.Run(row.name+"/careful", func(t *testing.T) {
			o := row.scenario(t, Careful())
			row.careful(t, o)
			assert.False(t, row.flawed(o), "careful shows flaw %s (answer %q)", row.flaw, o.answer)
		})
		t.Run(row.name+"/+"+string(row.flaw), func(t *testing.T) {
			o := row.scenario(t, Careful().With(row.flaw, true))
			assert.True(t, row.flawed(o), "flaw %s did not show (answer %q)", row.flaw, o.answer)
		})
		if row.naive {
			t.Run(row.name+"/naive", func(t *testing.T) {
				o := row.scenario(t, Naive())
				assert.True(t, row.flawed(o), "naive does not show %s (answer %q)", row.flaw, o.answer)
			})
		}
	}
}

// The naive agent's answers, as seed 001 describes them: it heard the
// correction perfectly, so it confirms values the backend never got.
func TestNaiveConfirmsWhatItHeard(t *testing.T) {
	o := correctionDuringPrep(t, Naive())
	require.Len(t, o.updates(), 1)
	assert.Equal(t, "Done. Order 5599 now has delivery date December 3.", o.answer)
	assert.Equal(t, "2026-11-20", o.b.field("5599", "delivery_date"))

	o = correctionInFlight(t, Naive())
	require.Len(t, o.updates(), 1)
	assert.Equal(t, "Done. Order 5590 now has delivery date December 5.", o.answer)
	assert.Equal(t, "2026-12-03", o.b.field("5590", "delivery_date"))

	o = negationDuringPrep(t, Naive())
	assert.Len(t, o.b.requests("ship_order"), 1)
	assert.Equal(t, "Okay, I won't make any change. Nothing was changed on order 5590.", o.answer)
}

func TestCarefulProtocol(t *testing.T) {
	o := plainUpdate(t, Careful())
	frames := o.c.frames()
	require.NotEmpty(t, frames)
	assert.Equal(t, native.EventAck, frames[0].Event)
	assert.InDelta(t, testScale, frames[0].Ack.TimeScale, 1e-9)
	assert.Equal(t, "careful", frames[0].Ack.Agent)

	var states []native.State
	var intents []native.ToolIntent
	var ends []string
	for _, m := range frames {
		switch {
		case m.Event == native.EventState:
			states = append(states, *m.State)
		case m.Event == native.EventToolIntent:
			intents = append(intents, *m.ToolIntent)
		case isSpeech(native.PhaseEnd)(m):
			ends = append(ends, m.AgentSpeech.Text)
		}
	}
	require.Len(t, states, 1)
	assert.Equal(t, native.State{Version: 1, Slots: map[string]string{"order_number": "5590", "delivery_date": "2026-12-03"}, Pending: "update_order"}, states[0])
	require.Len(t, intents, 1)
	assert.Equal(t, "update_order", intents[0].Tool)
	assert.Equal(t, []string{greeting, "Okay, updating order 5590: delivery date December 3.", doneDec}, ends)

	// Read before the first write, write with key and version, verify.
	reqs := o.b.requests("")
	require.Len(t, reqs, 3)
	assert.Equal(t, []string{"get_order", "update_order", "get_order"}, []string{reqs[0].Tool, reqs[1].Tool, reqs[2].Tool})
	assert.Equal(t, idempotencyKey("call-1", "update_order", 1), reqs[1].Key)
	assert.Equal(t, "1", reqs[1].Version)
	assert.Equal(t, "tok", reqs[1].Token)
}

func TestCarefulRetriesTimeoutWithSameKey(t *testing.T) {
	cfg := Careful()
	cfg.ToolTimeout = time.Second // 50ms at testScale
	b := newFakeBackend(t, func(tool string, n int) answer { return answer{hold: tool == "update_order" && n == 1} })
	o := simpleUpdate(t, cfg, b)
	u := o.updates()
	require.Len(t, u, 2)
	assert.True(t, u[0].Cancelled, "the timed-out request should be abandoned")
	assert.Equal(t, u[0].Key, u[1].Key)
	assert.True(t, readBetweenWrites(o))
	assert.Equal(t, doneDec, o.answer)
}

func TestCarefulEmptyBodyIsCheckedNotRetried(t *testing.T) {
	// The write landed but the body was empty: the check read finds it, so
	// there is no second write.
	b := newFakeBackend(t, func(tool string, n int) answer { return answer{empty: tool == "update_order"} })
	o := simpleUpdate(t, Careful(), b)
	assert.Len(t, o.updates(), 1)
	assert.Equal(t, doneDec, o.answer)

	// Naive retries it blindly, writing twice.
	b = newFakeBackend(t, func(tool string, n int) answer { return answer{empty: tool == "update_order" && n == 1} })
	o = simpleUpdate(t, Naive(), b)
	assert.Len(t, o.updates(), 2)
}

func TestCarefulGoAheadDuringPrepareCarriesOn(t *testing.T) {
	cfg := Careful()
	cfg.Prepare = 2 * time.Second
	b := newFakeBackend(t, nil)
	c := dialCaller(t, startAgent(t, cfg).URL, b)
	c.greeted()
	c.say(reqDec3)
	c.waitFor("tool_intent", isEvent(native.EventToolIntent))
	c.say("Yes, that's right, go ahead.")
	ans, _ := c.answerText()
	c.hangUp()
	assert.Equal(t, doneDec, ans)
	assert.Equal(t, 1, c.count(native.EventToolIntent), "a non-invalidating interruption must not rebuild the call")
	assert.Len(t, b.requests("update_order"), 1)
}

func TestCarefulFailsHonestly(t *testing.T) {
	b := newFakeBackend(t, func(tool string, n int) answer { return answer{status500: tool == "update_order"} })
	o := simpleUpdate(t, Careful(), b)
	assert.Equal(t, "Sorry, I couldn't update order 5590. Nothing was changed.", o.answer)
	assert.Len(t, o.updates(), 1+DefaultMaxRetries)
}

// An order number typed on the keypad fills the order slot, as if spoken.
func TestDTMFOrderNumber(t *testing.T) {
	b := newFakeBackend(t, nil)
	c := dialCaller(t, startAgent(t, Careful()).URL, b)
	c.greeted()
	c.say("Hi, I'd like to change the delivery date on my order to December 3.")
	c.waitFor("which order", func(m native.Message) bool {
		return isSpeech(native.PhaseEnd)(m) && m.AgentSpeech.Text == askOrder
	})
	c.send(native.Message{Event: native.EventDTMF, DTMF: &native.DTMF{Digits: "5590#"}})
	ans, _ := c.answerText()
	c.hangUp()
	assert.Equal(t, doneDec, ans)
	u := b.requests("update_order")
	require.Len(t, u, 1)
	assert.Equal(t, "5590", u[0].Args["order_number"])
}
