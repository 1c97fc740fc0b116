package audiocall

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/protocol/native"
)

// keepHearer keeps what it is asked to hear and names it by its bytes,
// as a decoder whose identical runs take the same words would.
type keepHearer struct {
	mu   sync.Mutex
	pcms []audio.PCM
}

func (h *keepHearer) Hear(_ context.Context, pcm audio.PCM) (string, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pcms = append(h.pcms, append(audio.PCM(nil), pcm...))
	sum := sha256.Sum256(audio.EncodeMulaw(pcm))
	return "words " + hex.EncodeToString(sum[:4]), false, nil
}

// delivery is one way the same reply reaches the caller: lead frames of
// silence before it (an agent's wall-clock gap, whole 20 ms frames as
// the reference agents pad and send it) and the reply's bytes cut into
// chunks with pauses between them (arrival jitter, part frames played
// before the rest came).
type delivery struct {
	lead   int             // frames
	chunks []int           // chunk sizes in bytes, the last repeated
	pauses []time.Duration // after each chunk, the last repeated
}

// The same agent reply delivered after different gaps (whole frames, at
// least the preroll's reach) and with different arrival timing gives the
// recognizer byte-identical audio, and so the same words: the reply's
// samples as the wire carries them, after the preroll's silence, and
// none of the silence that filled out a part frame played before the rest
// came. (A gap shorter than the preroll, or silence that itself arrives
// in part frames, leaves less silence before the reply: the decoder
// hears the agent's own silence as it came, docs/PERFORMANCE.md,
// "Recognition variance between copies".)
func TestSameReplySameHearing(t *testing.T) {
	reply := append(tone(440, 300*time.Millisecond, -20), make(audio.PCM, audio.Samples(60*time.Millisecond))...)
	reply = append(reply, tone(660, 250*time.Millisecond, -26)...)
	require.NotZero(t, len(reply)%audio.FrameSamples, "the reply ends in a part frame")
	ulaw := audio.EncodeMulaw(reply)
	ways := []delivery{
		{lead: prerollFrames, chunks: []int{800}, pauses: []time.Duration{0}},
		{lead: prerollFrames + 1, chunks: []int{123, 800}, pauses: []time.Duration{30 * time.Millisecond, 0}},
		{lead: 2 * prerollFrames, chunks: []int{57, 301, 999}, pauses: []time.Duration{25 * time.Millisecond, 10 * time.Millisecond, 5 * time.Millisecond}},
		{lead: 35, chunks: []int{160}, pauses: []time.Duration{0, 15 * time.Millisecond, 0}},
	}
	var heard []audio.PCM
	var words []string
	for _, w := range ways {
		h := &keepHearer{}
		c := newTestCall(t, h)
		// The gap arrives as whole frames, as the reference agents send
		// it; the reply with the jitter.
		require.NoError(t, c.Enqueue(audio.EncodeMulaw(make(audio.PCM, w.lead*audio.FrameSamples))))
		b := ulaw
		for i := 0; len(b) > 0; i++ {
			n := min(w.chunks[min(i, len(w.chunks)-1)], len(b))
			require.NoError(t, c.Enqueue(b[:n]))
			b = b[n:]
			time.Sleep(w.pauses[min(i, len(w.pauses)-1)])
		}
		texts(t, c, phase(native.PhaseEnd))
		flushed := make(chan error, 1)
		go func() { flushed <- c.Flush(context.Background()) }()
		got := pumpFlush(t, c, flushed)
		require.Len(t, got, 1, "lead %d: one utterance", w.lead)
		words = append(words, got[0].Text)
		h.mu.Lock()
		require.Len(t, h.pcms, 1)
		heard = append(heard, h.pcms[0])
		h.mu.Unlock()
	}
	wire := audio.DecodeMulaw(ulaw) // the reply as the wire carries it
	p := heard[0]
	require.Greater(t, len(p), len(wire))
	assert.Equal(t, wire, p[len(p)-len(wire):], "the decoder hears the reply, and no silence after it")
	assert.Equal(t, make(audio.PCM, len(p)-len(wire)), p[:len(p)-len(wire)], "after the preroll's silence")
	assert.LessOrEqual(t, len(p)-len(wire), prerollFrames*audio.FrameSamples)
	for i, p := range heard {
		assert.Equal(t, heard[0], p, "delivery %d (lead %d frames): decoder input differs", i, ways[i].lead)
		assert.Equal(t, words[0], words[i], "delivery %d: words differ", i)
	}
}
