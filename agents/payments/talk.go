package payments

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The line's own phrasing: amounts in words, days as "Tuesday the 8th",
// references in the NATO alphabet, payment numbers digit by digit.

const (
	sayHello   = "Hi, this is the bill payments line. How can I help?"
	sayPardon  = "Sorry, I didn't catch that. Could you say it again?"
	sayOkay    = "Okay."
	sayOneSec  = "One moment while I look that up."
	saySlow    = "The system's a little slow right now, so let me check on that."
	sayStopped = "Okay, I've stopped it — nothing was sent."
)

var ones = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
	"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}

var tens = []string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}

// numberWords says 0..999999 in words: "two hundred and fifteen".
func numberWords(n int) string {
	switch {
	case n < 20:
		return ones[n]
	case n < 100:
		if n%10 == 0 {
			return tens[n/10]
		}
		return tens[n/10] + "-" + ones[n%10]
	case n < 1000:
		s := ones[n/100] + " hundred"
		if n%100 != 0 {
			s += " and " + numberWords(n%100)
		}
		return s
	}
	s := numberWords(n/1000) + " thousand"
	if r := n % 1000; r != 0 {
		if r < 100 {
			s += " and"
		}
		s += " " + numberWords(r)
	}
	return s
}

// moneyWords says "215.00" as "two hundred and fifteen dollars".
func moneyWords(amount string) string {
	d, c, _ := strings.Cut(amount, ".")
	dollars, err := strconv.Atoi(d)
	if err != nil {
		return amount
	}
	unit := " dollars"
	if dollars == 1 {
		unit = " dollar"
	}
	s := numberWords(dollars) + unit
	if cents, err := strconv.Atoi(c); err == nil && cents > 0 {
		s += " and " + numberWords(cents) + " cents"
	}
	return s
}

// moneyShort says "215.00" as "$215" and "54.50" as "$54.50".
func moneyShort(amount string) string {
	return "$" + strings.TrimSuffix(amount, ".00")
}

var natoWords = map[byte]string{'A': "Alpha", 'B': "Bravo", 'C': "Charlie", 'D': "Delta", 'E': "Echo", 'F': "Foxtrot",
	'G': "Golf", 'H': "Hotel", 'I': "India", 'J': "Juliett", 'K': "Kilo", 'L': "Lima", 'M': "Mike", 'N': "November",
	'O': "Oscar", 'P': "Papa", 'Q': "Quebec", 'R': "Romeo", 'S': "Sierra", 'T': "Tango", 'U': "Uniform",
	'V': "Victor", 'W': "Whiskey", 'X': "X-ray", 'Y': "Yankee", 'Z': "Zulu"}

// natoCode says "R4M9" as "Romeo four Mike nine".
func natoCode(code string) string {
	var out []string
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case c >= '0' && c <= '9':
			out = append(out, ones[c-'0'])
		case natoWords[c] != "":
			out = append(out, natoWords[c])
		default:
			out = append(out, string(c))
		}
	}
	return strings.Join(out, " ")
}

// digitWords says "4128" as "four one two eight".
func digitWords(id string) string { return natoCode(id) }

// dayWords says "2026-12-08" as "Tuesday the 8th".
func dayWords(iso string) string {
	t, err := time.Parse(time.DateOnly, iso)
	if err != nil {
		return iso
	}
	d := t.Day()
	suffix := "th"
	switch {
	case d%10 == 1 && d != 11:
		suffix = "st"
	case d%10 == 2 && d != 12:
		suffix = "nd"
	case d%10 == 3 && d != 13:
		suffix = "rd"
	}
	return fmt.Sprintf("%s the %d%s", t.Weekday(), d, suffix)
}

// accountWords says an account nickname: "your everyday account".
func accountWords(nick string) string {
	return "your " + strings.ReplaceAll(nick, "-", " ") + " account"
}

// laterDay is the day after iso (the offbyone flaw's slip).
func laterDay(iso string) string {
	t, err := time.Parse(time.DateOnly, iso)
	if err != nil {
		return iso
	}
	return t.AddDate(0, 0, 1).Format(time.DateOnly)
}

// otherAccount is an account nickname other than nick (the mixup flaw's slip).
func otherAccount(nick string) string {
	if nick == "everyday" {
		return "bills"
	}
	return "everyday"
}

// readBackLine restates a new payment before asking to send it.
func (c *call) readBackLine(v map[string]string, payeeName string) string {
	if c.v.Terse {
		return fmt.Sprintf("%s to %s on the %s. Send it?", moneyShort(v[slotAmount]), payeeName, ordinalOf(v[slotDate]))
	}
	return fmt.Sprintf("So that's %s to %s, from %s on %s, reference %s. Shall I send it?",
		moneyWords(v[slotAmount]), payeeName, accountWords(v[slotFrom]), dayWords(v[slotDate]), natoCode(v[slotRef]))
}

// ordinalOf says "2026-12-08" as "8th".
func ordinalOf(iso string) string {
	s := dayWords(iso)
	if _, after, ok := strings.Cut(s, " the "); ok {
		return after
	}
	return s
}

// doneLine is the confirmation of a write that landed (v: what was
// written, id: the payment's number).
func (c *call) doneLine(tool string, v map[string]string, payeeName string) string {
	date, from := v[slotDate], v[slotFrom]
	if c.v.DayLate && date != "" {
		date = laterDay(date)
	}
	if c.v.WrongFrom && from != "" {
		from = otherAccount(from)
	}
	switch tool {
	case toolSchedule:
		if c.v.Terse {
			return "Done. Your payment is on its way."
		}
		return fmt.Sprintf("All set: %s to %s, from %s on %s, reference %s. Your payment is on its way.",
			moneyWords(v[slotAmount]), payeeName, accountWords(from), dayWords(date), natoCode(v[slotRef]))
	case toolUpdate:
		if c.v.Terse {
			return fmt.Sprintf("Done, it's %s now.", moneyShort(v[slotAmount]))
		}
		return fmt.Sprintf("Payment %s now goes out for %s.", digitWords(v[slotID]), moneyWords(v[slotAmount]))
	case toolCancel:
		if c.v.Terse {
			return "Okay, that's cancelled."
		}
		return "That one's cancelled, so it won't go out."
	}
	return "That's done."
}

// askCancelLine asks before cancelling an existing payment.
func (c *call) askCancelLine(id string, rec map[string]string) string {
	if c.v.Terse {
		return fmt.Sprintf("The %s one to %s? Cancel it?", moneyShort(rec[slotAmount]), rec[slotPayee])
	}
	return fmt.Sprintf("Payment %s is %s to %s on %s. Shall I cancel it?",
		digitWords(id), moneyWords(rec[slotAmount]), rec[slotPayee], dayWords(rec[slotDate]))
}

// failLine is the truthful line after a write that did not land.
func (c *call) failLine(tool string) string {
	what := map[string]string{toolSchedule: "send that payment", toolUpdate: "change that payment", toolCancel: "cancel that payment"}[tool]
	return fmt.Sprintf("I'm sorry, I wasn't able to %s — the payments system isn't answering. Nothing has changed.", what)
}

// undoneLine: a created payment the caller withdrew was cancelled.
func (c *call) undoneLine() string {
	if c.v.Terse {
		return "Okay, that's cancelled."
	}
	return "No problem — I've cancelled it, so that payment won't go out."
}
