package entity

import (
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the same zones on every machine
)

// render writes entities compactly: "dim:value|alt|alt" joined by "; ";
// an unresolved date shows what was said in brackets.
func render(es []Entity) string {
	var b []string
	for _, e := range es {
		s := e.Dim.String() + ":" + e.Value
		if e.Dim == DimDate && e.Value == "" {
			s += "[" + specString(e.Date) + "]"
		}
		for _, a := range e.Alternatives {
			if a.Dim != e.Dim {
				s += "|" + a.Dim.String() + ":" + a.Value
			} else {
				s += "|" + a.Value
			}
		}
		if e.Ordinal {
			s += " (ord)"
		}
		b = append(b, s)
	}
	return strings.Join(b, "; ")
}

func specString(d DateSpec) string {
	var p []string
	if d.Relative {
		p = append(p, "rel"+itoa(d.Offset))
	}
	if d.Month > 0 {
		p = append(p, "m"+itoa(d.Month))
	}
	if d.Day > 0 {
		p = append(p, "d"+itoa(d.Day))
	}
	if d.HasWeekday {
		s := d.Weekday.String()[:3]
		if d.Next {
			s = "next " + s
		}
		p = append(p, s)
	}
	return strings.Join(p, " ")
}

func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// callDay is a Monday.
var callDay = Ref{Date: time.Date(2026, 12, 7, 15, 0, 0, 0, time.UTC)}

type exCase struct {
	in   string
	want string
}

func runCases(t *testing.T, opts Options, cases []exCase) {
	t.Helper()
	for _, c := range cases {
		if got := render(Extract(c.in, opts)); got != c.want {
			t.Errorf("%q:\n got  %s\n want %s", c.in, got, c.want)
		}
	}
}

func TestNumbers(t *testing.T) {
	runCases(t, Options{}, []exCase{
		{"0", "number:0"},
		{"7", "number:7"},
		{"215", "number:215"},
		{"45.50", "number:45.5"},
		{"seven", "number:7"},
		{"zero", "number:0"},
		{"eleven", "number:11"},
		{"twenty", "number:20"},
		{"twenty-one", "number:21"},
		{"twenty one", "number:21"},
		{"ninety nine", "number:99"},
		{"a hundred", "number:100"},
		{"one hundred", "number:100"},
		{"two hundred", "number:200"},
		{"two hundred and fifteen", "number:215"},
		{"two hundred fifteen", "number:215"},
		{"two hundred and five", "number:205"},
		{"nine hundred ninety-nine", "number:999"},
		{"one thousand", "number:1000"},
		{"a thousand", "number:1000"},
		{"one thousand two hundred", "number:1200"},
		{"one thousand two hundred and fifty", "number:1250"},
		{"twelve hundred", "number:1200"},
		{"fifteen hundred", "number:1500"},
		{"three thousand and four", "number:3004"},
		{"forty two thousand", "number:42000"},
		{"two million", "number:2000000"},
		{"a dozen", "number:12"},
		{"half a dozen", "number:6"},
		{"a couple", "number:2"},
		{"two-fifteen", "number:215|money:2.15"},
		{"two dozen", "number:24"},
		{"2 hundred", "number:200"},
		{"5 thousand", "number:5000"},
		{"2 hundred and 10", "number:200; number:10"},
		{"two point five", "number:2.5"},
		{"8th", "number:8 (ord)"},
		{"1st", "number:1 (ord)"},
		{"eighth", "number:8 (ord)"},
		{"twenty-first", "number:21 (ord)"},
		{"twenty third", "number:23 (ord)"},
		{"two fifty", "number:250|money:2.5"},
		{"twelve forty-five", "number:1245|money:12.45"},
		{"nineteen ninety", "number:1990|money:19.9"},
		{"one twenty five", "number:125|money:1.25"},
		{"four one", "number:4; number:1"},
		{"four and five", "number:4; number:5"},
		{"one hundred and", "number:100"},
		{"table for four", "number:4"},
		{"the hundred", ""},
		{"a table", ""},
	})
}

func TestMoney(t *testing.T) {
	runCases(t, Options{}, []exCase{
		{"$215", "money:215"},
		{"$215.00", "money:215"},
		{"$1,200.50", "money:1200.5"},
		{"$2.50", "money:2.5"},
		{"€45", "money:45"},
		{"£7.05", "money:7.05"},
		{"45 dollars", "money:45"},
		{"215 dollars and 40 cents", "money:215.4"},
		{"two hundred and fifteen dollars", "money:215"},
		{"two hundred fifteen dollars and forty cents", "money:215.4"},
		{"one thousand two hundred dollars", "money:1200"},
		{"a hundred dollars", "money:100"},
		{"two dollars fifty", "money:2.5"},
		{"two dollars and fifty cents", "money:2.5"},
		{"fifteen bucks", "money:15"},
		{"forty cents", "money:0.4"},
		{"five cents", "money:0.05"},
		{"twenty euros", "money:20"},
		{"ten pounds", "money:10"},
		{"two fifty dollars", "money:250|2.5"},
		{"two fifty", "number:250|money:2.5"},
		{"five dollars and two people", "money:5; number:2"},
		{"it's $45 for 2", "money:45; number:2"},
	})
}

func TestClockTimes(t *testing.T) {
	runCases(t, Options{}, []exCase{
		{"9 am", "time:09:00"},
		{"9am", "time:09:00"},
		{"9 a.m.", "time:09:00"},
		{"9 a m", "time:09:00"},
		{"9:00 am", "time:09:00"},
		{"9:00am", "time:09:00"},
		{"9:30 pm", "time:21:30"},
		{"7pm", "time:19:00"},
		{"12 pm", "time:12:00"},
		{"12 am", "time:00:00"},
		{"12:30 am", "time:00:30"},
		{"nine in the morning", "time:09:00"},
		{"9 in the evening", "time:21:00"},
		{"three in the afternoon", "time:15:00"},
		{"ten at night", "time:22:00"},
		{"twelve at night", "time:00:00"},
		{"eight this evening", "time:20:00"},
		{"8 tonight", "time:20:00"},
		{"quarter past nine", "time:09:15|21:15"},
		{"quarter past nine in the morning", "time:09:15"},
		{"half past two", "time:02:30|14:30"},
		{"half past seven in the evening", "time:19:30"},
		{"quarter to eight", "time:07:45|19:45"},
		{"ten past nine", "time:09:10|21:10"},
		{"twenty to five pm", "time:16:40"},
		{"five after six pm", "time:18:05"},
		{"noon", "time:12:00"},
		{"midday", "time:12:00"},
		{"12 noon", "time:12:00"},
		{"midnight", "time:00:00"},
		{"09:00", "time:09:00"},
		{"21:30", "time:21:30"},
		{"00:15", "time:00:15"},
		{"13:00", "time:13:00"},
		{"9:00", "time:09:00|21:00"},
		{"12:00", "time:12:00|00:00"},
		{"7 o'clock", "time:07:00|19:00"},
		{"seven o'clock in the evening", "time:19:00"},
		{"nine oh five pm", "time:21:05"},
		{"seven thirty pm", "time:19:30"},
		{"seven-thirty tonight", "time:19:30"},
		{"seven-thirty", "number:730|money:7.3"},
		{"at seven-thirty", "time:07:30|19:30"},
		{"twenty hundred hours", "time:20:00"},
		{"nineteen thirty hours", "time:19:30"},
		{"0900 hours", "time:09:00"},
		{"two hours", "duration:PT2H"},
		{"twelve-fifteen am", "time:00:15"},
		{"half seven in the evening", "time:19:30"},
		{"at half seven", "time:07:30|19:30"},
		{"half seven", "number:7"},
		{"twenty-one", "number:21"},
		{"at seven thirty", "time:07:30|19:30"},
		{"by 9 30", "time:09:30|21:30"},
		{"seven thirty", "number:730|money:7.3"},
		{"at 8", "number:8"},
		{"at 8 people", "number:8"},
		{"from two to four", "number:2; number:4"},
		{"ten to twelve people", "number:10; number:12"},
	})
	runCases(t, Options{BareTime: true}, []exCase{
		{"at 8", "time:08:00|20:00"},
		{"at eight", "time:08:00|20:00"},
		{"at 8 people", "number:8"},
	})
}

func TestDates(t *testing.T) {
	cases := []struct {
		in, noRef, withRef string
	}{
		{"2026-12-08", "date:2026-12-08", "date:2026-12-08"},
		{"December 8", "date:[m12 d8]", "date:2026-12-08"},
		{"Dec 8th", "date:[m12 d8]", "date:2026-12-08"},
		{"December the 8th", "date:[m12 d8]", "date:2026-12-08"},
		{"8 December 2026", "date:2026-12-08", "date:2026-12-08"},
		{"the 8th of December", "date:[m12 d8]", "date:2026-12-08"},
		{"the eighth of December", "date:[m12 d8]", "date:2026-12-08"},
		{"December twenty-first", "date:[m12 d21]", "date:2026-12-21"},
		{"Tuesday, December 8", "date:[m12 d8 Tue]", "date:2026-12-08"},
		{"January 5", "date:[m1 d5]", "date:2027-01-05"},
		{"November 30", "date:[m11 d30]", "date:2026-11-30"},
		{"12/08", "date:[m12 d8]", "date:2026-12-08"},
		{"12/08/2026", "date:2026-12-08", "date:2026-12-08"},
		{"February 30", "number:30", "number:30"},
		{"Tuesday", "date:[Tue]", "date:2026-12-08"},
		{"on Tuesday", "date:[Tue]", "date:2026-12-08"},
		{"Monday", "date:[Mon]", "date:2026-12-07|2026-12-14"},
		{"next Tuesday", "date:[next Tue]", "date:2026-12-08|2026-12-15"},
		{"this Friday", "date:[Fri]", "date:2026-12-11"},
		{"the 8th", "date:[d8]", "date:2026-12-08"},
		{"on the eighth", "date:[d8]", "date:2026-12-08"},
		{"the 3rd", "date:[d3]", "date:2027-01-03"},
		{"today", "date:[rel0]", "date:2026-12-07"},
		{"tomorrow", "date:[rel1]", "date:2026-12-08"},
		{"yesterday", "date:[rel-1]", "date:2026-12-06"},
		{"the day after tomorrow", "date:[rel2]", "date:2026-12-09"},
		{"day after tomorrow", "date:[rel2]", "date:2026-12-09"},
		{"in three days", "date:[rel3]", "date:2026-12-10"},
		{"in a week", "date:[rel7]", "date:2026-12-14"},
		{"in two weeks", "date:[rel14]", "date:2026-12-21"},
		{"a week from today", "date:[rel7]", "date:2026-12-14"},
		{"three days from now", "date:[rel3]", "date:2026-12-10"},
		{"tomorrow at 9 am", "date:[rel1]; time:09:00", "date:2026-12-08; time:09:00"},
		{"the 8th floor", "date:[d8]", "date:2026-12-08"}, // a limit: an ordinal after "the" is a day
		{"the second person", "number:2 (ord)", "number:2 (ord)"},
		{"May I help", "", ""},
		{"sat down", "", ""},
	}
	for _, c := range cases {
		if got := render(Extract(c.in, Options{})); got != c.noRef {
			t.Errorf("%q without a Ref:\n got  %s\n want %s", c.in, got, c.noRef)
		}
		if got := render(Extract(c.in, Options{Ref: callDay})); got != c.withRef {
			t.Errorf("%q on 2026-12-07:\n got  %s\n want %s", c.in, got, c.withRef)
		}
	}
	// DefaultYear completes a month and day when there is no Ref.
	runCases(t, Options{DefaultYear: 2026}, []exCase{{"December 9", "date:2026-12-09"}, {"tomorrow", "date:[rel1]"}})
	// A Ref in a time zone takes the call's local date.
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	late := Ref{Date: time.Date(2026, 12, 8, 3, 0, 0, 0, time.UTC), Zone: ny} // 22:00 on the 7th in New York
	runCases(t, Options{Ref: late}, []exCase{{"tomorrow", "date:2026-12-08"}})
}

func TestDateMatches(t *testing.T) {
	cases := []struct {
		said, iso    string
		match, known bool
	}{
		{"Tuesday", "2026-12-08", true, true},
		{"Tuesday", "2026-12-09", false, true},
		{"the 8th", "2026-12-08", true, true},
		{"the 8th", "2026-11-08", true, true},
		{"the 9th", "2026-12-08", false, true},
		{"December 8", "2026-12-08", true, true},
		{"December 8", "2026-12-09", false, true},
		{"tomorrow", "2026-12-08", false, false},
		{"2026-12-08", "2026-12-08", true, true},
		{"2026-12-08", "2027-12-08", false, true},
	}
	for _, c := range cases {
		es := Extract(c.said, Options{})
		if len(es) != 1 {
			t.Fatalf("%q: %s", c.said, render(es))
		}
		m, k := es[0].DateMatches(c.iso)
		if m != c.match || k != c.known {
			t.Errorf("%q matches %s = %v, %v; want %v, %v", c.said, c.iso, m, k, c.match, c.known)
		}
	}
	// With a Ref, "tomorrow" resolves and is known.
	es := Extract("tomorrow", Options{Ref: callDay})
	if m, k := es[0].DateMatches("2026-12-08"); !m || !k {
		t.Errorf("tomorrow on 2026-12-07 should match 2026-12-08")
	}
}

func TestDurations(t *testing.T) {
	runCases(t, Options{}, []exCase{
		{"two hours", "duration:PT2H"},
		{"ninety minutes", "duration:PT1H30M"},
		{"90 mins", "duration:PT1H30M"},
		{"an hour", "duration:PT1H"},
		{"an hour and a half", "duration:PT1H30M"},
		{"half an hour", "duration:PT30M"},
		{"two and a half hours", "duration:PT2H30M"},
		{"1.5 hours", "duration:PT1H30M"},
		{"an hour and thirty minutes", "duration:PT1H30M"},
		{"2 hours 15 minutes", "duration:PT2H15M"},
		{"45 seconds", "duration:PT45S"},
		{"three days", "duration:P3D"},
		{"a week", "duration:P7D"},
		{"two nights", "number:2"},
	})
}

func TestCodes(t *testing.T) {
	runCases(t, Options{}, []exCase{
		{"R4M9", "code:R4M9"},
		{"r4m9", "code:R4M9"},
		{"BK-4471", "code:BK4471"},
		{"#5590", "code:5590|number:5590"},
		{"#12", "code:12|number:12"},
		{"4128", "code:4128|number:4128"},
		{"0042", "code:0042|number:42"},
		{"four one two eight", "code:4128"},
		{"four, one, two, eight", "code:4128"},
		{"R four M nine", "code:R4M9"},
		{"r 4 m 9", "code:R4M9"},
		{"Romeo four Mike nine", "code:R4M9"},
		{"romeo 4 mike 9", "code:R4M9"},
		{"R as in Romeo four M as in Mike nine", "code:R4M9"},
		{"double four seven one", "code:4471"},
		{"four four seven one", "code:4471"},
		{"triple seven", "code:777"},
		{"double oh seven", "code:007"},
		{"five five oh two", "code:5502"},
		{"one oh one", "code:101"},
		{"five five nine oh", "code:5590"},
		{"oh four one two", "code:412"}, // a leading "oh" is an interjection
		{"alpha bravo charlie", "code:ABC"},
		{"X-ray five", "code:X5"},
		{"Romeo four November nine", "code:R4N9"},
		{"November 9", "date:[m11 d9]"},
		{"November nine", "date:[m11 d9]"},
		{"7 p m", "time:19:00"},
		{"order four one two eight, thanks", "code:4128"},
		{"one two", "number:1; number:2"},
		{"a table for two", "number:2"},
		{"I have it", ""},
		{"the 9th", "date:[d9]"},
	})
}

func TestNames(t *testing.T) {
	v := NewVocabulary("Okafor", "Blue Room", "O'Brien", "checking", "Joint Savings", "Blue")
	runCases(t, Options{Names: v}, []exCase{
		{"under the name Okafor", "name:Okafor"},
		{"paid from joint savings", "name:Joint Savings"},
		{"the blue room at 7 pm", "name:Blue Room; time:19:00"},
		{"the blue one", "name:Blue; number:1"},
		{"OBrien", "name:O'Brien"},
		{"Mr. O'Brien's account", "name:O'Brien"},
		{"your Checking account", "name:checking"},
		{"nothing here", ""},
	})
	runCases(t, Options{}, []exCase{{"under the name Okafor", ""}})
}

func TestTokenize(t *testing.T) {
	cases := map[string]string{
		"It's $1,200.50, OK?":   "it's $1200.50 ok",
		"Booking BK-4471.":      "booking bk-4471",
		"on 12/08, and/or 7:30": "on 12/08 and or 7:30",
		"won’t":                 "won't",
	}
	for in, want := range cases {
		if got := strings.Join(Tokenize(in), " "); got != want {
			t.Errorf("Tokenize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSpans(t *testing.T) {
	es := Extract("Booking R4M9 moved to Tuesday, December 8 at 9 am for two hundred dollars", Options{})
	want := []struct {
		dim        Dim
		start, end int
		text       string
	}{
		{DimCode, 1, 2, "r4m9"},
		{DimDate, 4, 7, "tuesday december 8"},
		{DimTime, 8, 10, "9 am"},
		{DimMoney, 11, 14, "two hundred dollars"},
	}
	if len(es) != len(want) {
		t.Fatalf("got %s", render(es))
	}
	for i, w := range want {
		e := es[i]
		if e.Dim != w.dim || e.Span.Start != w.start || e.Span.End != w.end || e.Text != w.text {
			t.Errorf("entity %d = %v %v %q, want %v %d..%d %q", i, e.Dim, e.Span, e.Text, w.dim, w.start, w.end, w.text)
		}
	}
}
