package harness

import (
	"context"
	"fmt"
	"os"
	"runtime"
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
	// Warm tunes how Speech is made ready before the first call.
	Warm Prewarm
}

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
		l    callsim.Lateness
		utts int
		said []string
		err  error
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
			res[i].l, res[i].utts, res[i].said, res[i].err = loadCall(ctx, o, loadCallID(i))
		}()
	}
	wg.Wait()
	var after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	out := LoadResult{Calls: o.Calls, Duration: time.Since(start)}
	var p50s []time.Duration
	for i, r := range res {
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

func (o LoadOptions) lines() []string {
	if o.Fidelity {
		return fidelityLines()
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

// loadCall streams one call: start, an utterance every SayEvery (see
// LoadOptions.Fidelity), stop. It counts the agent utterances the caller
// heard and lists what it said.
func loadCall(ctx context.Context, o LoadOptions, id string) (callsim.Lateness, int, []string, error) {
	tr := o.Transport
	if pc, ok := tr.(callsim.PerCall); ok {
		tr = pc.ForCall(callsim.CallSetup{ID: id})
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := tr.Dial(dctx, o.Agent)
	cancel()
	if err != nil {
		return callsim.Lateness{}, 0, nil, err
	}
	c, ok := conn.(loadConn)
	if !ok {
		_ = conn.Close()
		return callsim.Lateness{}, 0, nil, fmt.Errorf("load: %T is not an audio call", conn)
	}
	defer c.Close()
	utts := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			f, err := c.Recv(ctx)
			if err != nil {
				return
			}
			if s := f.Message.AgentSpeech; s != nil && s.Phase == native.PhaseStart {
				utts++
			}
		}
	}()
	if err := c.Send(ctx, native.Message{Event: native.EventStart, Start: &native.Start{CallID: id, TimeScale: 1}}); err != nil {
		return callsim.Lateness{}, 0, nil, err
	}
	lines := o.lines()
	var said []string
	end := time.Now().Add(o.Duration)
	for n := 0; time.Now().Before(end); n++ {
		uid := "u" + strconv.Itoa(n)
		text := lines[n%len(lines)]
		d, err := c.PrepareSpeech(ctx, uid, text)
		if err != nil {
			return callsim.Lateness{}, 0, nil, err
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
				return callsim.Lateness{}, 0, nil, err
			}
			said = append(said, text)
		}
		select {
		case <-time.After(min(wait, time.Until(end))):
		case <-ctx.Done():
			return callsim.Lateness{}, 0, nil, ctx.Err()
		}
	}
	_ = c.Send(ctx, native.Message{Event: native.EventStop, Stop: &native.Stop{}})
	l := c.Lateness()
	_ = c.Close()
	<-done
	return l, utts, said, nil
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
