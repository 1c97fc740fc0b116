package hostile

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// The Twilio Media Streams bounds TwilioJunk stays under until its last
// frame (callsim/twilio's defaults, restated: agents never import the
// harness).
const (
	markNameBytes = eventTextBytes // a mark's name is agent text
	// twilioRounds of every kind by default: 5 s of audio and 250 marks waiting,
	// well under the 2 minutes and 1000 marks a call may queue.
	twilioRounds = 5
	// marksPerRound with the longest name each.
	marksPerRound = 50
)

// twilioMsg is the part of the caller's Twilio frames TwilioJunk reads.
type twilioMsg struct {
	Event     string `json:"event"`
	StreamSid string `json:"streamSid"`
	Mark      *struct {
		Name string `json:"name"`
	} `json:"mark"`
}

// serveTwilio reads the caller's connected and start frames, then sends
// TwilioJunk's frames; it returns when the caller is gone.
func (a *Agent) serveTwilio(ws *websocket.Conn) {
	a.wg.Add(1)
	defer a.wg.Done()
	var sid string
	for sid == "" {
		var m twilioMsg
		_, b, err := ws.ReadMessage()
		if err != nil || json.Unmarshal(b, &m) != nil {
			return
		}
		if m.Event == "start" {
			sid = m.StreamSid
		}
	}
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		for {
			var m twilioMsg
			_, b, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if json.Unmarshal(b, &m) == nil && m.Event == "mark" && m.Mark != nil {
				a.echoed(len(m.Mark.Name))
			}
		}
	}()
	var wmu sync.Mutex
	write := func(b []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		if a.ctx.Err() != nil {
			return a.ctx.Err()
		}
		_ = ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
		return ws.WriteMessage(websocket.TextMessage, b)
	}
	for _, f := range twilioJunk(sid, a.opts.Rounds) {
		if write(f) != nil {
			break
		}
	}
	select {
	case <-gone:
	case <-a.ctx.Done():
	}
	a.mu.Lock()
	a.finished++
	a.mu.Unlock()
}

// echoed keeps the longest mark name the caller echoed back.
func (a *Agent) echoed(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.longestEcho = max(a.longestEcho, n)
}

// LongestEcho is the longest mark name (bytes) a caller echoed back to
// TwilioJunk: never over the mark name bound, as the caller refuses a
// longer one instead of keeping it.
func (a *Agent) LongestEcho() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.longestEcho
}

// twilioJunk is TwilioJunk's frames for stream sid: rounds of every kind
// at its limit, then one mark whose name is 1 MB.
func twilioJunk(sid string, rounds int) [][]byte {
	frame := func(event string, body map[string]any) []byte {
		m := map[string]any{"event": event, "streamSid": sid}
		for k, v := range body {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		return b
	}
	silence := bytes.Repeat([]byte{0xff}, 8000) // 1 s of μ-law silence
	round := [][]byte{
		frame("media", map[string]any{"media": map[string]any{"payload": base64.StdEncoding.EncodeToString(silence)}}),
		// An event Twilio does not know, and audio of another stream,
		// each just under the frame limit.
		frame("playAudio", map[string]any{"pad": strings.Repeat("p", maxFrameBytes-200)}),
		[]byte(`{"event":"media","streamSid":"MZother","media":{"payload":"` + strings.Repeat("A", maxFrameBytes-100) + `"}}`),
		frame("transcript", map[string]any{"transcript": map[string]any{"text": strings.Repeat("word ", eventTextBytes/5)}}),
	}
	name := strings.Repeat("n", markNameBytes)
	for range marksPerRound {
		round = append(round, frame("mark", map[string]any{"mark": map[string]any{"name": name}}))
	}
	round = append(round, frame("clear", nil))
	var out [][]byte
	for range rounds {
		out = append(out, round...)
	}
	return append(out, frame("mark", map[string]any{"mark": map[string]any{"name": strings.Repeat("n", 1<<20-200)}}))
}
