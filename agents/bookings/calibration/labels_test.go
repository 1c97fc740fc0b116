package calibration_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// label is one call's hand label (testdata/calibration/labels.yaml).
type label struct {
	ID     string            `yaml:"id"`
	Agent  string            `yaml:"agent"`
	Axes   map[string]string `yaml:"axes"`
	Bucket string            `yaml:"bucket"`
	Why    string            `yaml:"why"`
}

// labelAxes are the six axes, in docs/SCORING.md order.
func labelAxes() []string {
	return []string{"captured", "active_state_correct", "tool_args_correct", "stale_write_prevented",
		"backend_correct", "confirmation_matches_backend"}
}

// labelBuckets are the primary buckets of docs/SCORING.md, plus none.
func labelBuckets() []string {
	return []string{"none", "stale_tool_args", "inflight_not_cancelled", "unverified_tool_result", "noise_as_barge_in",
		"unsafe_retry", "early_confirmation", "missing_idempotency_key", "action_not_executed",
		"gave_up_on_transient_error", "uncompensated_write", "wrong_record", "unclassified"}
}

func readLabels(t *testing.T) []label {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, "labels.yaml"))
	require.NoError(t, err)
	var doc struct {
		Calls []label `yaml:"calls"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	require.NoError(t, dec.Decode(&doc))
	return doc.Calls
}

// TestCalibrationLabels: one well-formed label per planned call, in plan
// order, each consistent with itself (a bucket exactly when an axis fails).
func TestCalibrationLabels(t *testing.T) {
	labels := readLabels(t)
	require.Len(t, labels, len(plan()))
	for i, l := range labels {
		p := plan()[i]
		require.Equal(t, p.id(), l.ID, "label %d", i)
		require.Equal(t, p.variant, l.Agent, "%s", l.ID)
		require.NotEmpty(t, l.Why, "%s: why", l.ID)
		require.Len(t, l.Axes, 6, "%s: axes", l.ID)
		fails := false
		for _, a := range labelAxes() {
			v, ok := l.Axes[a]
			require.True(t, ok, "%s: axis %s missing", l.ID, a)
			require.Contains(t, []string{"pass", "fail", "either"}, v, "%s: %s", l.ID, a)
			fails = fails || v == "fail"
		}
		require.True(t, slices.Contains(labelBuckets(), l.Bucket), "%s: unknown bucket %q", l.ID, l.Bucket)
		if fails {
			require.NotEqual(t, "none", l.Bucket, "%s: a failed call has a primary bucket", l.ID)
		} else {
			require.Equal(t, "none", l.Bucket, "%s: no axis fails, so no bucket", l.ID)
		}
	}
	// The set covers every bucket and both verdicts on every axis.
	seen := map[string]bool{}
	verdicts := map[string]map[string]bool{}
	for _, l := range labels {
		seen[l.Bucket] = true
		for a, v := range l.Axes {
			if verdicts[a] == nil {
				verdicts[a] = map[string]bool{}
			}
			verdicts[a][v] = true
		}
	}
	for _, b := range labelBuckets() {
		if b != "unclassified" {
			require.True(t, seen[b], "no call is labelled %s", b)
		}
	}
	for _, a := range labelAxes() {
		require.True(t, verdicts[a]["pass"] && verdicts[a]["fail"], "axis %s needs a pass and a fail label", a)
	}
}
