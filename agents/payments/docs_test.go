package payments

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/internal/doccheck"
)

// TestDefaultCallDateDocumented: the calibration README states the default
// call date the code uses.
func TestDefaultCallDateDocumented(t *testing.T) {
	doc, err := os.ReadFile("calibration/README.md")
	require.NoError(t, err)
	refs := doccheck.Refs(string(doc), "payments")["payments.DefaultCallDate"]
	require.NotEmpty(t, refs)
	for _, s := range refs {
		got, err := doccheck.Value(DefaultCallDate, s)
		require.NoError(t, err)
		require.Equal(t, DefaultCallDate, got)
	}
}

// TestCallDate: the start frame's callDate wins; without it (or with a
// malformed one) the default applies.
func TestCallDate(t *testing.T) {
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	require.Equal(t, day("2026-12-07"), callDate([]byte(`{"event":"start","start":{"callId":"c","callDate":"2026-12-07"}}`)))
	require.Equal(t, day(DefaultCallDate), callDate([]byte(`{"event":"start","start":{"callId":"c"}}`)))
	require.Equal(t, day(DefaultCallDate), callDate([]byte(`{"event":"start","start":{"callDate":"7 Dec"}}`)))
	// "tomorrow" follows the call's date.
	require.Equal(t, "2026-12-08", listen("Send $5 to my mom tomorrow, reference AB12.", day("2026-12-07")).values[slotDate])
}
