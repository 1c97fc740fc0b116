package payments

import (
	"fmt"
	"maps"
	"net/http"
	"strings"
)

// stage is where the caller's request stands.
type stage int

const (
	stLookup  stage = iota // reading the payee or the payment
	stAsk                  // read back; waiting for the caller's yes
	stWrite                // a write is out
	stDone                 // the write landed
	stFailed               // it did not, and the caller was told
	stDropped              // the caller withdrew it
)

// job is the caller's one request and what the line did about it.
type job struct {
	tool      string
	slots     map[string]string // the caller's latest values
	first     map[string]string // the values first heard (Frozen)
	stage     stage
	abortRead func()
	reads     int
	payeeName string
	rec       map[string]string // the payment read (update, cancel)
	w         *attempt
	tries     int
	slowSaid  bool
	created   string // the key of the payment schedule_payment made
}

// attempt is one write request.
type attempt struct {
	args    map[string]string
	key     string
	abort   func()
	ignored bool // aborted or forgotten: its reply is not looked at
}

func (j *job) over() bool { return j.stage == stDone || j.stage == stFailed || j.stage == stDropped }

// heard takes the caller's final words (under the lock).
func (c *call) heard(text string) {
	u := listen(text, c.today)
	j := c.job
	switch {
	case u.stop:
		c.withdraw()
	case u.tool != "" && (j == nil || j.over()):
		c.open(u)
	case j != nil && !j.over() && len(c.changed(j, u.values)) > 0:
		c.amend(j, c.changed(j, u.values), u.yes)
	case j != nil && u.yes && j.stage == stAsk:
		c.write(j, false)
	case u.yes:
		c.say(sayOkay, nil)
	default:
		c.say(sayPardon, nil)
	}
}

// changed are the values of the job's arguments that differ from its slots.
func (c *call) changed(j *job, values map[string]string) map[string]string {
	out := map[string]string{}
	for _, k := range argsFor(j.tool) {
		if v, ok := values[k]; ok && v != j.slots[k] {
			out[k] = v
		}
	}
	return out
}

// open starts a new request.
func (c *call) open(u utterance) {
	j := &job{tool: u.tool, slots: map[string]string{}}
	for _, k := range argsFor(u.tool) {
		if v, ok := u.values[k]; ok {
			j.slots[k] = v
		}
	}
	j.first = maps.Clone(j.slots)
	c.job = j
	c.selfReport(j.slots, j.tool)
	switch {
	case j.tool == toolSchedule && c.v.NoCreate:
		j.stage = stDone
		c.selfReport(j.slots, "")
		c.say(c.doneLine(j.tool, j.slots, "your "+j.slots[slotPayee]), nil)
	case j.tool == toolSchedule:
		c.say(sayOneSec, nil)
		c.lookup(j)
	case j.slots[slotID] == "":
		j.stage = stFailed
		c.say("Which payment number is that?", nil)
	default:
		c.lookup(j)
	}
}

// lookup reads the payee of a new payment or the payment to change.
func (c *call) lookup(j *job) {
	j.stage = stLookup
	j.reads++
	tool, arg := toolFindPayee, slotPayee
	if j.tool != toolSchedule {
		tool, arg = toolFindPayment, slotID
	}
	asked := j.slots[arg]
	j.abortRead = c.request(tool, map[string]string{arg: asked}, "", lookupLimit, func(r reply) {
		if c.job != j || j.stage != stLookup || r.aborted || j.slots[arg] != asked {
			return
		}
		j.abortRead = nil
		switch {
		case r.ok():
			c.found(j, r)
		case r.status == http.StatusNotFound:
			j.stage = stFailed
			c.selfReport(j.slots, "")
			c.say(fmt.Sprintf("I can't find %s on your account. Could you check it?", strings.ReplaceAll(asked, "-", " ")), nil)
		case r.transient() && j.reads < attempts:
			c.after(retryAfter, func() {
				if c.job == j && j.stage == stLookup && j.abortRead == nil {
					c.lookup(j)
				}
			})
		default:
			j.stage = stFailed
			c.selfReport(j.slots, "")
			c.say(c.failLine(j.tool), nil)
		}
	})
}

// found goes on once the lookup answered.
func (c *call) found(j *job, r reply) {
	switch j.tool {
	case toolSchedule:
		j.payeeName = "your " + j.slots[slotPayee] + ", " + r.fields["name"]
		j.stage = stAsk
		c.say(c.readBackLine(j.slots, j.payeeName), nil)
	case toolUpdate:
		j.rec = r.fields
		c.write(j, false)
		if c.v.Terse {
			c.say("Sure, one moment.", nil)
		} else {
			c.say(fmt.Sprintf("Sure, changing payment %s to %s.", digitWords(j.slots[slotID]), moneyWords(j.slots[slotAmount])), nil)
		}
	default:
		j.rec = r.fields
		j.stage = stAsk
		c.say(c.askCancelLine(j.slots[slotID], r.fields), nil)
	}
}

// amend takes corrected values for the request in hand.
func (c *call) amend(j *job, changes map[string]string, yes bool) {
	for k, v := range changes {
		j.slots[k] = v
	}
	c.selfReport(j.slots, j.tool)
	ack := "Sure."
	if !c.v.Terse {
		ack = "Sure — " + changeWords(changes) + "."
	}
	switch j.stage {
	case stLookup:
		c.say(ack, nil)
		if _, ok := changes[slotPayee]; ok && j.abortRead != nil {
			j.abortRead()
			j.abortRead = nil
			c.lookup(j)
		}
	case stAsk:
		if yes {
			c.say(ack, nil)
			c.write(j, false)
			return
		}
		c.say(c.readBackLine(j.slots, j.payeeName), nil)
	case stWrite:
		c.say(ack, nil)
		if !c.v.NoAbort {
			j.w.ignored = true
			j.w.abort()
			c.write(j, false)
		}
	}
}

// changeWords says corrected values: "two hundred and fifty dollars".
func changeWords(ch map[string]string) string {
	var parts []string
	if a := ch[slotAmount]; a != "" {
		parts = append(parts, moneyWords(a))
	}
	if d := ch[slotDate]; d != "" {
		parts = append(parts, dayWords(d))
	}
	if p := ch[slotPayee]; p != "" {
		parts = append(parts, "to your "+p)
	}
	if r := ch[slotRef]; r != "" {
		parts = append(parts, "reference "+natoCode(r))
	}
	if f := ch[slotFrom]; f != "" {
		parts = append(parts, "from "+accountWords(f))
	}
	return strings.Join(parts, ", ")
}

// write sends the job's write; retry reuses the last key when the
// arguments are the same (the outcome of that try is unknown).
func (c *call) write(j *job, retry bool) {
	src := j.slots
	if c.v.Frozen {
		src = j.first
	}
	args := map[string]string{}
	for _, k := range argsFor(j.tool) {
		if v, ok := src[k]; ok {
			args[k] = v
		} else if v, ok := j.slots[k]; ok {
			args[k] = v
		}
	}
	key := ""
	if retry && j.w != nil && maps.Equal(j.w.args, args) {
		key = j.w.key
	} else {
		key = c.freshKey()
	}
	if j.w == nil || !maps.Equal(j.w.args, args) {
		j.tries = 0
	}
	j.tries++
	w := &attempt{args: args, key: key}
	j.w, j.stage = w, stWrite
	c.selfReport(j.slots, j.tool)
	w.abort = c.request(j.tool, args, key, writeLimit, func(r reply) { c.wrote(j, w, r) })
	if c.v.Eager {
		w.ignored = true
		j.stage = stDone
		c.selfReport(j.slots, "")
		c.say(c.doneLine(j.tool, j.slots, j.payeeName), nil)
	}
}

// wrote takes a write's reply.
func (c *call) wrote(j *job, w *attempt, r reply) {
	if w.ignored || r.aborted || c.job != j || j.w != w {
		return
	}
	switch {
	case r.ok():
		j.stage = stDone
		if j.tool == toolSchedule {
			j.created = r.key
		}
		c.selfReport(j.slots, "")
		c.say(c.doneLine(j.tool, j.slots, j.payeeName), nil)
	case r.transient() && !c.v.Quit && j.tries < attempts:
		if r.lost && !j.slowSaid {
			j.slowSaid = true
			c.say(saySlow, nil)
		}
		// A lost reply may have landed: the same key finds it. An error
		// reply did nothing, and its key keeps that error: a new one.
		lost := r.lost
		c.after(retryAfter, func() {
			if c.job == j && j.w == w && j.stage == stWrite {
				c.write(j, lost)
			}
		})
	default:
		j.stage = stFailed
		c.selfReport(j.slots, "")
		c.say(c.failLine(j.tool), nil)
	}
}

// withdraw takes the caller's "stop" / "don't send it".
func (c *call) withdraw() {
	j := c.job
	if j == nil || j.stage == stFailed || j.stage == stDropped {
		c.say(sayOkay, nil)
		return
	}
	switch j.stage {
	case stLookup, stAsk:
		if j.abortRead != nil {
			j.abortRead()
			j.abortRead = nil
		}
		j.stage = stDropped
		c.selfReport(j.slots, "")
		c.say("Okay, I won't send anything.", nil)
	case stWrite:
		j.w.ignored = true
		if c.v.NoAbort {
			c.job = nil
			c.selfReport(j.slots, "")
			c.say("Okay, I've left it — nothing was sent.", nil)
			return
		}
		j.w.abort()
		j.stage = stDropped
		c.selfReport(j.slots, "")
		c.say(sayStopped, nil)
	case stDone:
		switch {
		case c.v.NoAbort:
			c.job = nil
			c.selfReport(j.slots, "")
			c.say("Okay, I've left it — nothing was sent.", nil)
		case j.created != "":
			c.undo(j, c.freshKey(), 0)
		default:
			c.say("That change had already gone through, I'm afraid.", nil)
		}
	}
}

// undo cancels the payment the job created (the caller withdrew it after
// it landed).
func (c *call) undo(j *job, key string, tries int) {
	j.stage = stDropped
	args := map[string]string{slotID: j.created}
	c.selfReport(args, toolCancel)
	c.request(toolCancel, args, key, writeLimit, func(r reply) {
		if c.job != j {
			return
		}
		switch {
		case r.ok():
			c.selfReport(args, "")
			c.say(c.undoneLine(), nil)
		case r.transient() && tries+1 < attempts:
			c.after(retryAfter, func() { c.undo(j, key, tries+1) })
		default:
			c.selfReport(args, "")
			c.say("I'm sorry, I couldn't cancel it: that payment is still scheduled.", nil)
		}
	})
}
