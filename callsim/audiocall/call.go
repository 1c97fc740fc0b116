package audiocall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// Speech gives the caller's words as audio; *audio.Cache is one.
type Speech interface {
	Speech(ctx context.Context, text string) (audio.PCM, error)
}

// Hearer turns one agent utterance, as played out, into text. Uncertain
// says the words cannot be trusted to carry the agent's claim; the caller
// then records the text with UncertainMarker so the scorer reads it as
// undecided, never as a pass.
//
// A call hears nothing while its script plays: it keeps each utterance's
// audio (up to MaxUtterance) and recognizes them all in Flush, once the
// script is over, so recognition never competes with the frame clock of
// the call it belongs to, and nothing in the call's timing waits for
// words (triggers use the detector's speech start and end).
type Hearer interface {
	Hear(ctx context.Context, pcm audio.PCM) (text string, uncertain bool, err error)
}

// Draft is an utterance's first decode (Checker).
type Draft struct {
	Text      string
	Uncertain bool
	// Claims says the words may carry a claim or a read-back (a value,
	// claim words): a cross-check could change what a verdict reads.
	Claims bool
	// Raw is the Checker's own record of the decode, for Check.
	Raw any
}

// Checker is an optional Hearer capability: decode every utterance once
// (Draft) and cross-check (Check) only those a verdict reads. The call
// cross-checks the utterances after the caller's last one began (where
// the claims after the last consequential act are) whatever their first
// decode says, and before it those whose draft Claims (read-backs).
type Checker interface {
	Draft(ctx context.Context, pcm audio.PCM) (Draft, error)
	Check(ctx context.Context, pcm audio.PCM, d Draft) (text string, uncertain bool, err error)
}

// RealTimer is an optional Hearer capability: it is told once when its
// call's real-time part begins (the frame clock starts) and once when it
// ends (the media stream paused for the recognition, or the call closed),
// so that recognition shared by a run can take more of the machine once
// no call needs it in real time.
type RealTimer interface {
	RealTime(live bool)
}

// UncertainMarker starts the recorded text of an utterance the recognizer
// could not vouch for (trace.UnclearText).
const UncertainMarker = trace.UnclearText

// RecognizedMarker starts the recorded text of an utterance the recognizer
// vouched for (trace.RecognizedText): its values are evidence of a match,
// never proof of a mismatch.
const RecognizedMarker = trace.RecognizedText

// Defaults for Config.
const (
	// DefaultMaxQueuedAudio bounds the agent audio waiting to be played
	// (real time); more is a flood.
	DefaultMaxQueuedAudio = 2 * time.Minute
	// DefaultMaxUtterance bounds the audio kept of one agent utterance
	// for the recognizer; the rest is played but not transcribed.
	DefaultMaxUtterance = time.Minute
	// DefaultNoiseDBFS is the level background noise is mixed in at.
	DefaultNoiseDBFS = -30.0
	// DefaultHearTimeout bounds the recognition of a call's utterances
	// after its script: they may wait their turn behind a whole run's
	// (the harness's hearing.Pool).
	DefaultHearTimeout = 10 * time.Minute
	// WaitStretch multiplies the script's bounds on waiting for an audio
	// call (callsim.Stretcher): real speech runs slower than the text
	// protocol's 300 ms a word.
	WaitStretch = 3.0
	// MaxTranscriptBytes bounds the text kept of one transcript from the
	// agent (the per-event text cap, callsim.DefaultMaxEventTextBytes):
	// the rest is cut and callsim.TruncationMarker put in its place.
	MaxTranscriptBytes = callsim.DefaultMaxEventTextBytes
	// MaxPendingTranscripts bounds the transcripts waiting for their
	// utterance to end; more is a flood (ErrFlood). With
	// MaxTranscriptBytes it bounds what an agent's words can hold in
	// memory, as the marks' bounds do for marks.
	MaxPendingTranscripts = 1000
	// DryFrames is how many frames the agent's audio may run out before
	// its utterance counts as over (100 ms): the end is recorded that
	// much after the audio stopped.
	DryFrames = 5
	// Inbox is how many derived agent events may wait for Recv.
	Inbox = 256
)

// ErrFlood is returned by Recv when the agent queued more audio than
// MaxQueuedAudio.
var ErrFlood = errors.New("audio flood")

// Config is what a dialect's transport sets up for its calls. Speech is
// required; the rest have defaults.
type Config struct {
	Speech  Speech          // the caller's voice
	Hearing Hearer          // nil: agent utterances are timed but not transcribed
	VAD     audio.VADConfig // zero: audio.DefaultVADConfig()

	NoiseDBFS      float64       // 0: DefaultNoiseDBFS
	Seed           int64         // for noise
	MaxQueuedAudio time.Duration // 0: DefaultMaxQueuedAudio
	MaxUtterance   time.Duration // 0: DefaultMaxUtterance
	HearTimeout    time.Duration // 0: DefaultHearTimeout

	// RecordTo, when set, is where the call is written as a stereo WAV
	// (caller left, agent right) when the call closes.
	RecordTo string
	// PauseToHear stops the media stream at Flush while the call's kept
	// utterances are recognized, once the agent has nothing left to play
	// (the connection stays open): for a wire whose agents take a pause in
	// the caller's media as silence.
	PauseToHear bool
}

// Wire is the dialect under a call.
type Wire interface {
	// SendFrame sends the caller's frame n (20 ms of μ-law), at at since
	// the stream began. An error stops the frame clock.
	SendFrame(n int, at time.Duration, ulaw []byte) error
	// Tick runs on the frame clock after each frame (keepalives).
	Tick(now time.Time)
	// Echo tells the agent that playout reached (or a clear flushed) its
	// marks, in order.
	Echo(names []string)
}

// Call is one audio call, seen by the simulator as native messages: what
// it sends becomes frames and sound; what the agent plays becomes
// agent_speech start/text/end and clear. The dialect feeds it the agent's
// audio (Enqueue), marks, clears, transcripts and other events, from one
// reader goroutine that Recv starts.
type Call struct {
	cfg  Config
	wire Wire
	read func() error

	out       chan callsim.Frame
	done      chan struct{} // closed by Close
	closeOnce sync.Once
	closeErr  error
	readOnce  sync.Once
	readDone  chan struct{}
	readErr   atomic.Pointer[error]
	paceOnce  sync.Once // starts the pacer
	realOnce  sync.Once // ends the real-time part (RealTimer)
	stopOnce  sync.Once // stops it
	paced     atomic.Bool
	paceDone  chan struct{}
	paceStop  chan struct{}
	waiting   atomic.Bool  // Recv is blocked on an empty inbox
	recvs     atomic.Int64 // Recv calls begun
	emitted   atomic.Int64 // events handed to the inbox
	recorded  atomic.Bool

	mu sync.Mutex // everything below
	// The caller's side.
	speech  map[string]audio.PCM // prepared utterances by id
	sounds  map[string]audio.PCM // prepared noises by id
	talking []audio.PCM          // utterances started, in order; the first is playing
	talkPos int
	noises  map[string]*playing
	// The agent's side: μ-law not yet played, and marks at byte offsets
	// of everything ever queued.
	queue    []byte
	queued   int64 // bytes ever queued
	played   int64 // bytes ever played
	marks    []mark
	vad      *audio.VAD
	preroll  []audio.PCM
	speaking bool
	utt      int
	heard    audio.PCM // the current utterance so far
	rec      *audio.Recorder
	lat      *histogram
	sendPCM  audio.PCM // the caller's frame being built (under mu)
	playUlaw []byte    // the agent's frame being played (under mu)
	dry      int       // ticks in a row with no agent audio to play
	// The agent's own words (transcripts), each for the audio queued
	// before it since the previous one (from segStart).
	transcripts []transcript
	segStart    int64
	ownWords    bool    // the agent has sent a transcript: no recognizer
	wordless    *ending // the last utterance ended without words, awaiting a late transcript
	stopAt      int64   // bytes played when the utterance ending now stopped
	tick        int     // the frame clock: the tick being played
	turns       *turns
	toHear      []heardJob    // utterances ended, heard in Flush
	hangingUp   chan struct{} // closed when a HangUp has handed on its words
	uttOnset    int           // the tick the utterance in progress began
	callerOnset int           // the tick the caller's latest utterance began (-1: none yet)
	echoes      []Echo        // the first maxEchoes marks echoed, for Echoes
	// vadOnsetDBFS: an agent frame this loud counts as sound for timing.
	vadOnsetDBFS float64
}

type transcript struct {
	at    int64 // bytes queued when it arrived: the end of its audio
	words []string
}

// ending is an utterance that ended before its words arrived.
type ending struct {
	id     string
	queued int64 // bytes queued when it ended
	// drop, when the recognizer is hearing it, is set once the agent's
	// own words came after all: they replace the recognizer's.
	drop *atomic.Bool
}

type playing struct {
	pcm audio.PCM
	pos int
}

type mark struct {
	at   int64
	name string
}

var (
	_ callsim.Voice     = (*Call)(nil)
	_ callsim.Flusher   = (*Call)(nil)
	_ callsim.Pacer     = (*Call)(nil)
	_ callsim.TurnTaker = (*Call)(nil)
	_ callsim.Stretcher = (*Call)(nil)
)

func orDur(v, d time.Duration) time.Duration {
	if v <= 0 {
		return d
	}
	return v
}

// New returns a call over w. read is the dialect's reader: it runs once,
// from the first Recv, feeding the call until the connection ends, and
// returns why it ended.
func New(cfg Config, w Wire, read func() error) *Call {
	c := &Call{
		cfg:      cfg,
		wire:     w,
		read:     read,
		out:      make(chan callsim.Frame, Inbox),
		done:     make(chan struct{}),
		readDone: make(chan struct{}),
		paceDone: make(chan struct{}),
		paceStop: make(chan struct{}),
		speech:   map[string]audio.PCM{},
		sounds:   map[string]audio.PCM{},
		noises:   map[string]*playing{},
		lat:      newHistogram(),
		sendPCM:  make(audio.PCM, audio.FrameSamples),
		playUlaw: make([]byte, audio.FrameSamples),
		turns:    newTurns(),

		callerOnset: -1,
	}
	vc := cfg.VAD
	if vc == (audio.VADConfig{}) {
		vc = audio.DefaultVADConfig()
	}
	if cfg.RecordTo != "" {
		// Only a recorded call keeps its audio: 32 KB a second otherwise
		// wasted on every call of a large run.
		c.rec = audio.NewRecorder()
	}
	c.vad = audio.NewVAD(vc)
	c.vadOnsetDBFS = vc.OnsetDBFS
	return c
}

// PrepareSpeech synthesizes text (or takes it from the cache) for the
// utterance id and returns how long its words last: to the start of its
// last frame above audio.WordsFloorDBFS, when that frame goes out and the
// agent has every word (a frame reaches the agent whole). The caller's
// final belongs there; the rest still plays.
func (c *Call) PrepareSpeech(ctx context.Context, id, text string) (time.Duration, error) {
	if c.cfg.Speech == nil {
		return 0, errors.New("audiocall: no caller voice (Config.Speech)")
	}
	pcm, err := c.cfg.Speech.Speech(ctx, text)
	if err != nil {
		return 0, err
	}
	// Whole frames: the utterance ends on a frame boundary.
	if n := len(pcm) % audio.FrameSamples; n != 0 {
		pcm = append(pcm[:len(pcm):len(pcm)], make(audio.PCM, audio.FrameSamples-n)...)
	}
	pcm = trimEdges(pcm)
	c.mu.Lock()
	c.speech[id] = pcm
	c.mu.Unlock()
	d := pcm.Duration() - quietTail(pcm)
	if d >= 2*audio.FrameDuration {
		d -= audio.FrameDuration
	}
	return d, nil
}

// PrepareRecording reads a recorded WAV (any PCM rate and channel count,
// made mono 8 kHz) as the utterance or the noise id. A recorded noise is
// mixed at the level it was recorded at.
func (c *Call) PrepareRecording(_ context.Context, id, path string, noise bool) (time.Duration, error) {
	pcm, err := audio.ReadWAVFile(path)
	if err != nil {
		return 0, err
	}
	if n := len(pcm) % audio.FrameSamples; n != 0 {
		pcm = append(pcm, make(audio.PCM, audio.FrameSamples-n)...)
	}
	c.mu.Lock()
	if noise {
		c.sounds[id] = pcm
	} else {
		c.speech[id] = pcm
	}
	c.mu.Unlock()
	return pcm.Duration(), nil
}

// PrepareSound makes noise of kind, d long, mixed at the call's level.
func (c *Call) PrepareSound(_ context.Context, id, kind string, d time.Duration) error {
	pcm, err := audio.Noise(kind, d, c.cfg.Seed+int64(len(id))*7919)
	if err != nil {
		return err
	}
	level := c.cfg.NoiseDBFS
	if level == 0 {
		level = DefaultNoiseDBFS
	}
	if l := audio.LevelDBFS(pcm); l > audio.SilenceDBFS {
		audio.Gain(pcm, level-l)
	}
	c.mu.Lock()
	c.sounds[id] = pcm
	c.mu.Unlock()
	return nil
}

// Play starts a prepared utterance at a speech onset, and a prepared
// noise at a sound onset (stopping it at its offset); other messages are
// the dialect's. It returns the reader's error, if it stopped.
func (c *Call) Play(m native.Message) error {
	switch m.Event {
	case native.EventSpeech:
		if m.Speech != nil && m.Speech.Phase == native.PhaseOnset {
			c.mu.Lock()
			if p, ok := c.speech[m.Speech.ID]; ok {
				c.talking = append(c.talking, p)
				delete(c.speech, m.Speech.ID)
			}
			c.mu.Unlock()
		}
	case native.EventSound:
		if m.Sound != nil {
			c.mu.Lock()
			switch m.Sound.Phase {
			case native.PhaseOnset:
				if p, ok := c.sounds[m.Sound.ID]; ok {
					c.noises[m.Sound.ID] = &playing{pcm: p}
					delete(c.sounds, m.Sound.ID)
				}
			case native.PhaseOffset:
				delete(c.noises, m.Sound.ID)
			}
			c.mu.Unlock()
		}
	}
	return c.Err()
}

// Err is the reader's error, if it stopped.
func (c *Call) Err() error {
	if p := c.readErr.Load(); p != nil {
		return *p
	}
	return nil
}

// StartClock starts the call's 20 ms frame clock (once).
func (c *Call) StartClock() {
	c.paceOnce.Do(func() {
		c.paced.Store(true)
		if rt, ok := c.cfg.Hearing.(RealTimer); ok {
			rt.RealTime(true)
		}
		go c.pace(time.Now())
	})
}

// endRealTime tells the Hearer (RealTimer) that the call's real-time
// part is over, once, if it began.
func (c *Call) endRealTime() {
	c.realOnce.Do(func() {
		if rt, ok := c.cfg.Hearing.(RealTimer); ok && c.paced.Load() {
			rt.RealTime(false)
		}
	})
}

// StopClock ends the media stream and waits for the clock to be gone.
func (c *Call) StopClock() {
	c.stopOnce.Do(func() { close(c.paceStop) })
	c.paceOnce.Do(func() {}) // never starts after this
	if c.paced.Load() {
		<-c.paceDone
	}
}

// Done is closed when the call closes.
func (c *Call) Done() <-chan struct{} { return c.done }

// Recv returns the next agent event.
func (c *Call) Recv(ctx context.Context) (callsim.Frame, error) {
	c.recvs.Add(1)
	c.readOnce.Do(func() { go c.reader() })
	select {
	case f := <-c.out:
		return f, nil
	default:
	}
	c.waiting.Store(true)
	defer c.waiting.Store(false)
	select {
	case f := <-c.out:
		return f, nil
	case <-c.readDone:
		// Events derived before the reader stopped come first.
		select {
		case f := <-c.out:
			return f, nil
		default:
		}
		return callsim.Frame{}, c.Err()
	case <-c.done:
		return callsim.Frame{}, errClosed
	case <-ctx.Done():
		return callsim.Frame{}, context.Cause(ctx)
	}
}

var errClosed = errors.New("connection closed")

func (c *Call) reader() {
	defer close(c.readDone)
	if err := c.read(); err != nil {
		c.readErr.Store(&err)
	} else {
		err = errClosed
		c.readErr.Store(&err)
	}
}

// Emit hands events to Recv as they are; it gives up when the call
// closes.
func (c *Call) Emit(fs ...callsim.Frame) {
	for _, f := range fs {
		c.emitted.Add(1)
		select {
		case c.out <- f:
		case <-c.done:
			return
		}
	}
}

func speechFrame(phase, id, text string) callsim.Frame {
	m := native.Message{Event: native.EventAgentSpeech, AgentSpeech: &native.AgentSpeech{ID: id, Phase: phase, Text: text}}
	raw, _ := json.Marshal(m)
	return callsim.Frame{Message: m, Raw: raw}
}

// HangUp is the agent's hang-up on a wire that has no hang-up message
// (a clean close of the connection). The stream is gone with it, as on a
// phone line: audio still queued is never heard (an agent that paces its
// audio in real time has none left). The utterance in progress ends
// there. The hang-up ends the call before any Flush, so the words kept
// so far are recognized first (within HearTimeout, or until the call is
// shut down), then the hangup event is handed on.
func (c *Call) HangUp(reason string) {
	c.mu.Lock()
	var fs []callsim.Frame
	if c.speaking {
		fs = c.endUtteranceLocked(false)
	}
	c.queue = c.queue[:0]
	jobs := c.takeJobsLocked()
	heard := make(chan struct{})
	defer close(heard)
	c.hangingUp = heard
	c.mu.Unlock()
	c.Emit(fs...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	c.emitHeard(ctx, jobs)
	m := native.Message{Event: native.EventHangup, Hangup: &native.Hangup{Reason: reason}}
	raw, _ := json.Marshal(m)
	c.Emit(callsim.Frame{Message: m, Raw: raw})
}

// Enqueue queues agent μ-law for playout; past MaxQueuedAudio it is a
// flood (ErrFlood), which the reader returns.
func (c *Call) Enqueue(ulaw []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	max := orDur(c.cfg.MaxQueuedAudio, DefaultMaxQueuedAudio)
	if len(c.queue)+len(ulaw) > audio.Samples(max) {
		return fmt.Errorf("%w: over %s of agent audio queued", ErrFlood, max)
	}
	c.queue = append(c.queue, ulaw...)
	c.queued += int64(len(ulaw))
	return nil
}

// lateWords bounds how much agent audio may be queued between an
// utterance's end and a transcript that still counts as its words: a peer
// that streams silence between utterances keeps queuing.
const lateWords = time.Second

// Transcript takes the agent's own words for the audio it queued since
// its previous transcript. Words that come after their utterance ended
// without words, before another began and within lateWords of audio,
// are that utterance's text. A transcript without words says nothing and
// is left out: it would otherwise take the place of the next one. Its
// text is cut to MaxTranscriptBytes; more than MaxPendingTranscripts
// waiting is a flood (ErrFlood), which the reader returns.
func (c *Call) Transcript(text string) error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if len(text) > MaxTranscriptBytes {
		n := MaxTranscriptBytes
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		text = text[:n] + " " + callsim.TruncationMarker
	}
	c.mu.Lock()
	if w := c.wordless; w != nil && !c.speaking && len(c.transcripts) == 0 && c.queued-w.queued <= int64(audio.Samples(lateWords)) {
		c.wordless = nil
		c.ownWords = true
		c.segStart = c.queued
		if w.drop != nil {
			w.drop.Store(true)
		}
		c.mu.Unlock()
		c.Emit(speechFrame(native.PhaseText, w.id, strings.Join(strings.Fields(text), " ")))
		return nil
	}
	if len(c.transcripts) >= MaxPendingTranscripts {
		c.mu.Unlock()
		return fmt.Errorf("%w: over %d transcripts waiting for their utterance", ErrFlood, MaxPendingTranscripts)
	}
	c.transcripts = append(c.transcripts, transcript{at: c.queued, words: strings.Fields(text)})
	c.mu.Unlock()
	return nil
}

// PlaceMark puts a mark after everything queued; with nothing queued it
// is reached at once. More than max marks waiting is a flood (ErrFlood):
// each is echoed later, on the frame clock's goroutine or at a clear.
func (c *Call) PlaceMark(name string, max int) error {
	c.mu.Lock()
	if max > 0 && len(c.marks) >= max {
		c.mu.Unlock()
		return fmt.Errorf("%w: over %d marks waiting to be played", ErrFlood, max)
	}
	if len(c.queue) == 0 {
		c.logEchoLocked(name, c.queued, false)
		c.mu.Unlock()
		c.wire.Echo([]string{name})
		return nil
	}
	c.marks = append(c.marks, mark{at: c.queued, name: name})
	c.mu.Unlock()
	return nil
}

// Clear drops the queued audio and echoes every pending mark at once, as
// Twilio does; the agent's utterance in progress stops here.
func (c *Call) Clear() {
	c.mu.Lock()
	names := make([]string, 0, len(c.marks))
	for _, m := range c.marks {
		names = append(names, m.name)
		c.logEchoLocked(m.name, m.at, true)
	}
	c.stopAt = c.played
	c.queue = c.queue[:0]
	c.played = c.queued
	c.marks = c.marks[:0]
	var fs []callsim.Frame
	id := c.uttID()
	if c.speaking {
		fs = c.endUtteranceLocked(true)
	}
	c.mu.Unlock()
	c.wire.Echo(names)
	m := native.Message{Event: native.EventClear, Clear: &native.Clear{ID: id}}
	raw, _ := json.Marshal(m)
	// The clear stands for the end: the scorer reads a cleared utterance
	// as stopped there.
	for i, f := range fs {
		if f.Message.AgentSpeech != nil && f.Message.AgentSpeech.Phase == native.PhaseEnd {
			fs[i] = callsim.Frame{Message: m, Raw: raw}
		}
	}
	if len(fs) == 0 {
		fs = []callsim.Frame{{Message: m, Raw: raw}}
	}
	c.Emit(fs...)
}

func (c *Call) uttID() string { return "a" + strconv.Itoa(c.utt) }

// pace is the call's 20 ms clock, its phase set by when the call started:
// each tick sends the caller's next frame and plays the agent's next
// frame. A tick that comes late sends at once, so the stream catches up
// and the lateness is measured, never hidden.
func (c *Call) pace(t0 time.Time) {
	defer close(c.paceDone)
	stop := c.paceStop
	timer := time.NewTimer(0)
	defer timer.Stop()
	for n := 0; ; n++ {
		due := t0.Add(time.Duration(n) * audio.FrameDuration)
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-stop:
				return
			case <-c.done:
				return
			}
		} else {
			select {
			case <-stop:
				return
			case <-c.done:
				return
			default:
			}
		}
		now := time.Now()
		c.mu.Lock()
		c.lat.add(now.Sub(due))
		c.mu.Unlock()
		at := time.Duration(n) * audio.FrameDuration
		if err := c.sendFrame(n, at); err != nil {
			return
		}
		c.playFrame(at)
		c.wire.Tick(now)
	}
}

// sendFrame sends the caller's frame n: the utterance playing (if any)
// with every noise mixed over it.
func (c *Call) sendFrame(n int, at time.Duration) error {
	c.mu.Lock()
	// The frame's samples are the pacer's own, reused every tick (the
	// recorder copies them): 200 calls' ticks make garbage fast enough to
	// keep the collector, and its assists on the pacers, busy.
	frame := c.sendPCM
	clear(frame)
	c.tick = n
	talking, noise := len(c.talking) > 0, len(c.noises) > 0
	if talking {
		if c.talkPos == 0 {
			c.callerOnset = n
		}
		cur := c.talking[0]
		k := copy(frame, cur[c.talkPos:])
		c.talkPos += k
		if c.talkPos >= len(cur) {
			c.talking, c.talkPos = c.talking[1:], 0
		}
	}
	c.turns.caller(n, talking, talking && audio.LevelDBFS(frame) >= c.vadOnsetDBFS, noise)
	for id, p := range c.noises {
		k := min(len(p.pcm)-p.pos, audio.FrameSamples)
		audio.Mix(frame[:k], p.pcm[p.pos:p.pos+k], 0)
		p.pos += k
		if p.pos >= len(p.pcm) {
			delete(c.noises, id)
		}
	}
	if c.rec != nil {
		c.rec.Caller(at, frame)
	}
	ulaw := audio.EncodeMulaw(frame)
	c.mu.Unlock()
	return c.wire.SendFrame(n, at, ulaw)
}

// playFrame plays the agent's next 20 ms, echoes the marks it reaches and
// follows the agent's utterances: one starts where the detector hears an
// onset, and ends where it hears the offset or the audio runs out.
func (c *Call) playFrame(at time.Duration) {
	c.mu.Lock()
	var fs []callsim.Frame
	var reached []string
	if len(c.queue) == 0 {
		// The agent's audio ran out. A short gap is a bot streaming
		// slower than real time for a moment, not the end of its turn.
		c.dry++
		if c.speaking && c.dry >= DryFrames {
			fs = c.endUtteranceLocked(false)
		}
		c.mu.Unlock()
		c.Emit(fs...)
		return
	}
	c.dry = 0
	k := min(len(c.queue), audio.FrameSamples)
	ulaw := c.playUlaw // decoded below, never kept
	copy(ulaw, c.queue[:k])
	for i := k; i < len(ulaw); i++ {
		ulaw[i] = audio.MulawSilence
	}
	c.queue = c.queue[k:]
	c.played += int64(k)
	for len(c.marks) > 0 && c.marks[0].at <= c.played {
		reached = append(reached, c.marks[0].name)
		c.logEchoLocked(c.marks[0].name, c.marks[0].at, false)
		c.marks = c.marks[1:]
	}
	pcm := audio.DecodeMulaw(ulaw)
	if c.rec != nil {
		c.rec.Agent(at, pcm)
	}
	// The recognizer hears only the agent's own samples: the silence that
	// filled out a part-frame played before the rest of it arrived is the
	// clock's, not the agent's.
	sent := pcm[:k]
	ev := c.vad.Push(pcm)
	if c.speaking && c.vad.Speaking() && audio.LevelDBFS(pcm) >= c.vadOnsetDBFS {
		c.turns.agentFrame(c.tick)
	}
	switch {
	case !c.speaking && ev == audio.VADOnset:
		c.turns.agentOnset(c.tick - (c.vad.Frames() - 1 - c.vad.OnsetFrame()))
		c.speaking = true
		c.wordless = nil
		c.utt++
		c.uttOnset = c.tick
		c.heard = c.heard[:0]
		for _, p := range c.preroll {
			c.heard = append(c.heard, p...)
		}
		c.heard = append(c.heard, sent...)
		fs = append(fs, speechFrame(native.PhaseStart, c.uttID(), ""))
	case c.speaking && ev == audio.VADOffset:
		c.keepLocked(sent)
		fs = c.endUtteranceLocked(false)
	case c.speaking:
		c.keepLocked(sent)
	}
	// The frames before an onset belong to the utterance it starts.
	c.preroll = append(c.preroll, sent)
	if len(c.preroll) > prerollFrames {
		c.preroll = c.preroll[1:]
	}
	c.mu.Unlock()
	c.wire.Echo(reached)
	c.Emit(fs...)
}

// prerollFrames is how many frames before the detector's onset an
// utterance's kept audio begins.
const prerollFrames = 8

func (c *Call) keepLocked(pcm audio.PCM) {
	if len(c.heard) < audio.Samples(orDur(c.cfg.MaxUtterance, DefaultMaxUtterance)) {
		c.heard = append(c.heard, pcm...)
	}
}

// endUtteranceLocked closes the utterance in progress; its text follows
// once the recognizer has heard it.
func (c *Call) endUtteranceLocked(cleared bool) []callsim.Frame {
	if !cleared {
		c.stopAt = c.played
	}
	c.turns.agentStop(c.tick, cleared)
	c.speaking = false
	c.preroll = c.preroll[:0]
	// The detector may still be inside its hangover (the audio ran out or
	// was cleared): the next audio is a new utterance.
	c.vad.Reset()
	id := c.uttID()
	fs := []callsim.Frame{speechFrame(native.PhaseEnd, id, "")}
	if text, ok := c.ownWordsLocked(cleared); ok {
		fs = append(fs, speechFrame(native.PhaseText, id, text))
	} else if c.cfg.Hearing != nil && len(c.heard) > 0 && !c.ownWords {
		// The decoder hears the agent's samples as they came, its own
		// silence included: silence added or cut here changed the words
		// (docs/PERFORMANCE.md, "Recognition variance between copies").
		pcm := append(audio.PCM(nil), c.heard...)
		// Heard in Flush, after the script. The agent's own words may
		// still follow the end (a WebRTC agent sends them after its last
		// packet, and the detector may end the utterance first): they win.
		drop := new(atomic.Bool)
		c.toHear = append(c.toHear, heardJob{id: id, pcm: pcm, drop: drop, onset: c.uttOnset})
		c.wordless = &ending{id: id, queued: c.queued, drop: drop}
	} else {
		c.wordless = &ending{id: id, queued: c.queued}
	}
	c.heard = c.heard[:0]
	return fs
}

// ownWordsLocked gives the words of the utterance ending now from the
// agent's own transcript, if it sent one: all of them when its audio
// played to the end, the share played when it was cleared (words spread
// evenly over the audio, as the text protocol's agents speak them).
func (c *Call) ownWordsLocked(cleared bool) (string, bool) {
	if len(c.transcripts) == 0 {
		return "", false
	}
	c.ownWords = true
	t := c.transcripts[0]
	n := len(t.words)
	if c.stopAt < t.at {
		if !cleared {
			// The detector heard a pause inside the utterance: its words
			// go with the part that reaches the transcript.
			return "", false
		}
		if span := t.at - c.segStart; span > 0 {
			n = int(int64(len(t.words)) * max(c.stopAt-c.segStart, 0) / span)
		}
	}
	c.transcripts = c.transcripts[1:]
	c.segStart = max(t.at, c.played)
	return strings.Join(t.words[:n], " "), true
}

type heardJob struct {
	id    string
	pcm   audio.PCM
	drop  *atomic.Bool
	onset int  // the tick the utterance began
	late  bool // began after the caller's last utterance did: always cross-checked
	text  string
	heard bool
}

// hearAll recognizes the call's kept utterances (the script is over):
// each decoded once, at once (a shared pool, the Hearer's, bounds the
// decoders), then the ones a verdict reads cross-checked (Checker). A
// failed or timed-out recognition is recorded as uncertain.
func (c *Call) hearAll(ctx context.Context, jobs []heardJob) []heardJob {
	ctx, cancel := context.WithTimeout(ctx, orDur(c.cfg.HearTimeout, DefaultHearTimeout))
	defer cancel()
	go func() {
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	var wg sync.WaitGroup
	for i := range jobs {
		j := &jobs[i]
		if j.drop.Load() {
			continue // the agent's own words came meanwhile
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, uncertain, err := c.hearOne(ctx, j)
			if err != nil {
				text, uncertain = "", true
			}
			if uncertain {
				text = UncertainMarker + " " + text
			} else {
				text = RecognizedMarker + " " + text
			}
			j.text, j.heard = text, true
		}()
	}
	wg.Wait()
	return jobs
}

func (c *Call) hearOne(ctx context.Context, j *heardJob) (string, bool, error) {
	ch, ok := c.cfg.Hearing.(Checker)
	if !ok {
		return c.cfg.Hearing.Hear(ctx, j.pcm)
	}
	d, err := ch.Draft(ctx, j.pcm)
	if err != nil {
		return "", true, err
	}
	if !d.Uncertain && (j.late || d.Claims) {
		return ch.Check(ctx, j.pcm, d)
	}
	return d.Text, d.Uncertain, nil
}

// Flush closes the agent's utterance in progress, recognizes every kept
// utterance, and returns once Recv has handed each derived event on and
// is waiting again.
func (c *Call) Flush(ctx context.Context) error {
	c.mu.Lock()
	var fs []callsim.Frame
	if c.speaking && len(c.queue) == 0 {
		fs = c.endUtteranceLocked(false)
	}
	jobs := c.takeJobsLocked()
	hung := c.hangingUp
	// The script is over and the agent has nothing left to play: what
	// remains is the harness's own recognition, which can take longer
	// than the call did. Streaming silence all that while would cost a
	// write a frame in both processes for every waiting call, taking the
	// CPU from the decoders and from the calls still in real time, and
	// its frames, late behind the decoders, would void a call whose
	// script went out on time. So the media stream pauses (the
	// connection stays open), where the wire allows it.
	pause := c.cfg.PauseToHear && len(jobs) > 0 && len(c.queue) == 0
	c.mu.Unlock()
	c.Emit(fs...)
	if pause {
		c.StopClock()
		c.endRealTime()
	}
	if len(jobs) > 0 {
		c.emitHeard(ctx, jobs)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("transcription: %w", context.Cause(ctx))
		}
	}
	// A hang-up that took utterances before this Flush hands on their
	// words and the hangup event first: the call must not end without them.
	if hung != nil {
		select {
		case <-hung:
		case <-ctx.Done():
			return fmt.Errorf("transcription at the hang-up: %w", context.Cause(ctx))
		}
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	// Taken is not enough: the caller of Recv records an event after
	// Recv returns it, and an inbox handed straight to a blocked Recv is
	// empty before that. Once Recv has been called again after the last
	// event, the caller is done with it.
	for len(c.out) > 0 || !c.waiting.Load() || c.recvs.Load() <= c.emitted.Load() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("%d agent events not taken: %w", len(c.out), context.Cause(ctx))
		}
	}
	return nil
}

// takeJobsLocked hands over the utterances kept for recognition, each
// marked late when it began after the caller's last words.
func (c *Call) takeJobsLocked() []heardJob {
	jobs := c.toHear
	c.toHear = nil
	for i := range jobs {
		jobs[i].late = jobs[i].onset > c.callerOnset
	}
	return jobs
}

// emitHeard recognizes jobs and hands on their text events in utterance
// order: a text event names its utterance, and the scorer places it at
// the utterance's start.
func (c *Call) emitHeard(ctx context.Context, jobs []heardJob) {
	if len(jobs) == 0 {
		return
	}
	for _, j := range c.hearAll(ctx, jobs) {
		if j.heard && !j.drop.Load() {
			c.Emit(speechFrame(native.PhaseText, j.id, j.text))
		}
	}
}

// maxEchoes bounds the marks Echoes keeps (the first ones of the call).
const maxEchoes = 10000

// Echo is a mark the caller echoed back to the agent.
type Echo struct {
	Name string
	// Offset is where the mark sat in the agent's audio: bytes of μ-law
	// (8 per ms) the agent had queued before it, counted from the call's
	// first media frame.
	Offset int64
	// Played is where playout was when the mark was echoed, on the same
	// scale: Offset or more when playout reached it; less for a mark
	// flushed by a clear (Cleared), where it is what was heard before the
	// clear dropped the rest (a clear moves playout to the end of what
	// was queued).
	Played  int64
	Cleared bool      // echoed at a clear, before playout reached it
	Tick    int       // the frame clock's tick (20 ms each) it was echoed at
	Time    time.Time // when it was echoed (wall clock)
}

// Echoes lists the marks echoed so far, in order (the first 10,000):
// a read-only record of what the agent was told had been played.
func (c *Call) Echoes() []Echo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Echo(nil), c.echoes...)
}

func (c *Call) logEchoLocked(name string, offset int64, cleared bool) {
	if len(c.echoes) < maxEchoes {
		c.echoes = append(c.echoes, Echo{Name: name, Offset: offset, Played: c.played, Cleared: cleared, Tick: c.tick, Time: time.Now()})
	}
}

// WaitStretch says how much longer an audio call's waits may run than the
// script's (callsim.Stretcher).
func (c *Call) WaitStretch() float64 { return WaitStretch }

// Lateness reports how late the caller's frames went out.
func (c *Call) Lateness() callsim.Lateness {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lat.summary()
}

// Recording is the stereo WAV written at Close ("" when none was asked
// for or it could not be written).
func (c *Call) Recording() string {
	if c.recorded.Load() {
		return c.cfg.RecordTo
	}
	return ""
}

// TurnTaking reports the call's turn-taking as the audio showed it.
func (c *Call) TurnTaking() callsim.TurnTaking {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.turns.summary()
}

// Shutdown stops the clock, closes the connection with closeWire (which
// must make the reader return), waits for the reader, and writes the recording if one was asked for. Safe to
// call more than once; later calls return the first one's error.
func (c *Call) Shutdown(closeWire func() error) error {
	c.closeOnce.Do(func() {
		c.StopClock()
		c.endRealTime()
		close(c.done)
		c.closeErr = closeWire()
		c.readOnce.Do(func() { close(c.readDone) })
		<-c.readDone
		if c.rec != nil {
			if err := c.writeRecording(c.cfg.RecordTo); err != nil && c.closeErr == nil {
				c.closeErr = err
			} else if err == nil {
				c.recorded.Store(true)
			}
		}
	})
	return c.closeErr
}

func (c *Call) writeRecording(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	c.mu.Lock()
	err = c.rec.WriteWAV(f)
	c.mu.Unlock()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Synthesized speech's edges: a synthesizer pads an utterance with a
// quarter to half a second of silence on each side, a pause the script
// never wrote. Two utterances the script puts in one turn (a correction
// straight after the request) would reach the agent with up to 0.7 s of
// silence between them, longer than an agent's end-of-turn wait, and
// become two turns. So the caller plays a synthesized utterance from
// speechEdge before its first frame above edgeFloorDBFS to speechEdge
// after its last, in whole frames: a frame of the cached audio stays a
// frame on the wire.
const (
	speechEdge    = 60 * time.Millisecond
	edgeFloorDBFS = audio.WordsFloorDBFS // below any frame a listener would call speech
	edgeFrames    = int(speechEdge / audio.FrameDuration)
)

// quietTail is how long pcm ends in whole frames at or below
// edgeFloorDBFS (all of it when it is silent throughout).
func quietTail(pcm audio.PCM) time.Duration {
	n := len(pcm) / audio.FrameSamples
	k := 0
	for k < n && audio.LevelDBFS(pcm[(n-1-k)*audio.FrameSamples:(n-k)*audio.FrameSamples]) <= edgeFloorDBFS {
		k++
	}
	if k == n {
		return 0 // silence throughout: its length is the utterance's
	}
	return time.Duration(k) * audio.FrameDuration
}

// trimEdges drops the whole silent frames at pcm's ends beyond
// speechEdge. Silence throughout is kept as it is.
func trimEdges(pcm audio.PCM) audio.PCM {
	n := len(pcm) / audio.FrameSamples
	loud := func(i int) bool {
		return audio.LevelDBFS(pcm[i*audio.FrameSamples:(i+1)*audio.FrameSamples]) > edgeFloorDBFS
	}
	first := 0
	for first < n && !loud(first) {
		first++
	}
	if first == n {
		return pcm
	}
	last := n - 1
	for !loud(last) {
		last--
	}
	from, to := max(first-edgeFrames, 0), min(last+1+edgeFrames, n)
	return pcm[from*audio.FrameSamples : to*audio.FrameSamples]
}
