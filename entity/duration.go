package entity

import "strconv"

// seconds in each unit a duration names.
var durationUnits = map[string]int64{
	"second": 1, "seconds": 1, "sec": 1, "secs": 1,
	"minute": 60, "minutes": 60, "min": 60, "mins": 60,
	"hour": 3600, "hours": 3600, "hr": 3600, "hrs": 3600,
	"day": 86400, "days": 86400, "week": 604800, "weeks": 604800,
}

// DurationAt reads a duration at ts[i]: "two hours", "ninety minutes", "90
// mins", "1.5 hours", "an hour and a half", "half an hour", "two and a
// half hours", "an hour and thirty minutes", "3 days". It returns the
// canonical ISO 8601 form (days as "P3D", else hours, minutes and seconds
// as "PT1H30M") and the tokens used.
func DurationAt(ts []string, i int) (string, int) {
	var total int64
	k := i
	for {
		secs, n := durationPart(ts, k)
		if n == 0 {
			break
		}
		total += secs
		k += n
		// "an hour and thirty minutes", "2 hours 15 minutes"
		nx := k
		if word(ts, nx) == "and" {
			nx++
		}
		if word(ts, nx) == "a" && word(ts, nx+1) == "half" {
			total += secs / 2 // "an hour and a half"
			k = nx + 2
			break
		}
		if _, more := durationPart(ts, nx); more == 0 {
			break
		}
		k = nx
	}
	if total <= 0 {
		return "", 0
	}
	return isoDuration(total), k - i
}

// durationPart reads one "number unit" ("two hours", "half an hour", "two
// and a half hours") and returns its seconds.
func durationPart(ts []string, i int) (int64, int) {
	if word(ts, i) == "half" && (word(ts, i+1) == "an" || word(ts, i+1) == "a") {
		if u := durationUnits[word(ts, i+2)]; u > 0 {
			return u / 2, 3
		}
	}
	var num, den int64 = 0, 1 // value num/den
	k := i
	switch t := word(ts, i); {
	case t == "a" || t == "an":
		num, k = 1, i+1
	default:
		n := NumberAt(ts, i)
		if n.Used == 0 || n.Ordinal || n.Pair {
			return 0, 0
		}
		if n.Int >= 0 {
			num = n.Int
		} else if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			num, den = int64(f*100+0.5), 100
		}
		k = i + n.Used
		if word(ts, k) == "and" && word(ts, k+1) == "a" && word(ts, k+2) == "half" {
			num, den = num*2+1, 2
			k += 3
		}
	}
	u := durationUnits[word(ts, k)]
	if u == 0 || num == 0 {
		return 0, 0
	}
	return u * num / den, k + 1 - i
}

func isoDuration(secs int64) string {
	if secs%86400 == 0 {
		return "P" + strconv.FormatInt(secs/86400, 10) + "D"
	}
	b := []byte("P")
	if d := secs / 86400; d > 0 {
		b = strconv.AppendInt(b, d, 10)
		b = append(b, 'D')
	}
	b = append(b, 'T')
	secs %= 86400
	for _, u := range []struct {
		n int64
		c byte
	}{{3600, 'H'}, {60, 'M'}, {1, 'S'}} {
		if q := secs / u.n; q > 0 {
			b = strconv.AppendInt(b, q, 10)
			b = append(b, u.c)
			secs %= u.n
		}
	}
	return string(b)
}
