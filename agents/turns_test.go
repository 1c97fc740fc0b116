package agents

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/protocol/native"
)

// heldClock never fires: the test reads the engine's timers off its state.
type heldClock struct {
	mu sync.Mutex
	n  int
}

func (c *heldClock) AfterFunc(time.Duration, func()) func() bool {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return func() bool { return true }
}

func (c *heldClock) Now() time.Time { return time.Time{} }

// A turn of several utterances (the next one's onset before the previous
// one's final, docs/PROTOCOL.md "speech") ends only at the final that
// leaves no utterance open: a final mid-turn starts no end-of-turn wait,
// so the agent never acts on half a turn however its timers run.
func TestTurnEndsAtLastOpenUtterance(t *testing.T) {
	for _, cfg := range []Config{Careful(), Naive()} {
		t.Run(cfg.Name, func(t *testing.T) {
			e, _, speech := startedTurnEngine(t, cfg)

			speech("u1", native.PhaseOnset, "")
			speech("u1", native.PhasePartial, "Hi, please")
			speech("u2", native.PhaseOnset, "")
			speech("u1", native.PhaseFinal, "Hi, please ship order 5590 today.")
			require.False(t, e.eotPending, "a final with u2 open started the end-of-turn wait")
			require.False(t, e.settled())
			require.Equal(t, "5590", e.slots["order_number"], "the final's words are heard at once")

			speech("u2", native.PhasePartial, "No,")
			speech("u2", native.PhaseFinal, "No, order 5599.")
			require.True(t, e.eotPending, "the turn's last final starts the end-of-turn wait")
			require.Equal(t, "5599", e.slots["order_number"])

			// The wait's timer decides on the whole turn.
			e.timer(timerEvent{kind: timerEOT, id: e.eotGen})
			require.True(t, e.settled())
			require.NotNil(t, e.job, "the settled turn starts the tool job")

			// A lone utterance still ends its turn at its final.
			speech("u3", native.PhaseOnset, "")
			require.False(t, e.eotPending)
			speech("u3", native.PhaseFinal, "Thanks.")
			require.True(t, e.eotPending)
		})
	}
}

// states drains the session's outbox and returns the state reports in it.
func states(s *session) []*native.State {
	var out []*native.State
	for {
		select {
		case f := <-s.outbox:
			if m, ok := f.(native.Message); ok && m.Event == native.EventState {
				out = append(out, m.State)
			}
		default:
			return out
		}
	}
}

// The working state is reported once per caller turn, at the final that
// leaves no utterance open: a final heard while the turn's next utterance
// is open (an early correction) reports nothing, so no report of the
// words being replaced can reach the caller after the correction began.
func TestStateReportedOncePerTurn(t *testing.T) {
	for _, cfg := range []Config{Careful(), Naive()} {
		t.Run(cfg.Name, func(t *testing.T) {
			_, s, speech := startedTurnEngine(t, cfg)
			states(s)

			speech("u1", native.PhaseOnset, "")
			speech("u2", native.PhaseOnset, "")
			speech("u1", native.PhaseFinal, "Hi, please ship order 5590 today.")
			require.Empty(t, states(s), "a final with u2 still open reported the state")
			speech("u2", native.PhaseFinal, "No, order 5599.")
			got := states(s)
			require.Len(t, got, 1, "the turn's last final reports once")
			require.Equal(t, "5599", got[0].Slots["order_number"])
			require.Equal(t, "ship_order", got[0].Pending)

			// A lone utterance that changes nothing reports nothing more.
			speech("u3", native.PhaseOnset, "")
			speech("u3", native.PhaseFinal, "Thanks.")
			require.Empty(t, states(s))

			// A lone utterance that changes the state reports at its final.
			speech("u4", native.PhaseOnset, "")
			speech("u4", native.PhaseFinal, "Actually, order 5519.")
			got = states(s)
			require.Len(t, got, 1)
			require.Equal(t, "5519", got[0].Slots["order_number"])
		})
	}
}

// startedTurnEngine is an engine of cfg on a held clock, its call started
// (tools nowhere reachable: nothing here gets that far), with the session
// its messages go to and a way to hear one speech frame.
func startedTurnEngine(t *testing.T, cfg Config) (*engine, *session, func(id, phase, text string)) {
	t.Helper()
	cfg.Clock = &heldClock{}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := &session{ctx: ctx, cancel: cancel, inbox: make(chan any, 64), outbox: make(chan any, 1024), tw: textWire{}}
	e := newEngine(cfg.withDefaults(), http.DefaultClient, s)
	s.eng = e
	speech := func(id, phase, text string) {
		require.False(t, e.frame(native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: id, Phase: phase, Text: text}}))
	}
	e.frame(native.Message{Event: native.EventStart, Start: &native.Start{CallID: "c1", TimeScale: 1,
		Tools: native.Tools{BaseURL: "http://127.0.0.1:1/tools", Catalog: defaultCatalog()}}})
	return e, s, speech
}
