package audiocall

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/callproof/callproof/callsim/audio"
)

// A synthesized utterance is played from 60 ms before its first loud frame
// to 60 ms after its last, in whole frames of the original audio: the
// synthesizer's padding is not a pause the script wrote.
func TestTrimEdges(t *testing.T) {
	silence := func(d time.Duration) audio.PCM { return make(audio.PCM, audio.Samples(d)) }
	speech := tone(300, 500*time.Millisecond, -20)
	padded := slices.Concat(silence(320*time.Millisecond), speech, silence(440*time.Millisecond))
	got := trimEdges(padded)
	assert.Equal(t, 620*time.Millisecond, got.Duration(), "60 ms + 500 ms + 60 ms")
	from := audio.Samples(260 * time.Millisecond)
	assert.Equal(t, padded[from:from+len(got)], got, "a window of the original, starting on a frame boundary")
	assert.Zero(t, from%audio.FrameSamples)

	short := slices.Concat(silence(20*time.Millisecond), speech, silence(40*time.Millisecond))
	assert.Equal(t, short, trimEdges(short), "less padding than the edge: kept")
	quiet := silence(time.Second)
	assert.Equal(t, quiet, trimEdges(quiet), "nothing loud: kept whole")
	assert.Empty(t, trimEdges(nil))
}

// The caller's words end at the last audible frame: the quiet edge after
// it is played but is not speech.
func TestQuietTail(t *testing.T) {
	silence := func(d time.Duration) audio.PCM { return make(audio.PCM, audio.Samples(d)) }
	speech := tone(300, 500*time.Millisecond, -20)
	assert.Equal(t, 60*time.Millisecond, quietTail(trimEdges(slices.Concat(silence(320*time.Millisecond), speech, silence(440*time.Millisecond)))))
	assert.Equal(t, time.Duration(0), quietTail(speech))
	assert.Equal(t, time.Duration(0), quietTail(silence(time.Second)), "silence throughout keeps its length")
}
