package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/callproof/callproof/trace"
)

// RunIndex is a results directory read for going through its calls one at
// a time. Run is the run as LoadRun reads it, except that each history in
// it holds only its call.start and call.end — enough to sort, count and
// check the run — and Load reads a call's whole history back from the
// file. A run of any length is then reported holding one call at a time.
type RunIndex struct {
	Run   *SavedRun
	path  string
	spans map[*trace.History]span // nil: Run holds whole histories
}

// span is where one history's lines lie in the run file.
type span struct{ off, n int64 }

// IndexRun reads dir's run file once, keeping where each complete history
// lies. A file whose calls' lines are not each together — none that a
// results directory's writers produce — is read whole with LoadRun
// instead, so what Load returns is always what LoadRun would hold.
func IndexRun(dir string) (*RunIndex, error) {
	path := filepath.Join(dir, RunFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	x := &RunIndex{path: path, spans: map[*trace.History]span{}}
	run, together, err := x.scan(f, path)
	if err != nil {
		return nil, err
	}
	if !together {
		whole, err := LoadRun(dir)
		if err != nil {
			return nil, err
		}
		return &RunIndex{Run: whole, path: path}, nil
	}
	if err := run.readBeside(dir); err != nil {
		return nil, err
	}
	x.Run = run
	return x, nil
}

// scan reads the file line by line. together is false when a call's lines
// are split by another call's (LoadRun would join them).
func (x *RunIndex) scan(r io.Reader, name string) (run *SavedRun, together bool, err error) {
	run = &SavedRun{Name: name}
	var incomplete []string
	var cur *trace.History // the group being read: its first and last event
	var curSpan span
	closeGroup := func() {
		if cur == nil {
			return
		}
		if cur.Events[len(cur.Events)-1].Kind != trace.KindCallEnd {
			if !slices.Contains(run.Dropped, cur.Call) {
				run.Dropped = append(run.Dropped, cur.Call)
			}
			incomplete = append(incomplete, unfinishedWarning(name, cur.Call))
		} else {
			run.Histories = append(run.Histories, cur)
			x.spans[cur] = curSpan
		}
		cur = nil
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var off int64
	line := 0
	for {
		b, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return nil, false, rerr
		}
		start := off
		off += int64(len(b))
		if rerr == io.EOF {
			// The tail after the last newline: a torn write, if anything.
			if torn := bytes.TrimSpace(b); len(torn) > 0 {
				run.Warnings = append(run.Warnings, tornWarning(name, len(b)))
				if id := tornCall(string(b)); id != "" {
					run.Dropped = append(run.Dropped, id)
				}
			}
			break
		}
		line++
		t := bytes.TrimSpace(b)
		if len(t) == 0 {
			continue
		}
		var e trace.Event
		if err := json.Unmarshal(t, &e); err != nil {
			return nil, false, fmt.Errorf("%s: line %d: %w", name, line, err)
		}
		if cur != nil && e.Call == cur.Call && e.Kind != trace.KindCallStart {
			cur.Events[1] = e
			curSpan.n = off - curSpan.off
			continue
		}
		closeGroup()
		// Every attempt begins with its call.start; lines of a call that
		// do not are read as LoadRun reads them.
		if e.Kind != trace.KindCallStart {
			return nil, false, nil
		}
		if st, ok := e.Data.(*trace.CallStart); ok && st.Schema > trace.SchemaVersion {
			return nil, false, fmt.Errorf("%s: line %d: history schema %d is newer than this callproof (%d)", name, line, st.Schema, trace.SchemaVersion)
		}
		cur = &trace.History{Call: e.Call, Events: []trace.Event{e, e}}
		curSpan = span{off: start, n: off - start}
	}
	closeGroup()
	run.Warnings = append(run.Warnings, incomplete...)
	return run, true, nil
}

// Load returns h's whole history (h one of Run.Histories).
func (x *RunIndex) Load(h *trace.History) (*trace.History, error) {
	if x.spans == nil {
		return h, nil
	}
	sp, ok := x.spans[h]
	if !ok {
		return nil, fmt.Errorf("%s: call %s is not in the index", x.path, h.Call)
	}
	f, err := os.Open(x.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, sp.n)
	if _, err := f.ReadAt(b, sp.off); err != nil {
		return nil, fmt.Errorf("%s: call %s: %w", x.path, h.Call, err)
	}
	hs, err := trace.ReadJSONL(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: call %s: %w", x.path, h.Call, err)
	}
	if len(hs) != 1 || hs[0].Call != h.Call {
		return nil, fmt.Errorf("%s: call %s: the file changed since it was indexed", x.path, h.Call)
	}
	return hs[0], nil
}
