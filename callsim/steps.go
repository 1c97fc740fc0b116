package callsim

import (
	"fmt"
	"strings"
	"time"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// step waits for step i's trigger and performs it. A non-nil ending stops
// the call (caller hangup, required trigger missed).
func (r *run) step(i int) (*ending, error) {
	st := r.c.Script.Steps[i]
	end, err := r.trigger(st)
	if err != nil || end != nil {
		return end, err
	}
	switch st.Do {
	case trace.StepSay:
		var next *trace.Step
		if i+1 < len(r.c.Script.Steps) {
			next = &r.c.Script.Steps[i+1]
		}
		err = r.say(st, next)
	case trace.StepNoise:
		err = r.noise(st)
	case trace.StepSilence:
		if st.Duration == 0 && r.trigCause.Seq > 0 {
			// A zero-length silence on an event marks that event: the
			// steps after it count from the event itself, not from when
			// the caller got round to noticing it.
			r.last = r.trigCause
		}
		err = r.sleep(r.scaled(st.Duration))
	case trace.StepDTMF:
		r.caller(trace.KindCallerDTMF, &trace.CallerDTMF{Step: st.ID, Digits: st.Digits, Intent: st.Intent.Clone()})
		err = r.send(native.Message{Event: native.EventDTMF, DTMF: &native.DTMF{Digits: st.Digits}})
	case trace.StepHangup:
		if err := r.linger(); err != nil {
			return nil, err
		}
		// Run sends the stop frame, once the ending is settled.
		r.caller(trace.KindCallerHangup, &trace.Note{Text: "caller hung up"})
		return &ending{reason: "caller hung up"}, nil
	case trace.StepHold, trace.StepRelease, trace.StepFail, trace.StepFault:
		r.backend(st)
	case trace.StepWaitQuiet:
		err = r.waitQuiet(st)
	default:
		return &ending{outcome: trace.OutcomeHarnessError, reason: fmt.Sprintf("step %s: unknown kind %q", st.ID, st.Do)}, nil
	}
	if err != nil {
		return nil, err
	}
	r.finish(st.ID)
	return nil, nil
}

// finish marks a step done: later triggers look at events
// recorded after this mark. A step that ended with an event of its own
// (say, noise, dtmf) is done at that event, so an agent's quick answer to
// it is never mistaken for something that came before.
func (r *run) finish(id string) {
	r.drain()
	if r.last.Seq > 0 {
		r.marks[id], r.doneAt[id] = r.last.Seq, r.last.At
	} else {
		r.marks[id], r.doneAt[id] = r.lastSeq(), r.rec.Since()
	}
	r.last = trace.Event{}
	r.prevID = id
}

// caller records a caller event and remembers it as the step's latest.
func (r *run) caller(k trace.Kind, d any) {
	r.last = r.rec.Record(trace.SourceCaller, k, d)
}

// trigger waits for a step's trigger. A missed trigger ends the call for a
// required step; any other step then runs anyway (see missed).
func (r *run) trigger(st trace.Step) (*ending, error) {
	on := st.On
	after := on.After
	if after == "" {
		after = r.prevID
	}
	// The first step waits from the moment the script began.
	mark, at := 0, r.scriptAt
	if after != "" {
		var ok bool
		if mark, ok = r.marks[after]; !ok {
			return r.missed(st, fmt.Sprintf("step %q has not run", after))
		}
		at = r.doneAt[after]
	}
	delay := r.scaled(on.Delay)
	if on.Event == "" {
		return nil, r.waitLate(&r.late.Triggers, at+delay, r.rec.Since())
	}

	timeout := r.timeout
	if on.Timeout > 0 {
		timeout = r.waitBound(on.Timeout)
	}
	entry := r.rec.Since()
	deadline := entry + timeout
	// An agent whose ack says it sends tool_intent is waited for: its
	// notice, not a clock, marks the moment (an ordering, however late
	// either side runs).
	fallback := on.Event == trace.KindAgentToolIntent && on.Fallback > 0 && !r.intents.Load()
	var hit *trace.Event
	viaFallback := false
	scan := mark + 1 // the next seq to look at
	found := func() bool {
		for ; scan <= r.seen; scan++ {
			if e, ok := r.rec.Event(scan); ok && matches(&e, on.Event, on.Match) {
				hit = &e
				scan++
				return true
			}
		}
		return false
	}
	for hit == nil {
		until := deadline
		var fbAt time.Duration
		if fallback {
			// Fire this long after the caller's last final words, or after
			// the wait began if the caller has not spoken.
			fbAt = at + r.scaled(on.Fallback)
			if r.lastFinalSeq > 0 {
				fbAt = r.lastFinalAt + r.scaled(on.Fallback)
			}
			until = fbAt
		}
		ok, err := r.waitUntil(until, found)
		if err != nil {
			return nil, err
		}
		if ok {
			break
		}
		if fallback && r.rec.Since() >= fbAt {
			viaFallback = true
			r.late.Triggers.Add(max(r.woke-max(fbAt, entry), 0))
			break
		}
		if !fallback && r.rec.Since() >= deadline {
			return r.missed(st, fmt.Sprintf("no %s within %s", on.Event, timeout))
		}
	}

	note := &trace.TriggerNote{Step: st.ID, On: describe(on)}
	from := r.rec.Since()
	r.trigCause = trace.Event{}
	if viaFallback {
		note.Cause = r.lastFinalSeq
		note.On += " (fallback)"
	} else {
		note.Cause = hit.Seq
		from = hit.At
		if delay == 0 {
			r.trigCause = *hit
			// How long the event waited for the caller to notice it.
			r.late.Triggers.Add(max(r.woke-max(hit.At, entry), 0))
		}
	}
	var err error
	switch {
	case delay > 0 && on.Partials > 0 && hit != nil:
		var early bool
		if early, err = r.waitUntil(from+delay, r.partials(hit, on.Partials)); err == nil && !early {
			r.late.Triggers.Add(max(r.woke-(from+delay), 0))
		}
		if early {
			note.On += fmt.Sprintf(" (partial %d)", on.Partials)
		}
	case delay > 0:
		err = r.waitLate(&r.late.Triggers, from+delay, entry)
	default:
		_, err = r.waitUntil(from, nil)
	}
	if err != nil {
		return nil, err
	}
	r.rec.Record(trace.SourceHarness, trace.KindTriggerFired, note)
	return nil, nil
}

// partials reports, each time it is called, whether the utterance start
// opened has reached its nth agent.speech_text (Trigger.Partials).
func (r *run) partials(start *trace.Event, n int) func() bool {
	utt := ""
	if d, ok := start.Data.(*trace.AgentSpeech); ok {
		utt = d.Utterance
	}
	scan, got := start.Seq+1, 0
	return func() bool {
		for ; scan <= r.seen; scan++ {
			e, ok := r.rec.Event(scan)
			if !ok || e.Kind != trace.KindAgentSpeechText {
				continue
			}
			if d, ok := e.Data.(*trace.AgentSpeech); ok && d.Utterance == utt {
				if got++; got >= n {
					scan++
					return true
				}
			}
		}
		return false
	}
}

// missed records a trigger that never fired. A Required step ends the
// call as excluded; any other step runs anyway, late: a caller whose cue
// never came still says their piece (the request after a greeting that
// never came, a correction the agent gave no opening for), and the call is
// scored on what happened.
func (r *run) missed(st trace.Step, reason string) (*ending, error) {
	r.rec.Record(trace.SourceHarness, trace.KindTriggerMissed, &trace.TriggerNote{Step: st.ID, On: describe(st.On), Reason: reason})
	if st.Required {
		return &ending{outcome: trace.OutcomeExcluded, reason: fmt.Sprintf("step %s: trigger missed: %s", st.ID, reason)}, nil
	}
	return nil, nil
}

// matches reports whether e is the trigger's event. A tool match applies to
// events that name a tool (tool.*, agent.tool_intent) and excludes others.
func matches(e *trace.Event, kind trace.Kind, m *trace.ToolMatch) bool {
	if e.Kind != kind {
		return false
	}
	if m == nil {
		return true
	}
	switch d := e.Data.(type) {
	case *trace.ToolEvent:
		return m.Matches(d.Tool, d.Args)
	case *trace.AgentToolIntent:
		return m.Matches(d.Tool, d.Args)
	}
	return false
}

func describe(on trace.Trigger) string {
	var b strings.Builder
	if on.After != "" {
		b.WriteString("after " + on.After + " ")
	}
	if on.Event != "" {
		b.WriteString(string(on.Event))
		if on.Match != nil {
			b.WriteString("{")
			if on.Match.Tool != "" {
				b.WriteString("tool=" + on.Match.Tool)
			}
			for _, k := range trace.SortedKeys(on.Match.Args) {
				fmt.Fprintf(&b, " %s=%s", k, on.Match.Args[k])
			}
			b.WriteString("}")
		}
	}
	if on.Delay > 0 {
		fmt.Fprintf(&b, " +%s", on.Delay)
	}
	return strings.TrimSpace(b.String())
}

// say speaks one utterance: onset before any words, partials spread over
// its duration, the whole text as final at the end. When next goes on in
// the same turn (sameTurn), its onset goes out just before this final: an
// agent never sees the turn's words end with no utterance open and starts
// answering half a turn.
func (r *run) say(st trace.Step, next *trace.Step) error {
	u := r.opened
	r.opened = nil
	if u == nil || u.step != st.ID {
		var err error
		if u, err = r.onset(st); err != nil {
			return err
		}
	}
	words := strings.Fields(st.Text)
	n := len(words)
	for k := 1; k < n; k++ {
		if err := r.waitLate(&r.late.Speech, u.begin+u.dur*time.Duration(k)/time.Duration(n), 0); err != nil {
			return err
		}
		text := wordsPrefix(st.Text, words, k)
		r.caller(trace.KindCallerSpeechPartial, u.event(st, text, nil))
		if err := r.send(native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: u.id, Phase: native.PhasePartial, Text: text}}); err != nil {
			return err
		}
	}
	if err := r.waitLate(&r.late.Speech, u.begin+u.dur, 0); err != nil {
		return err
	}
	if next != nil && sameTurn(st, *next) {
		var err error
		if r.opened, err = r.onset(*next); err != nil {
			return err
		}
	}
	r.caller(trace.KindCallerSpeechFinal, u.event(st, st.Text, st.Intent.Clone()))
	return r.send(native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: u.id, Phase: native.PhaseFinal, Text: st.Text}})
}

// utterance is one caller utterance under way: its id and when its words
// began and end (call time).
type utterance struct {
	step, id   string
	begin, dur time.Duration
}

func (u *utterance) event(st trace.Step, text string, intent *trace.Intent) *trace.CallerSpeech {
	return &trace.CallerSpeech{Step: st.ID, Utterance: u.id, Act: st.Act, Text: text, Intent: intent, Invalidates: st.Invalidates}
}

// onset opens step st's utterance: its speech is prepared, its start
// recorded and its onset sent.
func (r *run) onset(st trace.Step) (*utterance, error) {
	r.utt++
	u := &utterance{step: st.ID, id: fmt.Sprintf("u%d", r.utt)}
	u.dur = st.Duration
	if u.dur <= 0 {
		u.dur = max(time.Duration(len(strings.Fields(st.Text)))*WordDuration, MinSpeech)
	}
	u.dur = r.scaled(u.dur)
	if v, ok := r.conn.(Voice); ok {
		var d time.Duration
		var err error
		if st.Audio != "" {
			d, err = v.PrepareRecording(r.ctx, u.id, st.Audio, false)
		} else {
			d, err = v.PrepareSpeech(r.ctx, u.id, st.Text)
		}
		if err != nil {
			return nil, &ending{outcome: trace.OutcomeHarnessError, reason: fmt.Sprintf("step %s: speech: %v", st.ID, err)}
		}
		u.dur = d
	}
	u.begin = r.rec.Since()
	r.caller(trace.KindCallerSpeechStart, u.event(st, "", nil))
	return u, r.send(native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: u.id, Phase: native.PhaseOnset}})
}

// sameTurn reports whether next is more of st's turn: speech that starts
// the moment st's ends (no event, no delay, counted from st), like an
// early correction straight after its request.
func sameTurn(st, next trace.Step) bool {
	on := next.On
	return st.Do == trace.StepSay && next.Do == trace.StepSay &&
		on.Event == "" && on.Delay == 0 && (on.After == "" || on.After == st.ID)
}

func (r *run) noise(st trace.Step) error {
	r.snd++
	id := fmt.Sprintf("n%d", r.snd)
	dur := r.scaled(orDefault(st.Duration, DefaultNoise))
	if v, ok := r.conn.(Voice); ok {
		var err error
		if st.Audio != "" {
			_, err = v.PrepareRecording(r.ctx, id, st.Audio, true)
		} else {
			err = v.PrepareSound(r.ctx, id, st.Sound, dur)
		}
		if err != nil {
			return &ending{outcome: trace.OutcomeHarnessError, reason: fmt.Sprintf("step %s: noise: %v", st.ID, err)}
		}
	}
	data := &trace.CallerNoise{Step: st.ID, ID: id, Sound: st.Sound, Duration: dur}
	r.caller(trace.KindCallerNoiseStart, data)
	if err := r.send(native.Message{Event: native.EventSound, Sound: &native.Sound{ID: id, Phase: native.PhaseOnset, Kind: st.Sound}}); err != nil {
		return err
	}
	if err := r.sleep(dur); err != nil {
		return err
	}
	r.caller(trace.KindCallerNoiseEnd, data)
	return r.send(native.Message{Event: native.EventSound, Sound: &native.Sound{ID: id, Phase: native.PhaseOffset, Kind: st.Sound}})
}

// backend performs a backend-control step; a refusal is a note, not an
// ending, since the call is still worth scoring on what happened.
func (r *run) backend(st trace.Step) {
	b := r.c.Backend
	if b == nil {
		r.note(fmt.Sprintf("step %s: %s: no backend", st.ID, st.Do))
		return
	}
	var err error
	switch st.Do {
	case trace.StepHold:
		err = b.Hold(st.Hold, st.Match, st.Duration)
	case trace.StepRelease:
		err = b.Release(st.Hold)
	case trace.StepFail:
		err = b.Fail(st.Hold, st.Status)
	case trace.StepFault:
		if st.Fault == nil {
			err = fmt.Errorf("no fault given")
		} else {
			err = b.Inject(*st.Fault)
		}
	}
	if err != nil {
		r.note(fmt.Sprintf("step %s: %s: %v", st.ID, st.Do, err))
	}
}

// linger waits, before the caller hangs up, as long as the connection
// asks (Lingerer); an agent that leaves meanwhile ends the call (the
// wait returns its ending). Real time: the agent's, not the script's.
func (r *run) linger() error {
	l, ok := r.conn.(Lingerer)
	if !ok || l.Linger() <= 0 {
		return nil
	}
	_, err := r.waitUntil(r.rec.Since()+l.Linger(), nil)
	return err
}

// waitQuiet completes once the agent has been silent with no tool call
// open for Script.Quiet, counted from the step's start at the earliest.
func (r *run) waitQuiet(st trace.Step) error {
	quiet := r.scaled(orDefault(r.c.Script.Quiet, DefaultQuiet))
	timeout := r.timeout
	if st.On.Timeout > 0 {
		timeout = r.waitBound(st.On.Timeout)
	}
	begin := r.rec.Since()
	deadline := begin + timeout
	// target is when the agent will have been quiet long enough, if it
	// stays as it is now.
	target := func() time.Duration {
		// Silence counts only once the agent has answered the caller's
		// last words: a slow machine must not hang up on an agent that is
		// about to reply.
		if !r.quiet() || !r.answered {
			return deadline
		}
		return min(max(r.quietSince, begin)+quiet, deadline)
	}
	for {
		until := target()
		// Return early when the agent's state moves the target.
		if _, err := r.waitUntil(until, func() bool { return target() != until }); err != nil {
			return err
		}
		now := r.rec.Since()
		if t := target(); t < deadline && now >= t {
			if t == until {
				r.late.Triggers.Add(max(r.woke-max(t, begin), 0))
			}
			return nil
		}
		if now >= deadline {
			r.late.Triggers.Add(max(r.woke-max(deadline, begin), 0))
			r.note(fmt.Sprintf("step %s: agent not quiet for %s within %s; going on", st.ID, quiet, timeout))
			return nil
		}
	}
}

// wordsPrefix is the first k of words (strings.Fields(text)) joined by
// single spaces: a slice of text itself when text spaces them so, as
// scripts almost always do, so a partial costs no copy of its words.
func wordsPrefix(text string, words []string, k int) string {
	lead := len(text) - len(strings.TrimLeft(text, " \t\r\n"))
	end := lead
	for i, w := range words[:k] {
		if i > 0 {
			end++
		}
		if !strings.HasPrefix(text[min(end, len(text)):], w) || (i > 0 && text[end-1] != ' ') {
			return strings.Join(words[:k], " ")
		}
		end += len(w)
	}
	return text[lead:end]
}
