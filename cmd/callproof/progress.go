package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/callproof/callproof/scorer"
)

// progress draws a one-line bar when stderr is a terminal, and nothing
// otherwise (logs stay clean in CI).
type progress struct {
	w   io.Writer
	tty bool
	n   int
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

func (p *progress) update(done, total int, s scorer.CallScore) {
	if !p.tty || total == 0 {
		return
	}
	const width = 30
	fill := done * width / total
	verdict := "ok"
	if !s.Integrity {
		verdict = "FAIL"
		if s.Outcome != "scored" {
			verdict = string(s.Outcome)
		}
	}
	line := fmt.Sprintf("\r[%s%s] %d/%d %s %s", strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total, s.Call, verdict)
	pad := p.n - len(line)
	p.n = len(line)
	if pad > 0 {
		line += strings.Repeat(" ", pad)
	}
	fmt.Fprint(p.w, line)
}

func (p *progress) done() {
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
