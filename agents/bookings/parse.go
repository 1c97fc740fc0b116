package bookings

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Argument names of the bookings catalogue. Slots use the same names, so a
// write's arguments are a subset of the slots.
const (
	argRef    = "booking_ref"
	argDate   = "date"
	argTime   = "time"
	argParty  = "party_size"
	argName   = "name"
	argAmount = "amount"
	argStatus = "status"
)

// Tool names of the bookings catalogue.
const (
	toolFind       = "find_booking"
	toolReschedule = "reschedule_booking"
	toolParty      = "change_party_size"
	toolCancel     = "cancel_booking"
	toolBook       = "book_table"
	toolRefund     = "refund_deposit"
)

// heard is what one caller utterance says, as far as the desk can tell.
type heard struct {
	tool   string            // a new request's tool, "" if none
	values map[string]string // slot values mentioned (withdrawn ones dropped)
	stop   bool              // "stop", "don't", "leave it"
	yes    bool              // "yes", "go ahead"
}

// Patterns are compiled once and never written: safe to share.
var (
	reRef    = regexp.MustCompile(`\b(?:booking|reservation|ref(?:erence)?)\s*(?:number\s*)?#?(\d{4})\b`)
	reBare   = regexp.MustCompile(`(?:^|[^\d:$.])(\d{4})(?:$|[^\d:])`)
	reDate   = regexp.MustCompile(`(?i)\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+)?(january|february|march|april|may|june|july|august|september|october|november|december)\s+(\d{1,2})(?:st|nd|rd|th)?\b`)
	reClock  = regexp.MustCompile(`(?i)\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)`)
	reOclock = regexp.MustCompile(`(?i)\b(\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+o'?clock\b`)
	reAmount = regexp.MustCompile(`\$\s?(\d+)(?:\.(\d{1,2}))?`)
	reNotVal = regexp.MustCompile(`(?i)\bnot\s+(?:\$\s?[\d.]+|[a-z]+day,?\s+[a-z]+\s+\d{1,2}|[a-z]+\s+\d{1,2}(?:st|nd|rd|th)?|\d{4}|\d{1,2}(?::\d{2})?\s*(?:am|pm)|[a-z]+\s+(?:people|guests))`)
	reParty  = regexp.MustCompile(`(?i)\b(?:table\s+for|party\s+of|for)\s+(\d{1,2}|[a-z]+)\b|\b(\d{1,2}|[a-z]+)\s+(?:people|guests|of\s+us|persons|diners)\b|\bmake\s+it\s+(\d{1,2}|[a-z]+)\b`)
	reName   = regexp.MustCompile(`\b(?:under\s+the\s+name|name\s+is|in\s+the\s+name\s+of|for\s+the\s+name)\s+([A-Z][a-zA-Z'-]+)`)
	reStop   = regexp.MustCompile(`(?i)\b(?:stop|don'?t|do\s+not|leave\s+it|never\s*mind|forget\s+it|scrap\s+that|hold\s+off)\b`)
	reYes    = regexp.MustCompile(`(?i)^\W*(?:yes|yeah|yep|sure|please\s+do|go\s+ahead|that'?s\s+right|correct|absolutely)\b`)
	reCancel = regexp.MustCompile(`(?i)\bcancel\b`)
	reRefund = regexp.MustCompile(`(?i)\brefund\b`)
	reBook   = regexp.MustCompile(`(?i)\b(?:book|reserve)\s+(?:a|me\s+a|us\s+a)?\s*table\b|\bmake\s+a\s+(?:booking|reservation)\b`)
	reMove   = regexp.MustCompile(`(?i)\b(?:move|reschedule|push|bring\s+forward|change\s+the\s+(?:date|time|day))\b`)
	reSize   = regexp.MustCompile(`(?i)\b(?:party\s+size|table\s+for|people|guests|of\s+us)\b`)
)

// numberWord reads "four" or "4" (1..20).
func numberWord(w string) (int, bool) {
	w = strings.ToLower(strings.TrimSpace(w))
	if n, err := strconv.Atoi(w); err == nil {
		return n, n > 0 && n <= 40
	}
	words := []string{"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
		"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"}
	for i, x := range words {
		if x == w {
			return i + 1, true
		}
	}
	return 0, false
}

func monthNumber(m string) int {
	months := []string{"january", "february", "march", "april", "may", "june", "july", "august",
		"september", "october", "november", "december"}
	for i, x := range months {
		if strings.EqualFold(x, m) {
			return i + 1
		}
	}
	return 0
}

// listen reads one final caller utterance.
func listen(text string) heard {
	h := heard{values: map[string]string{}}
	// "make it $54.50, not $45.50": the value after "not" is withdrawn.
	clean := reNotVal.ReplaceAllString(text, " ")
	lower := strings.ToLower(clean)

	if m := reRef.FindStringSubmatch(lower); m != nil {
		h.values[argRef] = m[1]
	}
	if m := reDate.FindStringSubmatch(clean); m != nil {
		day, _ := strconv.Atoi(m[2])
		if mo := monthNumber(m[1]); mo > 0 && day >= 1 && day <= 31 {
			h.values[argDate] = fmt.Sprintf("2026-%02d-%02d", mo, day)
		}
	}
	if m := reClock.FindStringSubmatch(clean); m != nil {
		hour, _ := strconv.Atoi(m[1])
		minute := 0
		if m[2] != "" {
			minute, _ = strconv.Atoi(m[2])
		}
		pm := strings.HasPrefix(strings.ToLower(m[3]), "p")
		if pm && hour < 12 {
			hour += 12
		}
		if !pm && hour == 12 {
			hour = 0
		}
		h.values[argTime] = fmt.Sprintf("%02d:%02d", hour, minute)
	} else if m := reOclock.FindStringSubmatch(clean); m != nil {
		if hour, ok := numberWord(m[1]); ok && hour <= 12 {
			if hour < 12 {
				hour += 12 // a dinner desk: "eight o'clock" is the evening
			}
			h.values[argTime] = fmt.Sprintf("%02d:00", hour)
		}
	}
	if m := reAmount.FindStringSubmatch(clean); m != nil {
		cents := m[2]
		for len(cents) < 2 {
			cents += "0"
		}
		h.values[argAmount] = m[1] + "." + cents
	}
	noClock := reOclock.ReplaceAllString(reClock.ReplaceAllString(clean, " "), " ")
	for _, m := range reParty.FindAllStringSubmatch(noClock, -1) {
		w := m[1] + m[2] + m[3]
		if n, ok := numberWord(w); ok && n <= 20 {
			h.values[argParty] = strconv.Itoa(n)
			break
		}
	}
	if m := reName.FindStringSubmatch(clean); m != nil {
		h.values[argName] = m[1]
	}
	if _, ok := h.values[argRef]; !ok {
		// "it's 4417, not 4471": a bare four-digit number that is not a
		// time, an amount or part of a date.
		if m := reBare.FindStringSubmatch(reDate.ReplaceAllString(clean, " ")); m != nil {
			h.values[argRef] = m[1]
		}
	}

	h.stop = reStop.MatchString(clean)
	h.yes = reYes.MatchString(clean)
	switch {
	case h.stop:
		// "don't cancel it" withdraws; it is not a request.
	case reRefund.MatchString(clean):
		h.tool = toolRefund
	case reCancel.MatchString(clean):
		h.tool = toolCancel
		h.values[argStatus] = "cancelled"
	case reBook.MatchString(clean):
		h.tool = toolBook
	case reMove.MatchString(clean):
		h.tool = toolReschedule
	case h.values[argRef] != "" && reSize.MatchString(clean) && h.values[argDate] == "":
		h.tool = toolParty
	case h.values[argRef] != "" && (h.values[argDate] != "" || h.values[argTime] != ""):
		h.tool = toolReschedule
	}
	return h
}

// argsOf lists the arguments of a write tool, in the order it takes them.
func argsOf(tool string) []string {
	switch tool {
	case toolReschedule:
		return []string{argRef, argDate, argTime}
	case toolParty:
		return []string{argRef, argParty}
	case toolCancel:
		return []string{argRef, argStatus}
	case toolBook:
		return []string{argName, argDate, argTime, argParty}
	case toolRefund:
		return []string{argRef, argAmount}
	}
	return nil
}

// creates reports whether a tool makes a new record rather than changing
// an existing booking.
func creates(tool string) bool { return tool == toolBook || tool == toolRefund }
