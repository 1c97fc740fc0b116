package mockbackend

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/trace"
)

// TestTimeAndNumberArguments: a catalogue may declare time (HH:MM,
// 24-hour) and number (decimal) arguments; the backend holds them to it.
func TestTimeAndNumberArguments(t *testing.T) {
	tools, err := compileTools([]trace.ToolSpec{{Name: "refund", Effect: trace.EffectCreate, Table: "refunds", Consequential: true,
		Args: []trace.ArgSpec{{Name: "at", Type: trace.ArgTime}, {Name: "amount", Type: trace.ArgNumber}}}})
	require.NoError(t, err)
	tl := tools["refund"]
	for _, ok := range []map[string]string{{"at": "19:30"}, {"at": "00:00"}, {"amount": "45"}, {"amount": "45.50"}, {"amount": "-3.5"}} {
		require.Nil(t, tl.validate(ok), "%v", ok)
	}
	for _, bad := range []map[string]string{{"at": "7:30"}, {"at": "7:30 pm"}, {"at": "24:00"}, {"amount": "$45"}, {"amount": "45,50"}, {"amount": "1e3"}} {
		e := tl.validate(bad)
		require.NotNil(t, e, "%v", bad)
	}
	_, err = compileTools([]trace.ToolSpec{{Name: "x", Effect: trace.EffectRead, Table: "t", Args: []trace.ArgSpec{{Name: "a", Type: "money"}}}})
	require.Error(t, err)
}
