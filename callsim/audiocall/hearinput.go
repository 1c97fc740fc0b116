package audiocall

import (
	"time"

	"github.com/callproof/callproof/callsim/audio"
)

// The recognizer's input for one utterance is a function of the agent's
// samples alone. What the call kept of an utterance also holds silence
// whose length depends on timing: the quiet an agent puts before a reply
// by wall clock (a gap after the utterance still playing), where that
// shifts the 20 ms frames the detector cuts on, the preroll before the
// detector's onset and the silence padding a part-frame played before
// the rest arrived. Copies of a scenario that receive the same reply then
// gave the decoder different bytes, which it can hear as different words
// (and which defeat the recognizer's reuse of identical runs). So the
// kept audio is cut to its first and last sample above hearFloor and put
// between fixed silences; the detector's events are left as they were.
const (
	// hearFloor is the sample magnitude at or below which an edge counts
	// as silent (about -60 dBFS): μ-law silence decodes to 0.
	hearFloor = 32
	// hearLead and hearTail are the silence put before and after the
	// cut: a decoder needs some quiet either side of the words.
	hearLead = 100 * time.Millisecond
	hearTail = 100 * time.Millisecond
)

// forHearing is pcm cut to its audible span between fixed silences, in a
// new slice. All silent (nothing above hearFloor), it is a copy as it
// is.
func forHearing(pcm audio.PCM) audio.PCM {
	loud := func(s int16) bool { return s > hearFloor || s < -hearFloor }
	from := 0
	for from < len(pcm) && !loud(pcm[from]) {
		from++
	}
	if from == len(pcm) {
		return append(audio.PCM(nil), pcm...)
	}
	to := len(pcm)
	for !loud(pcm[to-1]) {
		to--
	}
	lead, tail := audio.Samples(hearLead), audio.Samples(hearTail)
	out := make(audio.PCM, lead+(to-from)+tail)
	copy(out[lead:], pcm[from:to])
	return out
}
