package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// Files of a results directory.
const (
	RunFile      = "run.jsonl"      // every call's history, appended as each call completes
	ScoresFile   = "scores.jsonl"   // one CallScore per line, same order
	SummaryFile  = "summary.json"   // the suite figures so far, rewritten after each call
	MetaFile     = "meta.json"      // what was run against what, and the planned calls
	DoneFile     = "complete.json"  // the completion marker, written when the run ends
	AttemptsFile = "attempts.jsonl" // earlier attempts of calls a resume or merge replaced
	ReportFile   = "report.html"    // the run as one self-contained HTML page (run and demo write it at the end)
)

// Meta describes a run. It is written before the first call is placed:
// Planned is the run's manifest, so a run cut short is detectable.
type Meta struct {
	Agent     string  `json:"agent"`
	Suite     string  `json:"suite"`
	Seed      int64   `json:"seed,omitempty"`
	TimeScale float64 `json:"time_scale"`
	Calls     int     `json:"calls"`
	Transport string  `json:"transport,omitempty"`
	// Signaling and Trickle are a WebRTC run's (WebRTCOptions).
	Signaling string `json:"signaling,omitempty"`
	Trickle   bool   `json:"trickle,omitempty"`
	// LiveKitAgentName is a LiveKit run's agent dispatched by name
	// (--livekit-agent-name; empty: the server's automatic dispatch).
	LiveKitAgentName string `json:"livekit_agent_name,omitempty"`
	// Trials is how many times the run places every scenario (0 or 1:
	// once, under the scenario's id; k > 1: ids SCENARIO.t1 … .tk).
	Trials int `json:"trials,omitempty"`
	// Planned lists the call ids the run places, in suite order.
	Planned []string `json:"planned,omitempty"`
	// PackHash and ScenarioHashes are the content hashes of what the run
	// placed (ScenarioHash, PackHash): baselines compare only equal ones.
	PackHash       string            `json:"pack_hash,omitempty"`
	ScenarioHashes map[string]string `json:"scenario_hashes,omitempty"`
	// AgentVersion is the agent's version or commit, as the user gave it.
	AgentVersion string `json:"agent_version,omitempty"`
	// Shard, for a sharded run (run --shard), is which part of the suite
	// this run placed and what the whole suite was.
	Shard *Shard `json:"shard,omitempty"`
	// Sources are the directories a merged run was made from, in order.
	Sources []string `json:"sources,omitempty"`
}

// Completion is the marker written when every planned call has a history.
// A results directory without it was cut short (killed, crashed, or still
// running).
type Completion struct {
	Calls int `json:"calls"`
	// Cancelled lists the calls a cancelled run (Ctrl-C) recorded as
	// harness errors without finishing them.
	Cancelled []string `json:"cancelled,omitempty"`
}

// Results writes a results directory call by call, so an interrupted run
// keeps every call that finished: each call is one write, synced to disk.
// After a failed write it refuses further writes (a partial write must
// stay the file's last line). Safe for concurrent use.
type Results struct {
	dir    string
	mu     sync.Mutex
	run    *os.File
	scores *os.File
	// Calls that end together share their files' fsyncs.
	runSync, scoreSync *syncer
	acc                reports.Accumulator
	calls              int
	err                error
	// summaryAt is when summary.json was last written; dirty: calls
	// added since.
	summaryAt time.Time
	dirty     bool
	pending   []pendingScore
	// attemptMu guards the attempts file and attempts (AddAttempt), apart
	// from mu: a rare write need not hold up the calls' own.
	attemptMu sync.Mutex
	attempts  int
}

// SummaryEvery is how often, at most, summary.json is rewritten while
// calls complete; Finish and Close write it once more, so a finished or
// interrupted run's summary covers every call it kept. Rewriting it after
// every call made a run of N calls O(N²) (each summary covers all calls
// so far) and serialized thousands of calls ending together on its fsyncs.
const SummaryEvery = time.Second

// CreateResults makes dir (if needed) and starts fresh result files in it,
// replacing those of an earlier run.
func CreateResults(dir string, meta Meta) (*Results, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, f := range []string{DoneFile, AttemptsFile, SummaryFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if err := writeJSONFile(filepath.Join(dir, MetaFile), meta); err != nil {
		return nil, err
	}
	return openResults(dir, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, nil)
}

// OpenResults appends to an existing results directory (a resume). The
// summary starts from the scores already there; the completion marker is
// removed until the run finishes again.
func OpenResults(dir string) (*Results, error) {
	scores, _, err := ReadScoresWarn(filepath.Join(dir, ScoresFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.Remove(filepath.Join(dir, DoneFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return openResults(dir, os.O_CREATE|os.O_APPEND|os.O_WRONLY, scores)
}

func openResults(dir string, flag int, earlier []scorer.CallScore) (*Results, error) {
	run, err := os.OpenFile(filepath.Join(dir, RunFile), flag, 0o644)
	if err != nil {
		return nil, err
	}
	scores, err := os.OpenFile(filepath.Join(dir, ScoresFile), flag, 0o644)
	if err != nil {
		run.Close()
		return nil, err
	}
	if err := syncDir(dir); err != nil {
		return nil, errors.Join(err, run.Close(), scores.Close())
	}
	r := &Results{dir: dir, run: run, scores: scores, calls: len(earlier), runSync: newSyncer(run), scoreSync: newSyncer(scores)}
	for _, s := range earlier {
		r.acc.Add(s)
	}
	return r, nil
}

// Dir is the results directory.
func (r *Results) Dir() string { return r.dir }

// Add appends one finished call: its whole history in one write, synced,
// then its score the same way, in the same order in both files. Calls that
// end together share the fsyncs: each waits for a sync begun after its
// write, and the score lines whose histories are on disk go out together.
func (r *Results) Add(h *trace.History, s scorer.CallScore) error {
	var b bytes.Buffer
	if err := trace.WriteJSONL(&b, h); err != nil {
		return err
	}
	line, err := json.Marshal(s)
	if err != nil {
		return err
	}
	r.mu.Lock()
	if r.err != nil {
		r.mu.Unlock()
		return r.err
	}
	if _, err := r.run.Write(b.Bytes()); err != nil {
		r.err = err
		r.mu.Unlock()
		return err
	}
	ticket := r.runSync.wrote()
	r.pending = append(r.pending, pendingScore{ticket, append(line, '\n')})
	r.mu.Unlock()
	if err := r.runSync.wait(ticket); err != nil {
		return r.fail(err)
	}

	r.mu.Lock()
	if r.err != nil {
		r.mu.Unlock()
		return r.err
	}
	// Every score whose history is on disk, in the histories' order: this
	// call's among them, unless an earlier batch took it.
	var batch []byte
	n := 0
	for ; n < len(r.pending) && r.pending[n].history <= r.runSync.done(); n++ {
		batch = append(batch, r.pending[n].line...)
	}
	r.pending = r.pending[n:]
	if len(batch) > 0 {
		if _, err := r.scores.Write(batch); err != nil {
			r.err = err
			r.mu.Unlock()
			return err
		}
		r.scoreSync.wrote()
	}
	scoreTicket := r.scoreSync.current()
	r.calls++
	r.acc.Add(s)
	r.dirty = true
	if time.Since(r.summaryAt) >= SummaryEvery {
		err = r.writeSummary()
	}
	r.mu.Unlock()
	if serr := r.scoreSync.wait(scoreTicket); serr != nil {
		return r.fail(serr)
	}
	return err
}

// pendingScore is a score line waiting for its history's sync.
type pendingScore struct {
	history uint64 // the history write's ticket
	line    []byte
}

// fail records a failed sync: no later write goes out.
func (r *Results) fail(err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
	return err
}

// writeSummary rewrites summary.json; r.mu must be held.
func (r *Results) writeSummary() error {
	r.summaryAt, r.dirty = time.Now(), false
	return writeJSONFile(filepath.Join(r.dir, SummaryFile), r.acc.Summary())
}

// syncer coalesces the fsyncs of one append-only file.
type syncer struct {
	f       *os.File
	mu      sync.Mutex
	cond    *sync.Cond
	written uint64 // writes so far
	synced  uint64 // writes known to be on disk
	busy    bool   // a sync is running
	err     error
}

func newSyncer(f *os.File) *syncer {
	s := &syncer{f: f}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// wrote counts a write just made and returns its ticket for wait.
func (s *syncer) wrote() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.written++
	return s.written
}

// current is the ticket of the latest write.
func (s *syncer) current() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written
}

// done is how many writes are known to be on disk.
func (s *syncer) done() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.synced
}

// wait returns once the write with this ticket is on disk: it runs a sync
// covering every write so far, or waits for the one running and, if that
// began before this write, runs the next.
func (s *syncer) wait(ticket uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.synced < ticket && s.err == nil {
		if s.busy {
			s.cond.Wait()
			continue
		}
		s.busy = true
		target := s.written
		s.mu.Unlock()
		err := s.f.Sync()
		s.mu.Lock()
		s.busy = false
		if err != nil {
			s.err = err
		} else {
			s.synced = target
		}
		s.cond.Broadcast()
	}
	return s.err
}

// AddAttempt appends, synced, an attempt of a call that is being placed
// again (Runner.Replace) to the attempts file, where a resume keeps the
// attempts it replaces: the run's files keep only the attempt that
// counts, and nothing placed is lost.
func (r *Results) AddAttempt(h *trace.History) error {
	b, err := encodeHistories([]*trace.History{h})
	if err != nil {
		return err
	}
	r.attemptMu.Lock()
	defer r.attemptMu.Unlock()
	path := filepath.Join(r.dir, AttemptsFile)
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	err = appendSynced(f, b)
	if err = errors.Join(err, f.Close()); err == nil && statErr != nil {
		err = syncDir(r.dir) // the file is new: its name must last too
	}
	if err == nil {
		r.attempts++
	}
	return err
}

// Attempts is how many attempts AddAttempt kept.
func (r *Results) Attempts() int {
	r.attemptMu.Lock()
	defer r.attemptMu.Unlock()
	return r.attempts
}

// Finish writes the completion marker: every planned call has a history.
func (r *Results) Finish(cancelled []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	if r.dirty {
		if err := r.writeSummary(); err != nil {
			return err
		}
	}
	return writeJSONFile(filepath.Join(r.dir, DoneFile), Completion{Calls: r.calls, Cancelled: cancelled})
}

// Close writes the summary if calls were added since it was last written,
// and closes the files.
func (r *Results) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	if r.dirty && r.err == nil {
		err = r.writeSummary()
	}
	return errors.Join(err, r.run.Close(), r.scores.Close())
}

func appendSynced(f *os.File, b []byte) error {
	if _, err := f.Write(b); err != nil {
		return err
	}
	return f.Sync()
}

// writeJSONFile replaces path atomically: a synced temp file, renamed.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return replaceFile(path, append(b, '\n'))
}

func replaceFile(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes a directory's entries (a new or renamed file) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// ReadRun reads the complete histories of a run file; a torn last call is
// left out (LoadRun says so).
func ReadRun(path string) ([]*trace.History, error) {
	run, err := LoadRun(path)
	if err != nil {
		return nil, err
	}
	return run.Histories, nil
}

// ReadScores reads a scores file (one CallScore per line). A torn last
// line is left out (ReadScoresWarn says so).
func ReadScores(path string) ([]scorer.CallScore, error) {
	s, _, err := ReadScoresWarn(path)
	return s, err
}

// ReadScoresWarn reads a scores file and says what it left out: a torn
// last line (a write cut short by a kill or a full disk).
func ReadScoresWarn(path string) ([]scorer.CallScore, []string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return decodeScores(b, path)
}

// DecodeScores reads CallScores, one JSON object per line. A torn last
// line is left out.
func DecodeScores(r io.Reader, name string) ([]scorer.CallScore, error) {
	s, _, err := DecodeScoresWarn(r, name)
	return s, err
}

// DecodeScoresWarn is DecodeScores, saying what it left out.
func DecodeScoresWarn(r io.Reader, name string) ([]scorer.CallScore, []string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	return decodeScores(b, name)
}

func decodeScores(b []byte, name string) ([]scorer.CallScore, []string, error) {
	body, torn := splitTorn(b)
	var warnings []string
	if torn != "" {
		warnings = append(warnings, tornWarning(name, len(torn)))
	}
	var out []scorer.CallScore
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if looksLikeEvent(sc.Bytes()) {
			return nil, warnings, fmt.Errorf("%s:%d: this is a history (run.jsonl), not scores: pass the results directory, or score it first", name, line)
		}
		var s scorer.CallScore
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, warnings, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if s.Call == "" || s.Outcome == "" {
			return nil, warnings, fmt.Errorf("%s:%d: not a call score (no call or outcome)", name, line)
		}
		out = append(out, s)
	}
	return out, warnings, sc.Err()
}

// looksLikeEvent says whether a JSON line is a history event rather than
// a score: events carry seq and kind, scores never do.
func looksLikeEvent(line []byte) bool {
	var probe struct {
		Seq  *int    `json:"seq"`
		Kind *string `json:"kind"`
	}
	return json.Unmarshal(line, &probe) == nil && probe.Seq != nil && probe.Kind != nil
}

// splitTorn splits off bytes after the last newline: every record ends in
// one, so they are a write cut short.
func splitTorn(b []byte) (body []byte, torn string) {
	i := bytes.LastIndexByte(b, '\n')
	tail := b[i+1:]
	if len(bytes.TrimSpace(tail)) == 0 {
		return b, ""
	}
	return b[:i+1], string(tail)
}

// SortScores orders scores by scenario id, then call id: output never
// depends on which call finished first.
func SortScores(s []scorer.CallScore) {
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].Scenario != s[j].Scenario {
			return s[i].Scenario < s[j].Scenario
		}
		return s[i].Call < s[j].Call
	})
}

// ReadMeta reads a results directory's meta.json.
func ReadMeta(dir string) (*Meta, error) {
	var m Meta
	ok, err := readJSONFile(filepath.Join(dir, MetaFile), &m)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: no %s: not a results directory", dir, MetaFile)
	}
	return &m, nil
}

// InUse says whether dir exists and holds anything: a run refuses to write
// into it unless told to (an earlier run's results would be lost).
func InUse(dir string) (bool, error) {
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !st.IsDir() {
		return true, fmt.Errorf("%s is a file, not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	return len(entries) > 0, err
}

// SameDir says whether a and b name the same directory.
func SameDir(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}
