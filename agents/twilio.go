package agents

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// Audio mode: the reference agents as a Twilio Media Streams bot.
//
// The agent is the WebSocket server, the harness dials it as Twilio does.
// What arrives is adapted to the native messages the engine already
// understands, so the agent's logic is the same in both modes:
//
//	connected            ignored
//	start                native start: callId, tools (base URL, token,
//	                     catalogue) from customParameters; time scale 1
//	media                the ear (ear.go, a scripted fake recognizer):
//	                     speech onset/final, sound onset/offset ("noise")
//	dtmf                 native dtmf, digits gathered until "#" or a pause
//	mark                 the caller's echo: that much of our audio played
//	stop                 native stop
//
// What the engine says goes out as audio:
//
//	agent_speech         the utterance's whole text is synthesized in the
//	                     agent's voice when it starts, sent at once as
//	                     media chunks (the caller paces playout), then a
//	                     mark named after the utterance id; the engine's
//	                     per-word timer runs at (audio length / words)
//	clear                Twilio clear (barge-in: the caller drops what is
//	                     queued)
//	hangup, transfer     the WebSocket is closed once the last mark has
//	                     been echoed (bounded)
//	ack, state,          no Twilio form: dropped
//	tool_intent
//
// Tool calls go over HTTP exactly as in text mode.

// Twilio custom parameter names, as callproof's caller (callsim/twilio)
// sets them in start.customParameters.
const (
	ParamCallID       = "callproofCallId"
	ParamToolsBaseURL = "toolsBaseUrl"
	ParamToolsToken   = "toolsToken"
	ParamToolsCatalog = "toolsCatalog"
	ParamCallDate     = "callDate" // the call's calendar, as start.callDate
	ParamTimeZone     = "timeZone" // and start.timeZone
	ParamToolsMCPURL  = "toolsMcpUrl"
)

// DefaultAgentVoice is the reference agents' own voice in audio mode:
// the caller's voice, audio.DefaultVoice (flite kal16). A different voice
// was wanted, so a recording tells the two apart, but the harness must
// transcribe the agent, and kal16 is the voice it hears best through
// μ-law: over the agents' own phrases, with the harness's recognizer
// (callsim/hearing, a per-call grammar), kal16 gave 11 of 11 order numbers
// right, rms 9 (two heard as other numbers: a wrong value is worse than a
// missing one), slt and awb far fewer; the audio package chose kal16 for
// the caller by the same measure. The caller and the agent are on
// separate channels anyway. Change it with AudioConfig.Voice (or
// `callproof agent --voice`).
const DefaultAgentVoice = audio.DefaultVoice

// Audio mode defaults.
const (
	DefaultChunk      = 100 * time.Millisecond // media chunk sent to the caller
	DefaultDTMFGap    = 400 * time.Millisecond // a pause that ends a key sequence
	DefaultHangupWait = 2 * time.Second        // past the audio's end, for its last mark
	// DefaultGap is the least silence between two utterances the agent
	// speaks back to back: longer than a listener's end-of-speech hangover
	// (audio.DefaultHangoverFrames, 500 ms), so the harness hears two
	// utterances where text mode sends two agent_speech start/end pairs.
	DefaultGap = audio.DefaultHangoverFrames*audio.FrameDuration + 200*time.Millisecond
)

// The audio wires an agent answers (AudioConfig.Wire).
const (
	// WireTwilio is Twilio Media Streams over a WebSocket the harness
	// dials (twilio.go); the empty Wire means it too.
	WireTwilio = "twilio"
	// WireWebRTC is a WebRTC call the harness offers (webrtc.go).
	WireWebRTC = "webrtc"
)

// AudioConfig puts an agent in audio mode (Twilio Media Streams, or WebRTC
// with Wire). The zero durations take the defaults.
type AudioConfig struct {
	// Wire is WireTwilio (also when empty) or WireWebRTC.
	Wire string
	// NoTranscript stops the agent sending its own words after each
	// utterance (callproof's transcript extension to the dialect), so the
	// harness must recognize its audio.
	NoTranscript bool
	// NoSelfReports stops a WebRTC agent sending its state and tool
	// intents (and ack) on the data channel, as a Twilio bot cannot: the
	// harness then judges it by its tool calls and its words alone.
	NoSelfReports bool
	// SpeechCache is the directory of the harness's speech cache
	// (audio.Cache) on this machine: the ear identifies the caller's
	// utterances in it. Required.
	SpeechCache string
	// Voice is the agent's synthesizer, "engine/voice" (audio.NewSynth):
	// DefaultAgentVoice when empty.
	Voice string
	// Synth, when set, is used instead of Voice.
	Synth audio.Synth
	// VoiceCache is where the agent's own speech is cached: SpeechCache's
	// "agent" subdirectory when empty (the ear does not index
	// subdirectories).
	VoiceCache string
	// VAD sets the ear's energy detector; zero: DefaultEarVAD().
	VAD audio.VADConfig
	// MatchFloorDBFS: quieter frames are neither indexed nor matched;
	// zero: DefaultMatchFloorDBFS.
	MatchFloorDBFS float64
	// RescanEvery bounds how often the ear lists the cache for new
	// files; zero: DefaultRescanEvery.
	RescanEvery time.Duration
	Chunk       time.Duration // media chunk length (Twilio)
	DTMFGap     time.Duration // pause that ends a key sequence without "#" (Twilio)
	// HangupWait bounds a hang-up's wait past the audio's end: for the
	// last mark (Twilio), for the caller to close (WebRTC).
	HangupWait time.Duration
	// Gap is the least silence between two utterances spoken back to
	// back (0: DefaultGap; negative: none).
	Gap time.Duration
	// Logf, when set, gets a line per call (what the ear heard) and any
	// synthesis error.
	Logf func(format string, args ...any)
	// KeepEarStats bounds the finished calls whose ear counts the server
	// keeps (Server.EarStats, GET /stats/ear); zero: DefaultKeepEarStats.
	KeepEarStats int
}

func (a AudioConfig) withDefaults() AudioConfig {
	if a.Wire == "" {
		a.Wire = WireTwilio
	}
	if a.Voice == "" {
		a.Voice = DefaultAgentVoice
	}
	if a.VoiceCache == "" && a.SpeechCache != "" {
		a.VoiceCache = filepath.Join(a.SpeechCache, "agent")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&a.Chunk, DefaultChunk)
	def(&a.DTMFGap, DefaultDTMFGap)
	def(&a.HangupWait, DefaultHangupWait)
	if a.Gap == 0 {
		a.Gap = DefaultGap
	}
	def(&a.RescanEvery, DefaultRescanEvery)
	if a.MatchFloorDBFS == 0 {
		a.MatchFloorDBFS = DefaultMatchFloorDBFS
	}
	if a.VAD == (audio.VADConfig{}) {
		a.VAD = DefaultEarVAD()
	}
	return a
}

// DefaultEarVAD is the ear's energy detector: audio.DefaultVADConfig
// except that two loud frames (40 ms) in a row make an onset. The ear's
// detector only finds sounds (speech is found by matching), and an agent
// that barges in on any sound (AnySoundBargesIn) must hear a door slam,
// whose loud part is about 60 ms at -30 dBFS.
func DefaultEarVAD() audio.VADConfig {
	c := audio.DefaultVADConfig()
	c.OnsetFrames = 2
	return c
}

func (a AudioConfig) logf(format string, args ...any) {
	if a.Logf != nil {
		a.Logf(format, args...)
	}
}

// DefaultSpeechCache is where the speech cache is looked for when none is
// given: callproof/speech under the user's cache directory.
func DefaultSpeechCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "callproof", "speech")
}

// audioSide is what a Server in audio mode shares between its calls.
type audioSide struct {
	cfg   AudioConfig
	index *speechIndex
	voice *audio.Cache

	ears *earLog // what the ear heard in each finished call (the latest KeepEarStats)
}

func newAudioSide(cfg AudioConfig) (*audioSide, error) {
	cfg = cfg.withDefaults()
	if cfg.Wire != WireTwilio && cfg.Wire != WireWebRTC {
		return nil, fmt.Errorf("agents: audio wire %q: want %q or %q", cfg.Wire, WireTwilio, WireWebRTC)
	}
	if cfg.SpeechCache == "" {
		return nil, fmt.Errorf("agents: audio mode needs the speech cache directory")
	}
	synth := cfg.Synth
	if synth == nil {
		var err error
		if synth, err = audio.NewSynth(cfg.Voice); err != nil {
			return nil, err
		}
	}
	return &audioSide{
		cfg:   cfg,
		index: newSpeechIndex(cfg.SpeechCache, cfg.MatchFloorDBFS, cfg.RescanEvery),
		voice: &audio.Cache{Dir: cfg.VoiceCache, Synth: synth},
		ears:  newEarLog(cfg.KeepEarStats),
	}, nil
}

func (a *audioSide) record(s EarStats) { a.ears.add(s) }

// Twilio frames the agent sends.
type (
	twMedia struct {
		Event     string     `json:"event"`
		StreamSid string     `json:"streamSid"`
		Media     twMediaOut `json:"media"`
	}
	twMediaOut struct {
		Payload string `json:"payload"`
	}
	twMark struct {
		Event     string   `json:"event"`
		StreamSid string   `json:"streamSid"`
		Mark      twMarkIn `json:"mark"`
	}
	twTranscript struct {
		Event      string           `json:"event"`
		StreamSid  string           `json:"streamSid"`
		Transcript twTranscriptBody `json:"transcript"`
	}
	twTranscriptBody struct {
		Text string `json:"text"`
	}
	twClear struct {
		Event     string `json:"event"`
		StreamSid string `json:"streamSid"`
	}
	// hangupFrame asks the writer to close the call once our audio has
	// been played.
	hangupFrame struct{}
)

// twIn is every Twilio frame the agent reads.
type twIn struct {
	Event     string `json:"event"`
	StreamSid string `json:"streamSid"`
	Start     *struct {
		StreamSid        string            `json:"streamSid"`
		CallSid          string            `json:"callSid"`
		CustomParameters map[string]string `json:"customParameters"`
	} `json:"start"`
	Media *struct {
		Track   string `json:"track"`
		Payload string `json:"payload"`
	} `json:"media"`
	DTMF *struct {
		Digit string `json:"digit"`
	} `json:"dtmf"`
	Mark *twMarkIn `json:"mark"`
}

type twMarkIn struct {
	Name string `json:"name"`
}

// twilioCall is one call in audio mode: the wire adapter around a session.
type twilioCall struct {
	side *audioSide
	cfg  AudioConfig
	ear  *ear
	pend []byte // media bytes short of a whole frame

	mu        sync.Mutex
	stream    string
	callID    string
	started   bool
	sent      int           // marks sent
	echoed    int           // marks echoed
	playEnd   time.Time     // when the audio sent so far ends, if played at once
	trail     time.Duration // quiet at the end of the last utterance sent
	echo      chan struct{}
	digits    string
	dtmfGen   int
	dtmfStop  func() bool
	dtmfClock Clock
}

func newTwilioCall(side *audioSide, clock Clock) *twilioCall {
	return &twilioCall{side: side, cfg: side.cfg, ear: newEar(side.index, side.cfg.VAD),
		echo: make(chan struct{}, 1), dtmfClock: clock}
}

func (tc *twilioCall) streamSid() string {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.stream
}

// read is the call's reader: Twilio frames in, native messages to the
// engine. Like text mode, it ignores what it cannot parse.
func (tc *twilioCall) read(s *session) {
	for {
		typ, data, err := s.ws.ReadMessage()
		if err != nil {
			s.post(closedEvent{})
			return
		}
		if typ != websocket.TextMessage {
			continue
		}
		var m twIn
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		switch m.Event {
		case "start":
			if m.Start != nil {
				if st, ok := tc.start(m.StreamSid, m.Start.StreamSid, m.Start.CallSid, m.Start.CustomParameters); ok {
					s.post(frameEvent{msg: native.Message{Event: native.EventStart, Start: st}})
				}
			}
		case "media":
			if m.Media != nil && (m.Media.Track == "" || m.Media.Track == "inbound") {
				tc.media(s, m.Media.Payload)
			}
		case "dtmf":
			if m.DTMF != nil {
				tc.digit(s, m.DTMF.Digit)
			}
		case "mark":
			if m.Mark != nil {
				tc.marked()
			}
		case "stop":
			tc.flushDigits(s, -1)
			s.post(frameEvent{msg: native.Message{Event: native.EventStop, Stop: &native.Stop{Reason: "stop"}}})
		}
	}
}

// start turns Twilio's start into the engine's: the call's tools come in
// customParameters; audio runs in real time (scale 1, no ack on the wire).
func (tc *twilioCall) start(outer, inner, callSid string, params map[string]string) (*native.Start, bool) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.started {
		return nil, false
	}
	tc.started = true
	tc.stream = inner
	if tc.stream == "" {
		tc.stream = outer
	}
	st := startFromParams(params)
	if st.CallID == "" {
		st.CallID = callSid
	}
	tc.callID = st.CallID
	return st, true
}

// startFromParams is the engine's start from the call's data as flat
// string keys (Twilio's customParameters, WebRTC's RTVI start): time
// scale 1, audio runs in real time.
func startFromParams(params map[string]string) *native.Start {
	st := &native.Start{CallID: params[ParamCallID], TimeScale: 1, Tools: native.Tools{
		BaseURL: params[ParamToolsBaseURL], Token: params[ParamToolsToken], MCPURL: params[ParamToolsMCPURL]},
		CallDate: params[ParamCallDate], TimeZone: params[ParamTimeZone]}
	if c := params[ParamToolsCatalog]; c != "" {
		var cat []trace.ToolSpec
		if json.Unmarshal([]byte(c), &cat) == nil {
			st.Tools.Catalog = cat
		}
	}
	for k, v := range params {
		switch k {
		case ParamCallID, ParamToolsBaseURL, ParamToolsToken, ParamToolsCatalog, ParamToolsMCPURL, ParamCallDate, ParamTimeZone:
			continue
		}
		if st.CustomParameters == nil {
			st.CustomParameters = map[string]string{}
		}
		st.CustomParameters[k] = v
	}
	return st
}

// media hears one media payload, frame by frame (a payload of any length
// is cut into 20 ms frames in order, so frames stay aligned).
func (tc *twilioCall) media(s *session, payload string) {
	b, err := base64.StdEncoding.DecodeString(payload)
	if err != nil || len(b) == 0 {
		return
	}
	if !tc.hasStarted() {
		return
	}
	tc.pend = append(tc.pend, b...)
	for len(tc.pend) >= audio.FrameSamples {
		for _, m := range tc.ear.push(tc.pend[:audio.FrameSamples]) {
			s.post(frameEvent{msg: m})
		}
		tc.pend = tc.pend[audio.FrameSamples:]
	}
	if len(tc.pend) == 0 {
		tc.pend = nil // let the array go
	}
}

func (tc *twilioCall) hasStarted() bool {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.started
}

// digit gathers keypad digits: Twilio sends one per frame, the engine
// wants the sequence. "#" ends it at once, else a pause of DTMFGap.
func (tc *twilioCall) digit(s *session, d string) {
	tc.mu.Lock()
	tc.digits += d
	tc.dtmfGen++
	gen := tc.dtmfGen
	if tc.dtmfStop != nil {
		tc.dtmfStop()
	}
	end := strings.HasSuffix(d, "#")
	if !end {
		tc.dtmfStop = tc.dtmfClock.AfterFunc(tc.cfg.DTMFGap, func() { tc.flushDigits(s, gen) })
	}
	tc.mu.Unlock()
	if end {
		tc.flushDigits(s, gen)
	}
}

// flushDigits hands the digits gathered to the engine; gen -1 flushes
// whatever is there, another gen only if no digit came since.
func (tc *twilioCall) flushDigits(s *session, gen int) {
	tc.mu.Lock()
	if (gen >= 0 && gen != tc.dtmfGen) || tc.digits == "" {
		tc.mu.Unlock()
		return
	}
	d := tc.digits
	tc.digits = ""
	if tc.dtmfStop != nil {
		tc.dtmfStop()
		tc.dtmfStop = nil
	}
	tc.mu.Unlock()
	s.post(frameEvent{msg: native.Message{Event: native.EventDTMF, DTMF: &native.DTMF{Digits: d}}})
}

func (tc *twilioCall) marked() {
	tc.mu.Lock()
	tc.echoed++
	tc.mu.Unlock()
	select {
	case tc.echo <- struct{}{}:
	default:
	}
}

// frames turns one engine message into Twilio frames; what Twilio has no
// form for is dropped.
func (tc *twilioCall) frames(m native.Message) []any {
	switch m.Event {
	case native.EventClear:
		tc.mu.Lock()
		tc.playEnd, tc.trail = time.Now(), 0 // the caller drops what is queued
		tc.mu.Unlock()
		return []any{twClear{Event: "clear", StreamSid: tc.streamSid()}}
	case native.EventHangup, native.EventTransfer:
		return []any{hangupFrame{}}
	}
	return nil
}

// speak synthesizes one utterance in the agent's voice and queues it as
// media chunks and a mark named id. It returns the audio's length (0 when
// synthesis failed: the engine then keeps its text-mode word time).
func (tc *twilioCall) speak(s *session, id, text string) time.Duration {
	pcm, err := tc.side.voice.Speech(s.ctx, text)
	if err != nil {
		tc.cfg.logf("call %s: cannot speak %q: %v", tc.callID, text, err)
		return 0
	}
	pcm = trimQuiet(pcm)
	lead, trail := quietEdges(pcm)
	tc.mu.Lock()
	if tc.sent > 0 {
		pcm = gapPad(pcm, tc.cfg.Gap, tc.playEnd, tc.trail, lead, time.Now())
	}
	tc.trail = trail
	tc.mu.Unlock()
	sid := tc.streamSid()
	ulaw := audio.EncodeMulaw(pcm)
	chunk := max(audio.Samples(tc.cfg.Chunk), audio.FrameSamples)
	for off := 0; off < len(ulaw); off += chunk {
		end := min(off+chunk, len(ulaw))
		s.queue(twMedia{Event: "media", StreamSid: sid, Media: twMediaOut{Payload: base64.StdEncoding.EncodeToString(ulaw[off:end])}})
	}
	if !tc.cfg.NoTranscript {
		// callproof's transcript extension (docs/PROTOCOL.md): our own
		// words, for the audio queued since the last transcript.
		s.queue(twTranscript{Event: "transcript", StreamSid: sid, Transcript: twTranscriptBody{Text: text}})
	}
	s.queue(twMark{Event: "mark", StreamSid: sid, Mark: twMarkIn{Name: id}})
	d := pcm.Duration()
	tc.mu.Lock()
	tc.sent++
	now := time.Now()
	if tc.playEnd.Before(now) {
		tc.playEnd = now
	}
	tc.playEnd = tc.playEnd.Add(d)
	tc.mu.Unlock()
	return d
}

// gapPad puts silence before pcm (whose audible part starts lead into it)
// when it follows, at now, an utterance whose audio ends at prevEnd with
// prevTrail of quiet: right after another utterance, it leaves at least
// gap between them (counting the quiet at the end of the one and the
// start of this one), so a listener hears two utterances, not one. The
// silence is whole 20 ms frames: how much of it there is depends on the
// wall clock, but where the utterance falls within the listener's frames
// does not (trimQuiet makes every utterance whole frames too), so the
// same reply reaches a recognizer as the same samples.
func gapPad(pcm audio.PCM, gap time.Duration, prevEnd time.Time, prevTrail, lead time.Duration, now time.Time) audio.PCM {
	if gap <= 0 || now.Sub(prevEnd) >= gap {
		return pcm
	}
	if pad := gap - prevTrail - lead - max(now.Sub(prevEnd), 0); pad > 0 {
		return append(make(audio.PCM, wholeFrames(audio.Samples(pad))), pcm...)
	}
	return pcm
}

// wholeFrames is n samples rounded up to whole 20 ms frames.
func wholeFrames(n int) int {
	return (n + audio.FrameSamples - 1) / audio.FrameSamples * audio.FrameSamples
}

// trimQuiet cuts the synthesizer's silence before the first and after the
// last audible frame (flite leaves 100-400 ms at each end), keeping one
// frame on either side: the agent starts talking when it starts sending,
// and a short greeting ends sooner. The result is whole 20 ms frames
// (silence fills out the last), in a new slice unless p is returned as it
// is.
func trimQuiet(p audio.PCM) audio.PCM {
	lead, trail := quietEdges(p)
	from := max(audio.Samples(lead)-audio.FrameSamples, 0)
	to := min(len(p)-audio.Samples(trail)+audio.FrameSamples, len(p))
	if from >= to {
		return p
	}
	out := make(audio.PCM, wholeFrames(to-from))
	copy(out, p[from:to])
	return out
}

// quietEdges measures the quiet (frames below the detector's offset
// level) at the start and the end of p.
func quietEdges(p audio.PCM) (lead, trail time.Duration) {
	fs := audio.Frames(p)
	first, last := -1, -1
	for i, f := range fs {
		if audio.LevelDBFS(f) >= audio.DefaultOffsetDBFS {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return p.Duration(), 0
	}
	return time.Duration(first) * audio.FrameDuration, time.Duration(len(fs)-1-last) * audio.FrameDuration
}

// waitPlayed waits until every mark sent has been echoed, or the audio
// sent should have finished playing HangupWait ago, or the call ends.
func (tc *twilioCall) waitPlayed(s *session) {
	tc.mu.Lock()
	deadline := tc.playEnd.Add(tc.cfg.HangupWait)
	tc.mu.Unlock()
	if now := time.Now(); deadline.Before(now) {
		deadline = now.Add(tc.cfg.HangupWait)
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		tc.mu.Lock()
		done := tc.echoed >= tc.sent
		tc.mu.Unlock()
		if done {
			return
		}
		select {
		case <-tc.echo:
		case <-timer.C:
			return
		case <-s.ctx.Done():
			return
		}
	}
}

// write is the call's writer. After the engine has stopped (the caller
// sent stop) nothing more is written but the close.
func (tc *twilioCall) write(s *session) {
	dead := false
	for f := range s.outbox {
		if dead || s.ended.Load() {
			continue
		}
		if _, ok := f.(hangupFrame); ok {
			tc.waitPlayed(s)
			_ = s.ws.WriteControl(websocket.CloseMessage,
				websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(writeWait))
			_ = s.ws.Close() // the reader sees it and ends the call
			dead = true
			continue
		}
		_ = s.ws.SetWriteDeadline(time.Now().Add(writeWait))
		if err := s.ws.WriteJSON(f); err != nil {
			s.cancel()
			dead = true
		}
	}
	if !dead {
		_ = s.ws.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(writeWait))
	}
}

// close drops the WebSocket, so the reader returns.
func (tc *twilioCall) close(s *session) { _ = s.ws.Close() }

// finish stops the key timer and files what the ear heard.
func (tc *twilioCall) finish() {
	tc.mu.Lock()
	if tc.dtmfStop != nil {
		tc.dtmfStop()
		tc.dtmfStop = nil
	}
	callID, started := tc.callID, tc.started
	tc.mu.Unlock()
	if !started {
		// A connection that never said `start` (callproof's preflight
		// probe, a health check) was no call: nothing was heard.
		return
	}
	tc.side.file(tc.ear, callID)
}

// file records and logs what a call's ear heard; the ear is no longer fed.
func (a *audioSide) file(e *ear, callID string) {
	st := e.snapshot()
	st.CallID = callID
	a.record(st)
	for _, h := range st.Heard {
		a.cfg.logf("call %s: heard %s %q (onset +%v, final +%v after its first and last loud frames; %d/%d frames exact, %d noisy)",
			callID, h.ID, h.Text, h.OnsetLatency, h.FinalLatency, h.Exact, h.LoudFrames, h.Noisy)
	}
	a.cfg.logf("call %s: heard %d utterances (%d onsets), %d sounds, %d media frames, %d unmatched loud frames; index %d utterances",
		callID, st.Finals(), st.Onsets, st.Sounds, st.Frames, st.Unmatched, st.Indexed)
}
