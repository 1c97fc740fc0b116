package callsim

import (
	"errors"
	"fmt"
	"time"

	"github.com/callproof/callproof/internal/safetext"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// pump is the only consumer of the connection: it records every agent
// frame and ends the call (through the call context) on a hangup, a
// transfer, a protocol violation or a budget passed. Frames that arrive
// once the call has ended are dropped.
func (r *run) pump() {
	meter := newMeter(r.s.opts.Clock, r.lim.MaxMessagesPerSecond)
	total := 0
	for {
		f, err := r.conn.Recv(r.base)
		if r.base.Err() != nil {
			return
		}
		if err != nil {
			switch {
			case errors.Is(err, ErrGarbageFrame):
				r.note("agent sent a frame that is not a JSON message: " + err.Error())
				r.stop(agentError(ReasonGarbageFrame))
			case errors.Is(err, ErrOversizedFrame):
				r.stop(agentError(ReasonOversizedFrame))
			case errors.Is(err, ErrUnresponsive):
				r.note(err.Error())
				r.stop(agentError(ReasonUnresponsive))
			default:
				// The error carries the agent's close reason: agent text,
				// cut to the per-event cap and escaped (safetext) so the
				// outcome reason is one safe line wherever it is shown.
				r.connDown.Store(true)
				why := newClipper(r.lim.MaxEventTextBytes).str(err.Error())
				r.stop(agentError(ReasonClosed + ": " + safetext.Escape(why)))
			}
			return
		}
		r.wireAt(&r.wire.Received)
		total++
		if total > r.lim.MaxMessagesPerCall || !meter.take() {
			r.stop(agentError(ReasonFlood))
			return
		}
		if e := r.agentFrame(f); e != nil {
			r.stop(e)
			return
		}
	}
}

// agentFrame records one agent message as its trace event, its text cut
// to the per-event cap and counted against the call's text budget. The
// event that passes the budget is recorded, then the call ends.
func (r *run) agentFrame(f Frame) *ending {
	m := f.Message
	c := newClipper(r.lim.MaxEventTextBytes)
	var (
		kind trace.Kind
		data any
		end  *ending
	)
	switch {
	case m.Event == native.EventAck:
		a := native.Ack{}
		if m.Ack != nil {
			a = *m.Ack
		}
		agent := c.str(a.Agent)
		select {
		case r.ackCh <- a:
			// Set before any later frame of the agent's is recorded, so a
			// trigger that sees those frames sees this too.
			r.intents.Store(a.ToolIntents)
			r.note(fmt.Sprintf("agent ack: time scale %g agent %q", a.TimeScale, agent))
		default:
			r.note("agent sent another ack; ignored")
		}
	case m.Event == native.EventAgentSpeech && m.AgentSpeech != nil:
		s := m.AgentSpeech
		switch s.Phase {
		case native.PhaseStart:
			kind = trace.KindAgentSpeechStart
		case native.PhaseText:
			kind = trace.KindAgentSpeechText
		case native.PhaseEnd:
			kind = trace.KindAgentSpeechEnd
		default:
			r.unknown(f)
		}
		if kind != "" {
			data = &trace.AgentSpeech{Utterance: c.str(s.ID), Text: c.str(s.Text)}
		}
	case m.Event == native.EventClear:
		d := &trace.AgentSpeech{}
		if m.Clear != nil {
			d.Utterance = c.str(m.Clear.ID)
		}
		kind, data = trace.KindAgentClear, d
	case m.Event == native.EventToolIntent && m.ToolIntent != nil:
		kind, data = trace.KindAgentToolIntent, &trace.AgentToolIntent{Tool: c.str(m.ToolIntent.Tool), Args: c.strMap(m.ToolIntent.Args)}
	case m.Event == native.EventState && m.State != nil:
		st := m.State
		kind, data = trace.KindAgentState, &trace.AgentState{Version: st.Version, Pending: c.str(st.Pending), Slots: c.strMap(st.Slots)}
	case m.Event == native.EventHangup:
		d := &trace.Note{}
		if m.Hangup != nil {
			d.Text = c.str(m.Hangup.Reason)
		}
		kind, data, end = trace.KindAgentHangup, d, &ending{reason: "agent hung up"}
	case m.Event == native.EventTransfer:
		d := &trace.Note{}
		if m.Transfer != nil {
			d.Text = c.str(m.Transfer.To)
		}
		kind, data, end = trace.KindAgentTransfer, d, &ending{reason: "agent transferred the call"}
	default:
		r.unknown(f)
	}
	if kind != "" {
		r.rec.Record(trace.SourceAgent, kind, data)
	}
	if c.cut {
		r.truncated.Add(1)
	}
	r.textSent += c.sent
	if r.textSent > r.lim.MaxCallTextBytes {
		r.note(fmt.Sprintf("agent sent %d bytes of text, over the call's budget of %d (MaxCallTextBytes)", r.textSent, r.lim.MaxCallTextBytes))
		return agentError(ReasonTextBudget)
	}
	return end
}

// unknown records a message this version does not understand (including a
// known event without its payload) and otherwise ignores it, so agents can
// send extensions. It is kept verbatim up to the per-event cap and is not
// agent text: the history budget bounds it.
func (r *run) unknown(f Frame) {
	c := newClipper(r.lim.MaxEventTextBytes)
	text := c.bytes(f.Raw)
	if c.cut {
		r.truncated.Add(1)
	}
	r.rec.Record(trace.SourceAgent, trace.KindAgentUnknown, &trace.Note{Text: text})
}

// meter is a token bucket: bursts up to one second's allowance, then the
// sustained rate.
type meter struct {
	clock  trace.Clock
	rate   float64
	tokens float64
	last   time.Time
}

func newMeter(c trace.Clock, perSecond int) *meter {
	return &meter{clock: c, rate: float64(perSecond), tokens: float64(perSecond), last: c.Now()}
}

func (m *meter) take() bool {
	now := m.clock.Now()
	m.tokens = min(m.rate, m.tokens+now.Sub(m.last).Seconds()*m.rate)
	m.last = now
	if m.tokens < 1 {
		return false
	}
	m.tokens--
	return true
}
