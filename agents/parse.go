package agents

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Slot names are the tools' argument names, so the self-report and the
// caller's intent speak the same keys.
const (
	slotOrder    = "order_number"
	slotDate     = "delivery_date"
	slotQuantity = "quantity"
)

// Actions (tool names of the built-in order domain).
const (
	toolGet    = "get_order"
	toolUpdate = "update_order"
	toolShip   = "ship_order"
)

// impliedYear is the year of a spoken date without one (docs/ARCHITECTURE.md).
const impliedYear = 2026

var (
	isoDateRe  = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	spokenRe   = regexp.MustCompile(`(?i)\b(january|february|march|april|may|june|july|august|september|october|november|december)\s+(\d{1,2})(?:st|nd|rd|th)?\b`)
	orderRe    = regexp.MustCompile(`\b\d{4}\b`)
	quantityRe = regexp.MustCompile(`\b\d{1,3}\b`)
	negationRe = regexp.MustCompile(`(?i)\b(don't|don’t|do not|stop|cancel)\b`)
	proceedRe  = regexp.MustCompile(`(?i)\b(go ahead|yes)\b`)
	shipRe     = regexp.MustCompile(`(?i)\bship\b`)
	updateRe   = regexp.MustCompile(`(?i)\b(date|quantity)\b`)
)

func monthNamed(name string) time.Month {
	for m := time.January; m <= time.December; m++ {
		if strings.EqualFold(m.String(), name) {
			return m
		}
	}
	return 0
}

// heard is what one caller utterance said, before it meets the slot state.
type heard struct {
	action  string            // toolUpdate, toolShip or ""
	slots   map[string]string // values by slot, shaped by their form
	negate  bool
	proceed bool
}

// parse is the agent's whole "understanding": values are assigned to slots
// by their shape, never by the words around them.
func parse(text string) heard {
	h := heard{slots: map[string]string{}}
	rest := text
	if m := isoDateRe.FindAllStringSubmatch(rest, -1); m != nil {
		last := m[len(m)-1]
		if d, ok := mkDate(last[1], last[2], last[3]); ok {
			h.slots[slotDate] = d
		}
		rest = isoDateRe.ReplaceAllString(rest, " ")
	}
	if m := spokenRe.FindAllStringSubmatch(rest, -1); m != nil {
		last := m[len(m)-1]
		month := monthNamed(last[1])
		if d, ok := mkDate(strconv.Itoa(impliedYear), fmt.Sprintf("%02d", int(month)), last[2]); ok {
			h.slots[slotDate] = d
		}
		rest = spokenRe.ReplaceAllString(rest, " ")
	}
	if m := orderRe.FindAllString(rest, -1); m != nil {
		h.slots[slotOrder] = m[len(m)-1]
		rest = orderRe.ReplaceAllString(rest, " ")
	}
	if m := quantityRe.FindAllString(rest, -1); m != nil {
		n, _ := strconv.Atoi(m[len(m)-1])
		h.slots[slotQuantity] = strconv.Itoa(n)
	}
	switch {
	case shipRe.MatchString(text):
		h.action = toolShip
	case updateRe.MatchString(text):
		h.action = toolUpdate
	}
	h.negate = negationRe.MatchString(text)
	h.proceed = proceedRe.MatchString(text)
	return h
}

func mkDate(y, m, d string) (string, bool) {
	yi, err1 := strconv.Atoi(y)
	mi, err2 := strconv.Atoi(m)
	di, err3 := strconv.Atoi(d)
	if err1 != nil || err2 != nil || err3 != nil || mi < 1 || mi > 12 || di < 1 {
		return "", false
	}
	t := time.Date(yi, time.Month(mi), di, 0, 0, 0, 0, time.UTC)
	if t.Day() != di { // February 30 and the like
		return "", false
	}
	return t.Format(time.DateOnly), true
}

// spokenDate turns 2026-12-03 into "December 3"; anything else is said as is.
func spokenDate(iso string) string {
	t, err := time.Parse(time.DateOnly, iso)
	if err != nil {
		return iso
	}
	return fmt.Sprintf("%s %d", t.Month(), t.Day())
}
