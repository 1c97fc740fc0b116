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
	"github.com/callproof/callproof/callsim/twilio"
	"github.com/callproof/callproof/protocol/native"
)

// LoadOptions set up an audio load run: Calls Twilio Media Streams calls
// at once against one agent, each streaming for Duration.
type LoadOptions struct {
	Agent    string
	Calls    int
	Duration time.Duration
	// Ramp spreads the calls' starts over this long (default 2s), as calls
	// arrive in practice; every call still runs its full Duration.
	Ramp time.Duration
	// Transport is the caller; its Speech speaks every utterance.
	Transport *twilio.Transport
	// SayEvery: each call starts an utterance this often (default 3s).
	SayEvery time.Duration
}

// LoadResult is what a load run measured.
type LoadResult struct {
	Calls, Failed int
	Duration      time.Duration
	// Frame lateness: the median call's p50, the worst call's p99 and the
	// worst frame of all.
	P50, WorstP99, Max time.Duration
	// CallsBehind counts calls whose caller fell more than a frame behind.
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
}

// RunLoad places o.Calls calls at once and measures the caller's pacing.
func RunLoad(ctx context.Context, o LoadOptions) (LoadResult, error) {
	if o.Calls < 1 || o.Duration <= 0 || o.Transport == nil {
		return LoadResult{}, fmt.Errorf("load: need calls, a duration and a transport")
	}
	if o.Ramp <= 0 {
		o.Ramp = 2 * time.Second
	}
	if o.SayEvery <= 0 {
		o.SayEvery = 3 * time.Second
	}
	// Warm the speech cache once, so no call waits on a synthesizer.
	if _, err := o.Transport.Speech.Speech(ctx, loadLine); err != nil {
		return LoadResult{}, fmt.Errorf("load: speech: %w", err)
	}
	var before syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	baseRSS := rssBytes()
	start := time.Now()
	type one struct {
		l    callsim.Lateness
		utts int
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
			res[i].l, res[i].utts, res[i].err = loadCall(ctx, o, "load-"+strconv.Itoa(i))
		}()
	}
	wg.Wait()
	var after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	out := LoadResult{Calls: o.Calls, Duration: time.Since(start)}
	var p50s []time.Duration
	for _, r := range res {
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

// loadCall streams one call: start, an utterance every SayEvery, stop.
// It counts the agent utterances the caller heard.
func loadCall(ctx context.Context, o LoadOptions, id string) (callsim.Lateness, int, error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := o.Transport.Dial(dctx, o.Agent)
	cancel()
	if err != nil {
		return callsim.Lateness{}, 0, err
	}
	c := conn.(*twilio.Conn)
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
		return callsim.Lateness{}, 0, err
	}
	end := time.Now().Add(o.Duration)
	for n := 0; time.Now().Before(end); n++ {
		uid := "u" + strconv.Itoa(n)
		if _, err := c.PrepareSpeech(ctx, uid, loadLine); err != nil {
			return callsim.Lateness{}, 0, err
		}
		if err := c.Send(ctx, native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: uid, Phase: native.PhaseOnset}}); err != nil {
			return callsim.Lateness{}, 0, err
		}
		select {
		case <-time.After(min(o.SayEvery, time.Until(end))):
		case <-ctx.Done():
			return callsim.Lateness{}, 0, ctx.Err()
		}
	}
	_ = c.Send(ctx, native.Message{Event: native.EventStop, Stop: &native.Stop{}})
	l := c.Lateness()
	_ = c.Close()
	<-done
	return l, utts, nil
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
