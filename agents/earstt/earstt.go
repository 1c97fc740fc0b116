package earstt

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/protocol/native"
)

// Paths the service answers.
const (
	ListenPath  = "/v1/listen"  // one audio stream (a WebSocket)
	StreamsPath = "/v1/streams" // GET: the finished streams (JSON list of Stream)
)

// The encodings a stream may name.
const (
	EncodingLinear16 = "linear16" // 16-bit little-endian PCM
	EncodingMulaw    = "mulaw"    // G.711 μ-law, one byte a sample
)

// SampleRate is the only rate the service takes: the caller's 8 kHz.
const SampleRate = audio.SampleRate

// DefaultKeepStreams bounds the finished streams a Server lists.
const DefaultKeepStreams = 1000

// Message is one JSON message the service sends.
type Message struct {
	Type    string   `json:"type"`
	ID      string   `json:"id,omitempty"`
	IsFinal bool     `json:"is_final,omitempty"`
	Text    *string  `json:"text,omitempty"`  // on transcripts, "" included
	Start   *float64 `json:"start,omitempty"` // stream seconds
	End     *float64 `json:"end,omitempty"`
	// On "closed":
	Frames    int `json:"frames,omitempty"`
	Finals    int `json:"finals,omitempty"`
	Unmatched int `json:"unmatched,omitempty"`
	Shifts    int `json:"shifts,omitempty"`
}

// Message types.
const (
	TypeSpeechStarted = "speech_started"
	TypeTranscript    = "transcript"
	TypeSoundStarted  = "sound_started"
	TypeSoundEnded    = "sound_ended"
	TypeClosed        = "closed"
	TypeCloseStream   = "close_stream" // from the client
)

// Stream is what the ear heard in one finished stream.
type Stream struct {
	Seq      int               `json:"seq"` // from 1, in the order streams finished
	Encoding string            `json:"encoding"`
	Stats    agents.EarStats   `json:"-"`
	Frames   int               `json:"frames"`
	Heard    []agents.EarHeard `json:"heard"`
	Onsets   int               `json:"onsets"`
	Sounds   int               `json:"sounds"`
	// Unmatched counts loud frames that matched no cached utterance: 0
	// when the audio reached the service unchanged.
	Unmatched int `json:"unmatched"`
	// Shifts counts the times the stream slipped off the caller's frame
	// boundaries and was put back on them, dropping Dropped samples.
	Shifts  int `json:"shifts"`
	Dropped int `json:"dropped"`
}

// Config configures a Server.
type Config struct {
	// SpeechCache is the caller's speech cache (callproof run
	// --speech-cache). Required.
	SpeechCache string
	// KeepStreams bounds the finished streams listed; zero:
	// DefaultKeepStreams.
	KeepStreams int
	// RecordDir, when set, gets each stream's audio as it arrived
	// (stream-SEQ.wav, 8 kHz, before any realignment), to see what a
	// bot's framework made of the caller's audio.
	RecordDir string
	// Logf, when set, gets a line per finished stream.
	Logf func(format string, args ...any)
}

// Server is the service, listening.
type Server struct {
	// URL is the streaming endpoint, ws://HOST:PORT/v1/listen.
	URL string

	cfg      Config
	idx      *agents.SpeechIndex
	srv      *http.Server
	ln       net.Listener
	upgrader websocket.Upgrader
	conns    sync.WaitGroup

	mu      sync.Mutex
	open    map[*websocket.Conn]bool
	closed  bool
	seq     int
	streams []Stream
}

// Start serves the service on addr (e.g. "127.0.0.1:0") until Close or
// ctx's end.
func Start(ctx context.Context, addr string, cfg Config) (*Server, error) {
	if cfg.SpeechCache == "" {
		return nil, errors.New("earstt: the speech cache directory is required")
	}
	if cfg.KeepStreams <= 0 {
		cfg.KeepStreams = DefaultKeepStreams
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, idx: agents.NewSpeechIndex(cfg.SpeechCache), ln: ln, open: map[*websocket.Conn]bool{},
		URL: "ws://" + ln.Addr().String() + ListenPath,
		// Its clients are local bots; any origin is fine.
		upgrader: websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}}
	mux := http.NewServeMux()
	mux.HandleFunc(ListenPath, s.listen)
	mux.HandleFunc(StreamsPath, s.serveStreams)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		s.Close()
	}()
	return s, nil
}

// Addr is the address the service listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the service: its listener and every stream.
func (s *Server) Close() {
	_ = s.srv.Close()
	s.mu.Lock()
	s.closed = true
	for c := range s.open {
		_ = c.Close() // a hijacked connection: the server no longer tracks it
	}
	s.mu.Unlock()
	s.conns.Wait()
}

// Streams lists the finished streams, oldest first.
func (s *Server) Streams() []Stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Stream(nil), s.streams...)
}

func (s *Server) serveStreams(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	list := s.Streams()
	if list == nil {
		list = []Stream{}
	}
	_ = json.NewEncoder(w).Encode(list)
}

// params checks a stream's query; it returns the encoding.
func params(r *http.Request) (string, error) {
	q := r.URL.Query()
	enc := q.Get("encoding")
	if enc != EncodingLinear16 && enc != EncodingMulaw {
		return "", fmt.Errorf("encoding %q: want %s or %s", enc, EncodingLinear16, EncodingMulaw)
	}
	if v := q.Get("sample_rate"); v != strconv.Itoa(SampleRate) {
		return "", fmt.Errorf("sample_rate %q: want %d (the caller's frames, unresampled)", v, SampleRate)
	}
	if v := q.Get("channels"); v != "" && v != "1" {
		return "", fmt.Errorf("channels %q: want 1", v)
	}
	return enc, nil
}

func (s *Server) listen(w http.ResponseWriter, r *http.Request) {
	enc, err := params(r)
	if err != nil {
		http.Error(w, "earstt: "+err.Error(), http.StatusBadRequest)
		return
	}
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = conn.Close()
		return
	}
	s.open[conn] = true
	s.conns.Add(1)
	s.mu.Unlock()
	defer s.conns.Done()
	defer func() {
		s.mu.Lock()
		delete(s.open, conn)
		s.mu.Unlock()
	}()
	st := &stream{conn: conn, enc: enc, ear: agents.NewEar(s.idx), idx: s.idx, opened: map[string]float64{}, record: s.cfg.RecordDir != ""}
	st.run()
	_ = conn.Close()
	s.finish(enc, st)
}

func (s *Server) finish(enc string, str *stream) {
	es := str.ear.Stats()
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	if s.cfg.RecordDir != "" { // written before the stream is listed
		if err := audio.WriteWAVFile(filepath.Join(s.cfg.RecordDir, fmt.Sprintf("stream-%d.wav", seq)), audio.DecodeMulaw(str.rec)); err != nil && s.cfg.Logf != nil {
			s.cfg.Logf("earstt: stream %d: %v", seq, err)
		}
	}
	s.mu.Lock()
	st := Stream{Seq: seq, Encoding: enc, Stats: es, Frames: es.Frames, Heard: make([]agents.EarHeard, len(es.Heard)),
		Onsets: es.Onsets, Sounds: es.Sounds, Unmatched: es.Unmatched, Shifts: str.shifts, Dropped: str.dropped}
	for i, h := range es.Heard {
		st.Heard[i] = agents.EarHeard{ID: h.ID, Text: h.Text, CutShort: h.AtOffset}
	}
	s.streams = append(s.streams, st)
	if len(s.streams) > s.cfg.KeepStreams {
		s.streams = s.streams[len(s.streams)-s.cfg.KeepStreams:]
	}
	s.mu.Unlock()
	if s.cfg.Logf != nil {
		s.cfg.Logf("earstt: stream %d (%s): %d frames, heard %q, %d onsets, %d sounds, %d unmatched loud frames, realigned %d times (%d samples dropped)",
			st.Seq, enc, st.Frames, es.Texts(), st.Onsets, st.Sounds, st.Unmatched, st.Shifts, st.Dropped)
	}
}

// stream is one WebSocket's audio: its reader decodes, frames and hears
// it, and writes the ear's messages (one goroutine does both).
type stream struct {
	conn    *websocket.Conn
	enc     string
	ear     *agents.Ear
	idx     *agents.SpeechIndex
	record  bool
	rec     []byte             // the audio as it arrived, when recording
	shifts  int                // times the stream was realigned on the caller's frames
	dropped int                // samples dropped doing so
	pend    []byte             // μ-law short of a whole frame
	odd     []byte             // linear16: a byte short of a sample
	n       int                // frames heard
	opened  map[string]float64 // onset times by id
}

func (st *stream) run() {
	for {
		kind, b, err := st.conn.ReadMessage()
		if err != nil {
			return
		}
		switch kind {
		case websocket.BinaryMessage:
			if err := st.audio(b); err != nil {
				return
			}
		case websocket.TextMessage:
			var m struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(b, &m) == nil && m.Type == TypeCloseStream {
				es := st.ear.Stats()
				_ = st.send(Message{Type: TypeClosed, Frames: es.Frames, Finals: es.Finals(), Unmatched: es.Unmatched, Shifts: st.shifts})
				_ = st.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
				return
			}
		}
	}
}

// audio hears a binary message's audio, frame by frame.
func (st *stream) audio(b []byte) error {
	if st.enc == EncodingLinear16 {
		if len(st.odd) > 0 {
			b = append(st.odd, b...)
			st.odd = nil
		}
		if len(b)%2 == 1 {
			st.odd = []byte{b[len(b)-1]}
			b = b[:len(b)-1]
		}
		pcm := make(audio.PCM, len(b)/2)
		for i := range pcm {
			pcm[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
		}
		b = audio.EncodeMulaw(pcm)
	}
	if st.record {
		st.rec = append(st.rec, b...)
	}
	st.pend = append(st.pend, b...)
	for len(st.pend) >= audio.FrameSamples {
		if f := st.pend[:audio.FrameSamples]; st.idx.Loud(f) && !st.idx.Has(f) {
			// A loud frame the cache does not hold: the stream may have
			// slipped off the caller's frame boundaries (samples lost or
			// added on the way). Look for the boundary in the next frame's
			// worth of samples.
			if len(st.pend) < 2*audio.FrameSamples-1 {
				break // wait for the samples a shift needs
			}
			if k := st.boundary(); k > 0 {
				st.pend = st.pend[k:]
				st.shifts++
				st.dropped += k
			}
		}
		msgs := st.ear.Push(st.pend[:audio.FrameSamples])
		at := float64(st.n) * audio.FrameDuration.Seconds()
		st.n++
		st.pend = st.pend[audio.FrameSamples:]
		for _, m := range msgs {
			if err := st.event(m, at); err != nil {
				return err
			}
		}
	}
	if len(st.pend) == 0 {
		st.pend = nil
	}
	return nil
}

// boundary is the shift (1..audio.FrameSamples-1 samples) that puts a
// cached frame at the head of the pending audio, or 0.
func (st *stream) boundary() int {
	for k := 1; k < audio.FrameSamples; k++ {
		if st.idx.Has(st.pend[k : k+audio.FrameSamples]) {
			return k
		}
	}
	return 0
}

// event sends one of the ear's messages; at is the stream time of the
// frame that made it.
func (st *stream) event(m native.Message, at float64) error {
	switch {
	case m.Speech != nil && m.Speech.Phase == native.PhaseOnset:
		st.opened[m.Speech.ID] = at
		return st.send(Message{Type: TypeSpeechStarted, ID: m.Speech.ID, Start: &at})
	case m.Speech != nil && m.Speech.Phase == native.PhaseFinal:
		text := m.Speech.Text
		start := st.opened[m.Speech.ID]
		delete(st.opened, m.Speech.ID)
		return st.send(Message{Type: TypeTranscript, ID: m.Speech.ID, IsFinal: true, Text: &text, Start: &start, End: &at})
	case m.Sound != nil && m.Sound.Phase == native.PhaseOnset:
		return st.send(Message{Type: TypeSoundStarted, ID: m.Sound.ID, Start: &at})
	case m.Sound != nil && m.Sound.Phase == native.PhaseOffset:
		return st.send(Message{Type: TypeSoundEnded, ID: m.Sound.ID, End: &at})
	}
	return nil
}

func (st *stream) send(m Message) error {
	_ = st.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return st.conn.WriteJSON(m)
}
