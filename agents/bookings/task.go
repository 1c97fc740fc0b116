package bookings

import (
	"maps"
	"net/http"
)

// phase is where a task stands.
type phase int

const (
	phReading  phase = iota // looking the booking up
	phReadBack              // saying what it will do; writes when done saying it
	phAsking                // waiting for the caller's yes
	phWriting               // a write is out
	phChecking              // finding out what a doubtful, pending or aborted write did
	phDone                  // the write landed
	phFailed                // the write did not land and the caller was told
	phStopped               // the caller withdrew the request and was told
)

// task is the caller's one request and what the desk did about it.
type task struct {
	tool    string
	slots   map[string]string // the caller's latest values
	frozen  map[string]string // the values when work started (FrozenArgs)
	rec     map[string]string // the booking as read before writing
	phase   phase
	read    func() // aborts the lookup in flight
	reads   int
	w       *write // the latest write
	tries   int    // attempts of the latest arguments
	polls   int
	pending bool // a write answered 202 has not been seen to land
	stopped bool // the caller withdrew the request
	redo    bool // write the corrected values once the write out now settles
	ver     int  // rises with every correction of the slots
	readVer int  // the ver the read-back in progress was built from
}

// write is one attempt at a write.
type write struct {
	args  map[string]string
	key   string
	abort func()
	gone  bool // aborted or forgotten: its answer is ignored
}

func (t *task) finished() bool {
	return t.phase == phDone || t.phase == phFailed || t.phase == phStopped
}

// ref is the booking the task is about ("" for a new booking).
func (t *task) ref() string { return t.slots[argRef] }

// hear takes the caller's final words.
func (s *session) hear(text string) {
	h := listen(text)
	t := s.task
	resume := s.resume
	s.resume = nil
	switch {
	case h.stop:
		s.stop()
	case h.tool != "" && (t == nil || t.finished()):
		s.begin(h)
	case t != nil && len(s.changes(t, h.values)) > 0:
		s.correct(t, h)
	case t != nil && h.yes && t.phase == phAsking:
		s.think(func() {
			if s.task == t && t.phase == phAsking {
				s.write(t, false)
			}
		})
	case len(resume) > 0:
		for _, fn := range resume {
			fn()
		}
	case h.yes:
		s.think(func() { s.say(lineOkay, nil) })
	default:
		s.think(func() { s.say(lineAgain, nil) })
	}
}

// changes are the values of h that are arguments of t's tool and differ
// from what the desk holds.
func (s *session) changes(t *task, values map[string]string) map[string]string {
	out := map[string]string{}
	for _, k := range argsOf(t.tool) {
		if v, ok := values[k]; ok && v != t.slots[k] {
			out[k] = v
		}
	}
	return out
}

// begin starts a new request.
func (s *session) begin(h heard) {
	t := &task{tool: h.tool, slots: map[string]string{}}
	for _, k := range argsOf(h.tool) {
		if v, ok := h.values[k]; ok {
			t.slots[k] = v
		}
	}
	s.task = t
	s.think(func() {
		if s.task != t {
			return
		}
		t.frozen = maps.Clone(t.slots)
		s.report(t.slots, t.tool)
		if t.tool == toolBook {
			if s.v.SkipCreate {
				t.phase = phDone
				s.report(t.slots, "")
				s.say(success(t.tool, t.slots), nil)
				return
			}
			s.write(t, false)
			s.say(lineBooking, nil)
			return
		}
		if t.ref() == "" {
			t.phase = phFailed
			s.say("Which booking number is that?", nil)
			s.task = nil
			return
		}
		s.lookup(t)
	})
}

// lookup reads the booking the task is about.
func (s *session) lookup(t *task) {
	ref := t.ref()
	t.phase = phReading
	t.reads++
	t.read = s.call(toolFind, map[string]string{argRef: ref}, "", readTimeout, func(a answer) { s.looked(t, ref, a) })
}

func (s *session) looked(t *task, ref string, a answer) {
	if s.task != t || t.phase != phReading || a.aborted || ref != t.ref() {
		return
	}
	t.read = nil
	switch {
	case a.ok() && a.rec.Key == ref:
		t.rec = a.rec.Fields
		s.proceed(t)
	case a.ok() && s.v.TrustLookup:
		// The answer is about another booking; taken as the one meant.
		t.slots[argRef] = a.rec.Key
		t.frozen[argRef] = a.rec.Key
		t.rec = a.rec.Fields
		s.report(t.slots, t.tool)
		s.proceed(t)
	case a.status == http.StatusNotFound:
		t.phase = phFailed
		s.report(t.slots, "")
		s.say(notFound(ref), nil)
	case t.reads < readTries:
		if a.ok() {
			s.say(lineRecheck, nil) // another booking came back: look again
		}
		s.later(retryPause, func() {
			if s.task == t && t.phase == phReading && t.read == nil {
				s.lookup(t)
			}
		})
	default:
		t.phase = phFailed
		s.report(t.slots, "")
		s.say("Sorry, I can't reach the bookings system right now, so nothing has changed.", nil)
	}
}

// proceed goes on once the booking is read: each tool has its own pace.
func (s *session) proceed(t *task) {
	switch t.tool {
	case toolReschedule:
		// Say it first, write when done saying it.
		t.phase, t.readVer = phReadBack, t.ver
		s.say(readBack(t.tool, t.slots), func() {
			s.later(breath, func() {
				if s.task == t && t.phase == phReadBack {
					s.write(t, false)
				}
			})
		})
	case toolParty:
		// Write at once, talk meanwhile.
		s.write(t, false)
		s.say(readBack(t.tool, t.slots), nil)
	default:
		// Cancellations and refunds are asked first.
		t.phase = phAsking
		s.say(question(t.tool, t.slots, t.rec), nil)
	}
}

// write sends the task's write. retry reuses the key of the write before
// (its outcome is unknown); otherwise the write gets a fresh key.
func (s *session) write(t *task, retry bool) {
	src := t.slots
	if s.v.FrozenArgs && t.frozen != nil {
		src = t.frozen
	}
	args := map[string]string{}
	for _, k := range argsOf(t.tool) {
		if v, ok := src[k]; ok {
			args[k] = v
		}
	}
	key := ""
	if retry && t.w != nil && maps.Equal(t.w.args, args) {
		key = t.w.key
	} else {
		key = s.newKey()
	}
	if t.w == nil || !maps.Equal(t.w.args, args) {
		t.tries = 0
	}
	t.tries++
	w := &write{args: args, key: key}
	t.w, t.phase = w, phWriting
	s.report(t.slots, t.tool)
	w.abort = s.call(t.tool, args, key, writeTimeout, func(a answer) { s.wrote(t, w, a) })
	if s.v.ClaimOnSend {
		w.gone = true // the answer is never looked at
		t.phase = phDone
		s.say(success(t.tool, t.slots), nil)
	}
}

// wrote takes a write's answer.
func (s *session) wrote(t *task, w *write, a answer) {
	if w.gone || a.aborted || s.task != t || t.w != w {
		return
	}
	if t.redo {
		// A correction came while this write was out (NoCancel): now
		// send the corrected one.
		t.redo = false
		s.write(t, false)
		return
	}
	ref := w.args[argRef]
	if creates(t.tool) {
		ref = ""
	}
	switch {
	case a.ok() && (s.v.TrustLookup || holds(a.rec, ref, w.args)):
		s.landed(t, w)
	case a.pending:
		t.pending, t.phase, t.polls = true, phChecking, 0
		s.say(submitted(), nil)
		s.poll(t, w)
	case a.ok() || a.empty || a.lost:
		s.doubt(t, w, false)
	case a.transient() || (a.status == http.StatusConflict && a.errorType == "idempotency_key_in_use"):
		if s.v.GiveUpFirst {
			s.fail(t, true)
			return
		}
		s.doubt(t, w, a.definite())
	default:
		s.fail(t, false)
	}
}

// doubt finds out what a write did when its answer does not say: a read
// for a booking change, else a retry. definite: the backend answered with
// an error, so its key holds that error and a retry needs a new one.
func (s *session) doubt(t *task, w *write, definite bool) {
	t.phase = phChecking
	if t.tries >= writeTries {
		s.fail(t, true)
		return
	}
	again := func() {
		s.later(retryPause, func() {
			if s.task != t || t.w != w || t.stopped {
				return
			}
			s.write(t, !definite)
		})
	}
	if creates(t.tool) {
		again()
		return
	}
	ref := w.args[argRef]
	s.call(toolFind, map[string]string{argRef: ref}, "", readTimeout, func(a answer) {
		if s.task != t || t.w != w {
			return
		}
		if a.ok() && holds(a.rec, ref, w.args) {
			s.landed(t, w)
			return
		}
		if t.stopped {
			s.settleStop(t, a)
			return
		}
		again()
	})
}

// poll reads the booking until a pending write shows up.
func (s *session) poll(t *task, w *write) {
	ref := w.args[argRef]
	s.later(pollEvery, func() {
		if s.task != t || t.w != w || !t.pending {
			return
		}
		s.call(toolFind, map[string]string{argRef: ref}, "", readTimeout, func(a answer) {
			if s.task != t || t.w != w || !t.pending {
				return
			}
			if a.ok() && holds(a.rec, ref, w.args) {
				t.pending = false
				s.landed(t, w)
				return
			}
			t.polls++
			if t.polls >= pollMax {
				t.pending = false
				t.phase = phFailed
				s.report(t.slots, "")
				s.say(undetermined(t.ref()), nil)
				return
			}
			s.poll(t, w)
		})
	})
}

// landed: the write is in the backend.
func (s *session) landed(t *task, w *write) {
	t.phase = phDone
	if t.stopped {
		s.undoOrOwn(t, w)
		return
	}
	if t.redo {
		t.redo = false
		s.write(t, false)
		return
	}
	s.report(t.slots, "")
	s.say(success(t.tool, t.slots), nil)
}

// fail tells the caller the write did not land.
func (s *session) fail(t *task, down bool) {
	t.phase = phFailed
	s.report(t.slots, "")
	s.say(failed(t.tool, t.ref(), t.rec, down), nil)
}

// correct takes new values for the task in hand.
func (s *session) correct(t *task, h heard) {
	changed := s.changes(t, h.values)
	for k, v := range changed {
		t.slots[k] = v
	}
	t.ver++
	_, refChanged := changed[argRef]
	// Abort at once; speak and rebuild after thinking.
	switch t.phase {
	case phReading:
		if refChanged && t.read != nil {
			t.read()
			t.read = nil
		}
	case phWriting:
		if s.v.NoCancel {
			t.redo = true
		} else {
			t.w.gone = true
			t.w.abort()
		}
	case phChecking:
		t.redo = true
	}
	s.report(t.slots, t.tool)
	s.think(func() {
		if s.task != t {
			return
		}
		switch t.phase {
		case phReading:
			s.say(ack(changed), nil)
			if refChanged {
				s.lookup(t)
			}
		case phAsking:
			if !h.yes {
				s.say(question(t.tool, t.slots, t.rec), nil)
				return
			}
			s.say(ack(changed), nil)
			s.write(t, false)
		case phReadBack:
			if t.readVer == t.ver && s.cur != nil {
				return // the read-back being said already has the new values
			}
			s.say(ack(changed), nil)
			s.write(t, false)
		case phDone, phFailed:
			s.say(ack(changed), nil)
			s.write(t, false)
		case phWriting:
			s.say(ack(changed), nil)
			if !s.v.NoCancel {
				s.write(t, false)
			}
		case phChecking:
			s.say(ack(changed), nil)
		}
	})
}

// stop takes the caller's withdrawal of the request.
func (s *session) stop() {
	t := s.task
	if t == nil || t.phase == phFailed || t.phase == phStopped {
		s.think(func() { s.say(lineOkay, nil) })
		return
	}
	t.stopped = true
	switch t.phase {
	case phReading, phReadBack, phAsking:
		if t.read != nil {
			t.read()
			t.read = nil
		}
		t.phase = phStopped
		s.report(t.slots, "")
		s.think(func() { s.say(nothingSent(t.tool, t.ref(), t.rec), nil) })
	case phWriting:
		if s.v.NoCancel {
			// The write stays out and is forgotten.
			t.w.gone = true
			s.task = nil
			s.report(t.slots, "")
			s.think(func() { s.say(leftAlone(t.tool, t.ref(), t.rec), nil) })
			return
		}
		t.w.gone = true
		t.w.abort()
		t.phase = phChecking
		s.report(t.slots, "")
		s.think(func() { s.checkStop(t) })
	case phChecking:
		s.report(t.slots, "")
		if t.pending {
			s.think(func() { s.say("That was already submitted, so I'll check where it landed.", nil) })
		}
	case phDone:
		s.report(t.slots, "")
		s.think(func() { s.checkStop(t) })
	}
}

// checkStop reads the booking after a stop to learn whether the write
// landed.
func (s *session) checkStop(t *task) {
	if s.task != t {
		return
	}
	if creates(t.tool) || t.w == nil {
		t.phase = phStopped
		if t.w != nil && t.w.gone {
			s.say("Okay, I've stopped that — "+standing(t.tool, t.ref(), t.rec)+".", nil)
			return
		}
		s.say(alreadyDone(t.tool, t.slots), nil)
		return
	}
	ref := t.w.args[argRef]
	s.call(toolFind, map[string]string{argRef: ref}, "", readTimeout, func(a answer) {
		if s.task != t {
			return
		}
		if a.ok() && holds(a.rec, ref, t.w.args) {
			s.undoOrOwn(t, t.w)
			return
		}
		s.settleStop(t, a)
	})
}

// settleStop: after a stop the write is not (yet) in the backend.
func (s *session) settleStop(t *task, a answer) {
	if t.pending {
		return // the poll reports when it lands
	}
	t.phase = phStopped
	rec := t.rec
	if a.ok() {
		rec = a.rec.Fields
	}
	s.say(unchanged(t.tool, t.ref(), rec), nil)
}

// undoOrOwn: the caller withdrew a write that landed. Compensate puts the
// booking back; otherwise the desk says where it stands.
func (s *session) undoOrOwn(t *task, w *write) {
	if !s.v.Compensate || t.rec == nil {
		t.phase = phStopped
		s.report(t.slots, "")
		s.say(alreadyDone(t.tool, w.args), nil)
		return
	}
	back := map[string]string{argRef: w.args[argRef]}
	for k := range w.args {
		if k != argRef {
			back[k] = t.rec[k]
		}
	}
	s.restore(t, w, back, 0)
}

// restore writes the previous values back.
func (s *session) restore(t *task, w *write, back map[string]string, tries int) {
	t.phase = phChecking
	s.report(back, "")
	ref := back[argRef]
	s.call(t.tool, back, s.newKey(), writeTimeout, func(a answer) {
		if s.task != t {
			return
		}
		if a.ok() && holds(a.rec, ref, back) {
			t.phase = phStopped
			s.say(putBack(t.tool, ref, back), nil)
			return
		}
		if tries+1 < writeTries && !a.aborted {
			s.later(retryPause, func() { s.restore(t, w, back, tries+1) })
			return
		}
		t.phase = phStopped
		s.say(notPutBack(t.tool, w.args), nil)
	})
}

// dropTask forgets the task in hand (NoiseBargeIn): nothing it had under
// way is followed up.
func (s *session) dropTask() {
	t := s.task
	s.task = nil
	s.resume = nil
	if t == nil {
		return
	}
	if t.read != nil {
		t.read()
		t.read = nil
	}
	s.report(t.slots, "")
}
