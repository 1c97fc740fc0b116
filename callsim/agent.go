package callsim

import (
	"errors"
	"fmt"
	"time"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// maxUnknownText bounds how much of an unknown frame the history keeps.
const maxUnknownText = 4096

// pump is the only consumer of the connection: it records every agent
// frame and ends the call (through the call context) on a hangup, a
// transfer or a protocol violation.
func (r *run) pump() {
	meter := newMeter(r.s.opts.Clock, r.s.opts.MaxMessagesPerSecond)
	total := 0
	for {
		f, err := r.conn.Recv(r.base)
		if err != nil {
			if r.base.Err() != nil {
				return
			}
			switch {
			case errors.Is(err, ErrGarbageFrame):
				r.note("agent sent a frame that is not a JSON message: " + err.Error())
				r.stop(agentError("garbage frame"))
			case errors.Is(err, ErrOversizedFrame):
				r.stop(agentError("oversized frame"))
			default:
				r.connDown.Store(true)
				r.stop(agentError("agent closed the connection: " + err.Error()))
			}
			return
		}
		total++
		if total > r.s.opts.MaxMessagesPerCall || !meter.take() {
			r.stop(agentError("flood"))
			return
		}
		if e := r.agentFrame(f); e != nil {
			r.stop(e)
			return
		}
	}
}

// agentFrame records one agent message as its trace event.
func (r *run) agentFrame(f Frame) *ending {
	m := f.Message
	rec := func(k trace.Kind, d any) { r.rec.Record(trace.SourceAgent, k, d) }
	switch {
	case m.Event == native.EventAck:
		a := native.Ack{}
		if m.Ack != nil {
			a = *m.Ack
		}
		select {
		case r.ackCh <- a:
			r.note(fmt.Sprintf("agent ack: time scale %g agent %q", a.TimeScale, a.Agent))
		default:
			r.note("agent sent another ack; ignored")
		}
	case m.Event == native.EventAgentSpeech && m.AgentSpeech != nil:
		s := m.AgentSpeech
		d := &trace.AgentSpeech{Utterance: s.ID, Text: s.Text}
		switch s.Phase {
		case native.PhaseStart:
			rec(trace.KindAgentSpeechStart, d)
		case native.PhaseText:
			rec(trace.KindAgentSpeechText, d)
		case native.PhaseEnd:
			rec(trace.KindAgentSpeechEnd, d)
		default:
			r.unknown(f)
		}
	case m.Event == native.EventClear:
		d := &trace.AgentSpeech{}
		if m.Clear != nil {
			d.Utterance = m.Clear.ID
		}
		rec(trace.KindAgentClear, d)
	case m.Event == native.EventToolIntent && m.ToolIntent != nil:
		rec(trace.KindAgentToolIntent, &trace.AgentToolIntent{Tool: m.ToolIntent.Tool, Args: m.ToolIntent.Args})
	case m.Event == native.EventState && m.State != nil:
		rec(trace.KindAgentState, &trace.AgentState{Version: m.State.Version, Slots: m.State.Slots, Pending: m.State.Pending})
	case m.Event == native.EventHangup:
		d := &trace.Note{}
		if m.Hangup != nil {
			d.Text = m.Hangup.Reason
		}
		rec(trace.KindAgentHangup, d)
		return &ending{reason: "agent hung up"}
	case m.Event == native.EventTransfer:
		d := &trace.Note{}
		if m.Transfer != nil {
			d.Text = m.Transfer.To
		}
		rec(trace.KindAgentTransfer, d)
		return &ending{reason: "agent transferred the call"}
	default:
		r.unknown(f)
	}
	return nil
}

// unknown records a message this version does not understand (including a
// known event without its payload) and otherwise ignores it, so agents can
// send extensions.
func (r *run) unknown(f Frame) {
	text := string(f.Raw)
	if len(text) > maxUnknownText {
		text = text[:maxUnknownText] + "…(truncated)"
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
