package entity

import (
	"strconv"
	"strings"
	"time"
)

var monthWords = map[string]int{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
	"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
	"september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
	"december": 12, "dec": 12,
}

var weekdayWords = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "tues": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "thurs": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

// dateStarts are the words other than numbers and months a date can
// start with; a cheap test before reading one. Read-only.
var dateStarts = func() map[string]bool {
	m := map[string]bool{"today": true, "tonight": true, "tomorrow": true, "yesterday": true, "the": true,
		"day": true, "next": true, "this": true, "coming": true, "on": true, "in": true, "a": true}
	for w := range weekdayWords {
		m[w] = true
	}
	return m
}()

// Month returns the month a word names ("dec" → 12), or 0.
func Month(t string) int { return monthWords[t] }

// Weekday returns the weekday a word names and whether it names one.
// Short forms that are also words ("sat", "sun", "mon") count only in
// dates; alone, only the full names and "wed", "fri" do (see WeekdayAlone).
func Weekday(t string) (time.Weekday, bool) {
	w, ok := weekdayWords[t]
	return w, ok
}

// WeekdayAlone reports a weekday word that names a day on its own.
func WeekdayAlone(t string) (time.Weekday, bool) {
	w, ok := weekdayWords[t]
	return w, ok && (len(t) > 3 || t == "wed" || t == "fri")
}

// Ref is what relative and partial dates resolve against: the call's
// local date (its year, month and day in Zone, or as given when Zone is
// nil). The zero Ref resolves nothing relative.
type Ref struct {
	Date time.Time
	Zone *time.Location
}

// IsZero reports a Ref without a date.
func (r Ref) IsZero() bool { return r.Date.IsZero() }

// day is the Ref's date at midnight UTC, for day arithmetic.
func (r Ref) day() time.Time {
	d := r.Date
	if r.Zone != nil {
		d = d.In(r.Zone)
	}
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
}

// DateSpec is what a date said states, before resolution: any of a year,
// month and day, a weekday, or an offset in days from the call's date.
type DateSpec struct {
	Year, Month, Day int // 0 when not said
	Weekday          time.Weekday
	HasWeekday       bool
	Next             bool // "next Tuesday": not this week's (ambiguous: see Resolve)
	Relative         bool // Offset counts from the call's date ("tomorrow": 1)
	Offset           int
}

// Resolve turns a spec into an ISO date and alternatives against ref;
// defaultYear completes a month and day said without a year when ref is
// zero (0: leave it unknown). Unknown is "".
//
// A month and day without a year take the ref's year, or the next year
// when that date is more than 31 days before the ref. A weekday alone is
// the next such day on or after the ref (the ref's own day with the one a
// week later as alternative); "next Tuesday" is the first Tuesday after
// the ref, with the one a week later as alternative. A day of the month
// alone is the next such day on or after the ref.
func (d DateSpec) Resolve(ref Ref, defaultYear int) (string, []string) {
	if d.Month > 0 && d.Day > 0 {
		y := d.Year
		if y == 0 && !ref.IsZero() {
			r := ref.day()
			y = r.Year()
			if t := time.Date(y, time.Month(d.Month), d.Day, 0, 0, 0, 0, time.UTC); t.Before(r.AddDate(0, 0, -31)) {
				y++
			}
		}
		if y == 0 {
			y = defaultYear
		}
		if y == 0 {
			return "", nil
		}
		return ISODate(y, d.Month, d.Day), nil
	}
	if ref.IsZero() {
		return "", nil
	}
	r := ref.day()
	iso := func(t time.Time) string { return ISODate(t.Year(), int(t.Month()), t.Day()) }
	switch {
	case d.Relative:
		return iso(r.AddDate(0, 0, d.Offset)), nil
	case d.HasWeekday:
		ahead := (int(d.Weekday) - int(r.Weekday()) + 7) % 7
		if d.Next && ahead == 0 {
			ahead = 7
		}
		t := r.AddDate(0, 0, ahead)
		if d.Next || ahead == 0 {
			return iso(t), []string{iso(t.AddDate(0, 0, 7))}
		}
		return iso(t), nil
	case d.Day > 0:
		t := time.Date(r.Year(), r.Month(), d.Day, 0, 0, 0, 0, time.UTC)
		if t.Before(r) {
			t = time.Date(r.Year(), r.Month()+1, d.Day, 0, 0, 0, 0, time.UTC)
		}
		if t.Day() != d.Day {
			return "", nil // the 31st of a short month
		}
		return iso(t), nil
	}
	return "", nil
}

// Matches reports whether the ISO date iso can be what the spec says, and
// whether that can be told without a Ref: a relative date cannot.
func (d DateSpec) Matches(iso string) (match, known bool) {
	if d.Relative {
		return false, false
	}
	t, err := time.Parse(time.DateOnly, iso)
	if err != nil {
		return false, true
	}
	if d.Year == 0 && d.Month == 0 && d.Day == 0 && !d.HasWeekday {
		return false, false
	}
	ok := (d.Year == 0 || t.Year() == d.Year) && (d.Month == 0 || int(t.Month()) == d.Month) &&
		(d.Day == 0 || t.Day() == d.Day) && (!d.HasWeekday || t.Weekday() == d.Weekday)
	return ok, true
}

// ISODate renders a calendar date as YYYY-MM-DD, or "" when it is not one
// (February 30th).
func ISODate(y, m, d int) string {
	if m < 1 || m > 12 || d < 1 || d > 31 || y < 1000 || y > 9999 {
		return ""
	}
	if d > DaysIn(y, m) {
		return ""
	}
	b := make([]byte, 0, 10)
	b = strconv.AppendInt(b, int64(y), 10)
	b = append(b, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
	return string(b)
}

func DaysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// ParseISO accepts YYYY-MM-DD (and a single-digit month or day).
func ParseISO(t string) string {
	if len(t) < 8 || len(t) > 10 || t[4] != '-' || !isDigitByte(t[0]) {
		return ""
	}
	p := strings.Split(t, "-")
	if len(p) != 3 || len(p[0]) != 4 {
		return ""
	}
	y, e1 := strconv.Atoi(p[0])
	m, e2 := strconv.Atoi(p[1])
	d, e3 := strconv.Atoi(p[2])
	if e1 != nil || e2 != nil || e3 != nil {
		return ""
	}
	return ISODate(y, m, d)
}

// YearOf reads a four-digit year 1900..2099 ("2026"), or 0.
func YearOf(t string) int {
	if len(t) == 4 && (strings.HasPrefix(t, "19") || strings.HasPrefix(t, "20")) {
		if y, err := strconv.Atoi(t); err == nil {
			return y
		}
	}
	return 0
}

// DayAt reads a day of the month at ts[i] ("3", "3rd", "third", "twenty-first").
func DayAt(ts []string, i int) (int, int) {
	n := NumberAt(ts, i)
	if n.Used == 0 || n.Pair || n.Int < 1 || n.Int > 31 {
		return 0, 0
	}
	return int(n.Int), n.Used
}

// slashDate reads "12/08" (month/day, the US order) and "12/08/2026".
func slashDate(t string) (DateSpec, bool) {
	p := strings.Split(t, "/")
	if len(p) < 2 || len(p) > 3 {
		return DateSpec{}, false
	}
	m, e1 := strconv.Atoi(p[0])
	d, e2 := strconv.Atoi(p[1])
	y := 0
	if len(p) == 3 {
		var e3 error
		y, e3 = strconv.Atoi(p[2])
		if e3 != nil || len(p[2]) != 4 && len(p[2]) != 2 {
			return DateSpec{}, false
		}
		if len(p[2]) == 2 {
			y += 2000
		}
	}
	if e1 != nil || e2 != nil || m < 1 || m > 12 || d < 1 || d > 31 || len(p[0]) > 2 || len(p[1]) > 2 {
		return DateSpec{}, false
	}
	return DateSpec{Year: y, Month: m, Day: d}, true
}

// DateAt reads a date at ts[i] and returns what it states and the tokens
// used (0: none): "2026-12-08", "12/08", "December 8", "Dec 8th 2026", "8
// December", "the 8th of December", "Wednesday, December 9", "Tuesday",
// "next Tuesday", "the 8th", "on the eighth", "today", "tomorrow", "the
// day after tomorrow", "yesterday", "in three days", "a week from today".
// Pass the free tokens only: a caller that has used a token for another
// value should cut ts before it.
func DateAt(ts []string, i int) (DateSpec, int) {
	t := word(ts, i)
	if t == "" || !isDigitByte(t[0]) && !dateStarts[t] && !IsNumberWord(t) && Month(t) == 0 {
		return DateSpec{}, 0
	}
	if d := ParseISO(t); d != "" {
		y, _ := strconv.Atoi(d[:4])
		m, _ := strconv.Atoi(d[5:7])
		dd, _ := strconv.Atoi(d[8:])
		return DateSpec{Year: y, Month: m, Day: dd}, 1
	}
	if strings.Contains(t, "/") {
		if d, ok := slashDate(t); ok {
			return d, 1
		}
		return DateSpec{}, 0
	}
	// a weekday before a month date belongs to it: "Wednesday, December
	// 9", "on Wednesday the 9th of December", "Wednesday 9 December"
	k := i
	if t == "on" || t == "this" || t == "next" || t == "coming" {
		k++
	}
	if w, ok := Weekday(word(ts, k)); ok {
		if d, n := monthDate(ts, k+1); n > 0 {
			d.Weekday, d.HasWeekday = w, true
			return d, k + 1 + n - i
		}
	}
	if d, n := monthDate(ts, i); n > 0 {
		return d, n
	}
	switch t {
	case "today", "tonight":
		return DateSpec{Relative: true}, 1
	case "tomorrow":
		return DateSpec{Relative: true, Offset: 1}, 1
	case "yesterday":
		return DateSpec{Relative: true, Offset: -1}, 1
	case "the", "day":
		k := i
		if t == "the" {
			k++
		}
		if word(ts, k) == "day" && (word(ts, k+1) == "after" || word(ts, k+1) == "before") {
			switch word(ts, k+2) {
			case "tomorrow":
				return DateSpec{Relative: true, Offset: 2}, k + 3 - i
			case "yesterday":
				return DateSpec{Relative: true, Offset: -2}, k + 3 - i
			}
		}
	case "next", "this", "coming", "on":
		if w, ok := WeekdayAlone(word(ts, i+1)); ok {
			return DateSpec{Weekday: w, HasWeekday: true, Next: t == "next"}, 2
		}
	case "in":
		// "in three days", "in a week", "in two weeks"
		n := NumberAt(ts, i+1)
		k, count := i+1+n.Used, n.Int
		if n.Used == 0 && (word(ts, i+1) == "a" || word(ts, i+1) == "one") {
			k, count = i+2, 1
		}
		if count > 0 && !n.Ordinal && !n.Pair {
			switch word(ts, k) {
			case "day", "days":
				return DateSpec{Relative: true, Offset: int(count)}, k + 1 - i
			case "week", "weeks":
				return DateSpec{Relative: true, Offset: 7 * int(count)}, k + 1 - i
			}
		}
	}
	// "a week from today", "three days from now", "two days from tomorrow"
	if n := NumberAt(ts, i); n.Used > 0 || t == "a" {
		count, k := n.Int, i+n.Used
		if n.Used == 0 {
			count, k = 1, i+1
		}
		unit := 0
		switch word(ts, k) {
		case "day", "days":
			unit = 1
		case "week", "weeks":
			unit = 7
		}
		if unit > 0 && count > 0 && !n.Ordinal && word(ts, k+1) == "from" {
			base, ok := map[string]int{"today": 0, "now": 0, "tomorrow": 1}[word(ts, k+2)]
			if ok {
				return DateSpec{Relative: true, Offset: base + unit*int(count)}, k + 3 - i
			}
		}
	}
	// the day of the month alone: "the 8th", "on the eighth", "on the 8th"
	if t == "the" {
		if n := NumberAt(ts, i+1); n.Used > 0 && n.Ordinal && n.Int >= 1 && n.Int <= 31 && !countNouns[word(ts, i+1+n.Used)] {
			return DateSpec{Day: int(n.Int)}, 1 + n.Used
		}
	}
	if w, ok := WeekdayAlone(t); ok {
		return DateSpec{Weekday: w, HasWeekday: true}, 1
	}
	return DateSpec{}, 0
}

// monthDate reads a month with its day: "December 8", "Dec 8th 2026", "8
// December", "the 8th of December", "December the 8th", "8th of Dec".
func monthDate(ts []string, i int) (DateSpec, int) {
	t := word(ts, i)
	if m := Month(t); m > 0 {
		k := i + 1
		if word(ts, k) == "the" {
			k++
		}
		if day, n := DayAt(ts, k); n > 0 {
			return withYear(ts, DateSpec{Month: m, Day: day}, k+n, i)
		}
		return DateSpec{}, 0
	}
	k := i
	if t == "the" {
		k++
	}
	day, n := DayAt(ts, k)
	if n == 0 {
		return DateSpec{}, 0
	}
	k += n
	if word(ts, k) == "of" {
		k++
	}
	if m := Month(word(ts, k)); m > 0 {
		return withYear(ts, DateSpec{Month: m, Day: day}, k+1, i)
	}
	return DateSpec{}, 0
}

func withYear(ts []string, d DateSpec, k, i int) (DateSpec, int) {
	if y := YearOf(word(ts, k)); y > 0 {
		d.Year = y
		k++
	}
	if ISODate(max(d.Year, 2000), d.Month, d.Day) == "" {
		return DateSpec{}, 0
	}
	return d, k - i
}
