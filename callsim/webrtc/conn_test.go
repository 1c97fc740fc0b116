package webrtc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audiocall"
	"github.com/callproof/callproof/protocol/native"
)

func dial(t *testing.T, tr *Transport, url string) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := tr.Dial(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn.(*Conn)
}

// recvUntil reads agent events until one matches, or fails the test.
func recvUntil(t *testing.T, c *Conn, d time.Duration, match func(native.Message) bool) []native.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var got []native.Message
	for {
		f, err := c.Recv(ctx)
		require.NoError(t, err, "after %v", got)
		got = append(got, f.Message)
		if match(f.Message) {
			return got
		}
	}
}

func speechPhase(phase string) func(native.Message) bool {
	return func(m native.Message) bool {
		return m.Event == native.EventAgentSpeech && m.AgentSpeech != nil && m.AgentSpeech.Phase == phase
	}
}

// A whole call over each signaling, with and without trickle: the caller's
// start and keepalives arrive on the data channel, its speech as RTP; the
// agent's audio becomes an utterance and its transcript that utterance's
// words.
func TestCallOverEachSignaling(t *testing.T) {
	for _, tc := range []struct {
		name, signaling, path string
		trickle               bool
	}{
		{"smallwebrtc", SignalingSmallWebRTC, "/api/offer", false},
		{"smallwebrtc trickle", SignalingSmallWebRTC, "/api/offer", true},
		{"whip", SignalingWHIP, "/whip", false},
		{"whip trickle", SignalingWHIP, "/whip", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPeer(t)
			tr := &Transport{Signaling: tc.signaling, Trickle: tc.trickle, CallID: "c1", CallDate: "2026-12-07", TimeZone: "America/New_York",
				Access: native.Tools{BaseURL: "http://127.0.0.1:1/", Token: "tok"}, CustomParameters: map[string]string{"lang": "en"}}
			tr.Speech = toneSpeech{}
			c := dial(t, tr, p.url(tc.path))
			pc := <-p.newCall
			dc := pc.channel(t)
			require.NoError(t, c.Send(context.Background(), native.Message{Event: native.EventStart,
				Start: &native.Start{CallID: "c1", TimeScale: 0.5, Tools: native.Tools{BaseURL: "http://127.0.0.1:1/"}}}))
			select {
			case st := <-pc.start:
				assert.Equal(t, "c1", st["callproofCallId"])
				assert.Equal(t, "http://127.0.0.1:1/", st["toolsBaseUrl"])
			case <-time.After(3 * time.Second):
				t.Fatal("no start on the data channel")
			}
			_, err := c.PrepareSpeech(context.Background(), "u1", "hello")
			require.NoError(t, err)
			require.NoError(t, c.Send(context.Background(), native.Message{Event: native.EventSpeech,
				Speech: &native.Speech{ID: "u1", Phase: native.PhaseOnset}}))

			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			pc.speak(ctx, tone(440, 800*time.Millisecond, -20))
			require.NoError(t, dc.SendText(`{"event":"transcript","transcript":{"text":"your order is updated"}}`))
			got := recvUntil(t, c, 5*time.Second, speechPhase(native.PhaseText))
			last := got[len(got)-1].AgentSpeech
			assert.Equal(t, "your order is updated", last.Text)
			assert.True(t, speechPhase(native.PhaseStart)(got[0]), "the utterance starts first: %v", got)

			frames, loud := pc.callerFrames()
			assert.Greater(t, frames, 40, "the caller streams 50 packets a second")
			assert.Greater(t, loud, 20, "its 600 ms of speech")
			require.NoError(t, c.Send(context.Background(), native.Message{Event: native.EventStop, Stop: &native.Stop{Reason: "done"}}))
			require.NoError(t, c.Close())

			var ping, ready, stop bool
			for len(pc.msgs) > 0 {
				m := <-pc.msgs
				ping = ping || strings.HasPrefix(m, "ping: ")
				ready = ready || strings.Contains(m, `"client-ready"`)
				stop = stop || strings.Contains(m, `"type":"disconnect-bot"`)
			}
			assert.True(t, ping, "keepalive each second")
			assert.True(t, ready, "RTVI client-ready")
			assert.True(t, stop, "stop last")
			p.mu.Lock()
			defer p.mu.Unlock()
			if tc.trickle {
				assert.Positive(t, p.patches, "candidates trickled")
			} else {
				assert.Zero(t, p.patches)
			}
			if tc.signaling == SignalingWHIP {
				assert.Equal(t, 1, p.deletes, "WHIP ends with DELETE")
			} else {
				require.Len(t, p.requests, 1)
				assert.Equal(t, map[string]any{"callproofCallId": "c1", "callDate": "2026-12-07", "timeZone": "America/New_York",
					"toolsBaseUrl": "http://127.0.0.1:1/", "toolsToken": "tok", "toolsCatalog": "null", "lang": "en"},
					p.requests[0]["request_data"], "the call's data, as Pipecat's runner keeps it")
			}
		})
	}
}

// Native events and RTVI server messages on the data channel reach the
// simulator; a clear ends the utterance there.
func TestDataChannelEvents(t *testing.T) {
	c, pc, dc := startedCall(t)
	require.NoError(t, dc.SendText(`{"event":"tool_intent","toolIntent":{"tool":"update_order","args":{"order_id":"4471"}}}`))
	require.NoError(t, dc.SendText(`{"label":"rtvi-ai","type":"server-message","data":{"event":"state","state":{"version":3}}}`))
	require.NoError(t, dc.SendText(`{"label":"rtvi-ai","type":"bot-ready","id":"x","data":{}}`))
	got := recvUntil(t, c, 3*time.Second, func(m native.Message) bool { return m.Event == "rtvi.bot-ready" })
	require.Len(t, got, 3)
	assert.Equal(t, "update_order", got[0].ToolIntent.Tool)
	assert.Equal(t, 3, got[1].State.Version)

	ctx, cancel := context.WithCancel(context.Background())
	go pc.speak(ctx, tone(440, 3*time.Second, -20))
	recvUntil(t, c, 3*time.Second, speechPhase(native.PhaseStart))
	cancel()
	require.NoError(t, dc.SendText(`{"event":"clear"}`))
	got = recvUntil(t, c, 3*time.Second, func(m native.Message) bool { return m.Event == native.EventClear })
	assert.Len(t, got, 1, "the clear stands for the utterance's end: %v", got)
	tt := c.TurnTaking()
	assert.Zero(t, tt.BargeIns, "the caller did not barge in")
}

// What an agent may not do ends the call with the reason the simulator
// records.
func TestAgentFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, c *Conn, pc *peerCall)
		want error
	}{
		{"garbage", func(t *testing.T, _ *Conn, pc *peerCall) {
			require.NoError(t, pc.channel(t).SendText("hello there"))
		}, callsim.ErrGarbageFrame},
		{"binary", func(t *testing.T, _ *Conn, pc *peerCall) {
			require.NoError(t, pc.channel(t).Send([]byte{1, 2, 3}))
		}, callsim.ErrGarbageFrame},
		{"oversized", func(t *testing.T, c *Conn, pc *peerCall) {
			c.SetFrameLimit(100)
			require.NoError(t, pc.channel(t).SendText(`{"event":"state","state":{"pending":"`+strings.Repeat("x", 200)+`"}}`))
		}, callsim.ErrOversizedFrame},
		{"silent", func(t *testing.T, c *Conn, pc *peerCall) {
			// The peer sends no audio and nothing on the channel, and
			// its RTCP reports come once a second: longer than this.
			c.SetIdleTimeout(50 * time.Millisecond)
		}, callsim.ErrUnresponsive},
		{"transcript flood", func(t *testing.T, _ *Conn, pc *peerCall) {
			// Transcripts with no audio before them wait for an
			// utterance that never comes: their number is bounded.
			dc := pc.channel(t)
			for range audiocall.MaxPendingTranscripts + 1 {
				require.NoError(t, dc.SendText(`{"event":"transcript","transcript":{"text":"again"}}`))
			}
		}, audiocall.ErrFlood},
		{"flood", func(t *testing.T, c *Conn, pc *peerCall) {
			// Far faster than real time until the call ends: loopback UDP
			// drops packets of a burst when the reader is slow, so a fixed
			// burst of 12 s may arrive as less than DefaultMaxAhead.
			go func() {
				for range 200 { // 200 × 1 s of audio, 10 ms apart
					select {
					case <-c.Done():
						return
					case <-time.After(10 * time.Millisecond):
					}
					for range 50 {
						_ = pc.track.WriteSample(mediaSample(tone(440, 20*time.Millisecond, -20)))
					}
				}
			}()
		}, audiocall.ErrFlood},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPeer(t)
			tr := &Transport{}
			tr.Speech = toneSpeech{}
			c := dial(t, tr, p.url("/api/offer"))
			pc := <-p.newCall
			tc.do(t, c, pc)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var err error
			for err == nil {
				_, err = c.Recv(ctx)
			}
			assert.ErrorIs(t, err, tc.want)
		})
	}
}

// The agent going away mid-call ends Recv promptly.
func TestAgentHangsUp(t *testing.T) {
	p := newTestPeer(t)
	tr := &Transport{}
	tr.Speech = toneSpeech{}
	c := dial(t, tr, p.url("/api/offer"))
	pc := <-p.newCall
	pc.channel(t)
	require.NoError(t, pc.pc.Close())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var err error
	for err == nil {
		_, err = c.Recv(ctx)
	}
	require.NoError(t, ctx.Err(), "noticed before the test's bound: %v", err)
}

// Dial fails with the step that failed, within its context.
func TestDialFailures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(p *testPeer)
		url   func(p *testPeer) string
		want  string
	}{
		{"refused", nil, func(*testPeer) string { return "http://127.0.0.1:1/api/offer" }, "signaling"},
		{"http error", func(p *testPeer) { p.status = 503 }, nil, "HTTP 503"},
		{"not found", nil, func(p *testPeer) string { return p.url("/nowhere") }, "HTTP 404"},
		{"no pcmu", func(p *testPeer) {
			p.answer = func(s string) string { return strings.ReplaceAll(s, "UDP/TLS/RTP/SAVPF 0", "UDP/TLS/RTP/SAVPF 8") }
		}, nil, "no PCMU"},
		{"no ice", func(p *testPeer) {
			// The agent's ICE password is not the one it answered with:
			// no connectivity check succeeds.
			p.answer = func(s string) string { return rewriteLine(s, "a=ice-pwd:", "a=ice-pwd:wrongwrongwrongwrongwrong") }
		}, nil, "connecting: ICE"},
		{"dtls", func(p *testPeer) {
			// ICE connects, but the certificate is not the one the
			// answer's fingerprint names.
			p.answer = func(s string) string {
				return rewriteLine(s, "a=fingerprint:", "a=fingerprint:sha-256 "+strings.TrimSuffix(strings.Repeat("AB:", 32), ":"))
			}
		}, nil, "connecting: DTLS failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPeer(t)
			if tc.setup != nil {
				tc.setup(p)
			}
			url := p.url("/api/offer")
			if tc.url != nil {
				url = tc.url(p)
			}
			tr := &Transport{}
			tr.Speech = toneSpeech{}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			start := time.Now()
			_, err := tr.Dial(ctx, url)
			require.Error(t, err)
			t.Log(err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Less(t, time.Since(start), 4*time.Second, "bounded by the dial context")
			if !strings.HasPrefix(tc.want, "connecting") {
				assert.True(t, errors.Is(err, ErrSignal), "%v", err)
			}
		})
	}
}

// rewriteLine replaces every SDP line that starts with prefix.
func rewriteLine(sdp, prefix, line string) string {
	var out []string
	for _, l := range splitLines(sdp) {
		if strings.HasPrefix(l, prefix) {
			l = line
		}
		out = append(out, l)
	}
	return strings.Join(out, "\r\n")
}
