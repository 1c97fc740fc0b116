package scorer

import (
	"slices"
	"testing"
	"time"

	"github.com/callproof/callproof/entity"
)

// Table tests of the value helpers the claim reader is built on: each
// row sits on a boundary (a range end, a suffix, a token count) so that a
// changed comparison or constant changes some row's answer.

func TestNumberAt(t *testing.T) {
	cases := []struct {
		text    string
		i       int
		n, used int
	}{
		{"4", 0, 4, 1},
		{"0", 0, 0, 1},
		{"4th", 0, 4, 1},
		{"123456789", 0, 123456789, 1},
		{"1234567890", 0, -1, 0},
		{"4x", 0, -1, 0},
		{"four", 0, 4, 1},
		{"nineteen", 0, 19, 1},
		{"third", 0, 3, 1},
		{"twenty-one", 0, 21, 1},
		{"twenty-first", 0, 21, 1},
		{"twenty-nine", 0, 29, 1},
		{"twenty-ten", 0, -1, 0},
		{"twenty-tenth", 0, -1, 0},
		{"forty-two", 0, 42, 1},
		{"twenty one", 0, 21, 2},
		{"twenty nine", 0, 29, 2},
		{"twenty ten", 0, 2010, 2}, // a pair, as in a year (entity.NumberAt)
		{"twenty zero", 0, 20, 1},
		{"twenty first", 0, 21, 2},
		{"twenty ninth", 0, 29, 2},
		{"twenty tenth", 0, 20, 1},
		{"twenty", 0, 20, 1},
		{"at ninety", 1, 90, 1},
		{"people", 0, -1, 0},
	}
	for _, c := range cases {
		n, used := numberAt(tokens(c.text), c.i)
		if n != c.n || used != c.used {
			t.Errorf("numberAt(%q, %d) = %d, %d; want %d, %d", c.text, c.i, n, used, c.n, c.used)
		}
	}
}

func TestDigitsAndDates(t *testing.T) {
	for in, want := range map[string]string{"3": "3", "3rd": "3", "21st": "21", "2nd": "2", "4th": "4", "3x": "", "x3": "", "": "", "12": "12"} {
		if got := digits(in); got != want {
			t.Errorf("digits(%q) = %q, want %q", in, got, want)
		}
	}
	iso := []struct {
		y, m, d int
		want    string
	}{
		{2026, 12, 3, "2026-12-03"}, {2026, 1, 1, "2026-01-01"}, {2026, 12, 31, "2026-12-31"},
		{2026, 0, 1, ""}, {2026, 13, 1, ""}, {2026, 1, 0, ""}, {2026, 1, 32, ""}, {2026, 2, 29, ""},
		{2028, 2, 29, "2028-02-29"}, {999, 1, 1, ""}, {1000, 1, 1, "1000-01-01"}, {9999, 1, 1, "9999-01-01"}, {10000, 1, 1, ""},
	}
	for _, c := range iso {
		if got := entity.ISODate(c.y, c.m, c.d); got != c.want {
			t.Errorf("isoDate(%d, %d, %d) = %q, want %q", c.y, c.m, c.d, got, c.want)
		}
	}
	for in, want := range map[string]string{"2026-12-03": "2026-12-03", "2026-12-3": "2026-12-03", "2026-1-9": "2026-01-09",
		"26-12-03": "", "2026-12": "", "2026-12-03-1": "", "2026-ab-03": "", "20x6-12-03": "", "2026-12-x": "", "2026-02-30": ""} {
		if got := parseISO(in); got != want {
			t.Errorf("parseISO(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]int{"2027": 2027, "1999": 1999, "2100": 0, "1899": 0, "207": 0, "20271": 0, "20x7": 0} {
		if got := entity.YearOf(in); got != want {
			t.Errorf("year(%q) = %d, want %d", in, got, want)
		}
	}
	for in, want := range map[string]int{"0": 0, "1": 1, "31": 31, "32": 0, "third": 3, "x": 0} {
		if got, _ := entity.DayAt([]string{in}, 0); got != want {
			t.Errorf("dayAt(%q) = %d, want %d", in, got, want)
		}
	}
	if got := weekdayOf("2026-12-09"); got != time.Wednesday {
		t.Errorf("weekdayOf = %v", got)
	}
	if got := weekdayOf("someday"); got != -1 {
		t.Errorf("weekdayOf(bad) = %v", got)
	}
}

func TestClockTime(t *testing.T) {
	cases := []struct {
		h, m int
		ap   string
		want string
	}{
		{7, 30, "", "~7:30"}, {1, 0, "", "~1:00"}, {12, 0, "", "~12:00"}, {0, 30, "", "00:30"}, {13, 0, "", "13:00"},
		{23, 59, "", "23:59"}, {24, 0, "", ""}, {-1, 0, "", ""}, {5, 60, "", ""}, {5, -1, "", ""}, {5, 59, "", "~5:59"},
		{12, 0, "am", "00:00"}, {11, 0, "am", "11:00"}, {13, 0, "am", ""}, {0, 15, "am", "00:15"},
		{12, 0, "pm", "12:00"}, {1, 5, "pm", "13:05"}, {11, 59, "pm", "23:59"}, {13, 0, "pm", ""},
	}
	for _, c := range cases {
		if got := clockTime(c.h, c.m, c.ap); got != c.want {
			t.Errorf("clockTime(%d, %d, %q) = %q, want %q", c.h, c.m, c.ap, got, c.want)
		}
	}
	for n, want := range map[int]string{0: "00", 5: "05", 10: "10", 59: "59"} {
		if got := twoDigits(n); got != want {
			t.Errorf("twoDigits(%d) = %q", n, got)
		}
	}
}

func TestAmountAndForms(t *testing.T) {
	for in, want := range map[string]string{"45.50": "45.5", "45.00": "45", "$45.50": "45.5", "€3": "3", "£0.5": "0.5",
		"1,200.00": "1200", "0": "0", "-3": "", "abc": "", "": ""} {
		if got := amount(in); got != want {
			t.Errorf("amount(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"BK-4471": "bk4471", "#5590": "5590", "a b/9": "ab9", "": ""} {
		if got := idForm(in); got != want {
			t.Errorf("idForm(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"Mr. Okafor": "mr okafor", "  The  Grand $Hall# ": "the grand hall", "O’Neil": "o'neil"} {
		if got := textForm(in); got != want {
			t.Errorf("textForm(%q) = %q, want %q", in, got, want)
		}
	}
	if got := tokens("Won't — it's 7:30, $45.50 on 2026-12-03 (#5590)!"); !slices.Equal(got, []string{"won't", "it's", "7:30", "$45.50", "on", "2026-12-03", "#5590"}) {
		t.Errorf("tokens = %q", got)
	}
	if got := tokens("'quoted' -dash- ...:"); !slices.Equal(got, []string{"quoted", "dash"}) {
		t.Errorf("tokens trims = %q", got)
	}
	if !hasDigit("a1") || hasDigit("abc") {
		t.Error("hasDigit")
	}
}

func TestClassOfTypes(t *testing.T) {
	cases := []struct {
		typ, norm string
		want      valueClass
	}{
		{typeDate, "", classDate}, {typeTime, "19:30", classTime}, {typeNumber, "4.5", classAmount}, {typeInteger, "4", classCount},
		{typeString, "", classNone}, {typeString, "5590", classID}, {typeString, "bk-4471", classID}, {typeString, "Okafor", classText},
		{"", "kettle", classText},
	}
	for _, c := range cases {
		if got := classOf(c.typ, c.norm); got != c.want {
			t.Errorf("classOf(%q, %q) = %v, want %v", c.typ, c.norm, got, c.want)
		}
	}
	for c, want := range map[valueClass]string{classNone: "none", classID: "id", classDate: "date", classTime: "time", classAmount: "amount", classCount: "count", classText: "text"} {
		if c.String() != want {
			t.Errorf("%d.String() = %q", c, c.String())
		}
	}
	if heardForm(classID, "BK-4471") != "bk4471" || heardForm(classText, "The Okafor") != "the okafor" || heardForm(classDate, "2026-12-03") != "2026-12-03" {
		t.Error("heardForm")
	}
}

func TestSameHeardEdges(t *testing.T) {
	cases := []struct {
		c           valueClass
		named, held string
		want        bool
	}{
		{classDate, "2026-12-09", "2026-12-09", true},
		{classDate, "2026-12-10", "2026-12-09", false},
		{classDate, "wd:x", "2026-12-09", false},
		{classDate, "wd:3", "not a date", false},
		{classTime, "~12:00", "12:00", true},
		{classTime, "~1:00", "13:00", true},
		{classTime, "~1:00", "01:00", true},
		{classTime, "~11:30", "23:30", true},
		{classTime, "~11:30", "23:31", false},
		{classTime, "~7:30", "7:30", false},
		{classTime, "19:30", "07:30", false},
		{classAmount, "45.5", "45.5", true},
		{classCount, "4", "5", false},
	}
	for _, c := range cases {
		if got := sameHeard(c.c, c.named, c.held); got != c.want {
			t.Errorf("sameHeard(%v, %q, %q) = %v, want %v", c.c, c.named, c.held, got, c.want)
		}
	}
	if displayValue(classDate, "wd:3") != "Wednesday" || displayValue(classDate, "wd:0") != "Sunday" || displayValue(classTime, "19:30") != "19:30" {
		t.Error("displayValue")
	}
}

// TestScanValues pins the value scanner class by class (docs/SCORING.md,
// "Values"): what each phrase is read as, and when it is a prior value.
func TestScanValues(t *testing.T) {
	type want struct {
		c         valueClass
		cur, prev []string
	}
	cases := []struct {
		text     string
		bareTime bool
		want     []want
	}{
		// dates
		{"on 2026-12-03", false, []want{{classDate, []string{"2026-12-03"}, nil}}},
		{"December 9", false, []want{{classDate, []string{"2026-12-09"}, nil}}},
		{"9 December", false, []want{{classDate, []string{"2026-12-09"}, nil}}},
		{"the ninth of December", false, []want{{classDate, []string{"2026-12-09"}, nil}}},
		{"December 9 2027", false, []want{{classDate, []string{"2027-12-09"}, nil}}},
		{"December 32", false, []want{{classDate, nil, nil}}},
		{"February 30", false, []want{{classDate, nil, nil}}},
		{"Wednesday, December 9", false, []want{{classDate, []string{"2026-12-09"}, nil}}},
		{"Wednesday the 9th of December", false, []want{{classDate, []string{"2026-12-09"}, nil}}},
		{"Wednesday", false, []want{{classDate, []string{"wd:3"}, nil}}},
		{"wed or fri", false, []want{{classDate, []string{"wd:3", "wd:5"}, nil}}},
		{"sat", false, []want{{classDate, nil, nil}}},
		{"may I", false, []want{{classDate, nil, nil}}},
		{"from Tuesday to Wednesday", false, []want{{classDate, []string{"wd:3"}, []string{"wd:2"}}}},
		{"from Tuesday", false, []want{{classDate, []string{"wd:2"}, nil}}},
		{"instead of December 3", false, []want{{classDate, nil, []string{"2026-12-03"}}}},
		{"was December 3", false, []want{{classDate, nil, []string{"2026-12-03"}}}},
		{"not on December 3", false, []want{{classDate, nil, []string{"2026-12-03"}}}},
		{"not really December 3", false, []want{{classDate, []string{"2026-12-03"}, nil}}},
		{"previously on the 3rd of December", false, []want{{classDate, []string{"2026-12-03"}, nil}}},
		// times
		{"at 7:30 pm", false, []want{{classTime, []string{"19:30"}, nil}}},
		{"at 7:30pm", false, []want{{classTime, []string{"19:30"}, nil}}},
		{"19:30", false, []want{{classTime, []string{"19:30"}, nil}}},
		{"7:3", false, []want{{classTime, nil, nil}}},
		{"7pm", false, []want{{classTime, []string{"19:00"}, nil}}},
		{"11am", false, []want{{classTime, []string{"11:00"}, nil}}},
		{"13pm", false, []want{{classTime, nil, nil}}},
		{"xpm", false, []want{{classTime, nil, nil}}},
		{"7 pm", false, []want{{classTime, []string{"19:00"}, nil}}},
		{"7 p m", false, []want{{classTime, []string{"19:00"}, nil}}},
		{"7 in the morning", false, []want{{classTime, []string{"07:00"}, nil}}},
		{"7 in the evening", false, []want{{classTime, []string{"19:00"}, nil}}},
		{"3 in the afternoon", false, []want{{classTime, []string{"15:00"}, nil}}},
		{"8 tonight", false, []want{{classTime, []string{"20:00"}, nil}}},
		{"at seven thirty", false, []want{{classTime, []string{"~7:30"}, nil}}},
		{"seven thirty", false, []want{{classTime, nil, nil}}},
		{"by seven oh five", false, []want{{classTime, []string{"~7:05"}, nil}}},
		{"until 7 o'clock", false, []want{{classTime, []string{"~7:00"}, nil}}},
		{"half past eight", false, []want{{classTime, []string{"~8:30"}, nil}}},
		{"quarter past eight", false, []want{{classTime, []string{"~8:15"}, nil}}},
		{"quarter to eight", false, []want{{classTime, []string{"~7:45"}, nil}}},
		{"quarter to one", false, []want{{classTime, []string{"~12:45"}, nil}}},
		{"half past thirteen", false, []want{{classTime, nil, nil}}},
		{"noon", false, []want{{classTime, []string{"12:00"}, nil}}},
		{"midday", false, []want{{classTime, []string{"12:00"}, nil}}},
		{"midnight", false, []want{{classTime, []string{"00:00"}, nil}}},
		{"at 8", true, []want{{classTime, []string{"~8:00"}, nil}}},
		{"at 8", false, []want{{classTime, nil, nil}}},
		{"at 8 people", true, []want{{classTime, nil, nil}}},
		{"at 13", true, []want{{classTime, nil, nil}}},
		{"at 0", true, []want{{classTime, nil, nil}}},
		{"instead of 7 pm", false, []want{{classTime, nil, []string{"19:00"}}}},
		// amounts
		{"$45.50", false, []want{{classAmount, []string{"45.5"}, nil}}},
		{"45.50", false, []want{{classAmount, []string{"45.5"}, nil}}},
		{"45 dollars and 50 cents", false, []want{{classAmount, []string{"45.5"}, nil}}},
		{"45 dollars and 1 cent", false, []want{{classAmount, []string{"45.01"}, nil}}},
		{"45 dollars and 100 cents", false, []want{{classAmount, []string{"45"}, nil}}},
		{"forty-five dollars", false, []want{{classAmount, []string{"45"}, nil}}},
		{"45 euros", false, []want{{classAmount, []string{"45"}, nil}}},
		{"45 apples", false, []want{{classAmount, nil, nil}}},
		// counts
		{"four people", false, []want{{classCount, []string{"4"}, nil}}},
		{"a table for four", false, []want{{classCount, []string{"4"}, nil}}},
		{"party of 6", false, []want{{classCount, []string{"6"}, nil}}},
		{"quantity 2", false, []want{{classCount, []string{"2"}, nil}}},
		{"quantity from 7 to 2", false, []want{{classCount, []string{"2"}, nil}}},
		{"quantity is now at 5", false, []want{{classCount, []string{"5"}, nil}}},
		{"quantity of the big blue 5", false, []want{{classCount, nil, nil}}},
		{"quantity a b c d 5", false, []want{{classCount, nil, nil}}},
		{"size 1000", false, []want{{classCount, nil, nil}}},
		{"for 1000", false, []want{{classCount, nil, nil}}},
		{"for third", false, []want{{classCount, nil, nil}}},
		{"no longer four people", false, []want{{classCount, nil, []string{"4"}}}},
		// a bare pair after "for": a clock time only when the catalogue has one
		{"now goes out for two fifty", false, []want{{classTime, nil, nil}}},
		{"now goes out for two-fifteen", false, []want{{classTime, nil, nil}}},
		{"a table for seven thirty", true, []want{{classTime, []string{"~7:30"}, nil}}},
		{"at seven thirty", false, []want{{classTime, []string{"~7:30"}, nil}}},
		// codes
		{"order 5590", false, []want{{classID, []string{"5590"}, nil}}},
		{"BK-4471", false, []want{{classID, []string{"bk4471"}, nil}}},
		{"#12", false, []want{{classID, []string{"12"}, nil}}},
		{"number 12", false, []want{{classID, []string{"12"}, nil}}},
		{"ref 12", false, []want{{classID, []string{"12"}, nil}}},
		{"just 12", false, []want{{classID, nil, nil}}},
		{"5590x", false, []want{{classID, []string{"5590x"}, nil}}},
		{"number 12x", false, []want{{classID, []string{"12x"}, nil}}},
	}
	for _, c := range cases {
		got := scanValues(c.text, c.bareTime)
		for _, w := range c.want {
			if !slices.Equal(got.cur[w.c], w.cur) || !slices.Equal(got.prior[w.c], w.prev) {
				t.Errorf("%q: %v cur %q prior %q; want %q %q", c.text, w.c, got.cur[w.c], got.prior[w.c], w.cur, w.prev)
			}
		}
	}
}

func TestNormValueEdges(t *testing.T) {
	cases := []struct{ typ, in, want string }{
		{"date", "Wednesday", "Wednesday"},
		{"date", "December 3 or December 4", "December 3 or December 4"},
		{"integer", "", ""},
		{"integer", "four people", "four people"},
		{"integer", "twenty one", "21"},
		{"time", "7:30 or 8:30", "7:30 or 8:30"},
		{"time", "half past eight in the evening", "20:30"},
		{"number", "forty-five dollars and fifty cents", "45.5"},
		{"number", "lots", "lots"},
		{"string", "#BK-4471", "BK-4471"},
		{"string", "Okafor", "Okafor"},
	}
	for _, c := range cases {
		if got := normValue(c.typ, c.in); got != c.want {
			t.Errorf("normValue(%q, %q) = %q, want %q", c.typ, c.in, got, c.want)
		}
	}
}
