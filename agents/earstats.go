package agents

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
)

// The ear's counts over HTTP: a load run in another process checks what
// the agent heard in each of its calls (callproof load --fidelity).

// EarStatsPath is where a Server in audio mode answers GET with an
// EarReport, on the listener it takes calls on.
const EarStatsPath = "/stats/ear"

// DefaultKeepEarStats is how many finished calls' ear counts a server keeps
// by default: a 500-call load run many times over, at a few hundred bytes
// a call (a few MB).
const DefaultKeepEarStats = 10000

// EarReport is the body of GET /stats/ear.
type EarReport struct {
	// Calls are the kept calls, oldest first; with ?after=N only those
	// whose Seq is above N; with ?totals none.
	Calls  []EarCall `json:"calls"`
	Totals EarTotals `json:"totals"`
}

// EarCall is what the ear heard in one finished call.
type EarCall struct {
	// Seq numbers finished calls from 1, in the order they were filed;
	// it tells two calls with one id apart.
	Seq       int        `json:"seq"`
	CallID    string     `json:"call_id"`
	Heard     []EarHeard `json:"heard"`  // the finals, in order
	Onsets    int        `json:"onsets"` // speech onsets: one per final when all is well
	Sounds    int        `json:"sounds"`
	Frames    int        `json:"frames"`
	Unmatched int        `json:"unmatched"` // loud frames that matched no cached utterance
}

// EarHeard is one utterance heard: its text ("" when the ear could not
// tell which utterance it was) and whether the detector's offset ended it
// (cut short).
type EarHeard struct {
	ID       string `json:"id"`
	Text     string `json:"text"`
	CutShort bool   `json:"cut_short,omitempty"`
}

// EarTotals are over every call finished since the server started, kept
// or not.
type EarTotals struct {
	Calls      int `json:"calls"` // also the Seq of the latest
	Utterances int `json:"utterances"`
	Onsets     int `json:"onsets"`
	Sounds     int `json:"sounds"`
	Kept       int `json:"kept"`    // calls still listed
	Dropped    int `json:"dropped"` // calls no longer listed (over the cap)
	Cap        int `json:"cap"`
}

// earLog keeps the latest calls' ear counts in a ring of fixed size, so a
// server that runs for days holds bounded memory.
type earLog struct {
	mu     sync.Mutex
	ring   []keptEar
	next   int // where the next call goes once the ring is full
	totals EarTotals
}

type keptEar struct {
	seq int
	st  EarStats
}

func newEarLog(keep int) *earLog {
	if keep <= 0 {
		keep = DefaultKeepEarStats
	}
	return &earLog{ring: make([]keptEar, 0, min(keep, 1024)), totals: EarTotals{Cap: keep}}
}

func (l *earLog) add(s EarStats) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := &l.totals
	t.Calls++
	t.Utterances += s.Finals()
	t.Onsets += s.Onsets
	t.Sounds += s.Sounds
	e := keptEar{seq: t.Calls, st: s}
	if len(l.ring) < t.Cap {
		l.ring = append(l.ring, e)
	} else {
		l.ring[l.next] = e
		l.next = (l.next + 1) % t.Cap
		t.Dropped++
	}
	t.Kept = len(l.ring)
}

// each calls f on the kept calls with seq > after, oldest first, under
// the lock; f must not keep st.Heard.
func (l *earLog) each(after int, f func(seq int, st *EarStats)) EarTotals {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.ring)
	for i := range n {
		e := &l.ring[(l.next+i)%n]
		if e.seq > after {
			f(e.seq, &e.st)
		}
	}
	return l.totals
}

// list returns the kept calls' stats, oldest first.
func (l *earLog) list() []EarStats {
	var out []EarStats
	l.each(0, func(_ int, st *EarStats) {
		c := *st
		c.Heard = append([]HeardUtterance(nil), st.Heard...)
		out = append(out, c)
	})
	return out
}

// report is the EarReport of the calls filed after seq after; totalsOnly
// leaves the calls out.
func (l *earLog) report(after int, totalsOnly bool) EarReport {
	r := EarReport{Calls: []EarCall{}}
	r.Totals = l.each(after, func(seq int, st *EarStats) {
		if totalsOnly {
			return
		}
		c := EarCall{Seq: seq, CallID: st.CallID, Heard: make([]EarHeard, len(st.Heard)),
			Onsets: st.Onsets, Sounds: st.Sounds, Frames: st.Frames, Unmatched: st.Unmatched}
		for i, h := range st.Heard {
			c.Heard[i] = EarHeard{ID: h.ID, Text: h.Text, CutShort: h.AtOffset}
		}
		r.Calls = append(r.Calls, c)
	})
	return r
}

// EarReport is what GET /stats/ear answers: the kept calls filed after
// seq after (0: all of them) and the totals. Empty in text mode.
func (s *Server) EarReport(after int) EarReport {
	if s.audio == nil {
		return EarReport{Calls: []EarCall{}}
	}
	return s.audio.ears.report(after, false)
}

// serveEarStats answers GET /stats/ear[?after=N][&totals].
func (s *Server) serveEarStats(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	after := 0
	if v := q.Get("after"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			http.Error(w, "after: want a call sequence number", http.StatusBadRequest)
			return
		}
		after = n
	}
	rep := s.audio.ears.report(after, q.Has("totals"))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(rep)
}
