package scenarios

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCallDateCompiles(t *testing.T) {
	for _, tc := range []struct {
		name, block, date, zone string
	}{
		{"left out", "", DefaultCallDate, DefaultTimeZone},
		{"both", "call: {date: 2026-12-07, time_zone: America/New_York}\n", "2026-12-07", "America/New_York"},
		{"quoted date", "call: {date: \"2027-01-31\"}\n", "2027-01-31", DefaultTimeZone},
		{"zone only", "call: {time_zone: Europe/Berlin}\n", DefaultCallDate, "Europe/Berlin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := LoadBytes("t.yaml", []byte(validCase+tc.block))
			require.NoError(t, err)
			c, err := Compile(s)
			require.NoError(t, err)
			assert.Equal(t, tc.date, c.CallDate)
			assert.Equal(t, tc.zone, c.TimeZone)
		})
	}
}

// A bad call block names the file, the line and the field.
func TestCallDateErrors(t *testing.T) {
	line := strings.Count(validCase, "\n") + 1
	for _, tc := range []struct{ block, want string }{
		{"call: {date: 2026-02-30}", `call.date: bad date "2026-02-30"`},
		{"call: {date: \"12/07/2026\"}", `call.date: bad date "12/07/2026"`},
		{"call: {date: \"\"}", `call.date: bad date ""`},
		{"call: {time_zone: Mars/Olympus}", `call.time_zone: unknown time zone "Mars/Olympus"`},
		{"call: {time_zone: Local}", `call.time_zone: unknown time zone "Local"`},
		{"call: {time_zone: \"\"}", `call.time_zone: unknown time zone ""`},
		{"call: {day: 2026-12-07}", `call.day: unknown field`},
	} {
		t.Run(tc.block, func(t *testing.T) {
			s, err := LoadBytes("my.yaml", []byte(validCase+tc.block+"\n"))
			if err == nil {
				_, err = Compile(s)
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), fmt.Sprintf("my.yaml:%d: %s", line, tc.want))
		})
	}
}

// docs/SCENARIOS.md, PROTOCOL.md and SCORING.md state the calendar defaults.
func TestCallDateDocDefaults(t *testing.T) {
	_, flat := readDoc(t, "SCENARIOS.md")
	assert.Contains(t, flat, fmt.Sprintf("default date `%s` (`scenarios.DefaultCallDate`), default time zone `%s` (`scenarios.DefaultTimeZone`)", DefaultCallDate, DefaultTimeZone))
	_, flat = readDoc(t, "PROTOCOL.md")
	assert.Contains(t, flat, fmt.Sprintf("sends the defaults (`%s`, `%s`)", DefaultCallDate, DefaultTimeZone))
	_, flat = readDoc(t, "SCORING.md")
	assert.Contains(t, flat, fmt.Sprintf("or its defaults `%s` in `%s`", DefaultCallDate, DefaultTimeZone))
}
