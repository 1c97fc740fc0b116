package livekit

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/livekit/protocol/livekit"
	"github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"
	pion "github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"

	"github.com/callproof/callproof/callsim/audio"
)

// Bot is a minimal agent in a LiveKit room, for `callproof load
// --transport livekit` and the tests (a Worker's Run): it joins the room,
// publishes a PCMU track, and for every ReplyEvery of the caller's audio
// it receives plays Reply, with Words, when set, as that reply's
// lk.transcription. It leaves when the caller does, or once it has played
// LeaveAfterReplies replies: an agent's hang-up.
type Bot struct {
	// ReplyEvery is how much caller audio earns one reply (default 2s:
	// the bot speaks half the time, as the Twilio load bot does).
	ReplyEvery time.Duration
	// Reply is the audio of each reply (default one second of a 440 Hz
	// tone at -20 dBFS).
	Reply audio.PCM
	Words string
	// LeaveAfterReplies, when positive, ends the bot's part a second
	// (botLeaveAfterWords) after it has played that many replies and sent
	// their words, whatever the caller is doing: a hang-up after its last
	// words, however late the room brought it the caller's audio.
	LeaveAfterReplies int

	calls, frames, left, failed atomic.Int64
	mu                          sync.Mutex
	firstErr                    string
}

// botLeaveAfterWords is the bot's pause between its last words and its
// leaving (LeaveAfterReplies).
const botLeaveAfterWords = time.Second

// BotStats counts the rooms a bot joined, the caller frames it received,
// the rooms it left on its own (LeaveAfterReplies) and the jobs it could not
// play (it never joined or never published), with the first reason.
type BotStats struct {
	Calls, Frames, Left, Failed int64
	FirstError                  string `json:",omitempty"`
}

// Stats is the bot's counts so far.
func (b *Bot) Stats() BotStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BotStats{Calls: b.calls.Load(), Frames: b.frames.Load(), Left: b.left.Load(), Failed: b.failed.Load(), FirstError: b.firstErr}
}

func (b *Bot) fail(room string, err error) {
	b.failed.Add(1)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.firstErr == "" {
		b.firstErr = room + ": " + err.Error()
	}
}

// Run joins j's room and plays the agent until the caller leaves, ctx
// ends, or LeaveAfterReplies.
func (b *Bot) Run(ctx context.Context, j Job) {
	every := b.ReplyEvery
	if every <= 0 {
		every = 2 * time.Second
	}
	reply := b.Reply
	if len(reply) == 0 {
		reply = audio.Tone(440, time.Second, -20)
	}
	frames := audio.MulawFrames(reply)
	perReply := int64(every / audio.FrameDuration)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var heard atomic.Int64
	var readers sync.WaitGroup
	defer readers.Wait()
	cb := lksdk.NewRoomCallback()
	cb.OnTrackSubscribed = func(tr *pion.TrackRemote, _ *lksdk.RemoteTrackPublication, _ *lksdk.RemoteParticipant) {
		if tr.Kind() != pion.RTPCodecTypeAudio {
			return
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				if _, _, err := tr.ReadRTP(); err != nil {
					return
				}
				heard.Add(1)
				b.frames.Add(1)
			}
		}()
	}
	cb.OnParticipantDisconnected = func(rp *lksdk.RemoteParticipant) {
		if rp.Identity() == CallerIdentity {
			cancel()
		}
	}
	cb.OnDisconnected = cancel
	room, err := lksdk.ConnectToRoomWithToken(j.URL, j.Token, cb, lksdk.WithAutoSubscribe(true), lksdk.WithLogger(logger.GetDiscardLogger()))
	if err != nil {
		b.fail(j.Room, err)
		return
	}
	defer room.Disconnect()
	b.calls.Add(1)
	track, err := lksdk.NewLocalSampleTrack(pion.RTPCodecCapability{MimeType: pion.MimeTypePCMU, ClockRate: 8000, Channels: 1})
	if err != nil {
		b.fail(j.Room, err)
		return
	}
	if _, err := room.LocalParticipant.PublishTrack(track, &lksdk.TrackPublicationOptions{Name: "agent", Source: livekit.TrackSource_MICROPHONE}); err != nil {
		b.fail(j.Room, err)
		return
	}
	tick := time.NewTicker(audio.FrameDuration)
	defer tick.Stop()
	var replies int64 // replies earned so far
	next := len(frames)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if next == len(frames) && heard.Load()/perReply > replies {
			replies++
			next = 0
		}
		if next < len(frames) {
			_ = track.WriteSample(media.Sample{Data: frames[next], Duration: audio.FrameDuration}, nil)
			next++
			if next == len(frames) && b.Words != "" {
				// The words of the audio just sent, as agents send them.
				room.LocalParticipant.SendText(b.Words, lksdk.StreamTextOptions{Topic: TopicTranscription})
			}
			if next == len(frames) && b.LeaveAfterReplies > 0 && replies >= int64(b.LeaveAfterReplies) {
				// The words ride the data channel and the leaving the
				// signaling: a second between them lets the words land
				// first, as an agent's pause before it hangs up does.
				select {
				case <-ctx.Done():
				case <-time.After(botLeaveAfterWords):
					b.left.Add(1)
				}
				return
			}
		}
	}
}
