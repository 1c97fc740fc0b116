package harness_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/callsim/twilio"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// audioConcurrency is how many real-time audio calls the equivalence test
// places at once: on two cores under -race, with a recognizer process per
// agent utterance, more than this starts to fall behind real time.
const audioConcurrency = 6

// audioSuite runs cases against the reference agent cfg in audio mode
// over the Twilio dialect, in real time, with the real recognizer. Calls
// the machine could not keep in real time (harness_error: the caller fell
// behind) are placed again, fewer at once, as `run --resume` would.
func audioSuite(t *testing.T, cfg agents.Config, cases []*scenarios.Compiled, record string) []harness.CallResult {
	t.Helper()
	return audioSuiteOver(t, agents.AudioConfig{Wire: agents.WireTwilio}, cfg, cases, record)
}

// audioSuiteOver is audioSuite with the agent in audio mode a (its wire,
// agents.WireTwilio or agents.WireWebRTC, and options; the speech cache is
// filled in).
func audioSuiteOver(t *testing.T, a agents.AudioConfig, cfg agents.Config, cases []*scenarios.Compiled, record string) []harness.CallResult {
	t.Helper()
	cache := audioCache(t)
	a.SpeechCache = cache
	cfg.Audio = &a
	url := liveAgent(t, cfg)
	env := liveEnv(t)
	o := harness.AudioOptions{SpeechCache: cache, RecordDir: record, Hearing: harness.DefaultHearing()}
	if a.Wire == agents.WireWebRTC {
		tr, err := harness.WebRTCTransport(o, harness.WebRTCOptions{})
		require.NoError(t, err)
		env.Transport, env.TransportName = tr, "webrtc"
	} else {
		tr, err := harness.TwilioTransport(o)
		require.NoError(t, err)
		env.Transport, env.TransportName = tr, "twilio"
	}
	out := make([]harness.CallResult, len(cases))
	todo := cases
	idx := map[string]int{}
	for i, c := range cases {
		idx[c.Scenario.ID] = i
	}
	for attempt, conc := range []int{audioConcurrency, 2, 1} {
		r := env.Runner()
		r.Concurrency, r.TimeScale, r.Suite, r.Agent = conc, 1, "core", cfg.Name+"-audio"
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		res, err := r.Run(ctx, url, todo)
		cancel()
		require.NoError(t, err)
		var again []*scenarios.Compiled
		for i, c := range res {
			out[idx[todo[i].Scenario.ID]] = c
			if c.Score.Outcome == trace.OutcomeHarnessError && strings.HasPrefix(c.Score.Reason, callsim.ReasonBehind) {
				again = append(again, todo[i])
			}
		}
		if len(again) == 0 {
			break
		}
		t.Logf("attempt %d: %d calls fell behind real time; placing them again", attempt+1, len(again))
		todo = again
	}
	return out
}

// audioCache is the speech cache the caller and the agent's ear share: a
// fixed folder under the user cache when CALLPROOF_SPEECH_CACHE is unset,
// so repeated runs synthesize nothing.
func audioCache(t *testing.T) string {
	if d := os.Getenv("CALLPROOF_SPEECH_CACHE"); d != "" {
		return d
	}
	return filepath.Join(harness.DefaultSpeechCache(), "test")
}

// The whole agent over audio: core in audio mode gives careful exactly the
// verdicts it gets in text mode — every axis of every call, and the
// primary bucket — with the agent's words recognized from its audio.
//
// Real time: about three minutes on two quiet cores under -race; calls the
// machine could not keep in real time are placed again, fewer at once. A
// call whose audio verdicts differ is logged with both timelines and
// placed once more: it fails only when it differs again. One earlier full
// run saw corr-04 differ once (captured, active state and confirmation,
// bucket stale_working_state) and no run since has (docs/PERFORMANCE.md);
// a difference that repeats is a real one.
func TestAudioCoreMatchesText(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time audio suite")
	}
	audioMatchesText(t, agents.AudioConfig{Wire: agents.WireTwilio}, agents.Careful())
}

// The core suite over WebRTC (SmallWebRTC signaling, pion at both ends on
// loopback) gives every call the verdicts it gets over a WebSocket.
// careful, with its self-reports on the data channel, gets the text
// protocol's. naive's races play out on real speech lengths, so its
// reference is the same audio over Twilio Media Streams, and, as a Twilio
// bot has no way to send them, it sends no self-reports: the two calls
// then differ only in their wire.
func TestWebRTCCoreMatchesWebSocket(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time audio suite")
	}
	t.Run("careful", func(t *testing.T) {
		audioMatchesText(t, agents.AudioConfig{Wire: agents.WireWebRTC}, agents.Careful())
	})
	t.Run("naive", func(t *testing.T) {
		cases, _ := liveCore(t)
		twilio := audioSuiteOver(t, agents.AudioConfig{Wire: agents.WireTwilio}, agents.Naive(), cases, "")
		// naive cancels a held call and resends it at once: which of
		// the two the backend logs first is a coin toss under a
		// millisecond, on any wire, and the first-act axes follow it. So
		// naive's calls are compared by what fails and why: integrity,
		// outcome and the primary bucket.
		audioMatchesBy(t, agents.AudioConfig{Wire: agents.WireWebRTC, NoSelfReports: true}, agents.Naive(), cases, "twilio", twilio, verdictOutline)
	})
}

// audioMatchesText places core against cfg over wire and in text mode
// and requires the same verdicts call by call.
func audioMatchesText(t *testing.T, a agents.AudioConfig, cfg agents.Config) {
	cases, _ := liveCore(t)
	text := liveJudged(t, liveEnv(t), cfg, cases, 30)
	audioMatches(t, a, cfg, cases, "text", text.Results)
}

// audioMatches places cases against cfg over wire and requires the
// verdicts of ref (placed as refName) call by call. A call that differs is
// logged with both timelines and placed once more: it fails only if it
// differs again.
func audioMatches(t *testing.T, a agents.AudioConfig, cfg agents.Config, cases []*scenarios.Compiled, refName string, ref []harness.CallResult) {
	audioMatchesBy(t, a, cfg, cases, refName, ref, func(s scorer.CallScore) string { return liveVector(s) + " " + string(s.Primary) })
}

// verdictOutline is what a call's failure comes to: its outcome,
// integrity and primary bucket.
func verdictOutline(s scorer.CallScore) string {
	return fmt.Sprintf("%s integrity=%v %s", s.Outcome, s.Integrity, s.Primary)
}

// audioMatchesBy is audioMatches comparing calls by key.
func audioMatchesBy(t *testing.T, a agents.AudioConfig, cfg agents.Config, cases []*scenarios.Compiled, refName string, ref []harness.CallResult, key func(scorer.CallScore) string) {
	wire := a.Wire
	audio := audioSuiteOver(t, a, cfg, cases, "")
	differs := func(i int, c harness.CallResult) bool {
		return key(ref[i].Score) != key(c.Score)
	}
	var again []*scenarios.Compiled
	var at []int
	for i, c := range audio {
		if differs(i, c) {
			t.Logf("%s: %s verdicts %s differ from %s %s on the first placing; placing it again", c.Score.Scenario, wire, liveVector(c.Score), refName, liveVector(ref[i].Score))
			logTimeline(t, wire, c)
			logTimeline(t, refName, ref[i])
			again, at = append(again, cases[i]), append(at, i)
		}
	}
	if len(again) > 0 {
		for k, c := range audioSuiteOver(t, a, cfg, again, "") {
			audio[at[k]] = c
		}
	}
	kept := 0
	for _, c := range audio {
		if c.Score.Integrity {
			kept++
		}
	}
	t.Logf("interop: integrity %d/%d", kept, len(audio)) // scripts/interop.sh reads it
	for i, c := range audio {
		s, want := c.Score, ref[i].Score
		require.Equal(t, want.Scenario, s.Scenario)
		assert.NotEqual(t, trace.OutcomeHarnessError, s.Outcome, "%s: %s", s.Scenario, s.Reason)
		if !assert.Equal(t, key(want), key(s), "%s: %s verdicts differ from %s (%s)", s.Scenario, wire, refName, s.Reason) {
			logTimeline(t, wire, c)
			logTimeline(t, refName, ref[i])
		}
		if d := s.Diag.Audio; assert.NotNil(t, d, s.Scenario) {
			// Trusted pacing by the documented rule, not a tighter margin.
			assert.LessOrEqual(t, d.LatenessMax, callsim.JitterAllowance, s.Scenario)
			assert.NotEmpty(t, d.Responses, "%s: the agent answered", s.Scenario)
		}
	}
}

// logTimeline puts a call's timeline and reasons in the test log: a
// difference that shows once in a full run is run down from the log.
func logTimeline(t *testing.T, what string, c harness.CallResult) {
	var b strings.Builder
	if err := reports.WriteTimeline(&b, c.History, c.Score); err != nil {
		t.Logf("%s timeline of %s: %v", what, c.Score.Call, err)
		return
	}
	t.Logf("%s timeline of %s:\n%s", what, c.Score.Call, b.String())
}

// Every sound a scenario may play has audio: an audio call never fails
// on a noise step the text protocol accepts.
func TestEveryScenarioSoundHasAudio(t *testing.T) {
	kinds := map[string]bool{}
	for _, k := range audio.NoiseKinds() {
		kinds[k] = true
	}
	for _, s := range scenarios.Sounds() {
		assert.True(t, kinds[s], "scenario sound %q has no audio.Noise kind", s)
	}
}

// fidelityCalls is how many real-time audio calls TestAudioFidelityUnderLoad
// places at once against one in-process audio agent under -race; the
// harness alone sustains 500 (docs/PERFORMANCE.md, "Audio calls under load").
const fidelityCalls = 24

// Under concurrent load every scripted utterance reaches the agent as
// exactly one utterance with its own words — no turn split or merged by
// frames that bunched up — as the audio reference agent's own counts
// show; and the caller kept real time on every call.
func TestAudioFidelityUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time audio")
	}
	cache := filepath.Join(t.TempDir(), "speech")
	cfg := agents.Careful()
	cfg.Audio = &agents.AudioConfig{SpeechCache: cache}
	running, err := agents.Start(context.Background(), cfg, "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = running.Close() })
	tr, err := harness.TwilioTransport(harness.AudioOptions{SpeechCache: cache})
	require.NoError(t, err)
	lines := []string{
		"Hi, I'd like to change the delivery date on order 5590 to December 3.",
		"Sorry, I meant order 5599.",
		"Wait, stop, don't change anything.",
	}
	for _, l := range lines { // synthesized once, before the clock matters
		_, err := tr.Speech.Speech(context.Background(), l)
		require.NoError(t, err)
	}
	type result struct {
		late callsim.Lateness
		err  error
	}
	res := make([]result, fidelityCalls)
	done := make(chan int)
	for i := range fidelityCalls {
		go func() {
			defer func() { done <- i }()
			res[i].late, res[i].err = fidelityCall(tr, running.URL, fmt.Sprintf("fid-%02d", i), lines)
		}()
	}
	for range fidelityCalls {
		<-done
	}
	behind := 0
	for i, r := range res {
		require.NoError(t, r.err, "call %d", i)
		if r.late.Behind() {
			behind++
		}
	}
	// The agent files a call's counts when its session ends, just after
	// the caller's stop.
	require.Eventually(t, func() bool { return len(running.Agent().EarStats()) == fidelityCalls }, 10*time.Second, 20*time.Millisecond)
	stats := running.Agent().EarStats()
	for _, s := range stats {
		var heard []string
		for _, h := range s.Heard {
			heard = append(heard, h.Text)
		}
		assert.Equal(t, lines, heard, "%s: every utterance once, in order", s.CallID)
		assert.Equal(t, len(lines), s.Onsets, "%s: one onset per utterance", s.CallID)
	}
	t.Logf("%d calls at once: %d fell behind real time", fidelityCalls, behind)
}

// fidelityCall says lines one after another, with a pause, then hangs up.
func fidelityCall(tr *twilio.Transport, url, id string, lines []string) (callsim.Lateness, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := tr.Dial(ctx, url)
	if err != nil {
		return callsim.Lateness{}, err
	}
	c := conn.(*twilio.Conn)
	defer c.Close()
	go func() {
		for {
			if _, err := c.Recv(ctx); err != nil {
				return
			}
		}
	}()
	if err := c.Send(ctx, native.Message{Event: native.EventStart, Start: &native.Start{CallID: id, TimeScale: 1}}); err != nil {
		return callsim.Lateness{}, err
	}
	time.Sleep(2500 * time.Millisecond) // the agent's greeting
	for i, l := range lines {
		uid := fmt.Sprintf("u%d", i)
		d, err := c.PrepareSpeech(ctx, uid, l)
		if err != nil {
			return callsim.Lateness{}, err
		}
		if err := c.Send(ctx, native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: uid, Phase: native.PhaseOnset}}); err != nil {
			return callsim.Lateness{}, err
		}
		time.Sleep(d + 1500*time.Millisecond)
	}
	err = c.Send(ctx, native.Message{Event: native.EventStop, Stop: &native.Stop{}})
	return c.Lateness(), err
}
