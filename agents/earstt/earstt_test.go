package earstt

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim/audio"
)

var phrases = []string{
	"Hi, I'd like to change the delivery date on order 5590 to December 3.",
	"Wait, stop, don't change anything.",
	"Yes, that's right, go ahead.",
}

// callerStream is the phrases as callproof's caller plays them, cached in
// dir first: whole frames, with silence before each.
func callerStream(t *testing.T, dir string) audio.PCM {
	t.Helper()
	if _, err := exec.LookPath("flite"); err != nil {
		t.Skipf("flite not installed: %v", err)
	}
	synth, err := audio.NewSynth(audio.DefaultVoice)
	require.NoError(t, err)
	c := &audio.Cache{Dir: dir, Synth: synth}
	var s audio.PCM
	for _, p := range phrases {
		pcm, err := c.Speech(context.Background(), p)
		require.NoError(t, err)
		s = append(s, make(audio.PCM, audio.Samples(600*time.Millisecond))...)
		s = append(s, pcm...)
		if n := len(s) % audio.FrameSamples; n != 0 {
			s = append(s, make(audio.PCM, audio.FrameSamples-n)...)
		}
	}
	return append(s, make(audio.PCM, audio.Samples(time.Second))...)
}

// TestStreamHearsTheCaller streams the caller's audio both ways a client
// may (μ-law as sent; 16-bit PCM decoded from it, as a Pipecat pipeline
// at 8 kHz passes it on, μ-law's negative zero become 0xFF on the way) in
// chunks that do not fall on frame or sample boundaries, and checks the
// transcripts: each phrase once, after its onset, and the stream's counts.
func TestStreamHearsTheCaller(t *testing.T) {
	dir := t.TempDir()
	pcm := callerStream(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := Start(ctx, "127.0.0.1:0", Config{SpeechCache: dir, Logf: t.Logf})
	require.NoError(t, err)
	defer srv.Close()
	ulaw := audio.EncodeMulaw(pcm)
	require.Contains(t, string(ulaw), "\x7f", "the caller's encoder writes negative zeros")
	for _, enc := range []string{EncodingMulaw, EncodingLinear16} {
		t.Run(enc, func(t *testing.T) {
			body := ulaw
			if enc == EncodingLinear16 {
				body = make([]byte, 2*len(ulaw))
				for i, v := range audio.DecodeMulaw(ulaw) {
					binary.LittleEndian.PutUint16(body[2*i:], uint16(v))
				}
			}
			conn, _, err := websocket.DefaultDialer.DialContext(ctx, srv.URL+"?encoding="+enc+"&sample_rate=8000", nil)
			require.NoError(t, err)
			defer conn.Close()
			for i := 0; i < len(body); i += 333 { // neither a frame nor a sample
				require.NoError(t, conn.WriteMessage(websocket.BinaryMessage, body[i:min(i+333, len(body))]))
			}
			require.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"close_stream"}`)))
			var got []Message
			for {
				var m Message
				if err := conn.ReadJSON(&m); err != nil {
					break
				}
				got = append(got, m)
			}
			var texts, order []string
			for _, m := range got {
				order = append(order, m.Type)
				if m.Type == TypeTranscript {
					require.NotNil(t, m.Text)
					texts = append(texts, *m.Text)
					assert.True(t, m.IsFinal)
					assert.Less(t, *m.Start, *m.End)
				}
			}
			assert.Equal(t, phrases, texts)
			want := strings.Repeat(TypeSpeechStarted+" "+TypeTranscript+" ", len(phrases)) + TypeClosed
			assert.Equal(t, want, strings.Join(order, " "))
			last := got[len(got)-1]
			assert.Equal(t, len(ulaw)/audio.FrameSamples, last.Frames)
			assert.Equal(t, len(phrases), last.Finals)
			assert.Zero(t, last.Unmatched, "every loud frame matched the cache")
		})
	}
	require.Eventually(t, func() bool { return len(srv.Streams()) == 2 }, 5*time.Second, 10*time.Millisecond)
	resp, err := http.Get("http://" + srv.Addr() + StreamsPath)
	require.NoError(t, err)
	defer resp.Body.Close()
	var listed []Stream
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&listed))
	require.Len(t, listed, 2)
	for _, s := range listed {
		assert.Len(t, s.Heard, len(phrases), s.Encoding)
		assert.Zero(t, s.Unmatched, s.Encoding)
	}
}

// TestStreamRealigns: a stream that slipped off the caller's frame
// boundaries (37 samples before the first utterance, 53 more between two
// others, as a receiver that adds samples would) is put back on them at
// each utterance's first loud frame, and every utterance is still heard,
// no loud frame left unmatched.
func TestStreamRealigns(t *testing.T) {
	dir := t.TempDir()
	pcm := callerStream(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec := t.TempDir()
	srv, err := Start(ctx, "127.0.0.1:0", Config{SpeechCache: dir, Logf: t.Logf, RecordDir: rec})
	require.NoError(t, err)
	defer srv.Close()
	ulaw := audio.EncodeMulaw(pcm)
	silence := func(n int) []byte { return audio.EncodeMulaw(make(audio.PCM, n)) }
	mid := audio.Samples(600*time.Millisecond) + len(callerPCMOf(t, dir, phrases[0]))
	mid = (mid + audio.FrameSamples - 1) / audio.FrameSamples * audio.FrameSamples // the gap after the first
	body := append(append(append(silence(37), ulaw[:mid]...), silence(53)...), ulaw[mid:]...)
	conn, _, err := websocket.DefaultDialer.DialContext(ctx, srv.URL+"?encoding=mulaw&sample_rate=8000", nil)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.WriteMessage(websocket.BinaryMessage, body))
	require.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"close_stream"}`)))
	var texts []string
	var last Message
	for {
		var m Message
		if err := conn.ReadJSON(&m); err != nil {
			break
		}
		if m.Type == TypeTranscript {
			texts = append(texts, *m.Text)
		}
		last = m
	}
	assert.Equal(t, phrases, texts)
	require.Equal(t, TypeClosed, last.Type)
	assert.Zero(t, last.Unmatched)
	assert.Equal(t, 2, last.Shifts)
	require.Eventually(t, func() bool { return len(srv.Streams()) == 1 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, 37+53, srv.Streams()[0].Dropped)
	// The recording is the stream as it arrived, slips included.
	got, err := audio.ReadWAVFile(filepath.Join(rec, "stream-1.wav"))
	require.NoError(t, err)
	assert.True(t, slices.Equal(audio.DecodeMulaw(body), got), "the recording: %d samples, sent %d", len(got), len(body))
}

// callerPCMOf is one phrase as the caller's cache holds it.
func callerPCMOf(t *testing.T, dir, text string) audio.PCM {
	t.Helper()
	synth, err := audio.NewSynth(audio.DefaultVoice)
	require.NoError(t, err)
	pcm, err := (&audio.Cache{Dir: dir, Synth: synth}).Speech(context.Background(), text)
	require.NoError(t, err)
	return pcm
}

// TestRefusesOtherAudio: the service takes the caller's 8 kHz mono audio
// only, as μ-law or 16-bit PCM; anything else is an HTTP 400 naming what
// is wrong.
func TestRefusesOtherAudio(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := Start(ctx, "127.0.0.1:0", Config{SpeechCache: t.TempDir()})
	require.NoError(t, err)
	defer srv.Close()
	for q, want := range map[string]string{
		"encoding=linear16&sample_rate=16000":        "sample_rate",
		"encoding=opus&sample_rate=8000":             "encoding",
		"sample_rate=8000":                           "encoding",
		"encoding=mulaw&sample_rate=8000&channels=2": "channels",
		"encoding=linear16":                          "sample_rate",
	} {
		_, resp, err := websocket.DefaultDialer.Dial(srv.URL+"?"+q, nil)
		require.Error(t, err, q)
		require.NotNil(t, resp, q)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, q)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		assert.Contains(t, string(body), want, q)
	}
	_, err = Start(ctx, "127.0.0.1:0", Config{})
	assert.Error(t, err, "no speech cache")
}

// TestCloseEndsOpenStreams: Close returns with a client still connected.
func TestCloseEndsOpenStreams(t *testing.T) {
	srv, err := Start(context.Background(), "127.0.0.1:0", Config{SpeechCache: t.TempDir()})
	require.NoError(t, err)
	conn, _, err := websocket.DefaultDialer.Dial(srv.URL+"?encoding=mulaw&sample_rate=8000", nil)
	require.NoError(t, err)
	defer conn.Close()
	done := make(chan struct{})
	go func() { srv.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waits on an open stream")
	}
	_, _, err = conn.ReadMessage()
	assert.Error(t, err)
}
