// Package calibration holds the recording test of callproof's calibration
// set: the scenarios of testdata/calibration/scenarios played against the
// variants of the bookings desk (agents/bookings), saved as a results
// directory in testdata/calibration/run, with hand labels beside it in
// testdata/calibration/labels.yaml. Re-record with
//
//	CALIBRATION_UPDATE=1 go test -race -run TestCalibration ./agents/bookings/calibration/
//
// Without the variable the test only checks that the recorded run and the
// labels load and agree on the call list.
package calibration
