package payments

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Slot and argument names of the payments catalogue.
const (
	slotPayee  = "payee"
	slotFrom   = "from_account"
	slotAmount = "amount"
	slotDate   = "date"
	slotRef    = "reference"
	slotID     = "payment_id"
)

// Tool names of the payments catalogue.
const (
	toolFindPayee   = "find_payee"
	toolFindPayment = "find_payment"
	toolSchedule    = "schedule_payment"
	toolUpdate      = "update_payment"
	toolCancel      = "cancel_payment"
)

// argsFor lists a write tool's arguments.
func argsFor(tool string) []string {
	switch tool {
	case toolSchedule:
		return []string{slotPayee, slotFrom, slotAmount, slotDate, slotRef}
	case toolUpdate:
		return []string{slotID, slotAmount, slotDate}
	case toolCancel:
		return []string{slotID}
	}
	return nil
}

// utterance is what the line made of one final caller utterance.
type utterance struct {
	tool   string
	values map[string]string
	stop   bool
	yes    bool
}

var (
	reWithdrawn = regexp.MustCompile(`(?i)\bnot\s+(?:the\s+|my\s+)?[a-z0-9$.-]+(?:\s+(?:fifteen|fifty|dollars))?`)
	reDollars   = regexp.MustCompile(`\$\s?(\d+)(?:\.(\d\d))?`)
	reFrom      = regexp.MustCompile(`(?i)\bfrom\s+(?:my\s+|the\s+)?(everyday|rainy[\s-]day|bills)\b`)
	rePayee     = regexp.MustCompile(`(?i)\b(?:to|pay|meant|for|it's|,)\s+(?:my|the)\s+([a-z]+)`)
	reOrdinal   = regexp.MustCompile(`(?i)\bthe\s+(\d{1,2})(?:st|nd|rd|th)\b`)
	reMonthDay  = regexp.MustCompile(`(?i)\b(january|february|march|april|may|june|july|august|september|october|november|december)\s+(\d{1,2})\b`)
	reStopWords = regexp.MustCompile(`(?i)\b(?:stop|don'?t|hold\s+off|never\s*mind|forget\s+it|leave\s+it)\b`)
	reYesWords  = regexp.MustCompile(`(?i)^\W*(?:yes|yeah|yep|sure|please\s+do|go\s+ahead|correct)\b`)
	reCancelAsk = regexp.MustCompile(`(?i)\bcancel\b`)
	reChangeAsk = regexp.MustCompile(`(?i)\b(?:change|move|update)\b`)
	reSendAsk   = regexp.MustCompile(`(?i)\b(?:send|pay|schedule|transfer)\b`)
)

var (
	smallNumbers = map[string]int{"zero": 0, "oh": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
		"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
		"fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
	tensNumbers = map[string]int{"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
		"eighty": 80, "ninety": 90}
	nato = map[string]byte{"alpha": 'A', "alfa": 'A', "bravo": 'B', "charlie": 'C', "delta": 'D', "echo": 'E',
		"foxtrot": 'F', "golf": 'G', "hotel": 'H', "india": 'I', "juliet": 'J', "juliett": 'J', "kilo": 'K',
		"lima": 'L', "mike": 'M', "november": 'N', "oscar": 'O', "papa": 'P', "quebec": 'Q', "romeo": 'R',
		"sierra": 'S', "tango": 'T', "uniform": 'U', "victor": 'V', "whiskey": 'W', "x-ray": 'X', "xray": 'X',
		"yankee": 'Y', "zulu": 'Z'}
)

// words splits text into lower-case words, keeping digits, letters, '$',
// '.', '-' and apostrophes inside words.
func words(text string) []string {
	f := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '$' || r == '.' || r == '-' || r == '\'')
	})
	for i, w := range f {
		f[i] = strings.Trim(w, ".")
	}
	return f
}

// spokenNumber reads a run of number words from ws[i:]: "two hundred and
// fifteen", "seventy-five", "two fifty" (= 250). It returns the value and
// how many words it used (0: none).
func spokenNumber(ws []string, i int) (int, int) {
	total, cur, used, last := 0, 0, 0, -1
	for j := i; j < len(ws); j++ {
		w := ws[j]
		if w == "and" && used > 0 && j+1 < len(ws) && isNumberWord(ws[j+1]) {
			continue
		}
		if a, b, ok := strings.Cut(w, "-"); ok && tensNumbers[a] > 0 && smallNumbers[b] > 0 {
			cur += tensNumbers[a] + smallNumbers[b]
		} else if n, ok := smallNumbers[w]; ok && w != "oh" {
			if last >= 0 && last < 10 && cur > 0 && cur < 10 {
				return total + cur, used // "four one": digits, not a number
			}
			cur += n
		} else if n, ok := tensNumbers[w]; ok {
			if cur > 0 && cur < 10 && last < 10 {
				cur = cur*100 + n // "two fifty"
			} else {
				cur += n
			}
		} else if w == "hundred" && used > 0 {
			cur *= 100
		} else if w == "thousand" && used > 0 {
			total += cur * 1000
			cur = 0
		} else {
			break
		}
		used = j - i + 1
		last = cur
	}
	return total + cur, used
}

func isNumberWord(w string) bool {
	_, a := smallNumbers[w]
	_, b := tensNumbers[w]
	return a || b || w == "hundred" || w == "thousand" || strings.Contains(w, "-")
}

// spokenAmount finds an amount: "$215", "$54.50", or number words followed
// by "dollars" or after "make it" / "make that".
func spokenAmount(text string) (string, bool) {
	if m := reDollars.FindStringSubmatch(text); m != nil {
		cents := m[2]
		if cents == "" {
			cents = "00"
		}
		return m[1] + "." + cents, true
	}
	ws := words(text)
	for i := range ws {
		n, used := spokenNumber(ws, i)
		if used == 0 {
			continue
		}
		after := ""
		if i+used < len(ws) {
			after = ws[i+used]
		}
		before := ""
		if i >= 2 {
			before = ws[i-2] + " " + ws[i-1]
		}
		if after == "dollars" || after == "bucks" || before == "make it" || before == "make that" {
			return fmt.Sprintf("%d.00", n), true
		}
	}
	return "", false
}

// spokenCode reads a code said after "reference" (or "payment"): "R4M9",
// "R four M nine", "Romeo four Mike nine", "four one two eight".
func spokenCode(ws []string, i int) string {
	var b strings.Builder
	for j := i; j < len(ws); j++ {
		w := ws[j]
		switch {
		case w == "is" || w == "number" || w == "code" || w == "it's":
			if b.Len() == 0 {
				continue
			}
			return b.String()
		case len(w) >= 2 && isAlnum(w) && b.Len() == 0 && strings.ContainsAny(w, "0123456789"):
			return strings.ToUpper(w)
		case len(w) == 1 && isAlnum(w):
			b.WriteString(strings.ToUpper(w))
		case nato[w] != 0:
			b.WriteByte(nato[w])
		case smallNumbers[w] < 10 && (smallNumbers[w] > 0 || w == "zero" || w == "oh"):
			b.WriteString(strconv.Itoa(smallNumbers[w]))
		default:
			return b.String()
		}
	}
	return b.String()
}

func isAlnum(w string) bool {
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// spokenDate resolves "tomorrow", "the day after tomorrow", "on the 8th",
// "the eighth", "December 8" and weekday names against the call's date.
func spokenDate(text string, today time.Time) (string, bool) {
	low := strings.ToLower(text)
	switch {
	case strings.Contains(low, "day after tomorrow"):
		return today.AddDate(0, 0, 2).Format(time.DateOnly), true
	case strings.Contains(low, "tomorrow"):
		return today.AddDate(0, 0, 1).Format(time.DateOnly), true
	}
	if m := reMonthDay.FindStringSubmatch(low); m != nil {
		d, _ := strconv.Atoi(m[2])
		for mo := time.January; mo <= time.December; mo++ {
			if strings.EqualFold(mo.String(), m[1]) {
				t := time.Date(today.Year(), mo, d, 0, 0, 0, 0, time.UTC)
				if t.Before(today) {
					t = t.AddDate(1, 0, 0)
				}
				return t.Format(time.DateOnly), true
			}
		}
	}
	day := 0
	if m := reOrdinal.FindStringSubmatch(low); m != nil {
		day, _ = strconv.Atoi(m[1])
	} else {
		ws := words(low)
		for i := 0; i+1 < len(ws); i++ {
			if ws[i] == "the" {
				if n := ordinalWord(ws[i+1]); n > 0 {
					day = n
					break
				}
			}
		}
	}
	if day >= 1 && day <= 31 {
		for t := today; t.Before(today.AddDate(0, 2, 0)); t = t.AddDate(0, 0, 1) {
			if t.Day() == day {
				return t.Format(time.DateOnly), true
			}
		}
	}
	for wd := time.Sunday; wd <= time.Saturday; wd++ {
		if strings.Contains(low, strings.ToLower(wd.String())) {
			t := today.AddDate(0, 0, 1)
			for t.Weekday() != wd {
				t = t.AddDate(0, 0, 1)
			}
			return t.Format(time.DateOnly), true
		}
	}
	return "", false
}

// ordinalWord reads "eighth" or "twenty-first" (1..31), 0 otherwise.
func ordinalWord(w string) int {
	ords := []string{"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
		"eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth",
		"nineteenth", "twentieth"}
	for i, o := range ords {
		if w == o {
			return i + 1
		}
	}
	if a, b, ok := strings.Cut(w, "-"); ok && tensNumbers[a] > 0 {
		if n := ordinalWord(b); n > 0 && n < 10 {
			return tensNumbers[a] + n
		}
	}
	if w == "thirtieth" {
		return 30
	}
	return 0
}

// listen reads one final caller utterance.
func listen(text string, today time.Time) utterance {
	u := utterance{values: map[string]string{}}
	// "make it two fifty, not two fifteen": the value after "not" is withdrawn.
	clean := reWithdrawn.ReplaceAllString(text, " ")
	if a, ok := spokenAmount(clean); ok {
		u.values[slotAmount] = a
	}
	if d, ok := spokenDate(clean, today); ok {
		u.values[slotDate] = d
	}
	if m := reFrom.FindStringSubmatch(clean); m != nil {
		u.values[slotFrom] = strings.ReplaceAll(strings.ToLower(strings.Join(strings.Fields(m[1]), "-")), " ", "-")
	}
	for _, m := range rePayee.FindAllStringSubmatch(clean, -1) {
		if p := strings.ToLower(m[1]); p != "account" && p != "everyday" && p != "savings" && p != "reference" && p != "payment" {
			u.values[slotPayee] = p
			break
		}
	}
	ws := words(clean)
	for i, w := range ws {
		switch w {
		case "reference", "ref":
			if c := spokenCode(ws, i+1); len(c) >= 3 {
				u.values[slotRef] = c
			}
		case "payment":
			if c := spokenCode(ws, i+1); len(c) == 4 && strings.Trim(c, "0123456789") == "" {
				u.values[slotID] = c
			}
		}
	}
	u.stop = reStopWords.MatchString(clean)
	u.yes = reYesWords.MatchString(clean)
	switch {
	case u.stop:
	case reCancelAsk.MatchString(clean):
		u.tool = toolCancel
	case reChangeAsk.MatchString(clean) && u.values[slotID] != "":
		u.tool = toolUpdate
	case reSendAsk.MatchString(clean) && !u.yes:
		u.tool = toolSchedule
	}
	return u
}
