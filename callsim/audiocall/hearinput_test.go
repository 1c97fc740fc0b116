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

// delivery is one way the same reply reaches the caller: lead samples of
// silence before it (an agent's wall-clock gap, any length) and its
// bytes cut into chunks with pauses between them (arrival jitter, part
// frames played before the rest came).
type delivery struct {
	lead   int
	chunks []int           // chunk sizes in bytes, the last repeated
	pauses []time.Duration // after each chunk, the last repeated
}

// The same agent reply delivered with different silence before it and
// different arrival timing gives the recognizer byte-identical audio,
// and so the same words: the decoder's input depends on the agent's
// samples alone, not on when they came or where the frames fell.
func TestSameReplySameHearing(t *testing.T) {
	reply := append(tone(440, 300*time.Millisecond, -20), make(audio.PCM, audio.Samples(60*time.Millisecond))...)
	reply = append(reply, tone(660, 250*time.Millisecond, -26)...)
	ulaw := audio.EncodeMulaw(reply)
	ways := []delivery{
		{lead: 0, chunks: []int{800}, pauses: []time.Duration{0}},
		{lead: 37, chunks: []int{123, 800}, pauses: []time.Duration{30 * time.Millisecond, 0}},
		{lead: 213, chunks: []int{57, 301, 999}, pauses: []time.Duration{25 * time.Millisecond, 10 * time.Millisecond, 5 * time.Millisecond}},
		{lead: 2411, chunks: []int{160}, pauses: []time.Duration{0, 15 * time.Millisecond, 0}},
	}
	var heard []audio.PCM
	var words []string
	for _, w := range ways {
		h := &keepHearer{}
		c := newTestCall(t, h)
		b := append(audio.EncodeMulaw(make(audio.PCM, w.lead)), ulaw...)
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
	want := forHearing(audio.DecodeMulaw(ulaw)) // the reply as the wire carries it
	for i, p := range heard {
		assert.Equal(t, want, p, "delivery %d (lead %d): decoder input differs", i, ways[i].lead)
		assert.Equal(t, words[0], words[i], "delivery %d: words differ", i)
	}
}

// forHearing cuts at the first and last audible sample and pads with
// fixed silence; silence throughout is kept as it is.
func TestForHearing(t *testing.T) {
	lead, tail := audio.Samples(hearLead), audio.Samples(hearTail)
	p := audio.PCM{0, 5, -32, 900, 0, -400, 31, 0}
	got := forHearing(p)
	require.Len(t, got, lead+3+tail)
	assert.Equal(t, audio.PCM{900, 0, -400}, got[lead:lead+3])
	assert.Equal(t, make(audio.PCM, lead), got[:lead])
	assert.Equal(t, make(audio.PCM, tail), got[lead+3:])
	quiet := audio.PCM{0, 3, -3}
	assert.Equal(t, quiet, forHearing(quiet))
}
