package scenarios

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/trace"
)

// bookingTools is a catalogue with a create, a cancel and a delete; %s is
// spliced into the cancel tool's entry.
const bookingTools = `tools:
  - {name: book, effect: create, table: bookings, consequential: true, args: [{name: day, type: date, required: true}]}
  - {name: cancel_booking, effect: cancel, table: bookings, key_arg: ref, consequential: true%s,
     args: [{name: ref, type: string, required: true}, {name: reason, type: string}]}
  - {name: forget_booking, effect: delete, table: bookings, key_arg: ref, consequential: true, args: [{name: ref, type: string, required: true}]}
records:
  - {table: bookings, key: bookings-1, fields: {day: "2026-12-08", status: booked}}
`

const bookingCase = `id: t
category: combined
expected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true,
           backend_correct: true, confirmation_matches_backend: true, should_execute: true}
steps:
  - {id: ask, do: say, text: "Please cancel booking one.", action: cancel_booking, slots: {ref: bookings-1}}
  - {id: bye, do: hangup}
`

func TestCancelAndDeleteEffectsCompile(t *testing.T) {
	s, err := LoadBytes("t.yaml", []byte(bookingCase+fmt.Sprintf(bookingTools, ", status_field: status, status_value: cancelled")))
	require.NoError(t, err)
	c, err := Compile(s)
	require.NoError(t, err)
	cancel, ok := trace.Catalog(c.Tools, "cancel_booking")
	require.True(t, ok)
	assert.Equal(t, trace.EffectCancel, cancel.Effect)
	assert.Equal(t, "status", cancel.StatusField)
	assert.Equal(t, "cancelled", cancel.StatusValue)
	del, _ := trace.Catalog(c.Tools, "forget_booking")
	assert.Equal(t, trace.EffectDelete, del.Effect)
}

func TestCancelEffectErrors(t *testing.T) {
	for _, tc := range []struct{ extra, want string }{
		{"", "tools[1].status_field: required for effect cancel"},
		{", status_field: status", "tools[1].status_value: required for effect cancel"},
		{", status_field: reason, status_value: x", `tools[1].status_field: "reason" is also an argument of cancel_booking`},
	} {
		_, err := LoadBytes("t.yaml", []byte(bookingCase+fmt.Sprintf(bookingTools, tc.extra)))
		require.Error(t, err, tc.extra)
		assert.Contains(t, err.Error(), tc.want)
	}
	// Status fields belong to a cancel only; a delete needs its key.
	tools := strings.Replace(fmt.Sprintf(bookingTools, ", status_field: status, status_value: cancelled"),
		"effect: delete, table: bookings, key_arg: ref,", "effect: delete, table: bookings, status_value: gone,", 1)
	_, err := LoadBytes("t.yaml", []byte(bookingCase+tools))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tools[2].key_arg: required for effect delete")
	assert.Contains(t, err.Error(), "tools[2].status_value: only for effect cancel")
}
