package entity

import (
	"strconv"
	"strings"
)

// Dim is a value's dimension.
type Dim uint8

const (
	DimNone     Dim = iota
	DimNumber       // "215", "2.5"; Ordinal marks "8th"
	DimMoney        // "215", "1200.5": decimal, no trailing zeros
	DimTime         // "09:00": 24-hour HH:MM
	DimDate         // "2026-12-08", or "" with Date stating what was said
	DimDuration     // "PT1H30M", "P3D"
	DimCode         // "R4M9", "4128": upper case, letters and digits
	DimName         // a Vocabulary value, as given
)

var dimNames = [...]string{"none", "number", "money", "time", "date", "duration", "code", "name"}

func (d Dim) String() string { return dimNames[d] }

// Alt is another reading of the same words.
type Alt struct {
	Dim   Dim
	Value string
}

// Span is a token range [Start, End) of Tokenize's output.
type Span struct{ Start, End int }

// Entity is one value-bearing span of an utterance.
type Entity struct {
	Dim          Dim
	Value        string // canonical; "" for a date that cannot be resolved
	Alternatives []Alt
	Span         Span
	Text         string   // the span's tokens, space-separated
	Ordinal      bool     // a number said as an ordinal ("8th", "eighth")
	Spoken       bool     // a code or number said in words
	Date         DateSpec // DimDate: what was said, for checks without a Ref
}

// Options steer Extract. The zero value reads everything it can without
// a call date, names or a bare-hour rule.
type Options struct {
	Ref         Ref         // the call's date, for relative and partial dates
	DefaultYear int         // year of a month and day said without one when Ref is zero
	BareTime    bool        // "at 8" is a time (the caller knows a time is expected)
	Names       *Vocabulary // names and enum values to find
}

// Values lists the entity's readings: Value first, then its alternatives
// of the same dimension.
func (e Entity) Values() []string {
	out := make([]string, 0, 1+len(e.Alternatives))
	if e.Value != "" {
		out = append(out, e.Value)
	}
	for _, a := range e.Alternatives {
		if a.Dim == e.Dim {
			out = append(out, a.Value)
		}
	}
	return out
}

// DateMatches reports whether a date entity can name the ISO date iso,
// and whether that is known: a resolved date compares its readings; an
// unresolved one checks what was said (the weekday, the day of the
// month, the month); a relative date without a Ref is unknown.
func (e Entity) DateMatches(iso string) (match, known bool) {
	if e.Dim != DimDate {
		return false, false
	}
	if e.Value != "" {
		for _, v := range e.Values() {
			if v == iso {
				return true, true
			}
		}
		return false, true
	}
	return e.Date.Matches(iso)
}

// Extract reads every value in s (see ExtractTokens).
func Extract(s string, opts Options) []Entity {
	return ExtractTokens(Tokenize(s), opts)
}

// ExtractTokens reads every value in ts, each token used once, in this
// order: names, times, codes spelled with letters and digits ("Romeo four
// November nine", before dates so "four November" in it is not a date),
// dates, durations, money, other codes, numbers. Entities
// come back in token order.
func ExtractTokens(ts []string, opts Options) []Entity {
	x := extractor{ts: ts, used: make([]bool, len(ts)), opts: opts}
	if opts.Names != nil {
		x.pass(x.name)
	}
	x.pass(x.clock)
	x.pass(x.letteredCode)
	x.pass(x.date)
	x.pass(x.duration)
	x.pass(x.money)
	x.pass(x.code)
	x.pass(x.number)
	x.sortOut()
	return x.out
}

type extractor struct {
	ts   []string
	used []bool
	opts Options
	out  []Entity
}

// free is ts cut at the first used token from i, so an extractor never
// reads across another value.
func (x *extractor) free(i int) []string {
	k := i
	for k < len(x.ts) && !x.used[k] {
		k++
	}
	return x.ts[:k]
}

func (x *extractor) pass(read func(ts []string, i int) (Entity, int)) {
	var free []string
	for i := 0; i < len(x.ts); i++ {
		if x.used[i] {
			free = nil
			continue
		}
		if free == nil {
			free = x.free(i)
		}
		e, n := read(free, i)
		if n == 0 {
			continue
		}
		e.Span = Span{i, i + n}
		e.Text = strings.Join(x.ts[i:i+n], " ")
		for k := i; k < i+n; k++ {
			x.used[k] = true
		}
		x.out = append(x.out, e)
		i += n - 1
		free = nil
	}
}

func (x *extractor) sortOut() {
	// insertion sort: a handful of entities per utterance
	for i := 1; i < len(x.out); i++ {
		for j := i; j > 0 && x.out[j].Span.Start < x.out[j-1].Span.Start; j-- {
			x.out[j], x.out[j-1] = x.out[j-1], x.out[j]
		}
	}
}

func (x *extractor) name(ts []string, i int) (Entity, int) {
	v, n := x.opts.Names.NameAt(ts, i)
	return Entity{Dim: DimName, Value: v}, n
}

func (x *extractor) clock(ts []string, i int) (Entity, int) {
	c := ClockAt(ts, i, x.opts.BareTime)
	if c.Used == 0 {
		return Entity{}, 0
	}
	e := Entity{Dim: DimTime, Value: c.Value}
	if c.Alt != "" {
		e.Alternatives = []Alt{{DimTime, c.Alt}}
	}
	return e, c.Used
}

func (x *extractor) date(ts []string, i int) (Entity, int) {
	d, n := DateAt(ts, i)
	if n == 0 {
		return Entity{}, 0
	}
	v, alts := d.Resolve(x.opts.Ref, x.opts.DefaultYear)
	e := Entity{Dim: DimDate, Value: v, Date: d}
	for _, a := range alts {
		e.Alternatives = append(e.Alternatives, Alt{DimDate, a})
	}
	return e, n
}

func (x *extractor) duration(ts []string, i int) (Entity, int) {
	v, n := DurationAt(ts, i)
	return Entity{Dim: DimDuration, Value: v}, n
}

func (x *extractor) money(ts []string, i int) (Entity, int) {
	m := MoneyAt(ts, i)
	if m.Used == 0 {
		return Entity{}, 0
	}
	e := Entity{Dim: DimMoney, Value: m.Value}
	if m.Alt != "" {
		e.Alternatives = []Alt{{DimMoney, m.Alt}}
	}
	return e, m.Used
}

func (x *extractor) code(ts []string, i int) (Entity, int) {
	t := ts[i]
	if WrittenCode(t) {
		return Entity{Dim: DimCode, Value: CodeForm(t)}, 1
	}
	if d := DigitsOf(t); d != "" && len(d) == len(strings.TrimPrefix(t, "#")) && (len(d) >= 4 || t[0] == '#') {
		// a written number of four digits or more, or "#12": a code, or a number
		n, _ := strconv.ParseInt(d, 10, 64)
		return Entity{Dim: DimCode, Value: d, Alternatives: []Alt{{DimNumber, strconv.FormatInt(n, 10)}}}, 1
	}
	if c, n := SpokenCodeAt(ts, i); n > 0 {
		return Entity{Dim: DimCode, Value: c, Spoken: true}, n
	}
	return Entity{}, 0
}

// letteredCode is a spoken code of three characters or more with a letter
// and a digit.
func (x *extractor) letteredCode(ts []string, i int) (Entity, int) {
	c, n := SpokenCodeAt(ts, i)
	if n == 0 || len(c) < 3 || !strings.ContainsAny(c, "0123456789") || strings.Trim(c, "0123456789") == "" {
		return Entity{}, 0
	}
	return Entity{Dim: DimCode, Value: c, Spoken: true}, n
}

func (x *extractor) number(ts []string, i int) (Entity, int) {
	n := NumberAt(ts, i)
	if n.Used == 0 {
		return Entity{}, 0
	}
	e := Entity{Dim: DimNumber, Value: n.Value, Ordinal: n.Ordinal, Spoken: n.Words}
	if n.Pair && n.Lo < 100 {
		e.Alternatives = []Alt{{DimMoney, Decimal(strconv.FormatInt(n.Hi, 10) + "." + twoDigits(int(n.Lo)))}}
	}
	return e, n.Used
}
