package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// Files of a results directory.
const (
	RunFile     = "run.jsonl"    // every call's history, appended as each call completes
	ScoresFile  = "scores.jsonl" // one CallScore per line, same order
	SummaryFile = "summary.json" // the suite figures so far, rewritten after each call
	MetaFile    = "meta.json"    // what was run against what
)

// Meta describes a run.
type Meta struct {
	Agent     string  `json:"agent"`
	Suite     string  `json:"suite"`
	Seed      int64   `json:"seed,omitempty"`
	TimeScale float64 `json:"time_scale"`
	Calls     int     `json:"calls"`
	Transport string  `json:"transport,omitempty"`
}

// Results writes a results directory call by call, so an interrupted run
// keeps every call that finished. Safe for concurrent use.
type Results struct {
	dir    string
	mu     sync.Mutex
	run    *os.File
	scores *os.File
	acc    reports.Accumulator
}

// CreateResults makes dir (if needed) and starts fresh result files in it.
func CreateResults(dir string, meta Meta) (*Results, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writeJSONFile(filepath.Join(dir, MetaFile), meta); err != nil {
		return nil, err
	}
	run, err := os.Create(filepath.Join(dir, RunFile))
	if err != nil {
		return nil, err
	}
	scores, err := os.Create(filepath.Join(dir, ScoresFile))
	if err != nil {
		run.Close()
		return nil, err
	}
	return &Results{dir: dir, run: run, scores: scores}, nil
}

// Dir is the results directory.
func (r *Results) Dir() string { return r.dir }

// Add appends one finished call.
func (r *Results) Add(h *trace.History, s scorer.CallScore) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	bw := bufio.NewWriter(r.run)
	if err := trace.WriteJSONL(bw, h); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if _, err := r.scores.Write(append(b, '\n')); err != nil {
		return err
	}
	r.acc.Add(s)
	return writeJSONFile(filepath.Join(r.dir, SummaryFile), r.acc.Summary())
}

// Close flushes and closes the files.
func (r *Results) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err1 := r.run.Close()
	err2 := r.scores.Close()
	if err1 != nil {
		return err1
	}
	return err2
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadRun reads the histories of a run file.
func ReadRun(path string) ([]*trace.History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	hs, err := trace.ReadJSONL(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return hs, nil
}

// ReadScores reads a scores file (one CallScore per line).
func ReadScores(path string) ([]scorer.CallScore, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return DecodeScores(f, path)
}

// DecodeScores reads CallScores, one JSON object per line.
func DecodeScores(f io.Reader, name string) ([]scorer.CallScore, error) {
	var out []scorer.CallScore
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var s scorer.CallScore
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}
