package harness_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/trace"
)

// A WebRTC agent whose signaling fails ends each call as agent_error
// naming the step, promptly, and the suite goes on.
func TestWebRTCSignalingFailureIsAgentError(t *testing.T) {
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no bots free", http.StatusServiceUnavailable)
	}))
	defer refusing.Close()
	cases, _ := liveCore(t)
	for _, tc := range []struct{ url, want string }{
		{refusing.URL + "/api/offer", "HTTP 503: no bots free"},
		{"http://127.0.0.1:1/api/offer", "connection refused"},
	} {
		env := liveEnv(t)
		tr, err := harness.WebRTCTransport(harness.AudioOptions{SpeechCache: audioCache(t)}, harness.WebRTCOptions{})
		require.NoError(t, err)
		env.Transport, env.TransportName = tr, "webrtc"
		r := env.Runner()
		r.Concurrency, r.TimeScale = 2, 1
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		start := time.Now()
		res, err := r.Run(ctx, tc.url, cases[:2])
		cancel()
		require.NoError(t, err)
		require.Len(t, res, 2)
		assert.Less(t, time.Since(start), 20*time.Second, "no call waits out more than its dial")
		for _, c := range res {
			assert.Equal(t, trace.OutcomeAgentError, c.Score.Outcome, c.Score.Call)
			assert.Contains(t, c.Score.Reason, callsim.ReasonDial+": signaling: POST", c.Score.Call)
			assert.Contains(t, c.Score.Reason, tc.want, c.Score.Call)
		}
	}
}
