package bookings

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The desk's own phrasing: weekdays with dates, clock times, party sizes in
// words, dollar amounts, guest names.

const (
	lineGreeting = "Hello, you're through to table bookings."
	lineAgain    = "Sorry, could you say that again?"
	lineRecheck  = "One moment, let me double-check that booking."
	lineBooking  = "One moment while I put that in."
	lineOkay     = "Okay."
)

// dayDate speaks an ISO date: "Wednesday, December 9".
func dayDate(iso string) string {
	t, err := time.Parse(time.DateOnly, iso)
	if err != nil {
		return iso
	}
	return t.Format("Monday, January 2")
}

// clock speaks "19:30" as "7:30 pm" and "20:00" as "8 pm".
func clock(hhmm string) string {
	t, err := time.Parse("15:04", hhmm)
	if err != nil {
		return hhmm
	}
	if t.Minute() == 0 {
		return t.Format("3 pm")
	}
	return t.Format("3:04 pm")
}

// partyWords speaks a party size: "four".
func partyWords(n string) string {
	i, err := strconv.Atoi(n)
	words := []string{"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
		"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"}
	if err != nil || i < 1 || i > len(words) {
		return n
	}
	return words[i-1]
}

func dollars(a string) string { return "$" + a }

// when speaks the date and time fields present: "Wednesday, December 9 at
// 7:30 pm", "Wednesday, December 9" or "7:30 pm".
func when(v map[string]string) string {
	var parts []string
	if d := v[argDate]; d != "" {
		parts = append(parts, dayDate(d))
	}
	if t := v[argTime]; t != "" {
		parts = append(parts, clock(t))
	}
	return strings.Join(parts, " at ")
}

// ack answers a correction with the values that changed.
func ack(changed map[string]string) string {
	var parts []string
	if w := when(changed); w != "" {
		parts = append(parts, w)
	}
	if p := changed[argParty]; p != "" {
		parts = append(parts, "a table for "+partyWords(p))
	}
	if a := changed[argAmount]; a != "" {
		parts = append(parts, dollars(a))
	}
	if r := changed[argRef]; r != "" {
		parts = append(parts, "booking "+r)
	}
	if n := changed[argName]; n != "" {
		parts = append(parts, "the name "+n)
	}
	if len(parts) == 0 {
		return "Sure."
	}
	return "Sure — " + strings.Join(parts, ", ") + "."
}

// readBack is spoken before (reschedule) or while (party size) writing.
func readBack(tool string, v map[string]string) string {
	switch tool {
	case toolReschedule:
		return fmt.Sprintf("Right, moving booking %s to %s.", v[argRef], when(v))
	case toolParty:
		return fmt.Sprintf("Sure, changing booking %s to a table for %s.", v[argRef], partyWords(v[argParty]))
	}
	return lineOkay
}

// question asks before a cancellation or a refund; rec is the booking read.
func question(tool string, v, rec map[string]string) string {
	switch tool {
	case toolCancel:
		return fmt.Sprintf("Booking %s is a table for %s on %s under the name %s. Shall I cancel it?",
			v[argRef], partyWords(rec[argParty]), when(rec), rec[argName])
	case toolRefund:
		return fmt.Sprintf("That's a refund of %s on booking %s under the name %s. Shall I go ahead?",
			dollars(v[argAmount]), v[argRef], rec[argName])
	}
	return "Shall I go ahead?"
}

// success is the line for a write that landed, with the values given.
func success(tool string, v map[string]string) string {
	switch tool {
	case toolReschedule:
		return fmt.Sprintf("Booking %s is rescheduled for %s.", v[argRef], when(v))
	case toolParty:
		return fmt.Sprintf("Your booking %s is now set for a table for %s.", v[argRef], partyWords(v[argParty]))
	case toolCancel:
		return fmt.Sprintf("Your booking %s has been cancelled.", v[argRef])
	case toolBook:
		return fmt.Sprintf("I've booked a table for %s on %s under the name %s.", partyWords(v[argParty]), when(v), v[argName])
	case toolRefund:
		return fmt.Sprintf("I've placed a refund of %s on booking %s.", dollars(v[argAmount]), v[argRef])
	}
	return "That's taken care of."
}

// standing describes a booking's fields the write would touch, as they are.
func standing(tool string, ref string, rec map[string]string) string {
	switch tool {
	case toolReschedule:
		return fmt.Sprintf("booking %s is still on %s", ref, when(rec))
	case toolParty:
		return fmt.Sprintf("booking %s is still a table for %s", ref, partyWords(rec[argParty]))
	case toolCancel:
		return fmt.Sprintf("booking %s is still on for %s", ref, when(rec))
	case toolRefund:
		return fmt.Sprintf("no refund has gone out on booking %s", ref)
	case toolBook:
		return "no table has been booked"
	}
	return "nothing has moved"
}

// nothingSent: the caller stopped before any write went out.
func nothingSent(tool, ref string, rec map[string]string) string {
	if rec == nil {
		return "Okay, nothing was sent."
	}
	return "Okay, nothing was sent — " + standing(tool, ref, rec) + "."
}

// unchanged: a stop after a write was aborted, checked with a read.
func unchanged(tool, ref string, rec map[string]string) string {
	return "Okay, I've stopped that. I haven't changed anything: " + standing(tool, ref, rec) + "."
}

// alreadyDone: the write had landed before the stop, and stays.
func alreadyDone(tool string, v map[string]string) string {
	switch tool {
	case toolReschedule:
		return fmt.Sprintf("That change had already gone through: booking %s is on %s now.", v[argRef], when(v))
	case toolParty:
		return fmt.Sprintf("That change had already gone through: booking %s is a table for %s now.", v[argRef], partyWords(v[argParty]))
	}
	return "That had already gone through before you said stop."
}

// putBack: the compensating write landed.
func putBack(tool string, ref string, restored map[string]string) string {
	switch tool {
	case toolParty:
		return fmt.Sprintf("I've put booking %s back to a table for %s.", ref, partyWords(restored[argParty]))
	}
	return fmt.Sprintf("I've put booking %s back to %s.", ref, when(restored))
}

// notPutBack: the compensating write failed.
func notPutBack(tool string, v map[string]string) string {
	return "I'm sorry, I couldn't undo it. " + strings.TrimSuffix(alreadyDone(tool, v), ".") + "."
}

// verb names a write for failure lines: "reschedule".
func verb(tool string) string {
	switch tool {
	case toolReschedule:
		return "reschedule that"
	case toolParty:
		return "change the party size"
	case toolCancel:
		return "cancel that booking"
	case toolBook:
		return "book that table"
	case toolRefund:
		return "place that refund"
	}
	return "do that"
}

// failed is the truthful line after a write that did not land.
func failed(tool, ref string, rec map[string]string, down bool) string {
	why := "the booking system turned it down"
	if down {
		why = "the system is down"
	}
	return fmt.Sprintf("I couldn't %s — %s. %s.", verb(tool), why, capitalize(standing(tool, ref, rec)))
}

// submitted is said after a 202: accepted, not yet landed.
func submitted() string {
	return "That's been submitted — one moment while I check it went through."
}

// undetermined is said when a submitted write never showed up.
func undetermined(ref string) string {
	return fmt.Sprintf("I can't tell yet whether booking %s has changed; please check back shortly.", ref)
}

// notFound is said when the lookup has no such booking.
func notFound(ref string) string {
	return fmt.Sprintf("I can't find a booking %s. Could you check the number?", ref)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// leftAlone is said after a stop without checking anything (NoCancel).
func leftAlone(tool, ref string, rec map[string]string) string {
	return "Okay, I haven't changed anything: " + standing(tool, ref, rec) + "."
}
