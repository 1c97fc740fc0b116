package entity

import (
	"strconv"
	"strings"
)

var currencyWords = map[string]bool{"dollars": true, "dollar": true, "usd": true, "bucks": true, "buck": true,
	"euros": true, "euro": true, "eur": true, "pounds": true, "pound": true, "gbp": true, "quid": true}

var centWords = map[string]bool{"cents": true, "cent": true, "pence": true, "p": false}

// IsCurrencyWord reports a word naming a currency unit ("dollars", "bucks").
func IsCurrencyWord(t string) bool { return currencyWords[t] }

// Money is an amount read at a position: canonical decimal Value without
// trailing zeros ("215", "1200.5", "0.4"), Alt another reading ("two fifty
// dollars" is 250, or 2.5), and the tokens used.
type Money struct {
	Value, Alt string
	Used       int
}

// MoneyAt reads an amount at ts[i]: "$215", "$1,200.50", "€45", "45
// dollars", "two hundred fifteen dollars and forty cents", "two dollars
// fifty", "fifteen bucks", "forty cents", "two fifty dollars".
func MoneyAt(ts []string, i int) Money {
	t := word(ts, i)
	if t == "" {
		return Money{}
	}
	if strings.HasPrefix(t, "$") || strings.HasPrefix(t, "€") || strings.HasPrefix(t, "£") {
		if v := Decimal(t); v != "" {
			// "$2 hundred" is rare; "$215" and "$1200.50" are the forms.
			return Money{Value: v, Used: 1}
		}
		return Money{}
	}
	n := NumberAt(ts, i)
	if n.Used == 0 || n.Ordinal {
		return Money{}
	}
	j := i + n.Used
	if centWords[word(ts, j)] && n.Int >= 0 && n.Int < 100 {
		return Money{Value: Decimal("0." + twoDigits(int(n.Int))), Used: n.Used + 1}
	}
	if !currencyWords[word(ts, j)] {
		return Money{}
	}
	j++
	m := Money{Value: n.Value, Used: j - i}
	if n.Pair && n.Lo < 100 {
		m.Alt = Decimal(strconv.FormatInt(n.Hi, 10) + "." + twoDigits(int(n.Lo)))
	}
	// cents: "and forty cents", "forty cents", "fifty" right after the unit
	k := j
	if word(ts, k) == "and" {
		k++
	}
	if c := NumberAt(ts, k); c.Used > 0 && !c.Ordinal && !c.Pair && c.Int >= 0 && c.Int < 100 && n.Int >= 0 {
		end := k + c.Used
		if centWords[word(ts, end)] {
			end++
		} else if k != j {
			return m // "five dollars and two people": not cents
		} else if IsCountNoun(word(ts, end)) || c.Words == false {
			return m
		}
		m.Value = Decimal(n.Value + "." + twoDigits(int(c.Int)))
		m.Alt = ""
		m.Used = end - i
	}
	return m
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }
