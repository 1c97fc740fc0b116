package scenarios

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLimitsAndCustomParametersCompile(t *testing.T) {
	data := validCase + `limits:
  max_event_text_bytes: 1024
  max_call_text_bytes: 65536
  max_history_bytes: 1048576
  max_history_events: 5000
  max_tool_requests_per_second: 50
  max_tool_requests_per_call: 200
  idle_timeout: 1.5s
custom_parameters: {lang: en, variant: "b"}
`
	s, err := LoadBytes("t.yaml", []byte(data))
	require.NoError(t, err)
	c, err := Compile(s)
	require.NoError(t, err)
	assert.Equal(t, CallLimits{
		MaxEventTextBytes: 1024, MaxCallTextBytes: 65536, MaxHistoryBytes: 1 << 20, MaxHistoryEvents: 5000,
		MaxToolRequestsPerSecond: 50, MaxToolRequestsPerCall: 200, IdleTimeout: 1500 * time.Millisecond,
	}, c.Limits)
	assert.Equal(t, map[string]string{"lang": "en", "variant": "b"}, c.CustomParameters)
	// The compiled map is a copy: the run cannot change the scenario.
	c.CustomParameters["lang"] = "fr"
	assert.Equal(t, "en", s.CustomParameters["lang"])

	// Left out, everything is the default (zero).
	s, err = LoadBytes("t.yaml", []byte(validCase+"limits: {max_history_events: 7}\n"))
	require.NoError(t, err)
	c, err = Compile(s)
	require.NoError(t, err)
	assert.Equal(t, CallLimits{MaxHistoryEvents: 7}, c.Limits)
	assert.Nil(t, c.CustomParameters)
}

func TestLimitsAndCustomParametersErrors(t *testing.T) {
	many := make([]string, MaxCustomParameters+1)
	for i := range many {
		many[i] = fmt.Sprintf("k%d: v", i)
	}
	tests := []struct {
		name, extra string
		want        []string
	}{
		{"zero", "limits: {max_call_text_bytes: 0}", []string{"t.yaml:6: limits.max_call_text_bytes: must be more than 0"}},
		{"negative", "limits: {max_tool_requests_per_call: -1}", []string{"t.yaml:6: limits.max_tool_requests_per_call: must be more than 0"}},
		{"zero duration", `limits: {idle_timeout: "0s"}`, []string{"t.yaml:6: limits.idle_timeout: must be more than 0"}},
		{"over", "limits: {max_event_text_bytes: 1048577, max_history_bytes: 268435457, max_history_events: 1000001}", []string{
			"limits.max_event_text_bytes: 1048577 is over the limit of 1048576 (MaxLimitEventTextBytes)",
			"limits.max_history_bytes: 268435457 is over the limit of 268435456 (MaxLimitHistoryBytes)",
			"limits.max_history_events: 1000001 is over the limit of 1000000 (MaxLimitHistoryEvents)",
		}},
		{"over rate", "limits: {max_tool_requests_per_second: 10001, max_call_text_bytes: 67108865}", []string{
			"limits.max_call_text_bytes: 67108865 is over the limit of 67108864 (MaxLimitCallTextBytes)",
			"limits.max_tool_requests_per_second: 10001 is over the limit of 10000 (MaxLimitToolRequestsPerSecond)",
		}},
		{"over duration", `limits: {idle_timeout: "11m"}`, []string{"limits.idle_timeout: 11m0s is over the limit of 10m0s (MaxLimitIdleTimeout)"}},
		{"unknown field", "limits: {max_frames: 3}", []string{"limits.max_frames: unknown field"}},
		{"wrong type", `limits: {max_history_events: "7"}`, []string{"limits.max_history_events: want integer"}},
		{"not a mapping", "limits: 5", []string{"limits: want mapping"}},
		{"number value", "custom_parameters: {lang: 5}", []string{"custom_parameters.lang: want string, got int 5"}},
		{"empty key", `custom_parameters: {"": x}`, []string{"custom_parameters: empty key"}},
		{"long value", "custom_parameters: {lang: " + strings.Repeat("x", MaxCustomParameterBytes+1) + "}",
			[]string{"custom_parameters.lang: value of 1025 bytes, longer than 1024 (MaxCustomParameterBytes)"}},
		{"too many", "custom_parameters: {" + strings.Join(many, ", ") + "}",
			[]string{"custom_parameters: 33 entries, more than 32 (MaxCustomParameters)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBytes("t.yaml", []byte(validCase+tt.extra+"\n"))
			require.Error(t, err)
			got := errStrings(t, err)
			require.Len(t, got, len(tt.want), "%q", got)
			for i, w := range tt.want {
				assert.Contains(t, got[i], w)
			}
		})
	}
}

// The schema's bounds on limits are the constants of limits.go.
func TestLimitsSchemaBounds(t *testing.T) {
	raw, err := Schema()
	require.NoError(t, err)
	var doc struct {
		Defs map[string]struct {
			Properties map[string]struct {
				Minimum json.Number `json:"minimum"`
				Maximum json.Number `json:"maximum"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	props := doc.Defs["LimitsSpec"].Properties
	want := map[string]int64{
		"max_event_text_bytes":         MaxLimitEventTextBytes,
		"max_call_text_bytes":          MaxLimitCallTextBytes,
		"max_history_bytes":            MaxLimitHistoryBytes,
		"max_history_events":           MaxLimitHistoryEvents,
		"max_tool_requests_per_second": MaxLimitToolRequestsPerSecond,
		"max_tool_requests_per_call":   MaxLimitToolRequestsPerCall,
	}
	for name, max := range want {
		p, ok := props[name]
		if !assert.True(t, ok, name) {
			continue
		}
		assert.Equal(t, "1", p.Minimum.String(), name)
		assert.Equal(t, strconv.FormatInt(max, 10), p.Maximum.String(), name)
	}
	// Every field of LimitsSpec is in the schema, and idle_timeout besides.
	assert.Len(t, props, reflect.TypeOf(LimitsSpec{}).NumField())
	assert.Contains(t, props, "idle_timeout")
}
