package realtime

import (
	"context"
	"fmt"
	"time"

	"github.com/callproof/callproof/callsim/audio"
)

// The order desk's words and arguments (OrderDesk).
const (
	// OrderDeskConfirm answers the caller's request, once update_order
	// has returned.
	OrderDeskConfirm = "Done. Order 5590 now has delivery date December third."
	// OrderDeskRestore answers a "stop": the landed change is put back.
	OrderDeskRestore = "Okay, I've put order 5590 back to December first."
	// OrderDeskUpdateArgs is the first turn's update_order call: the
	// caller's request of callproof's compact order scenarios (order 5590
	// to 2026-12-03), with the null quantity a strict tool schema makes
	// the model write.
	OrderDeskUpdateArgs = `{"order_number":"5590","delivery_date":"2026-12-03","quantity":null}`
	// OrderDeskRestoreArgs is the second turn's: the date order 5590
	// starts with in those scenarios.
	OrderDeskRestoreArgs = `{"order_number":"5590","delivery_date":"2026-12-01","quantity":null}`
	// OrderDeskSilence ends the caller's speech: longer than the longest
	// pause flite leaves inside one of the scenarios' sentences (about
	// 560 ms, after "Wait," and "stop," in "Wait, stop, don't change
	// anything."), so each caller sentence is one turn.
	OrderDeskSilence = 800 * time.Millisecond
)

// Voice gives text as 8 kHz speech; *audio.Cache is one.
type Voice interface {
	Speech(ctx context.Context, text string) (audio.PCM, error)
}

// OrderDesk is the model's side of the scenarios in
// agents/realtime/testdata/openai-twilio, callproof's compact order
// scenarios (the caller asks to move order 5590's delivery to December 3;
// in one, says "Wait, stop, don't change anything." over the
// confirmation). The fake decides turns by the caller's audio, not its
// words, so the script follows what the scenarios' caller says, turn by
// turn:
//
//  1. the request: update_order(OrderDeskUpdateArgs), then OrderDeskConfirm;
//  2. a "stop" (only in the interruption): update_order(OrderDeskRestoreArgs),
//     putting the landed write back, then OrderDeskRestore.
//
// voice speaks the replies; their leading silence is cut to one frame, as
// a model's audio starts at once. speed is Script.Speed.
func OrderDesk(ctx context.Context, voice Voice, speed float64) (Script, error) {
	confirm, err := replyAudio(ctx, voice, OrderDeskConfirm)
	if err != nil {
		return Script{}, err
	}
	restore, err := replyAudio(ctx, voice, OrderDeskRestore)
	if err != nil {
		return Script{}, err
	}
	return Script{
		Speed: speed,
		VAD:   VAD{Silence: OrderDeskSilence},
		Turns: []Turn{
			{
				Calls: []FunctionCall{{Name: "update_order", Arguments: OrderDeskUpdateArgs}},
				Reply: Reply{Audio: confirm, Transcript: OrderDeskConfirm},
			},
			{
				Calls: []FunctionCall{{Name: "update_order", Arguments: OrderDeskRestoreArgs}},
				Reply: Reply{Audio: restore, Transcript: OrderDeskRestore},
			},
		},
	}, nil
}

// replyAudio speaks text as μ-law, starting one frame before its first
// frame loud enough for callproof's detector.
func replyAudio(ctx context.Context, voice Voice, text string) ([]byte, error) {
	pcm, err := voice.Speech(ctx, text)
	if err != nil {
		return nil, fmt.Errorf("reply %q: %w", text, err)
	}
	frames := audio.Frames(pcm)
	first := 0
	for first < len(frames) && audio.LevelDBFS(frames[first]) < audio.DefaultOnsetDBFS {
		first++
	}
	if first == len(frames) {
		return nil, fmt.Errorf("reply %q: no audible frame", text)
	}
	return audio.EncodeMulaw(pcm[max(first-1, 0)*audio.FrameSamples:]), nil
}
