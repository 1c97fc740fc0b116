package livekit

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim/livekit/lkserver"
	"github.com/callproof/callproof/protocol/native"
)

// An agent registered as a worker under a name is dispatched by that name
// (CreateDispatch, as --livekit-agent-name does), answers the caller's
// audio with its own and its words, and leaving the room before the
// caller's script ends is its hang-up.
func TestWorkerDispatchedByNameLeavesMidCall(t *testing.T) {
	if !lkserver.InNamespace(t) {
		return
	}
	s := lkserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	bot := &Bot{ReplyEvery: time.Second, Words: "one moment please", LeaveAfterReplies: 1}
	w := &Worker{URL: s.URL, APIKey: lkserver.APIKey, APISecret: lkserver.APISecret, AgentName: "callproof-test", Run: bot.Run}
	require.NoError(t, w.Start(ctx))
	defer w.Close()
	tr := transport(s, nil)
	tr.AgentName = "callproof-test"
	tr = tr.ForCall(callSetup("w1")).(*Transport)
	conn, err := tr.Dial(ctx, s.URL)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.Send(ctx, start("w1")))
	var words []string
	var hangup *native.Hangup
	for hangup == nil {
		f, err := conn.Recv(ctx)
		require.NoError(t, err, "the call ended without the agent's hang-up")
		if s := f.Message.AgentSpeech; s != nil && s.Phase == native.PhaseText {
			words = append(words, s.Text)
		}
		hangup = f.Message.Hangup
	}
	assert.Equal(t, ReasonAgentLeft, hangup.Reason)
	assert.Contains(t, words, "one moment please")
	st := bot.Stats()
	assert.Equal(t, BotStats{Calls: 1, Frames: st.Frames, Left: 1}, st, "joined once, left once, nothing failed")
	assert.Greater(t, st.Frames, int64(50), "the bot heard the caller's frames")
}

// A worker registered by the agent's name but reporting a load of 1 is
// never dispatched (livekit-server weighs workers by 1 - load): the call
// ends at the start with "no agent joined", naming the agent and a busy
// worker as a reason.
func TestBusyWorkerIsNotDispatched(t *testing.T) {
	if !lkserver.InNamespace(t) {
		return
	}
	s := lkserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bot := &Bot{}
	w := &Worker{URL: s.URL, APIKey: lkserver.APIKey, APISecret: lkserver.APISecret, AgentName: "callproof-busy", Run: bot.Run, Load: 1}
	require.NoError(t, w.Start(ctx))
	defer w.Close()
	tr := transport(s, nil)
	tr.AgentName, tr.JoinTimeout = "callproof-busy", 4*time.Second
	tr = tr.ForCall(callSetup("b1")).(*Transport)
	conn, err := tr.Dial(ctx, s.URL)
	require.NoError(t, err)
	defer conn.Close()
	err = conn.Send(ctx, start("b1"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no agent joined room `+RoomPrefix+`b1 within 4s: no worker registered as agent "callproof-busy" took the job`)
	assert.Contains(t, err.Error(), NoAgentBusy)
	assert.Zero(t, bot.Stats().Calls, "the busy worker got no job")
}
