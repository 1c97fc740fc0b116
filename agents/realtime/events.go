package realtime

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// Direction says who produced an Event.
type Direction string

const (
	// FromClient is an event the client (the SDK) sent.
	FromClient Direction = "client"
	// FromServer is an event the fake sent.
	FromServer Direction = "server"
	// Note is the fake's own remark: a connection accepted ("connect", with
	// the request's path, query, Authorization, User-Agent and subprotocols
	// as Raw), a closed one ("disconnect"), a malformed client event, a
	// script wait that timed out.
	Note Direction = "note"
)

// Event is one recorded event.
type Event struct {
	Conn int // connection number, from 1
	Dir  Direction
	Type string
	At   time.Time
	// Raw is the event as sent. For audio (input_audio_buffer.append,
	// response.output_audio.delta) it is left out and AudioBytes holds the
	// size of the decoded audio instead.
	Raw        json.RawMessage
	AudioBytes int
	Text       string // a Note's text
}

// Truncate is a conversation.item.truncate the client sent.
type Truncate struct {
	Conn         int
	At           time.Time
	ItemID       string
	ContentIndex int
	AudioEndMs   int
}

// recorder keeps events and wakes waiters on each new one.
type recorder struct {
	mu      sync.Mutex
	events  []Event
	changed chan struct{} // closed and replaced on every add
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) add(e Event) {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

func (r *recorder) snapshot() ([]Event, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...), r.changed
}

// waitFor returns the first recorded event matching pred, waiting for one
// until ctx ends.
func (r *recorder) waitFor(ctx context.Context, pred func(Event) bool) (Event, error) {
	seen := 0
	for {
		evs, changed := r.snapshot()
		for _, e := range evs[seen:] {
			if pred(e) {
				return e, nil
			}
		}
		seen = len(evs)
		select {
		case <-changed:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// Truncates lists the conversation.item.truncate events in evs.
func Truncates(evs []Event) []Truncate {
	var out []Truncate
	for _, e := range evs {
		if e.Dir != FromClient || e.Type != "conversation.item.truncate" {
			continue
		}
		var t struct {
			ItemID       string `json:"item_id"`
			ContentIndex int    `json:"content_index"`
			AudioEndMs   int    `json:"audio_end_ms"`
		}
		if json.Unmarshal(e.Raw, &t) == nil {
			out = append(out, Truncate{Conn: e.Conn, At: e.At, ItemID: t.ItemID, ContentIndex: t.ContentIndex, AudioEndMs: t.AudioEndMs})
		}
	}
	return out
}

// Is matches events by direction and type, for WaitFor.
func Is(dir Direction, typ string) func(Event) bool {
	return func(e Event) bool { return e.Dir == dir && e.Type == typ }
}
