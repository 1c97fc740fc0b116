package loadbot

import (
	"context"
	"encoding/base64"
	"net"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim/audio"
)

// Two seconds of caller audio earn one second of tone and a mark; a mark
// echo and stop are counted.
func TestBotRepliesEveryTwoSeconds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := &Bot{}
	go func() { _ = b.Serve(ctx, ln) }()
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+ln.Addr().String()+"/", nil)
	require.NoError(t, err)
	defer ws.Close()
	require.NoError(t, ws.WriteJSON(map[string]any{"event": "start", "streamSid": "MZ1"}))
	silence := base64.StdEncoding.EncodeToString(audio.EncodeMulaw(make(audio.PCM, audio.FrameSamples)))
	for range 100 {
		require.NoError(t, ws.WriteJSON(map[string]any{"event": "media", "streamSid": "MZ1", "media": map[string]any{"payload": silence}}))
	}
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	var media, mark map[string]any
	require.NoError(t, ws.ReadJSON(&media))
	require.NoError(t, ws.ReadJSON(&mark))
	assert.Equal(t, "media", media["event"])
	assert.Equal(t, "MZ1", media["streamSid"])
	raw, err := base64.StdEncoding.DecodeString(media["media"].(map[string]any)["payload"].(string))
	require.NoError(t, err)
	assert.Len(t, raw, audio.SampleRate, "one second of μ-law")
	assert.Equal(t, map[string]any{"name": "r1"}, mark["mark"])
	require.NoError(t, ws.WriteJSON(map[string]any{"event": "mark", "mark": map[string]any{"name": "r1"}}))
	require.NoError(t, ws.WriteJSON(map[string]any{"event": "stop"}))
	assert.Eventually(t, func() bool { s := b.Stats(); return s.MarksEchoed == 1 && s.Frames == 100 && s.Calls == 1 }, 5*time.Second, 10*time.Millisecond)
}
