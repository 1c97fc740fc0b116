package callsim_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/nativews"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// slowWrites is the native transport whose first write of a partial takes
// hold long, as a write to an agent that does not read for that long does.
type slowWrites struct {
	nativews.Transport
	hold time.Duration
}

type slowConn struct {
	callsim.Conn
	hold time.Duration
	once *atomic.Bool
}

func (c slowConn) Send(ctx context.Context, f native.Message) error {
	if s := f.Speech; s != nil && s.Phase == native.PhasePartial && c.once.CompareAndSwap(false, true) {
		time.Sleep(c.hold)
	}
	return c.Conn.Send(ctx, f)
}

func (p *slowWrites) Dial(ctx context.Context, url string) (callsim.Conn, error) {
	c, err := p.Transport.Dial(ctx, url)
	if err != nil {
		return nil, err
	}
	return slowConn{c, p.hold, new(atomic.Bool)}, nil
}

// The caller's words are due every 100 ms here (six words in 600 ms).
func wordsCall(t *testing.T, call func(*callsim.Call)) trace.LatenessStat {
	t.Helper()
	o := runCall(t, setup{
		call: call,
		script: trace.Script{StepTimeout: 5 * time.Second, Steps: []trace.Step{
			say("s1", "one two three four five six.", 600*time.Millisecond, trace.Trigger{}),
		}},
		agent: func(a *fakeAgent) {
			a.untilFinal()
			a.drain()
		},
	})
	return o.res.Harness.Speech
}

// How late the caller's words went out counts the harness's own stalls,
// wherever they fall between two words but inside a write, and never the
// time an agent took to accept a write. The stall and the write each
// hold the caller 400 ms after its first word, so the second word, due
// 100 ms after the first, goes out at least 300 ms late: counted as the
// harness's when the caller stalled, not when the write was slow.
func TestWordLatenessIsTheHarnesss(t *testing.T) {
	const hold, due = 400 * time.Millisecond, 100 * time.Millisecond
	t.Run("stall between words", func(t *testing.T) {
		st := wordsCall(t, func(c *callsim.Call) {
			var once atomic.Bool
			// A subscriber must not block; this one does, once, to stall
			// the caller after it recorded its first word and before it
			// writes it: the harness's own time.
			c.Recorder.Subscribe(func(e trace.Event) {
				if e.Kind == trace.KindCallerSpeechPartial && once.CompareAndSwap(false, true) {
					time.Sleep(hold)
				}
			})
		})
		assert.GreaterOrEqual(t, st.Max, hold-due, "%+v", st)
	})
	t.Run("slow write", func(t *testing.T) {
		st := wordsCall(t, func(c *callsim.Call) { c.Transport = &slowWrites{hold: hold} })
		assert.Less(t, st.Max, hold-due, "the agent's slow read is not the harness's lateness: %+v", st)
	})
}
