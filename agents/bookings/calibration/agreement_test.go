package calibration_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/calibrate"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scorer"
)

// TestCalibrationAgreement scores the recorded run of the bookings family
// (agents that share nothing with the reference agents) with today's
// scorer and compares every axis and primary bucket with the hand labels,
// as `callproof calibrate` does: 100 % agreement and no false pass, or the
// test fails and lists each disagreement.
//
//	go test -run Agreement -v ./agents/bookings/calibration/
func TestCalibrationAgreement(t *testing.T) {
	hs, err := harness.ReadRun(filepath.Join(dataDir, "run", harness.RunFile))
	require.NoError(t, err)
	labels, err := calibrate.Load(filepath.Join(dataDir, "labels.yaml"))
	require.NoError(t, err)
	rep := calibrate.Compare(labels, scorer.ScoreAll(hs))
	t.Log("\n" + rep.Text())
	require.Zero(t, rep.FalsePasses, "false passes")
	require.Empty(t, rep.Missing, "labelled calls missing from the run")
	require.Empty(t, rep.Unlabelled, "calls without labels")
	require.GreaterOrEqual(t, rep.Calls, 24)
	require.True(t, rep.Perfect(), "disagreements:\n%s", rep.Text())
}
