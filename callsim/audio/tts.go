package audio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Synth turns text into speech at SampleRate.
type Synth interface {
	Synthesize(ctx context.Context, text string) (PCM, error)
	// Name says engine and voice, e.g. "flite/kal16". It keys the Cache,
	// so two synths with one name must sound the same.
	Name() string
}

// DefaultVoice is the synth callproof speaks with unless told otherwise.
// Chosen by recognition through μ-law 8 kHz (TestVoiceQuality; table in
// docs/PERFORMANCE.md, "Speech: voice choice"): rms is more intelligible
// on a clean line, but kal16 keeps the most numbers under background
// noise, is heard best by the harness's own recognizer (callsim/hearing),
// and synthesizes about 4 times faster.
const DefaultVoice = "flite/kal16"

// ErrEmptyText is returned for text with nothing to say.
var ErrEmptyText = errors.New("audio: empty text")

// NewSynth returns the synth named "engine/voice" as Name reports it:
// "flite/VOICE" or "espeak-ng/VOICE" (a bare "flite" or "espeak-ng" takes
// the engine's default voice: kal16 and en-us).
func NewSynth(name string) (Synth, error) {
	engine, voice, _ := strings.Cut(name, "/")
	switch engine {
	case "flite":
		return Flite(voice), nil
	case "espeak-ng", "espeak":
		return EspeakNG(voice), nil
	}
	return nil, fmt.Errorf("audio: unknown speech engine %q in %q (want flite/VOICE or espeak-ng/VOICE)", engine, name)
}

// Flite returns a synth that runs Debian's flite (`flite -voice V -t TEXT
// -o FILE`). Built-in voices are kal (8 kHz diphone), kal16, rms, slt and
// awb (16 kHz); a path to a .flitevox file also works. An empty voice is
// kal16. flite silently falls back to kal for a voice it does not know,
// so the voice is checked against `flite -lv` on first use.
func Flite(voice string) Synth {
	if voice == "" {
		voice = "kal16"
	}
	return &fliteSynth{voice: voice}
}

type fliteSynth struct {
	voice string

	mu       sync.Mutex
	checked  bool
	voiceErr error
}

func (f *fliteSynth) Name() string { return "flite/" + f.voice }

func (f *fliteSynth) Synthesize(ctx context.Context, text string) (PCM, error) {
	if strings.TrimSpace(text) == "" {
		return nil, ErrEmptyText
	}
	if err := f.voiceOK(ctx); err != nil {
		return nil, err
	}
	return runToWAV(ctx, func(out string) []string {
		return []string{"flite", "-voice", f.voice, "-t", text, "-o", out}
	})
}

// voiceOK checks the voice once per synth; a check cut short by ctx is
// not remembered, so one cancelled call does not poison the synth.
func (f *fliteSynth) voiceOK(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.checked {
		return f.voiceErr
	}
	err := f.checkVoice(ctx)
	if ctx.Err() == nil {
		f.checked, f.voiceErr = true, err
	}
	return err
}

func (f *fliteSynth) checkVoice(ctx context.Context) error {
	if strings.ContainsRune(f.voice, os.PathSeparator) || strings.HasSuffix(f.voice, ".flitevox") {
		if _, err := os.Stat(f.voice); err != nil {
			return fmt.Errorf("audio: flite voice file: %w", err)
		}
		return nil
	}
	out, err := exec.CommandContext(ctx, "flite", "-lv").Output()
	if err != nil {
		return fmt.Errorf("audio: flite -lv: %w", err)
	}
	// "Voices available: kal awb_time kal16 awb rms slt "
	_, list, _ := strings.Cut(string(out), ":")
	voices := strings.Fields(list)
	if !slices.Contains(voices, f.voice) {
		return fmt.Errorf("audio: flite has no voice %q (has %s)", f.voice, strings.Join(voices, ", "))
	}
	return nil
}

// EspeakNG returns a synth that runs `espeak-ng -v V -w FILE -- TEXT`.
// An empty voice is en-us. espeak-ng writes 22.05 kHz; the result is
// resampled to SampleRate.
func EspeakNG(voice string) Synth {
	if voice == "" {
		voice = "en-us"
	}
	return espeakSynth{voice: voice}
}

type espeakSynth struct{ voice string }

func (e espeakSynth) Name() string { return "espeak-ng/" + e.voice }

func (e espeakSynth) Synthesize(ctx context.Context, text string) (PCM, error) {
	if strings.TrimSpace(text) == "" {
		return nil, ErrEmptyText
	}
	// "--" so text starting with '-' is spoken, not parsed as an option.
	return runToWAV(ctx, func(out string) []string {
		return []string{"espeak-ng", "-v", e.voice, "-w", out, "--", text}
	})
}

// runToWAV runs a synthesizer that writes a WAV file into a fresh
// temporary directory (removed afterwards) and reads it back at SampleRate.
// The process dies with ctx.
func runToWAV(ctx context.Context, argv func(out string) []string) (PCM, error) {
	dir, err := os.MkdirTemp("", "callproof-tts-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "out.wav")
	args := argv(out)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("audio: %s: %w", args[0], ctx.Err())
		}
		return nil, fmt.Errorf("audio: %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	p, err := ReadWAVFile(out)
	if err != nil {
		return nil, fmt.Errorf("audio: %s output: %w", args[0], err)
	}
	if len(p) == 0 {
		return nil, fmt.Errorf("audio: %s produced no audio: %s", args[0], strings.TrimSpace(stderr.String()))
	}
	return p, nil
}
