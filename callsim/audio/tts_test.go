package audio

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

const sentence = "Your order four four seven one is confirmed for March third."

func TestFliteVoices(t *testing.T) {
	needTool(t, "flite")
	t.Parallel()
	for _, voice := range []string{"kal", "kal16", "rms", "slt", "awb"} {
		s := Flite(voice)
		if s.Name() != "flite/"+voice {
			t.Errorf("Name = %q", s.Name())
		}
		p, err := s.Synthesize(context.Background(), sentence)
		if err != nil {
			t.Fatalf("%s: %v", voice, err)
		}
		checkSpeech(t, s.Name(), p)
	}
}

func TestEspeakNG(t *testing.T) {
	needTool(t, "espeak-ng")
	t.Parallel()
	s := EspeakNG("")
	if s.Name() != "espeak-ng/en-us" {
		t.Errorf("Name = %q", s.Name())
	}
	p, err := s.Synthesize(context.Background(), sentence)
	if err != nil {
		t.Fatal(err)
	}
	checkSpeech(t, s.Name(), p)
	// Text that looks like an option is spoken, not parsed.
	if p, err := s.Synthesize(context.Background(), "-5 degrees"); err != nil || p.Duration() < 300*time.Millisecond {
		t.Errorf("\"-5 degrees\": %v, %v", p.Duration(), err)
	}
	if _, err := EspeakNG("nosuch").Synthesize(context.Background(), "hello"); err == nil {
		t.Error("unknown espeak-ng voice: want an error")
	}
}

// checkSpeech: a sentence of about 3 s at a speaking level.
func checkSpeech(t *testing.T, name string, p PCM) {
	t.Helper()
	if d := p.Duration(); d < 2*time.Second || d > 6*time.Second {
		t.Errorf("%s: %v of speech for one sentence", name, d)
	}
	if l := LevelDBFS(p); l < -40 || l > -10 {
		t.Errorf("%s: level %.1f dBFS", name, l)
	}
}

func TestSynthErrors(t *testing.T) {
	needTool(t, "flite")
	t.Parallel()
	ctx := context.Background()
	_, err := Flite("nosuch").Synthesize(ctx, "hello")
	if err == nil || !strings.Contains(err.Error(), `no voice "nosuch"`) || !strings.Contains(err.Error(), "kal16") {
		t.Errorf("unknown voice: %v (want the voice list)", err)
	}
	if _, err := Flite("").Synthesize(ctx, "  \n"); !errors.Is(err, ErrEmptyText) {
		t.Errorf("blank text: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	s := Flite("kal16")
	if _, err := s.Synthesize(cancelled, sentence); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	// The cancelled voice check is not remembered.
	if _, err := s.Synthesize(ctx, "hello"); err != nil {
		t.Errorf("after a cancelled call: %v", err)
	}
	if _, err := Flite("/no/such/voice.flitevox").Synthesize(ctx, "hello"); err == nil {
		t.Error("missing voice file: want an error")
	}
}

func TestNewSynth(t *testing.T) {
	tests := []struct{ in, name string }{
		{"flite/rms", "flite/rms"},
		{"flite", "flite/kal16"},
		{"espeak-ng/en-gb", "espeak-ng/en-gb"},
		{"espeak-ng", "espeak-ng/en-us"},
		{DefaultVoice, DefaultVoice},
	}
	for _, tt := range tests {
		s, err := NewSynth(tt.in)
		if err != nil || s.Name() != tt.name {
			t.Errorf("NewSynth(%q) = %v, %v; want %s", tt.in, s, err, tt.name)
		}
	}
	if _, err := NewSynth("festival/kal"); err == nil {
		t.Error("unknown engine: want an error")
	}
}
