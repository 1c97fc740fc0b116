package webrtc

import (
	"context"
	"testing"

	pion "github.com/pion/webrtc/v4"
)

// nopSignaler is a signaling that is never used: the fuzzed conn has no
// peer.
type nopSignaler struct{}

func (nopSignaler) Offer(context.Context, string) (string, error)          { return "", nil }
func (nopSignaler) Trickle(context.Context, []pion.ICECandidateInit) error { return nil }
func (nopSignaler) Hangup(context.Context) error                           { return nil }

// Whatever an agent sends on the data channel is taken without a panic:
// an event, a transcript, a clear, or the reason the call ends.
func FuzzDataChannelMessage(f *testing.F) {
	for _, s := range []string{
		`{"event":"transcript","transcript":{"text":"your order is updated"}}`,
		`{"event":"transcript","transcript":null}`,
		`{"event":"clear"}`,
		`{"event":"tool_intent","toolIntent":{"tool":"update_order","args":{"order_number":"5590"}}}`,
		`{"event":"state","state":{"version":"x"}}`,
		`{"event":"agent_speech","agentSpeech":{"id":"a1","phase":"text","text":"hi"}}`,
		`{"label":"rtvi-ai","type":"server-message","data":{"event":"state","state":{"version":1}}}`,
		`{"label":"rtvi-ai","type":"server-message","data":"not an object"}`,
		`{"label":"rtvi-ai","type":"bot-ready","id":"1","data":{}}`,
		`ping: 1700000000000`, `pong`, `not json`, `[]`, `null`, ``,
	} {
		f.Add(s, true)
	}
	f.Add("\x00\x01\x02", false)
	f.Fuzz(func(t *testing.T, data string, isString bool) {
		tr := &Transport{}
		tr.Speech = toneSpeech{}
		c := newConn(tr, nil, nopSignaler{})
		c.SetFrameLimit(4096)
		c.message(pion.DataChannelMessage{IsString: isString, Data: []byte(data)})
		if err := c.Shutdown(func() error { return nil }); err != nil {
			t.Fatal(err)
		}
	})
}
