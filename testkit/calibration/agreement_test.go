package calibration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scorer"
)

// TestCalibrationAgreement scores the recorded run with today's scorer and
// lists every cell where it disagrees with the hand labels ("either"
// agrees with pass and fail). The list is logged; with CALIBRATION_STRICT
// set, any disagreement fails the test.
//
//	go test -run Agreement -v ./testkit/calibration/
func TestCalibrationAgreement(t *testing.T) {
	hs, err := harness.ReadRun(filepath.Join(dataDir, "run", harness.RunFile))
	require.NoError(t, err)
	labels := map[string]label{}
	for _, l := range readLabels(t) {
		labels[l.ID] = l
	}
	var out []string
	cells := 0
	for _, h := range hs {
		l, ok := labels[h.Call]
		require.True(t, ok, "%s: no label", h.Call)
		s := scorer.Score(h)
		for _, a := range scorer.Axes() {
			cells++
			want, got := l.Axes[string(a)], string(s.Axis(a).Verdict)
			if want == got || (want == "either" && got != string(scorer.Unknown)) {
				continue
			}
			var why []string
			for _, f := range s.Axis(a).Findings {
				why = append(why, f.Text)
			}
			out = append(out, fmt.Sprintf("%s\t%s\tlabel %s\tscorer %s\t%s", h.Call, a, want, got, strings.Join(why, " | ")))
		}
		cells++
		got := string(s.Primary)
		if got == "" {
			got = "none"
		}
		if got != l.Bucket {
			out = append(out, fmt.Sprintf("%s\tbucket\tlabel %s\tscorer %s", h.Call, l.Bucket, got))
		}
	}
	for _, line := range out {
		t.Log(line)
	}
	t.Logf("%d of %d cells disagree", len(out), cells)
	if os.Getenv("CALIBRATION_STRICT") != "" {
		require.Empty(t, out)
	}
}
