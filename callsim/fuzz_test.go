package callsim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// memConn plays frames to the pump as a Transport would: the frame limit
// first, then the shared decoding, then io.EOF.
type memConn struct {
	frames [][]byte
	limit  int64
}

func (c *memConn) SetFrameLimit(n int64) { c.limit = n }

func (c *memConn) Send(context.Context, native.Message) error { return nil }

func (c *memConn) Recv(ctx context.Context) (Frame, error) {
	if err := ctx.Err(); err != nil {
		return Frame{}, err
	}
	if len(c.frames) == 0 {
		return Frame{}, io.EOF
	}
	b := c.frames[0]
	c.frames = c.frames[1:]
	if c.limit > 0 && int64(len(b)) > c.limit {
		return Frame{}, fmt.Errorf("%w: over %d bytes", ErrOversizedFrame, c.limit)
	}
	return DecodeFrame(b)
}

func (c *memConn) Close() error { return nil }

// fixedClock never moves: the flood meter then counts only its burst.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

var fuzzLimits = Limits{
	MaxFrameBytes:        64 << 10,
	MaxMessagesPerSecond: 1 << 30,
	MaxMessagesPerCall:   200,
	MaxEventTextBytes:    64,
	MaxCallTextBytes:     2048,
	MaxHistoryBytes:      16 << 10,
	MaxHistoryEvents:     100,
}

// agentFrameSeeds are one frame of each message kind of docs/PROTOCOL.md,
// the edge cases it names, and garbage.
var agentFrameSeeds = []string{
	`{"event":"ack","ack":{"timeScale":0.1,"agent":"my-agent/1.4"}}`,
	`{"event":"ack"}`,
	`{"event":"agent_speech","agentSpeech":{"id":"a1","phase":"start"}}`,
	`{"event":"agent_speech","agentSpeech":{"id":"a1","phase":"text","text":"Okay, updating order 5590:"}}`,
	`{"event":"agent_speech","agentSpeech":{"id":"a1","phase":"end","text":"Okay, updating order 5590: delivery date December 3."}}`,
	`{"event":"agent_speech","agentSpeech":{"id":"a","phase":"sing"}}`,
	`{"event":"agent_speech"}`,
	`{"event":"clear","clear":{"id":"a1"}}`,
	`{"event":"clear"}`,
	`{"event":"tool_intent","toolIntent":{"tool":"update_order","args":{"order_number":"5590","delivery_date":"2026-12-03"}}}`,
	`{"event":"state","state":{"version":5,"slots":{"order_number":"5599","delivery_date":"2026-12-03"},"pending":"update_order"}}`,
	`{"event":"hangup","hangup":{"reason":"done"}}`,
	`{"event":"transfer","transfer":{"to":"human"}}`,
	`{"event":"metrics","metrics":{"cpu":3}}`,
	`{"event":"speech","speech":{"id":"x","phase":"onset"}}`,
	`{"event":"state","state":{"version":-1,"slots":null}}`,
	`{"EVENT":"hangup"}`,
	`{"event":"agent_speech","agentSpeech":{"id":"\u00e9\ud800","phase":"text","text":"\u0000<>&"}}`,
	`{"event":`,
	`[1,2]`,
	`null`,
	`"agent_speech"`,
	` {} `,
	"\xff\xfe",
	``,
}

// FuzzAgentFrames feeds arbitrary agent frames (two of them, alternating,
// up to 64 times) through the caller's decoding and the pump, then the
// runner's view of the call. It must never panic, and every budget must
// hold: text per event, history size and events.
func FuzzAgentFrames(f *testing.F) {
	for i, s := range agentFrameSeeds {
		f.Add([]byte(s), []byte(agentFrameSeeds[(i+3)%len(agentFrameSeeds)]), uint8(i))
	}
	huge := `{"event":"agent_speech","agentSpeech":{"id":"a1","phase":"text","text":"` + strings.Repeat("é", 20000) + `"}}`
	f.Add([]byte(huge), []byte(agentFrameSeeds[2]), uint8(63))
	f.Add([]byte(`{"event":"state","state":{"version":1,"slots":{`+strings.Repeat(`"k`+strings.Repeat("x", 30)+`":"v",`, 50)+`"z":"z"}}}`), []byte(huge), uint8(10))
	f.Fuzz(func(t *testing.T, a, b []byte, n uint8) {
		// A hang becomes a crash the fuzzer reports with its input.
		wd := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("hang on %q %q %d", a, b, n)) })
		defer wd.Stop()
		checkAgentFrames(t, [][]byte{a, b}, int(n%64)+1)
	})
}

func checkAgentFrames(t *testing.T, pair [][]byte, n int) {
	frames := make([][]byte, n)
	for i := range frames {
		frames[i] = pair[i%2]
	}
	clock := fixedClock{time.Unix(1e9, 0)}
	rec := trace.NewRecorder("fuzz", clock)
	s := New(Options{Clock: clock, Limits: fuzzLimits})
	r, unsub := s.newRun(context.Background(), Call{ID: "fuzz", Recorder: rec})
	defer unsub()
	conn := &memConn{frames: frames}
	conn.SetFrameLimit(r.lim.MaxFrameBytes)
	r.conn = conn
	r.pump()
	r.drain()
	h := rec.Close()

	var cause *ending
	if c := context.Cause(r.base); c != nil && !errors.As(c, &cause) {
		t.Fatalf("call ended by %v, not an ending", c)
	}
	known := []string{ReasonGarbageFrame, ReasonOversizedFrame, ReasonFlood, ReasonTextBudget, ReasonHistoryBudget,
		ReasonClosed + ": EOF", "agent hung up", "agent transferred the call"}
	if cause == nil || !contains(known, cause.reason) {
		t.Fatalf("call ended as %+v", cause)
	}
	if r.textSent > r.lim.MaxCallTextBytes && cause.reason != ReasonTextBudget && cause.reason != ReasonHistoryBudget {
		t.Fatalf("%d bytes of text sent, over the budget, yet the call ended as %q", r.textSent, cause.reason)
	}

	// Per-event text: the cap, plus at most two markers (the string that
	// crossed it and the next fixed field).
	maxKept := r.lim.MaxEventTextBytes + 2*len(TruncationMarker)
	for _, e := range h.Events {
		if e.Source != trace.SourceAgent {
			continue
		}
		kept, strs := agentText(e)
		if kept > maxKept {
			t.Fatalf("event %d %s keeps %d bytes of text, cap %d", e.Seq, e.Kind, kept, r.lim.MaxEventTextBytes)
		}
		if e.Kind == trace.KindAgentUnknown {
			continue // raw bytes, verbatim
		}
		for _, s := range strs {
			if !utf8.ValidString(s) {
				t.Fatalf("event %d %s: invalid UTF-8 %q", e.Seq, e.Kind, s)
			}
		}
	}

	// The history: its budget, plus the event that crossed it and a note.
	var buf bytes.Buffer
	if err := trace.WriteJSONL(&buf, h); err != nil {
		t.Fatal(err)
	}
	if limit := int(r.lim.MaxHistoryBytes) + 2048; buf.Len() > limit {
		t.Fatalf("history of %d bytes, over %d", buf.Len(), limit)
	}
	if len(h.Events) > r.lim.MaxHistoryEvents+2 {
		t.Fatalf("history of %d events, over %d", len(h.Events), r.lim.MaxHistoryEvents)
	}
	if got, _ := r.rec.Size(); got != int64(buf.Len()) {
		t.Fatalf("history counted as %d bytes, written as %d", got, buf.Len())
	}
}

// agentText is the text an agent event keeps, and its strings.
func agentText(e trace.Event) (int, []string) {
	var strs []string
	switch d := e.Data.(type) {
	case *trace.AgentSpeech:
		strs = append(strs, d.Utterance, d.Text)
	case *trace.AgentToolIntent:
		strs = append(strs, d.Tool)
		for k, v := range d.Args {
			strs = append(strs, k, v)
		}
	case *trace.AgentState:
		strs = append(strs, d.Pending)
		for k, v := range d.Slots {
			strs = append(strs, k, v)
		}
	case *trace.Note:
		strs = append(strs, d.Text)
	}
	n := 0
	for _, s := range strs {
		n += len(s)
	}
	return n, strs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
