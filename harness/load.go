package harness

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audiocall"
	"github.com/callproof/callproof/protocol/native"
)

// LoadOptions set up an audio load run: Calls audio calls at once against
// one agent, each streaming for Duration.
type LoadOptions struct {
	Agent    string
	Calls    int
	Duration time.Duration
	// Ramp spreads the calls' starts over this long (default 2s), as calls
	// arrive in practice; every call still runs its full Duration.
	Ramp time.Duration
	// Transport is the caller (Twilio Media Streams or WebRTC): its calls
	// are callsim.Voice and callsim.Pacer. Speech, its voice, is warmed
	// with every utterance first.
	Transport callsim.Transport
	Speech    audiocall.Speech
	// SayEvery: each call starts an utterance this often (default 3s).
	SayEvery time.Duration
	// Fidelity makes every call say whole utterances, so an agent's own
	// count of them can be checked (CheckFidelity): a three-line script in
	// turn (fidelityLines), the next one SayEvery after the last began or
	// FidelityPause after it ended, whichever is later, and none that would
	// end less than FidelityTail before the call does. LoadResult.Said
	// then lists what each call said.
	Fidelity bool
	// Turns makes every call take turns with the agent, for an agent that
	// answers when the caller stops (a VAD agent, which takes no end of
	// turn from a caller speaking every SayEvery): each call says a line
	// (turnLines, in turn), then streams silence until the agent starts to
	// answer, at most AnswerWithin after the line ended (else the turn is
	// unanswered), and once its answer ends (or the call would),
	// TurnPause later says the next. No turn starts that could not be answered before the
	// call ends. LoadResult counts the turns and those answered in time.
	Turns bool
	// AnswerWithin is how soon after the caller's line ends the agent must
	// start to answer for a turn to count as answered in time (Turns;
	// default DefaultAnswerWithin).
	AnswerWithin time.Duration
	// Warm tunes how Speech is made ready before the first call.
	Warm Prewarm
}

const (
	// DefaultAnswerWithin is LoadOptions.AnswerWithin's default: a
	// caller waiting longer than this for an answer hears a stalled agent.
	DefaultAnswerWithin = 5 * time.Second
	// TurnPause is the silence between the agent's answer ending and the
	// caller's next line (Turns).
	TurnPause = time.Second
	// MaxAnswer bounds how long a turn waits for an answer that started
	// to end before the caller says its next line (Turns).
	MaxAnswer = 30 * time.Second
)

// LoadResult is what a load run measured.
type LoadResult struct {
	Calls, Failed int
	Duration      time.Duration
	// Frame lateness: the median call's p50, the worst call's p99 and the
	// worst frame of all.
	P50, WorstP99, Max time.Duration
	// CallsBehind counts calls whose caller fell behind (callsim.Lateness.Behind).
	CallsBehind int
	Frames      int
	// Utterances the harness heard from the agent, over all calls.
	AgentUtterances int
	// Turns (LoadOptions.Turns): the caller's lines said over all calls,
	// and those the agent started to answer within AnswerWithin of the
	// line's end. AnswerP50 and AnswerMax are the delays from a line's
	// end to the answer's start, over the turns answered in time.
	Turns, Answered      int           `json:",omitempty"`
	AnswerP50, AnswerMax time.Duration `json:",omitempty"`
	// CPU is the harness process's CPU time per call per second of call;
	// RSS its peak resident memory per call.
	CPUPerCallSecond time.Duration
	PeakRSSBytes     int64
	RSSPerCallBytes  int64
	Errors           []string
	// Said is what each call said, in call order (Fidelity runs).
	Said []LoadSaid `json:"-"`
	// Fidelity is the agent's own account of the calls checked against
	// Said, when the caller of RunLoad checked it.
	Fidelity *LoadFidelity `json:",omitempty"`
}

// LoadSaid is what one load call said, every utterance whole.
type LoadSaid struct {
	CallID string
	Texts  []string
	Err    string // the call failed
}

// RunLoad places o.Calls calls at once and measures the caller's pacing.
func RunLoad(ctx context.Context, o LoadOptions) (LoadResult, error) {
	if o.Calls < 1 || o.Duration <= 0 || o.Transport == nil || o.Speech == nil {
		return LoadResult{}, fmt.Errorf("load: need calls, a duration, a transport and its speech")
	}
	if o.Ramp <= 0 {
		o.Ramp = 2 * time.Second
	}
	if o.SayEvery <= 0 {
		o.SayEvery = 3 * time.Second
	}
	if o.AnswerWithin <= 0 {
		o.AnswerWithin = DefaultAnswerWithin
	}
	if o.Turns && o.Fidelity {
		return LoadResult{}, fmt.Errorf("load: turns or fidelity, not both")
	}
	// Warm the speech cache once, so no call waits on a synthesizer (and,
	// for Fidelity, the agent's ear can find every line in it).
	if err := PrepareSpeech(ctx, o.Speech, o.lines(), o.Warm); err != nil {
		return LoadResult{}, fmt.Errorf("load: %w", err)
	}
	var before syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	baseRSS := rssBytes()
	start := time.Now()
	type one struct {
		l     callsim.Lateness
		utts  int
		said  []string
		turns loadTurns
		err   error
	}
	res := make([]one, o.Calls)
	var wg sync.WaitGroup
	for i := range o.Calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			delay := time.Duration(int64(o.Ramp) * int64(i) / int64(o.Calls))
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				res[i].err = ctx.Err()
				return
			}
			res[i].l, res[i].utts, res[i].said, res[i].turns, res[i].err = loadCall(ctx, o, loadCallID(i))
		}()
	}
	wg.Wait()
	var after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	out := LoadResult{Calls: o.Calls, Duration: time.Since(start)}
	var p50s, answers []time.Duration
	for i, r := range res {
		out.Turns += r.turns.said
		out.Answered += r.turns.inTime
		answers = append(answers, r.turns.delays...)
		if o.Fidelity {
			s := LoadSaid{CallID: loadCallID(i), Texts: r.said}
			if r.err != nil {
				s.Err = r.err.Error()
			}
			out.Said = append(out.Said, s)
		}
		if r.err != nil {
			out.Failed++
			if len(out.Errors) < 5 {
				out.Errors = append(out.Errors, r.err.Error())
			}
			continue
		}
		p50s = append(p50s, r.l.P50)
		out.WorstP99 = max(out.WorstP99, r.l.P99)
		out.Max = max(out.Max, r.l.Max)
		out.Frames += r.l.Frames
		out.AgentUtterances += r.utts
		if r.l.Behind() {
			out.CallsBehind++
		}
	}
	if len(p50s) > 0 {
		sort.Slice(p50s, func(i, j int) bool { return p50s[i] < p50s[j] })
		out.P50 = p50s[len(p50s)/2]
	}
	if len(answers) > 0 {
		slices.Sort(answers)
		out.AnswerP50, out.AnswerMax = answers[len(answers)/2], answers[len(answers)-1]
	}
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
	if s := o.Duration.Seconds() * float64(o.Calls); s > 0 {
		out.CPUPerCallSecond = time.Duration(float64(cpu) / s)
	}
	out.PeakRSSBytes = int64(after.Maxrss) * 1024
	out.RSSPerCallBytes = max(out.PeakRSSBytes-baseRSS, 0) / int64(o.Calls)
	return out, nil
}

// loadLine is what every load call says, over and over.
const loadLine = "I would like to change the delivery date on order 5590 to December third."

// fidelityLines are what a Fidelity load call says, in turn: the shorter
// first (3.1 s and 4.1 s in flite/kal16), so a 10 s call still says two;
// "order 5590" and "order 5599" make the ear tell near-alike utterances
// apart.
func fidelityLines() []string {
	return []string{
		"Wait, stop, don't change anything.",
		"Sorry, I meant order 5599.",
		"Hi, I'd like to change the delivery date on order 5590 to December 3.",
	}
}

const (
	// FidelityPause is the least silence between two utterances of a
	// Fidelity call: two turns, not one.
	FidelityPause = time.Second
	// FidelityTail is the least time between a Fidelity call's last
	// utterance ending and its stop, so the stop cuts none (and a caller
	// running somewhat behind real time still sends all of it).
	FidelityTail = time.Second
)

// turnLines are what a Turns call says, in turn: a request, a
// correction and a withdrawal, each a turn an agent answers.
func turnLines() []string {
	return []string{
		"Hi, I'd like to change the delivery date on order 5590 to December 3.",
		"Sorry, I meant order 5599.",
		"Wait, stop, don't change anything.",
	}
}

func (o LoadOptions) lines() []string {
	if o.Fidelity {
		return fidelityLines()
	}
	if o.Turns {
		return turnLines()
	}
	return []string{loadLine}
}

func loadCallID(i int) string { return "load-" + strconv.Itoa(i) }

// loadConn is an audio dialect's call.
type loadConn interface {
	callsim.Conn
	callsim.Voice
	callsim.Pacer
}

// loadTurns is what one Turns call measured: the lines said, those
// answered in time, and each answer's delay from its line's end.
type loadTurns struct {
	said, inTime int
	delays       []time.Duration
}

// loadCall streams one call: start, an utterance every SayEvery (see
// LoadOptions.Fidelity and Turns), stop. It counts the agent utterances
// the caller heard and lists what it said.
func loadCall(ctx context.Context, o LoadOptions, id string) (callsim.Lateness, int, []string, loadTurns, error) {
	var turns loadTurns
	tr := o.Transport
	if pc, ok := tr.(callsim.PerCall); ok {
		tr = pc.ForCall(callsim.CallSetup{ID: id})
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := tr.Dial(dctx, o.Agent)
	cancel()
	if err != nil {
		return callsim.Lateness{}, 0, nil, turns, err
	}
	c, ok := conn.(loadConn)
	if !ok {
		_ = conn.Close()
		return callsim.Lateness{}, 0, nil, turns, fmt.Errorf("load: %T is not an audio call", conn)
	}
	defer c.Close()
	utts := 0
	done := make(chan struct{})
	// The agent's utterances starting and ending, as they arrive (Turns).
	starts, ends := make(chan time.Time, 64), make(chan time.Time, 64)
	go func() {
		defer close(done)
		for {
			f, err := c.Recv(ctx)
			if err != nil {
				return
			}
			s := f.Message.AgentSpeech
			switch {
			case s == nil:
			case s.Phase == native.PhaseStart:
				utts++
				nonBlocking(starts, time.Now())
			case s.Phase == native.PhaseEnd:
				nonBlocking(ends, time.Now())
			}
		}
	}()
	if err := c.Send(ctx, native.Message{Event: native.EventStart, Start: &native.Start{CallID: id, TimeScale: 1}}); err != nil {
		return callsim.Lateness{}, 0, nil, turns, err
	}
	end := time.Now().Add(o.Duration)
	var said []string
	if o.Turns {
		turns, err = takeTurns(ctx, o, c, end, starts, ends)
	} else {
		said, err = sayEvery(ctx, o, c, end)
	}
	if err != nil {
		return callsim.Lateness{}, 0, nil, turns, err
	}
	_ = c.Send(ctx, native.Message{Event: native.EventStop, Stop: &native.Stop{}})
	l := c.Lateness()
	_ = c.Close()
	<-done
	return l, utts, said, turns, nil
}

func nonBlocking(ch chan time.Time, t time.Time) {
	select {
	case ch <- t:
	default:
	}
}

// sayEvery starts an utterance every SayEvery until end (Fidelity: whole
// lines, paused apart), and lists what it said.
func sayEvery(ctx context.Context, o LoadOptions, c loadConn, end time.Time) ([]string, error) {
	lines := o.lines()
	var said []string
	for n := 0; time.Now().Before(end); n++ {
		uid := "u" + strconv.Itoa(n)
		text := lines[n%len(lines)]
		d, err := c.PrepareSpeech(ctx, uid, text)
		if err != nil {
			return nil, err
		}
		wait, say := min(o.SayEvery, time.Until(end)), true
		if o.Fidelity {
			if time.Until(end) < d+FidelityTail {
				// The stop would cut it: the agent could not be
				// expected to hear it whole. Stream silence to the end.
				wait, say = time.Until(end), false
			} else {
				wait = max(o.SayEvery, d+FidelityPause)
			}
		}
		if say {
			if err := c.Send(ctx, native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: uid, Phase: native.PhaseOnset}}); err != nil {
				return nil, err
			}
			said = append(said, text)
		}
		if err := sleepCtx(ctx, min(wait, time.Until(end))); err != nil {
			return nil, err
		}
	}
	return said, nil
}

// takeTurns says a line (turnLines, in turn), waits for the agent's
// answer to start (within AnswerWithin of the line's end) and to end,
// pauses TurnPause and says the next, until no turn fits before end; then
// streams silence to end.
func takeTurns(ctx context.Context, o LoadOptions, c loadConn, end time.Time, starts, ends <-chan time.Time) (loadTurns, error) {
	var t loadTurns
	lines := o.lines()
	for n := 0; ; n++ {
		uid := "u" + strconv.Itoa(n)
		d, err := c.PrepareSpeech(ctx, uid, lines[n%len(lines)])
		if err != nil {
			return t, err
		}
		if time.Until(end) < d+o.AnswerWithin {
			return t, sleepCtx(ctx, time.Until(end))
		}
		if err := c.Send(ctx, native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: uid, Phase: native.PhaseOnset}}); err != nil {
			return t, err
		}
		t.said++
		if err := sleepCtx(ctx, d); err != nil {
			return t, err
		}
		lineEnd := time.Now()
		// An answer that started before the line ended is not this
		// line's answer (a late one to the last line, or a barge-in).
		drain(starts)
		drain(ends)
		deadline := lineEnd.Add(o.AnswerWithin)
		answered := false
		select {
		case at := <-starts:
			answered = true
			t.inTime++
			t.delays = append(t.delays, at.Sub(lineEnd))
		case <-time.After(time.Until(deadline)):
		case <-ctx.Done():
			return t, ctx.Err()
		}
		if answered {
			select {
			case <-ends:
			case <-time.After(min(MaxAnswer, time.Until(end))):
			case <-ctx.Done():
				return t, ctx.Err()
			}
		}
		if err := sleepCtx(ctx, min(TurnPause, time.Until(end))); err != nil {
			return t, err
		}
	}
}

func drain(ch <-chan time.Time) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// sleepCtx waits d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// AgentHeard is an agent's own account of one call: the texts of the
// utterances it heard, in order ("" for one it could not tell), its
// speech onsets and the non-speech sounds it heard.
type AgentHeard struct {
	CallID string
	Texts  []string
	Onsets int
	Sounds int
}

// LoadFidelity says whether the agent heard every utterance of every load
// call as exactly one utterance with its words: no turn split in two, no
// two merged, none missed.
type LoadFidelity struct {
	Calls      int // load calls checked
	Exact      int // calls heard exactly as said, one onset per utterance
	Utterances int // utterances said over all calls
	// Differing lists the first MaxFidelityDiffs calls that differ.
	Differing []FidelityDiff `json:",omitempty"`
}

// OK reports every call heard exactly as said.
func (f LoadFidelity) OK() bool { return f.Exact == f.Calls }

// FidelityDiff is one call the agent heard otherwise than it was said.
type FidelityDiff struct {
	CallID              string
	Said, Heard, Onsets int // Heard and Onsets are -1 when the agent has no such call
	What                string
}

// MaxFidelityDiffs bounds the differing calls a LoadFidelity lists.
const MaxFidelityDiffs = 10

// CheckFidelity compares what each load call said with what the agent
// says it heard. Agent calls with no load call of their id are ignored;
// two with one id are a difference (the agent's account is ambiguous).
func CheckFidelity(said []LoadSaid, heard []AgentHeard) LoadFidelity {
	byID := make(map[string][]AgentHeard, len(heard))
	for _, h := range heard {
		byID[h.CallID] = append(byID[h.CallID], h)
	}
	var f LoadFidelity
	for _, s := range said {
		f.Calls++
		f.Utterances += len(s.Texts)
		hs := byID[s.CallID]
		what := fidelityDiff(s, hs)
		if what == "" {
			f.Exact++
			continue
		}
		if len(f.Differing) < MaxFidelityDiffs {
			d := FidelityDiff{CallID: s.CallID, Said: len(s.Texts), Heard: -1, Onsets: -1, What: what}
			if len(hs) == 1 {
				d.Heard, d.Onsets = len(hs[0].Texts), hs[0].Onsets
			}
			f.Differing = append(f.Differing, d)
		}
	}
	return f
}

// fidelityDiff says how the agent's account hs of a call differs from
// what it said; "" when it does not.
func fidelityDiff(s LoadSaid, hs []AgentHeard) string {
	var why []string
	if s.Err != "" {
		why = append(why, "the call failed: "+s.Err)
	}
	switch len(hs) {
	case 0:
		return strings.Join(append(why, "the agent reports no call with this id"), "; ")
	case 1:
	default:
		return strings.Join(append(why, fmt.Sprintf("the agent reports %d calls with this id", len(hs))), "; ")
	}
	h := hs[0]
	n := len(s.Texts)
	if n == 0 {
		why = append(why, "said nothing (too short a call for one whole utterance)")
	}
	switch {
	case len(h.Texts) > n:
		why = append(why, fmt.Sprintf("said %d utterances, heard %d (split, or extra)", n, len(h.Texts)))
	case len(h.Texts) < n:
		why = append(why, fmt.Sprintf("said %d utterances, heard %d (merged, or missed)", n, len(h.Texts)))
	}
	for i := range max(n, len(h.Texts)) {
		var a, b string
		if i < n {
			a = strconv.Quote(s.Texts[i])
		} else {
			a = "nothing"
		}
		if i < len(h.Texts) {
			b = strconv.Quote(h.Texts[i])
		} else {
			b = "nothing"
		}
		if a != b {
			why = append(why, fmt.Sprintf("utterance %d: said %s, heard %s", i+1, a, b))
			break
		}
	}
	if h.Onsets != n {
		why = append(why, fmt.Sprintf("%d speech onsets for %d utterances", h.Onsets, n))
	}
	if len(h.Texts) < n && h.Sounds > 0 {
		// The reference agent's ear hears an utterance missing from its
		// speech cache as a sound.
		why = append(why, fmt.Sprintf("%d sounds instead (does the agent use this run's speech cache?)", h.Sounds))
	}
	return strings.Join(why, "; ")
}

// rssBytes is the process's resident memory now (Linux), or the Go heap
// when /proc is not there.
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			if pages, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				return pages * int64(os.Getpagesize())
			}
		}
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}
