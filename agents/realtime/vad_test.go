package realtime

import (
	"testing"
	"time"
)

func TestVADNeedsOnsetAndSilence(t *testing.T) {
	v := newVAD(VAD{Threshold: DefaultThreshold, Onset: 60 * time.Millisecond, Silence: 200 * time.Millisecond}, 8000)
	f := audioFormat{codec: "pcmu", rate: 8000}
	var got []vadEvent
	feed := func(b []byte) { got = append(got, v.feed(f.decode(b))...) }
	feed(Silence(100 * time.Millisecond))
	feed(Tone(300, 40*time.Millisecond, 8000)) // a blip shorter than the onset
	feed(Silence(100 * time.Millisecond))
	feed(Tone(300, 500*time.Millisecond, 8000)) // speech from 240 ms
	feed(Silence(100 * time.Millisecond))       // a pause shorter than the silence
	feed(Tone(300, 200*time.Millisecond, 8000))
	feed(Silence(300 * time.Millisecond)) // speech ends at 1040, heard 200 ms later
	want := []vadEvent{{start: true, ms: 240}, {start: false, ms: 1240}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("events %+v, want %+v", got, want)
	}
}

func TestVADThreshold(t *testing.T) {
	v := newVAD(VAD{Threshold: 2000, Onset: 20 * time.Millisecond, Silence: 20 * time.Millisecond}, 8000)
	f := audioFormat{codec: "pcmu", rate: 8000}
	// RMS of a sine is amplitude/√2: 2500 -> ~1770, under 2000.
	if evs := v.feed(f.decode(Tone(300, 200*time.Millisecond, 2500))); len(evs) != 0 {
		t.Errorf("quiet tone heard as speech: %+v", evs)
	}
	if evs := v.feed(f.decode(Tone(300, 40*time.Millisecond, 3000))); len(evs) != 1 || !evs[0].start {
		t.Errorf("loud tone: %+v", evs)
	}
}

func TestFormats(t *testing.T) {
	for in, want := range map[string]audioFormat{
		"g711_ulaw": {"pcmu", 8000}, "g711_alaw": {"pcma", 8000}, "pcm16": {"pcm", 24000},
	} {
		if f, ok := parseFormat(in); !ok || f != want {
			t.Errorf("parseFormat(%q) = %v, %v", in, f, ok)
		}
	}
	if f, ok := parseFormat(map[string]any{"type": "audio/pcm", "rate": 16000.0}); !ok || f != (audioFormat{"pcm", 16000}) {
		t.Errorf("pcm 16k: %v %v", f, ok)
	}
	if _, ok := parseFormat(map[string]any{"type": "audio/opus"}); ok {
		t.Error("opus accepted")
	}
	tone := Tone(440, 100*time.Millisecond, 6000)
	if got := (audioFormat{"pcmu", 8000}).encode(tone); string(got) != string(tone) {
		t.Error("μ-law output altered")
	}
	if got := (audioFormat{"pcma", 8000}).encode(tone); len(got) != len(tone) {
		t.Errorf("A-law %d bytes", len(got))
	}
	pcm := audioFormat{"pcm", 24000}
	if got := pcm.decode(pcm.encode(tone)); len(got) != 3*len(tone) {
		t.Errorf("PCM16 24 kHz: %d samples from %d μ-law bytes", len(got), len(tone))
	}
}
