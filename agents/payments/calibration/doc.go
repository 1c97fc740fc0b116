// Package calibration holds the payments family's calibration set: the
// scenarios in scenarios/ played against the variants of the payments line
// (agents/payments), recorded in run/, hand-labelled in labels.yaml. The
// gate (TestPaymentsAgreement) re-scores the run with today's scorer and
// compares it with the labels: every cell must agree, unless a
// disagreements.txt lists cells known to disagree (a ratchet: then the test
// fails on any cell not listed or any listed cell that now agrees; today
// there is none). Re-record with
//
//	CALIBRATION_UPDATE=1 go test -race -run TestPaymentsRecord ./agents/payments/calibration/
package calibration
