package webrtc

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hostileagent "github.com/callproof/callproof/agents/hostile"
	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/protocol/native"
)

// startCall sends the caller's start, which starts its frame clock.
func startCall(t *testing.T, c *Conn, id string) {
	t.Helper()
	require.NoError(t, c.Send(context.Background(), native.Message{Event: native.EventStart,
		Start: &native.Start{CallID: id, TimeScale: 1, Tools: native.Tools{BaseURL: "http://127.0.0.1:1/"}}}))
}

// TestOneHostileCallsWorkIsBounded: one call's agent sends every
// data-channel message kind at its limits (messages just under the frame
// limit of each kind: native events, an RTVI server message carrying
// one, other RTVI messages, agent_speech claims, unknown events; the
// longest transcripts, clears, keepalives; audio far ahead of real time
// but under DefaultMaxAhead), then one message over the frame limit,
// while 20 calls stream. The hostile call ends as an oversized frame and
// the 20 keep streaming (the Twilio dialect's test of the same name).
//
// As over Twilio, their lateness is logged, not asserted here: the
// harness's overload check judges lateness on scored calls.
func TestOneHostileCallsWorkIsBounded(t *testing.T) {
	const calls = 20
	peers := make([]*peerCall, calls)
	conns := make([]*Conn, calls)
	for i := range conns {
		p := newTestPeer(t)
		tr := &Transport{}
		tr.Speech = toneSpeech{}
		conns[i] = dial(t, tr, p.url("/api/offer"))
		peers[i] = <-p.newCall
		_ = peers[i].channel(t)
		startCall(t, conns[i], "c"+string(rune('a'+i)))
	}
	hp := newTestPeer(t)
	tr := &Transport{}
	tr.Speech = toneSpeech{}
	hostile := dial(t, tr, hp.url("/api/offer"))
	hpc := <-hp.newCall
	dc := hpc.channel(t)
	startCall(t, hostile, "hostile")
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for {
			if _, err := hostile.Recv(ctx); err != nil {
				errc <- err
				return
			}
		}
	}()

	before := make([]int, calls)
	for i, p := range peers {
		before[i], _ = p.callerFrames()
	}
	// Audio: 5 s at once, half the bound on audio waiting to be played.
	for range 250 {
		_ = hpc.track.WriteSample(mediaSample(tone(440, 20*time.Millisecond, -20)))
	}
	// Two rounds of every kind, then one message over the limit (the
	// misbehaving-agent suite's webrtc-junk sends the same).
	began := time.Now()
	for _, m := range hostileagent.WebRTCMessages(2) {
		require.NoError(t, dc.SendText(m))
	}
	select {
	case err := <-errc:
		assert.ErrorIs(t, err, callsim.ErrOversizedFrame)
		t.Logf("the hostile call's messages took %s", time.Since(began).Round(time.Millisecond))
	case <-time.After(time.Minute):
		t.Fatal("the hostile call did not end")
	}
	for i, p := range peers {
		// Still streaming: 5 more frames from the caller after the
		// hostile call ended, each call on its own frame clock.
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, _ := p.callerFrames()
			if n >= before[i]+5 {
				break
			}
			require.True(t, time.Now().Before(deadline), "call %d stopped streaming at %d frames", i, n)
			time.Sleep(20 * time.Millisecond)
		}
		l := conns[i].Lateness()
		t.Logf("call %d: worst frame %s late, p99 %s", i, l.Max, l.P99)
	}
}
