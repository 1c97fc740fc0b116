package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scorer"
)

// progress draws a one-line bar when stderr is a terminal, and nothing
// otherwise (logs stay clean in CI).
type progress struct {
	w   io.Writer
	tty bool

	mu    sync.Mutex // the fields below; the bar is drawn from two goroutines
	n     int
	last  string // the latest bar, without the recognition's figures
	extra func() string
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w}
	f, _ := w.(*os.File)
	if fw, ok := w.(interface{ File() *os.File }); ok {
		f = fw.File()
	}
	if f != nil {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// recognition adds the run's recognizer's queue to the bar, redrawn
// every second while calls wait for it (audio runs recognize after each
// call's script, so the bar may stand still while they do). The func it
// returns stops the redrawing.
func (p *progress) recognition(h *harness.Hearing) func() {
	if !p.tty || h == nil {
		return func() {}
	}
	p.mu.Lock()
	p.extra = func() string {
		st := h.Pool()
		if st.Waiting+st.Running == 0 && st.Done == 0 {
			return ""
		}
		return fmt.Sprintf(" · recognizing: %d queued, %d running, %d done", st.Waiting, st.Running, st.Done)
	}
	p.mu.Unlock()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.mu.Lock()
				if p.last != "" {
					p.drawLocked(p.last)
				}
				p.mu.Unlock()
			case <-stop:
				return
			}
		}
	}()
	return func() { close(stop); <-done }
}

func (p *progress) update(done, total int, s scorer.CallScore) {
	if !p.tty || total == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	const width = 30
	fill := done * width / total
	verdict := "ok"
	if !s.Integrity {
		verdict = "FAIL"
		if s.Outcome != "scored" {
			verdict = string(s.Outcome)
		}
	}
	p.last = fmt.Sprintf("\r[%s%s] %d/%d %s %s", strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total, s.Call, verdict)
	p.drawLocked(p.last)
}

func (p *progress) drawLocked(line string) {
	if p.extra != nil {
		line += p.extra()
	}
	pad := p.n - len(line)
	p.n = len(line)
	if pad > 0 {
		line += strings.Repeat(" ", pad)
	}
	fmt.Fprint(p.w, line)
}

// note prints a line of its own above the bar (or just the line, with no
// terminal), then draws the bar again.
func (p *progress) note(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.n > 0 {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.n)+"\r")
		p.n = 0
	}
	fmt.Fprintln(p.w, line)
	if p.tty && p.last != "" {
		p.drawLocked(p.last)
	}
}

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = "" // nothing to redraw after the newline
	if p.tty && p.n > 0 {
		fmt.Fprintln(p.w)
	}
}

// speechProgress shows the caller's speech being made ready before the
// first call (harness.Prewarm.Progress): a counter on a terminal, and a
// closing line when it took long enough to notice (an empty cache).
func speechProgress(w io.Writer, cmd string) func(done, total int) {
	p := newProgress(w)
	var began time.Time
	return func(done, total int) {
		if done == 0 {
			began = time.Now()
			return
		}
		if p.tty {
			fmt.Fprintf(w, "\rcaller speech %d/%d", done, total)
		}
		if done < total {
			return
		}
		if p.tty {
			fmt.Fprintln(w)
		}
		if took := time.Since(began); took >= time.Second {
			fmt.Fprintf(w, "%s: caller speech: %d utterances ready in %s\n", strings.TrimSpace("callproof "+cmd), total, took.Round(100*time.Millisecond))
		}
	}
}
