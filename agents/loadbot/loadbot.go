// Package loadbot is a minimal Twilio Media Streams bot for load tests: it
// reads every frame a caller streams and, for each second of caller audio,
// plays a second of tone back followed by a mark, so the caller's playout,
// mark echoes and utterance tracking all run under load. It does no
// speech work of its own: what is measured is the harness, not the bot.
package loadbot

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/callproof/callproof/callsim/audio"
)

// Bot serves calls until its listener closes.
type Bot struct {
	// ReplyEvery is how much caller audio (in frames) earns one reply;
	// default 100 (two seconds: the bot speaks half the time).
	ReplyEvery int
	// Reply is the audio played back each time; default one second of a
	// 440 Hz tone at -20 dBFS.
	Reply audio.PCM

	calls, frames, marks atomic.Int64
	once                 sync.Once
	payload              string
}

// Stats are what the bot saw.
type Stats struct {
	Calls, Frames, MarksEchoed int64
}

// Stats reports the bot's counters.
func (b *Bot) Stats() Stats {
	return Stats{Calls: b.calls.Load(), Frames: b.frames.Load(), MarksEchoed: b.marks.Load()}
}

func (b *Bot) init() {
	b.once.Do(func() {
		if b.ReplyEvery <= 0 {
			b.ReplyEvery = 100
		}
		if len(b.Reply) == 0 {
			b.Reply = audio.Tone(440, time.Second, -20)
		}
		b.payload = base64.StdEncoding.EncodeToString(audio.EncodeMulaw(b.Reply))
	})
}

// Serve accepts WebSocket calls on ln until ctx ends.
func (b *Bot) Serve(ctx context.Context, ln net.Listener) error {
	b.init()
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		b.calls.Add(1)
		b.serve(ws)
	})}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type frame struct {
	Event     string `json:"event"`
	StreamSid string `json:"streamSid"`
}

// serve plays one call: it reads until the caller stops or goes away.
func (b *Bot) serve(ws *websocket.Conn) {
	defer ws.Close()
	stream := ""
	n, replies := 0, 0
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var f frame
		if json.Unmarshal(data, &f) != nil {
			continue
		}
		switch f.Event {
		case "start":
			stream = f.StreamSid
		case "media":
			b.frames.Add(1)
			n++
			if n%b.ReplyEvery == 0 {
				replies++
				_ = ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
				if ws.WriteMessage(websocket.TextMessage, []byte(`{"event":"media","streamSid":"`+stream+`","media":{"payload":"`+b.payload+`"}}`)) != nil {
					return
				}
				if ws.WriteMessage(websocket.TextMessage, []byte(`{"event":"mark","streamSid":"`+stream+`","mark":{"name":"r`+strconv.Itoa(replies)+`"}}`)) != nil {
					return
				}
			}
		case "mark":
			b.marks.Add(1)
		case "stop":
			return
		}
	}
}
