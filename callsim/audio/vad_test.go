package audio

import (
	"context"
	"math"
	"testing"
	"time"
)

func TestVADDefaults(t *testing.T) {
	// Pinned: changing a default changes when callproof hears an agent
	// start and stop; the reasons are in DefaultVADConfig's comment.
	want := VADConfig{OnsetDBFS: -40, OffsetDBFS: -48, OnsetFrames: 6, HangoverFrames: 25}
	if got := DefaultVADConfig(); got != want {
		t.Errorf("DefaultVADConfig() = %+v, want %+v", got, want)
	}
	if DefaultOffsetDBFS >= DefaultOnsetDBFS {
		t.Error("no hysteresis: offset threshold must be below onset")
	}
}

type vadEvent struct {
	event VADEvent
	at    int // frame the event was reported on
	frame int // OnsetFrame or OffsetFrame at that moment
}

func runVAD(c VADConfig, p PCM) (events []vadEvent, v *VAD) {
	v = NewVAD(c)
	for i, f := range Frames(p) {
		switch e := v.Push(f); e {
		case VADOnset:
			events = append(events, vadEvent{e, i, v.OnsetFrame()})
		case VADOffset:
			events = append(events, vadEvent{e, i, v.OffsetFrame()})
		}
	}
	return events, v
}

// level makes n frames of a 300 Hz tone whose frame RMS is dbfs.
func level(dbfs float64, frames int) PCM {
	amp := math.Sqrt2 * math.Pow(10, dbfs/20)
	return PCM(tone(300, amp, frames*FrameSamples, SampleRate))
}

func concat(parts ...PCM) PCM {
	var out PCM
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestVADToneBursts(t *testing.T) {
	c := DefaultVADConfig()
	// 500 ms silence, then "speech": 4 syllables of 200 ms at -20 dBFS
	// with 60 ms dips to silence, then 1 s of silence.
	syllable := level(-20, 10)
	gap := make(PCM, 3*FrameSamples)
	speech := concat(syllable, gap, syllable, gap, syllable, gap, syllable)
	p := concat(make(PCM, 25*FrameSamples), speech, make(PCM, 50*FrameSamples))
	events, v := runVAD(c, p)
	lastLoud := 25 + len(speech)/FrameSamples - 1
	want := []vadEvent{
		{VADOnset, 25 + c.OnsetFrames - 1, 25},
		{VADOffset, lastLoud + c.HangoverFrames, lastLoud + 1},
	}
	if len(events) != 2 || events[0] != want[0] || events[1] != want[1] {
		t.Errorf("events %+v, want %+v", events, want)
	}
	if v.Speaking() || v.Frames() != len(p)/FrameSamples {
		t.Errorf("after: speaking %v, %d frames", v.Speaking(), v.Frames())
	}
	v.Reset()
	if v.Frames() != 0 || v.OnsetFrame() != -1 || v.OffsetFrame() != -1 {
		t.Error("Reset kept state")
	}
}

func TestVADHysteresis(t *testing.T) {
	c := DefaultVADConfig()
	mid := (c.OnsetDBFS + c.OffsetDBFS) / 2 // -44: neither loud nor quiet
	tests := []struct {
		name   string
		audio  PCM
		events []VADEvent
	}{
		{"silence", make(PCM, 100*FrameSamples), nil},
		{"between thresholds only", level(mid, 100), nil},
		{"loud run one frame short", concat(level(-20, c.OnsetFrames-1), make(PCM, 10*FrameSamples)), nil},
		{"loud run broken by a mid frame", concat(level(-20, 3), level(mid, 1), level(-20, 3), make(PCM, 40*FrameSamples)), nil},
		{"mid frames keep speech going", concat(level(-20, 10), level(mid, 40), make(PCM, 30*FrameSamples)),
			[]VADEvent{VADOnset, VADOffset}},
		{"quiet run one frame short of the hangover", concat(level(-20, 10), make(PCM, (c.HangoverFrames-1)*FrameSamples), level(-20, 10)),
			[]VADEvent{VADOnset}},
	}
	for _, tt := range tests {
		events, _ := runVAD(c, tt.audio)
		var got []VADEvent
		for _, e := range events {
			got = append(got, e.event)
		}
		if len(got) != len(tt.events) || (len(got) > 0 && (got[0] != tt.events[0] || got[len(got)-1] != tt.events[len(tt.events)-1])) {
			t.Errorf("%s: events %v, want %v", tt.name, got, tt.events)
		}
	}
	// Mid frames while speaking must not count as quiet: the offset is
	// placed after them.
	events, _ := runVAD(c, concat(level(-20, 10), level(mid, 40), make(PCM, 30*FrameSamples)))
	if events[1].frame != 50 {
		t.Errorf("offset at frame %d, want 50 (after the mid-level frames)", events[1].frame)
	}
}

func TestVADNoiseBursts(t *testing.T) {
	// Decided: with the defaults, short impulsive noise is not speech.
	// A 100 ms cough and a door slam stay under OnsetFrames loud frames;
	// a full ~300 ms cough does not, and an energy detector cannot tell it
	// from a syllable, so it is an onset. Steady hum at its nominal -30
	// dBFS is also "speech" to an energy detector: keep the VAD for clean
	// agent audio, or mix hum well below OnsetDBFS. TV babble 25 dB under
	// its nominal level (-49 dBFS, some 25 dB under flite speech) is not.
	c := DefaultVADConfig()
	silence := make(PCM, 40*FrameSamples)
	tests := []struct {
		kind  string
		d     time.Duration
		gain  float64
		onset bool
	}{
		{"cough", 100 * time.Millisecond, 0, false},
		{"door", 2 * time.Second, 0, false},
		{"cough", 2 * time.Second, 0, true},
		{"hum", 2 * time.Second, 0, true},
		{"hum", 2 * time.Second, -15, false},
		{"tv", 3 * time.Second, -25, false},
	}
	for _, tt := range tests {
		for seed := int64(1); seed <= 5; seed++ {
			n, _ := Noise(tt.kind, tt.d, seed)
			Gain(n, tt.gain)
			events, _ := runVAD(c, concat(silence, n, silence))
			if got := len(events) > 0; got != tt.onset {
				t.Errorf("%s %v at %+v dB seed %d: onset %v, want %v (%+v)", tt.kind, tt.d, tt.gain, seed, got, tt.onset, events)
			}
		}
	}
}

// The pause between words and at commas in flite speech, measured as the
// longest run of frames below OffsetDBFS inside a sentence, must stay
// under the default hangover, so one sentence is one utterance.
func TestVADFliteSentenceIsOneUtterance(t *testing.T) {
	needTool(t, "flite")
	t.Parallel()
	c := DefaultVADConfig()
	sentences := []string{
		sentence,
		"Okay, I have changed the size to ten and a half, and the delivery to Friday, June twenty first.",
		"Let me check that for you. One moment, please.",
	}
	for _, voice := range []string{"kal", "kal16", "rms", "slt", "awb"} {
		s := Flite(voice)
		for _, text := range sentences {
			p, err := s.Synthesize(context.Background(), text)
			if err != nil {
				t.Fatal(err)
			}
			p = DecodeMulaw(EncodeMulaw(p)) // as heard on the wire
			p = concat(make(PCM, 10*FrameSamples), p, make(PCM, 2*c.HangoverFrames*FrameSamples))
			events, _ := runVAD(c, p)
			if len(events) != 2 || events[0].event != VADOnset || events[1].event != VADOffset {
				t.Errorf("%s %q: events %+v, want one onset and one offset", voice, text[:20], events)
				continue
			}
			if pause := longestPause(p[events[0].frame*FrameSamples:events[1].frame*FrameSamples], c.OffsetDBFS); pause >= c.HangoverFrames {
				t.Errorf("%s: a %d-frame pause inside one sentence", voice, pause)
			}
		}
	}
	// With a 100 ms hangover the same speech splits at word gaps: the
	// default hangover is what holds a sentence together.
	short := c
	short.HangoverFrames = 5
	p, _ := Flite("kal16").Synthesize(context.Background(), sentences[1])
	if events, _ := runVAD(short, concat(p, make(PCM, 20*FrameSamples))); len(events) <= 2 {
		t.Errorf("100 ms hangover: %d events, want the sentence split", len(events))
	}
}

func longestPause(p PCM, below float64) int {
	run, best := 0, 0
	for _, f := range Frames(p) {
		if LevelDBFS(f) < below {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}
