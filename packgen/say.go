package packgen

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/spoken"
	"github.com/callproof/callproof/toolimport"
)

// Forms is how the caller's lines say values.
type Forms string

const (
	// Spoken picks, per value, one of the forms a caller says aloud:
	// "the eighth of December", "half past seven in the evening", codes
	// character by character, numbers in words.
	Spoken Forms = "spoken"
	// Written says each value as a transcriber writes it: "December 8",
	// "7:30 pm", "TR4821", "4".
	Written Forms = "written"
)

// words splits an identifier (snake, kebab or camel case) into lower-case
// words, as the importer does.
func words(name string) []string { return toolimport.Words(name) }

// singular is a table's record noun: "reservations" → "reservation".
func singular(table string) string {
	w := strings.Join(words(table), " ")
	switch {
	case strings.HasSuffix(w, "ies"):
		return strings.TrimSuffix(w, "ies") + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"):
		return strings.TrimSuffix(w, "es")
	case strings.HasSuffix(w, "ss"):
		return w
	case strings.HasSuffix(w, "s"):
		return strings.TrimSuffix(w, "s")
	}
	if w == "" {
		return "record"
	}
	return w
}

var (
	reWrittenClock = regexp.MustCompile(`^\d{1,2}(:\d{2})? [ap]m$`)
	reSpokenClock  = regexp.MustCompile(`[a-z]`)
	reCodeChars    = regexp.MustCompile(`^[A-Z0-9]+$`)
	months         = []string{"January", "February", "March", "April", "May", "June", "July", "August",
		"September", "October", "November", "December"}
)

// sayer renders values in the pack's chosen forms.
type sayer struct {
	forms Forms
	r     *rand.Rand
}

// value says v, a value of x's argument.
func (s sayer) value(x *valuer, v string) string {
	var forms []string
	written := v
	switch x.dim {
	case "money":
		written = "$" + v
		forms = spoken.Money(v)
	case "date":
		t, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return v
		}
		written = t.Month().String() + " " + strconv.Itoa(t.Day())
		for _, f := range spoken.Date(v, time.Time{}) {
			if hasMonth(f) {
				forms = append(forms, f)
			}
		}
	case "time":
		for _, f := range spoken.Clock(v) {
			if reWrittenClock.MatchString(f) && written == v {
				written = f
			}
			if reSpokenClock.MatchString(f) {
				forms = append(forms, f)
			}
		}
	case "integer", "number":
		if n, err := strconv.Atoi(v); err == nil && n >= 0 && n < 1000000 {
			forms = []string{v, spoken.InWords(n, true)}
		}
	case "enum":
		written = strings.Join(words(v), " ")
		forms = []string{written}
	case "code":
		if reCodeChars.MatchString(v) && len(v) <= 12 {
			// Said character by character; four digits also in pairs,
			// as people say them.
			forms = spoken.Code(v)[1:]
		}
	}
	if s.forms == Written || len(forms) == 0 {
		return written
	}
	return forms[s.r.IntN(len(forms))]
}

// peopleWords mark a count of people in an argument's name or
// description: such a count is said with its noun, "four people", as
// callers say it.
var peopleWords = []string{"party", "guest", "guests", "people", "person", "persons", "passenger", "passengers",
	"attendee", "attendees", "diner", "diners", "adults", "travellers", "travelers"}

func countsPeople(a scenarios.Arg) bool {
	for _, w := range append(words(a.Name), strings.Fields(strings.ToLower(a.Description))...) {
		if slices.Contains(peopleWords, strings.Trim(w, ".,;:()")) {
			return true
		}
	}
	return false
}

// counted says v, with "people" after a count of people.
func (s sayer) counted(x *valuer, v string) string {
	if x.dim == "integer" && countsPeople(x.arg) {
		return s.value(x, v) + " people"
	}
	return s.value(x, v)
}

func hasMonth(f string) bool {
	for _, m := range months {
		if strings.Contains(f, m) {
			return true
		}
	}
	return false
}
