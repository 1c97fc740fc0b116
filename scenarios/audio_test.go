package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const audioScenario = `id: recorded
category: correction
expected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true, backend_correct: true, confirmation_matches_backend: true, should_execute: true}
steps:
  - id: ask
    do: say
    text: "Please change the quantity on order 5590 to 2."
    slots: {order_number: "5590", quantity: "2"}
    audio: %s
  - id: cough
    do: noise
    sound: cough
    audio: sounds/cough.wav
`

// A recording is found beside the scenario file and compiled to its
// path; a missing one is an error with the file, line and field.
func TestAudioFilesResolveBesideTheScenario(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sounds"), 0o755))
	for _, f := range []string{"ask.wav", "sounds/cough.wav"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("RIFF"), 0o644))
	}
	write := func(name, audio string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(fmt.Sprintf(audioScenario, audio)), 0o644))
		return p
	}
	s, err := LoadFile(write("ok.yaml", "ask.wav"))
	require.NoError(t, err)
	c, err := Compile(s)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "ask.wav"), c.Script.Steps[0].Audio)
	assert.Equal(t, filepath.Join(dir, "sounds/cough.wav"), c.Script.Steps[1].Audio)

	p := write("missing.yaml", "nowhere.wav")
	_, err = LoadFile(p)
	if err == nil {
		s, _ := LoadFile(p)
		_, err = Compile(s)
	}
	got := errStrings(t, err)
	require.Len(t, got, 1)
	assert.Contains(t, got[0], p+":9: steps[0].audio: ")
	assert.Contains(t, got[0], "nowhere.wav")

	p = write("mp3.yaml", "ask.mp3")
	_, err = LoadFile(p)
	if err == nil {
		s, _ := LoadFile(p)
		_, err = Compile(s)
	}
	assert.Equal(t, []string{p + `:9: steps[0].audio: "` + filepath.Join(dir, "ask.mp3") + `": want a .wav file`}, errStrings(t, err))
}
