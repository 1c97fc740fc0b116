package perturb

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/callproof/callproof/spoken"
)

// Dimension is the kind of a value, which decides how it can be said.
type Dimension string

// The dimensions, plus Verb for paraphrases of the claim itself.
const (
	Money Dimension = "money"
	Date  Dimension = "date"
	Clock Dimension = "time"
	Count Dimension = "count"
	Code  Dimension = "code"
	Name  Dimension = "name"
	Verb  Dimension = "verb"
)

// Dimensions lists every dimension in report order.
func Dimensions() []Dimension { return []Dimension{Money, Date, Clock, Count, Code, Name, Verb} }

var (
	reISODate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	reHHMM    = regexp.MustCompile(`^([01]\d|2[0-3]):([0-5]\d)$`)
	reAmount  = regexp.MustCompile(`^(\d+)\.(\d\d)$`)
	reSmall   = regexp.MustCompile(`^\d{1,2}$`)
	reCode    = regexp.MustCompile(`^[A-Z0-9]{3,8}$`)
)

// dimensionOf classifies a value by its argument's declared type and its
// shape.
func dimensionOf(argType, value string) (Dimension, bool) {
	switch {
	case argType == "date" || reISODate.MatchString(value):
		return Date, true
	case argType == "time" || reHHMM.MatchString(value):
		return Clock, true
	case reAmount.MatchString(value):
		return Money, true
	case reSmall.MatchString(value):
		return Count, true
	case reCode.MatchString(value) && strings.ContainsAny(value, "0123456789"):
		return Code, true
	case value != "" && !strings.ContainsAny(value, "0123456789"):
		return Name, true
	}
	return "", false
}

// forms says v in every form of its dimension.
func forms(d Dimension, v string, today time.Time) []string {
	var out []string
	switch d {
	case Money:
		out = spoken.Money(v)
	case Date:
		out = spoken.Date(v, today)
	case Clock:
		out = spoken.Clock(v)
	case Count:
		out = spoken.Count(v)
	case Code:
		out = spoken.Code(v)
	case Name:
		out = spoken.Name(v)
	}
	return dedupe(out)
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// neighbours are single-value perturbations of v: each a value the
// confirmation must not be read as matching. others are the values other
// records (or the catalogue's enum) hold for the same field.
func neighbours(d Dimension, v string, others []string) []string {
	var out []string
	switch d {
	case Money:
		m := reAmount.FindStringSubmatch(v)
		dollars, _ := strconv.Atoi(m[1])
		for _, delta := range []int{1, -1, 10, -10, 100} {
			if n := dollars + delta; n > 0 {
				out = append(out, fmt.Sprintf("%d.%s", n, m[2]))
			}
		}
		if m[2] != "00" {
			out = append(out, m[1]+".00")
		}
	case Date:
		t, _ := time.Parse(time.DateOnly, v)
		out = append(out, t.AddDate(0, 0, -1).Format(time.DateOnly), t.AddDate(0, 0, 1).Format(time.DateOnly),
			t.AddDate(0, 0, 7).Format(time.DateOnly))
	case Clock:
		m := reHHMM.FindStringSubmatch(v)
		h, _ := strconv.Atoi(m[1])
		out = append(out, fmt.Sprintf("%02d:%s", (h+12)%24, m[2]), fmt.Sprintf("%02d:%s", (h+1)%24, m[2]),
			fmt.Sprintf("%02d:%s", (h+23)%24, m[2]))
		if m[2] == "00" {
			out = append(out, fmt.Sprintf("%02d:30", h))
		} else {
			out = append(out, fmt.Sprintf("%02d:00", h))
		}
	case Count:
		n, _ := strconv.Atoi(v)
		out = append(out, strconv.Itoa(n+1))
		if n > 1 {
			out = append(out, strconv.Itoa(n-1))
		}
	case Code:
		// One character changed, at each position.
		for i := 0; i < len(v); i++ {
			b := []byte(v)
			switch c := b[i]; {
			case c >= '0' && c <= '9':
				b[i] = '0' + (c-'0'+1)%10
			default:
				b[i] = 'A' + (c-'A'+1)%26
			}
			out = append(out, string(b))
		}
	}
	for _, o := range others {
		if od, ok := dimensionOf("", o); ok && (od == d || d == Name) && o != v {
			out = append(out, o)
		}
	}
	return dedupe(out)
}
