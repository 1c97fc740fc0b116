package packgen

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/toolimport"
)

// tries bounds the attempts at a value that fits an argument's pattern and
// differs from the values already taken.
const tries = 64

// maxValueLen bounds a value built from a pattern: a caller says it in
// one breath, and a pattern of nested repeats (x{1000}{1000}) must not
// cost a million characters per try.
const maxValueLen = 40

// maxRepeat bounds an open repetition (x*, x+, x{2,}) when a value is
// built from a pattern.
const maxRepeat = 3

// surnames are the values of free-text arguments that name a person.
var surnames = []string{"Alvarez", "Okafor", "Lindqvist", "Moreau", "Tanaka", "Brennan", "Novak", "Haddad"}

// phrases are the values of other free-text arguments.
var phrases = []string{"window seat", "quiet corner", "birthday", "extra napkins", "ring twice", "side door"}

// polar are words that, inside a value, make a faithful confirmation say
// something else: "the note is no onions" reads as a denial, a code
// "NOT-12" as a refusal. A value the generator chooses holds none of
// them, so a scenario's verdict depends on what the agent did, not on
// what the value happens to spell. An enum's values are the catalogue's
// own and are kept.
var polar = map[string]bool{"no": true, "not": true, "never": true, "none": true, "nothing": true, "nor": true,
	"cancel": true, "cancelled": true, "canceled": true, "fail": true, "failed": true, "unable": true,
	"sorry": true, "done": true, "undo": true, "wait": true, "stop": true}

// polarValue reports a value holding one of the polar words (or a "n't").
func polarValue(s string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(c rune) bool { return !unicode.IsLetter(c) && c != '\'' }) {
		if polar[w] || strings.HasSuffix(w, "n't") {
			return true
		}
	}
	return false
}

// valuer synthesizes values for one argument.
type valuer struct {
	tool string
	arg  scenarios.Arg
	re   *regexp.Regexp // nil without a pattern
	ast  *syntax.Regexp
	base time.Time // the call's date
	dim  string    // what the value is: date, time, integer, number, money, enum, code, text
}

// dimension classifies an argument by its type and pattern: a string
// whose pattern accepts HH:MM times is a time (toolimport's rule), one
// that accepts "45.50" and not "45.5" an amount of money.
func dimension(a scenarios.Arg, re *regexp.Regexp) string {
	switch {
	case len(a.Enum) > 0:
		return "enum"
	case a.Type == "date", a.Type == "time", a.Type == "integer", a.Type == "number":
		return a.Type
	case a.Pattern != "" && toolimport.IsTimePattern(a.Pattern):
		return "time"
	case re != nil && re.MatchString("45.50") && re.MatchString("120.00") && !re.MatchString("45.5"):
		return "money"
	case re != nil:
		return "code"
	}
	return "text"
}

func newValuer(tool string, a scenarios.Arg, callDate time.Time) (*valuer, error) {
	v := &valuer{tool: tool, arg: a, base: callDate}
	if a.Pattern != "" {
		re, err := regexp.Compile(a.Pattern)
		if err != nil {
			return nil, fmt.Errorf("tool %s: argument %s: pattern %q: %v", tool, a.Name, a.Pattern, err)
		}
		ast, err := syntax.Parse(a.Pattern, syntax.Perl)
		if err != nil {
			return nil, fmt.Errorf("tool %s: argument %s: pattern %q: %v", tool, a.Name, a.Pattern, err)
		}
		v.re, v.ast = re, ast.Simplify()
	}
	v.dim = dimension(a, v.re)
	return v, nil
}

// fixed reports an argument with a single allowed value (a cancel's
// status enum): it is never said or corrected, only carried.
func (v *valuer) fixed() (string, bool) {
	if len(v.arg.Enum) == 1 {
		return v.arg.Enum[0], true
	}
	return "", false
}

// ok reports whether s is a value the argument accepts.
func (v *valuer) ok(s string) bool {
	if s == "" || len(s) > maxValueLen {
		return false
	}
	if len(v.arg.Enum) > 0 && !slices.Contains(v.arg.Enum, s) {
		return false
	}
	if len(v.arg.Enum) == 0 && polarValue(s) {
		return false
	}
	if v.re != nil && !v.re.MatchString(s) {
		return false
	}
	switch v.dim {
	case "integer":
		_, err := strconv.Atoi(s)
		return err == nil
	case "number":
		_, err := strconv.ParseFloat(s, 64)
		return err == nil
	case "date":
		// After the call and in its year: "December 8" then means one day.
		d, err := time.Parse(time.DateOnly, s)
		return err == nil && d.After(v.base) && d.Year() == v.base.Year()
	case "time":
		_, err := time.Parse("15:04", s)
		return err == nil && len(s) == 5
	}
	return true
}

// fresh draws a value not in taken.
func (v *valuer) fresh(r *rand.Rand, taken ...string) (string, error) {
	for range tries {
		s := v.draw(r)
		if v.ok(s) && !slices.Contains(taken, s) {
			return s, nil
		}
	}
	return "", v.refuse("no value fits")
}

// near draws a near miss of s: a value a caller could say by mistake for
// s (two characters swapped, 4821 for 4281; the next day; half an hour
// later; one more), accepted by the argument and not in taken.
func (v *valuer) near(r *rand.Rand, s string, taken ...string) (string, error) {
	taken = append(slices.Clone(taken), s)
	for _, c := range v.neighbours(r, s) {
		if v.ok(c) && !slices.Contains(taken, c) {
			return c, nil
		}
	}
	return v.fresh(r, taken...)
}

func (v *valuer) refuse(why string) error {
	what := "type " + v.arg.Type
	if v.arg.Pattern != "" {
		what = fmt.Sprintf("pattern %q", v.arg.Pattern)
	}
	return fmt.Errorf("tool %s: argument %s: %s for %s", v.tool, v.arg.Name, why, what)
}

func (v *valuer) draw(r *rand.Rand) string {
	if len(v.arg.Enum) > 0 {
		return v.arg.Enum[r.IntN(len(v.arg.Enum))]
	}
	switch v.dim {
	case "money":
		return fmt.Sprintf("%d.%s", 20+r.IntN(180), []string{"00", "50", "25", "75"}[r.IntN(4)])
	case "date":
		return v.base.AddDate(0, 0, 3+r.IntN(28)).Format(time.DateOnly)
	case "time":
		return fmt.Sprintf("%02d:%02d", 11+r.IntN(11), 15*r.IntN(4))
	case "integer":
		if v.re != nil {
			return fromPattern(r, v.ast)
		}
		return strconv.Itoa(2 + r.IntN(7))
	case "number":
		if v.re != nil {
			return fromPattern(r, v.ast)
		}
		return strconv.Itoa(5 * (4 + r.IntN(40)))
	}
	if v.re != nil {
		return fromPattern(r, v.ast)
	}
	if toolimport.KeyLike(v.arg.Name) {
		// A key with no pattern: four digits, as an order number.
		return strconv.Itoa(1000 + r.IntN(9000))
	}
	if strings.Contains(strings.ToLower(v.arg.Name), "name") {
		return surnames[r.IntN(len(surnames))]
	}
	return phrases[r.IntN(len(phrases))]
}

// neighbours lists candidate near misses of s, best first.
func (v *valuer) neighbours(r *rand.Rand, s string) []string {
	var out []string
	if len(v.arg.Enum) > 0 {
		for _, e := range v.arg.Enum {
			if e != s {
				out = append(out, e)
			}
		}
		r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		return out
	}
	switch v.dim {
	case "money":
		if d, c, ok := strings.Cut(s, "."); ok {
			n, _ := strconv.Atoi(d)
			out = append(out, fmt.Sprintf("%d.%s", n+10, c), fmt.Sprintf("%d.%s", n+1, c))
			if n > 10 {
				out = append(out, fmt.Sprintf("%d.%s", n-10, c))
			}
			return out
		}
	case "date":
		d, _ := time.Parse(time.DateOnly, s)
		for _, n := range []int{1, 2, -1, 7} {
			if x := d.AddDate(0, 0, n); x.After(v.base) {
				out = append(out, x.Format(time.DateOnly))
			}
		}
		return out
	case "time":
		t, _ := time.Parse("15:04", s)
		for _, m := range []int{30, 60, -30, -60} {
			out = append(out, t.Add(time.Duration(m)*time.Minute).Format("15:04"))
		}
		return out
	case "integer", "number":
		if n, err := strconv.Atoi(s); err == nil && v.re == nil {
			step := 1
			if v.arg.Type == "number" {
				step = 10
			}
			out = append(out, strconv.Itoa(n+step))
			if n-step > 0 {
				out = append(out, strconv.Itoa(n-step))
			}
			return out
		}
	}
	if v.dim == "text" {
		return nil // free text has no near miss: another phrase or name
	}
	// Two neighbouring characters swapped, then one character changed
	// within its kind.
	b := []byte(s)
	for i := 0; i+1 < len(b); i++ {
		if b[i] != b[i+1] && charKind(b[i]) == charKind(b[i+1]) {
			c := slices.Clone(b)
			c[i], c[i+1] = c[i+1], c[i]
			out = append(out, string(c))
		}
	}
	for i := len(b) - 1; i >= 0; i-- {
		c := slices.Clone(b)
		switch k := charKind(b[i]); k {
		case 'd':
			c[i] = '0' + (b[i]-'0'+1)%10
		case 'u':
			c[i] = 'A' + (b[i]-'A'+1)%26
		case 'l':
			c[i] = 'a' + (b[i]-'a'+1)%26
		default:
			continue
		}
		out = append(out, string(c))
	}
	return out
}

func charKind(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return 'd'
	case c >= 'A' && c <= 'Z':
		return 'u'
	case c >= 'a' && c <= 'z':
		return 'l'
	}
	return 0
}

// fromPattern builds a string the (simplified) pattern matches, choosing
// printable ASCII where a class allows it. Anchors and word boundaries
// add nothing; what it cannot satisfy is caught by the caller's match.
func fromPattern(r *rand.Rand, re *syntax.Regexp) string {
	var b strings.Builder
	budget := emitBudget
	emit(r, re, &b, &budget)
	return b.String()
}

// emitBudget bounds the nodes visited for one value: nested repeats of
// empty matches ((a?){1000}{1000}) add nothing and would never end.
const emitBudget = 4096

func emit(r *rand.Rand, re *syntax.Regexp, b *strings.Builder, budget *int) {
	if *budget--; *budget < 0 || b.Len() > maxValueLen {
		return // too long to say or to build; ok refuses it
	}
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		b.WriteRune(pick(r, re.Rune))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte(byte('A' + r.IntN(26)))
	case syntax.OpCapture:
		emit(r, re.Sub[0], b, budget)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			emit(r, s, b, budget)
		}
	case syntax.OpAlternate:
		emit(r, re.Sub[r.IntN(len(re.Sub))], b, budget)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 1
		switch re.Op {
		case syntax.OpStar:
			hi = maxRepeat
		case syntax.OpPlus:
			lo, hi = 1, maxRepeat
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = lo + maxRepeat
			}
		}
		for range lo + r.IntN(hi-lo+1) {
			emit(r, re.Sub[0], b, budget)
		}
	}
}

// pick chooses a rune from a class (pairs of ranges), preferring
// printable ASCII letters and digits so the value can be said.
func pick(r *rand.Rand, ranges []rune) rune {
	var good []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		for c := max(ranges[i], '0'); c <= ranges[i+1] && c <= 'z'; c++ {
			if (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') {
				good = append(good, c)
			}
		}
	}
	if len(good) > 0 {
		return good[r.IntN(len(good))]
	}
	if len(ranges) >= 2 {
		return ranges[0]
	}
	return 'X'
}
