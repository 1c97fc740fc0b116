package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/callsim/audiocall"
	"github.com/callproof/callproof/callsim/hearing"
	"github.com/callproof/callproof/callsim/twilio"
	"github.com/callproof/callproof/callsim/webrtc"
)

// AudioOptions set up an audio dialect's caller.
type AudioOptions struct {
	// SpeechCache is where synthesized caller speech is kept (WAV files
	// keyed by voice and text); default DefaultSpeechCache().
	SpeechCache string
	// Voice is the caller's synth, "engine/voice"; default
	// audio.DefaultVoice.
	Voice string
	// RecordDir, when set, gets one stereo WAV per call.
	RecordDir string
	// Hearing builds a call's recognizer of the agent's speech; nil
	// leaves agent utterances timed but without words (the confirmation
	// axis is then unknown).
	Hearing func(callsim.CallSetup) twilio.Hearer
}

// DefaultSpeechCache is the user's cache directory's callproof/speech
// (or a folder under the system temp directory when there is none).
func DefaultSpeechCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "callproof", "speech")
}

// TwilioTransport returns the Twilio Media Streams caller for o.
func TwilioTransport(o AudioOptions) (*twilio.Transport, error) {
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	return &twilio.Transport{
		Speech:     cfg.Speech,
		RecordDir:  o.RecordDir,
		HearingFor: o.Hearing,
	}, nil
}

// WebRTCOptions choose a WebRTC caller's signaling.
type WebRTCOptions struct {
	Signaling string // webrtc.SignalingSmallWebRTC (default), SignalingWHIP or SignalingPipecatStart
	Trickle   bool   // candidates after the offer
}

// WebRTCTransport returns the WebRTC caller for o.
func WebRTCTransport(o AudioOptions, w WebRTCOptions) (*webrtc.Transport, error) {
	if err := webrtc.CheckSignaling(w.Signaling); err != nil {
		return nil, err
	}
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	return &webrtc.Transport{Config: cfg, Signaling: w.Signaling, Trickle: w.Trickle,
		RecordDir: o.RecordDir, HearingFor: o.Hearing}, nil
}

// Config is the audio call o sets up, for a transport built elsewhere
// (cmd/callproof's LiveKit caller, kept out of this package).
func (o AudioOptions) Config() (audiocall.Config, error) { return o.config() }

// config is the audio call o sets up: the caller's voice (cached) and
// the recordings' directory made.
func (o AudioOptions) config() (audiocall.Config, error) {
	if o.Voice == "" {
		o.Voice = audio.DefaultVoice
	}
	if o.SpeechCache == "" {
		o.SpeechCache = DefaultSpeechCache()
	}
	synth, err := audio.NewSynth(o.Voice)
	if err != nil {
		return audiocall.Config{}, err
	}
	if o.RecordDir != "" {
		if err := os.MkdirAll(o.RecordDir, 0o755); err != nil {
			return audiocall.Config{}, fmt.Errorf("recordings: %w", err)
		}
	}
	return audiocall.Config{Speech: &audio.Cache{Dir: o.SpeechCache, Synth: synth}}, nil
}

// Recognition's defaults (docs/PERFORMANCE.md, "Recognition off the
// real-time path").
const (
	// DefaultHearingNice is the niceness the decoder runs at: it yields
	// the CPU to the calls' frame clocks and to an agent on the machine.
	DefaultHearingNice = 10
	// HearingFlushTimeout bounds, per call, the wait at the end of its
	// script for its utterances' recognition (callsim.Options.FlushTimeout
	// of an audio run that recognizes): they queue behind the whole run's
	// in the shared pool.
	HearingFlushTimeout = audiocall.DefaultHearTimeout
)

// Hearing is a run's recognizer of agent speech for agents that send only
// audio: Debian's pocketsphinx, one recognizer and one bounded pool of
// decoders shared by every call, each call with a grammar built from its
// own catalogue and records. Each utterance is decoded once; the call
// cross-checks (audiocall.Checker) only those a verdict reads.
type Hearing struct {
	r   *hearing.Recognizer
	now func() time.Time

	mu    sync.Mutex
	calls []*grammarHearer
}

// NewHearing returns a run's recognizer whose pool runs poolSize decoders
// at once (0: hearing.DefaultPoolSize).
func NewHearing(poolSize int) *Hearing {
	r := &hearing.Recognizer{Nice: DefaultHearingNice, Pool: hearing.NewPool(poolSize)}
	// Load the pronunciation dictionary now, not in the middle of the
	// first live call: it is megabytes parsed in this process, and the
	// garbage it makes would stall every call's frame clock at once.
	warm, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	_, _ = r.Decode(warm, make([]int16, audio.FrameSamples), hearing.BuildGrammar(nil, nil))
	cancel()
	return &Hearing{r: r, now: time.Now}
}

// For is the recognizer of one call (AudioOptions.Hearing).
func (h *Hearing) For(c callsim.CallSetup) twilio.Hearer {
	g := &grammarHearer{r: h.r, g: hearing.BuildGrammar(c.Tools, c.Records), now: h.now, created: h.now()}
	h.mu.Lock()
	h.calls = append(h.calls, g)
	h.mu.Unlock()
	return g
}

// RecognitionStats is what a run's recognition did and how long it took
// (wall time). A call's script ends where its recognition begins (the
// call hears its utterances in Flush).
type RecognitionStats struct {
	PoolSize int `json:"pool_size"`
	// PoolWide is the decoders at once once no call is in real time.
	PoolWide int `json:"pool_wide"`
	Nice     int `json:"nice"`
	// Calls is the calls that had agent speech to recognize.
	Calls int `json:"calls"`
	// Drafts and Checks count first decodes and cross-checks (each of
	// two decoder runs).
	Drafts int `json:"drafts"`
	Checks int `json:"checks"`
	// Remembered counts decoder runs not made: an identical run's
	// (same samples, grammar and flags) words were taken instead.
	Remembered int64 `json:"remembered"`
	// RealTimeP50 and RealTimeMax are the calls' own real-time parts:
	// from the call's setup to its script's end.
	RealTimeP50 time.Duration `json:"real_time_p50"`
	RealTimeMax time.Duration `json:"real_time_max"`
	// PerCallP50 and PerCallMax are each call's recognition, queueing
	// in the pool included.
	PerCallP50 time.Duration `json:"per_call_p50"`
	PerCallMax time.Duration `json:"per_call_max"`
	// After is how long recognition went on after the last call's
	// script was over.
	After time.Duration `json:"after_last_call"`
}

// Stats summarizes the recognition of every call so far.
func (h *Hearing) Stats() RecognitionStats {
	h.mu.Lock()
	calls := slices.Clone(h.calls)
	h.mu.Unlock()
	st := RecognitionStats{PoolSize: h.r.Pool.Size(), PoolWide: h.r.Pool.Wide(), Nice: h.r.Nice, Remembered: h.r.Remembered()}
	var real, per []time.Duration
	var lastScript, lastEnd time.Time
	for _, g := range calls {
		g.mu.Lock()
		if !g.first.IsZero() {
			st.Calls++
			st.Drafts += g.drafts
			st.Checks += g.checks
			real = append(real, g.first.Sub(g.created))
			per = append(per, g.last.Sub(g.first))
			if g.first.After(lastScript) {
				lastScript = g.first
			}
			if g.last.After(lastEnd) {
				lastEnd = g.last
			}
		}
		g.mu.Unlock()
	}
	st.RealTimeP50, st.RealTimeMax = medianMax(real)
	st.PerCallP50, st.PerCallMax = medianMax(per)
	if lastEnd.After(lastScript) {
		st.After = lastEnd.Sub(lastScript)
	}
	return st
}

func medianMax(ds []time.Duration) (time.Duration, time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2], ds[len(ds)-1]
}

// Pool is the decoder runs queued, under way and done so far.
func (h *Hearing) Pool() hearing.PoolStats { return h.r.Pool.Stats() }

// DefaultHearing is NewHearing(0)'s per-call recognizer.
func DefaultHearing() func(callsim.CallSetup) twilio.Hearer { return NewHearing(0).For }

// grammarHearer hears one call's agent.
type grammarHearer struct {
	r   *hearing.Recognizer
	g   *hearing.Grammar
	now func() time.Time

	created time.Time
	mu      sync.Mutex
	first   time.Time // the first decode asked for: the script is over
	last    time.Time // the latest decode done
	drafts  int
	checks  int
}

// begin notes a decode asked for; the func it returns, its end.
func (h *grammarHearer) begin(check bool) func() {
	h.mu.Lock()
	if h.first.IsZero() {
		h.first = h.now()
	}
	if check {
		h.checks++
	} else {
		h.drafts++
	}
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		h.last = h.now()
		h.mu.Unlock()
	}
}

var (
	_ audiocall.Checker   = (*grammarHearer)(nil)
	_ audiocall.RealTimer = (*grammarHearer)(nil)
)

// RealTime counts the call in or out of the calls in real time, which
// hold the run's decoders to the pool's size (hearing.Pool.Live).
func (h *grammarHearer) RealTime(live bool) { h.r.Pool.Live(live) }

// Hear decodes and cross-checks an utterance.
func (h *grammarHearer) Hear(ctx context.Context, pcm audio.PCM) (string, bool, error) {
	d, err := h.Draft(ctx, pcm)
	if err != nil || d.Uncertain {
		return d.Text, true, err
	}
	return h.Check(ctx, pcm, d)
}

// Draft is the utterance's one decode.
func (h *grammarHearer) Draft(ctx context.Context, pcm audio.PCM) (audiocall.Draft, error) {
	defer h.begin(false)()
	res, err := h.r.Decode(ctx, pcm, h.g)
	if err != nil {
		return audiocall.Draft{Uncertain: true}, err
	}
	heard := h.g.Normalize(res.Words)
	return audiocall.Draft{Text: heard.Text, Uncertain: heard.Uncertain, Claims: h.g.Claims(res), Raw: res}, nil
}

// Check cross-checks a draft: the other language weight and the grammar
// without the records' codes (hearing.Recognizer.CrossCheck) — without it
// a lost "not" or "should", or a code snapped onto a record's, could turn
// a failure into a pass.
func (h *grammarHearer) Check(ctx context.Context, pcm audio.PCM, d audiocall.Draft) (string, bool, error) {
	defer h.begin(true)()
	res, _ := d.Raw.(hearing.Result)
	res, err := h.r.Check(ctx, pcm, h.g, res)
	if err != nil {
		return "", true, err
	}
	heard := h.g.Hear(res)
	return heard.Text, heard.Uncertain, nil
}
