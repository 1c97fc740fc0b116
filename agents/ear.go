package agents

import (
	"bytes"
	"hash/maphash"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/protocol/native"
)

// The ear: a SCRIPTED FAKE speech recognizer.
//
// It stands for the cloud speech-to-text service (outside the machine) a
// real voice agent sends its caller's audio to. It does not recognize
// speech. callproof's caller synthesizes each utterance into a speech cache
// shared on this machine before it plays it, so the ear identifies which
// cached utterance it is hearing by matching the μ-law frames that arrive
// on the wire against the cached utterances, encoded exactly as the caller
// encodes them (audio.MulawFrames of the cached PCM: whole 20 ms frames,
// an utterance starting on a frame boundary). It reads nothing but the
// frames the caller sent and the cache's files (the WAV and its .txt
// sidecar); it works only for utterances in that cache, i.e. only with
// callproof's own caller on this machine.
//
// How it hears:
//
//   - Every loud frame of every cached utterance is indexed by a hash of
//     its 160 μ-law bytes (near-silent frames, below MatchFloorDBFS, are
//     not: they are alike across utterances).
//   - A loud frame that arrives is looked up. A hit on frame j of
//     utterance U at stream frame n is a vote for the hypothesis "U started
//     at stream frame n-j". Utterances that share words share frames
//     (flite says a shared opening identically), so one frame may vote for
//     several hypotheses.
//   - A frame mixed with noise misses the index; it still votes for a
//     hypothesis already held when subtracting that hypothesis's expected
//     frame removes most of its energy (the rest is the noise). When no
//     hypothesis is held (noise over the utterance's start, or over all of
//     it), every third such frame is searched for among the cached frames
//     of about its energy by the same test; a hypothesis found that way
//     becomes speech after six votes.
//   - Noise can hide speech but not remove it: a frame a hypothesis expects
//     loud that arrives far quieter counts against it. That is how a
//     shorter utterance is told from a longer one that opens the same way.
//   - The first hit is the speech onset (barge-in needs it at once); the
//     final, with the cached text, comes when the best hypothesis's last
//     word has arrived (its last frame above audio.WordsFloorDBFS, where
//     the caller's own final is). A rival with another text that scores as well
//     and ends later is waited for; if the two cannot be told apart (the
//     words that differ were masked), the final has no text: the ear says
//     it did not catch it rather than guess. The detector's offset ends an
//     utterance too (cut short).
//   - An energy VAD (audio.VAD) runs beside it: an onset whose frames match
//     nothing is a non-speech sound (kind "noise"), which ends at the
//     offset or when speech is matched.
//   - A loud frame that matches nothing makes the index look for new files
//     in the cache directory (at most every RescanEvery, new files only).

// Ear defaults.
const (
	// DefaultMatchFloorDBFS: frames quieter than this are neither indexed
	// nor matched.
	DefaultMatchFloorDBFS = -45.0
	// DefaultRescanEvery bounds how often the cache directory is listed.
	DefaultRescanEvery = 100 * time.Millisecond
)

const (
	maxRefsPerFrame = 16 // a frame found in more places than this does not vote
	maxHyps         = 64 // hypotheses kept per utterance
	softChecks      = 8  // hypotheses a noisy frame is compared with
	missWeight      = 3  // votes one contradiction costs
	missFloorDBFS   = -40
	lostFrames      = 50 // frames (1 s) without a vote that end an utterance
	searchEvery     = 3  // unmatched loud frames per search under noise
	searchKeep      = 2  // hypotheses a search adds
	confirmVotes    = 6  // votes that make a hypothesis from a search speech
	tentativeGap    = 10 // frames a hypothesis from a search may go unconfirmed
)

// cachedUtt is one utterance of the speech cache as the caller sends it.
type cachedUtt struct {
	key       string // the cache file's stem
	text      string
	frames    [][]byte // μ-law, whole frames
	loud      []bool
	energy    []float64 // per frame, of the decoded samples
	firstLoud int
	lastLoud  int
	// lastWord is the last frame above audio.WordsFloorDBFS (at least
	// lastLoud): the caller's words end there, and so may its final.
	lastWord int
}

type frameRef struct {
	u *cachedUtt
	j int
}

// speechIndex indexes the speech cache's utterances by frame. One index
// serves every call of a Server; it is safe for concurrent use.
type speechIndex struct {
	dir   string
	floor float64
	every time.Duration
	seed  maphash.Seed

	scanMu   sync.Mutex // one scan at a time
	lastScan time.Time
	scans    int

	mu     sync.RWMutex
	seen   map[string]bool // stems indexed, or found unreadable
	utts   int
	byHash map[uint64][]frameRef
	// byLevel holds the loud frames by level (whole dB), for the search
	// under noise.
	byLevel map[int][]frameRef
}

func newSpeechIndex(dir string, floor float64, every time.Duration) *speechIndex {
	if floor == 0 {
		floor = DefaultMatchFloorDBFS
	}
	if every <= 0 {
		every = DefaultRescanEvery
	}
	return &speechIndex{dir: dir, floor: floor, every: every, seed: maphash.MakeSeed(),
		seen: map[string]bool{}, byHash: map[uint64][]frameRef{}, byLevel: map[int][]frameRef{}}
}

// lookup returns the cached frames equal to frame.
func (x *speechIndex) lookup(frame []byte) []frameRef {
	h := maphash.Bytes(x.seed, frame)
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []frameRef
	for _, r := range x.byHash[h] {
		if bytes.Equal(r.u.frames[r.j], frame) {
			out = append(out, r)
		}
	}
	return out
}

// size is the number of utterances indexed.
func (x *speechIndex) size() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.utts
}

// rescan indexes the cache files not seen yet. Unless force, it does
// nothing when the last scan was less than x.every ago; it reports whether
// it scanned.
func (x *speechIndex) rescan(force bool) bool {
	x.scanMu.Lock()
	defer x.scanMu.Unlock()
	if !force && time.Since(x.lastScan) < x.every {
		return false
	}
	x.lastScan = time.Now()
	x.scans++
	entries, err := os.ReadDir(x.dir)
	if err != nil {
		return true // no cache yet: nothing to hear
	}
	var fresh []string
	x.mu.RLock()
	for _, e := range entries {
		name := e.Name()
		stem, ok := strings.CutSuffix(name, ".wav")
		if !ok || strings.HasPrefix(name, ".") || !e.Type().IsRegular() || x.seen[stem] {
			continue
		}
		fresh = append(fresh, stem)
	}
	x.mu.RUnlock()
	sort.Strings(fresh)
	for _, stem := range fresh {
		u := x.load(stem)
		x.mu.Lock()
		if !x.seen[stem] {
			x.seen[stem] = true
			if u != nil {
				x.addLocked(u)
			}
		}
		x.mu.Unlock()
	}
	return true
}

// load reads one cached utterance; nil when it cannot be used. The WAV is
// written after its .txt sidecar, so a WAV without one is not the cache's.
func (x *speechIndex) load(stem string) *cachedUtt {
	txt, err := os.ReadFile(filepath.Join(x.dir, stem+".txt"))
	if err != nil {
		return nil
	}
	pcm, err := audio.ReadWAVFile(filepath.Join(x.dir, stem+".wav"))
	if err != nil || len(pcm) == 0 {
		return nil
	}
	u := &cachedUtt{key: stem, text: strings.TrimSuffix(string(txt), "\n"), frames: audio.MulawFrames(pcm), firstLoud: -1, lastLoud: -1}
	for _, f := range u.frames {
		canonMulaw(f)
	}
	u.loud = make([]bool, len(u.frames))
	u.energy = make([]float64, len(u.frames))
	for j, f := range u.frames {
		u.energy[j] = frameEnergy(f)
		if audio.LevelDBFS(audio.DecodeMulaw(f)) >= x.floor {
			u.loud[j] = true
			if u.firstLoud < 0 {
				u.firstLoud = j
			}
			u.lastLoud = j
		}
		if audio.LevelDBFS(audio.DecodeMulaw(f)) > audio.WordsFloorDBFS {
			u.lastWord = j
		}
	}
	if u.firstLoud < 0 {
		return nil // all silence: nothing to hear
	}
	u.lastWord = max(u.lastWord, u.lastLoud)
	return u
}

func (x *speechIndex) addLocked(u *cachedUtt) {
	x.utts++
	for j, f := range u.frames {
		if !u.loud[j] {
			continue
		}
		h := maphash.Bytes(x.seed, f)
		x.byHash[h] = append(x.byHash[h], frameRef{u: u, j: j})
		b := levelBin(u.energy[j])
		x.byLevel[b] = append(x.byLevel[b], frameRef{u: u, j: j})
	}
}

// mulawNegZero is μ-law's negative zero (0x7F; 0xFF is the positive one):
// both decode to 0, and an encoder given 0 writes 0xFF, so a frame that
// went through 16-bit PCM on its way (a Pipecat bot's pipeline, the ear's
// STT service, earstt) has 0xFF where the caller's encoder wrote 0x7F for
// a sample of -1. The ear compares frames with 0x7F read as 0xFF.
const mulawNegZero = 0x7F

// canonMulaw rewrites f's negative zeros as positive ones, in place, and
// returns it.
func canonMulaw(f []byte) []byte {
	for i, c := range f {
		if c == mulawNegZero {
			f[i] = 0xFF
		}
	}
	return f
}

// mulawValue decodes one μ-law byte (a table of audio.DecodeMulaw).
var mulawValue = func() (t [256]float64) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for i, v := range audio.DecodeMulaw(all) {
		t[i] = float64(v)
	}
	return t
}()

func frameEnergy(ulaw []byte) float64 {
	var e float64
	for _, c := range ulaw {
		v := mulawValue[c]
		e += v * v
	}
	return e
}

// levelBin is a frame's level in whole dB (of its energy per sample).
func levelBin(energy float64) int {
	if energy <= 0 {
		return -200
	}
	return int(math.Floor(10 * math.Log10(energy/audio.FrameSamples/(32768*32768))))
}

// noisyMatch is a cached frame that explains most of a noisy frame.
type noisyMatch struct {
	ref   frameRef
	ratio float64 // residual energy / frame energy
}

// search looks for the cached frames that explain most of a loud frame
// nothing matched exactly (speech under noise): frames whose energy is
// between half and a little over the frame's, whose subtraction leaves
// less than half of it. It returns the k best.
func (x *speechIndex) search(got []byte, k int) []noisyMatch {
	eg := frameEnergy(got)
	if eg <= 0 {
		return nil
	}
	var g [audio.FrameSamples]float64
	for i, c := range got[:audio.FrameSamples] {
		g[i] = mulawValue[c]
	}
	lo, hi := levelBin(eg*0.45), levelBin(eg*1.3)
	var best []noisyMatch
	x.mu.RLock()
	defer x.mu.RUnlock()
	for b := lo; b <= hi; b++ {
		for _, r := range x.byLevel[b] {
			es := r.u.energy[r.j]
			if es < 0.45*eg || es > 1.3*eg {
				continue
			}
			var er float64
			limit := 0.5 * eg
			for i, c := range r.u.frames[r.j] {
				d := g[i] - mulawValue[c]
				er += d * d
				if er >= limit {
					break
				}
			}
			if er >= limit {
				continue
			}
			m := noisyMatch{ref: r, ratio: er / eg}
			best = append(best, m)
			sort.Slice(best, func(a, b int) bool { return best[a].ratio < best[b].ratio })
			if len(best) > k {
				best = best[:k]
			}
		}
	}
	return best
}

// hyp is one hypothesis: utterance u started at stream frame d.
type hyp struct {
	u       *cachedUtt
	d       int
	votes   int
	exact   int // votes from frames found in the index
	lastHit int // stream frame of the latest vote
	misses  int // frames expected loud that arrived far quieter
	// tentative: found by the search under noise and not yet confirmed
	// by confirmVotes votes; it makes no onset.
	tentative bool
}

func (h *hyp) end() int { return h.d + h.u.lastLoud }

// wordsEnd is the stream frame of the hypothesis's last word: no final
// before it, as no caller says its words are over before then.
func (h *hyp) wordsEnd() int { return h.d + h.u.lastWord }

// score weighs votes against contradictions.
func (h *hyp) score() int { return h.votes - missWeight*h.misses }

type hypKey struct {
	u *cachedUtt
	d int
}

// HeardUtterance is one utterance the ear identified, with how well and
// how fast. Stream times count 20 ms frames from the call's first media
// frame, so they are independent of how busy the machine was.
type HeardUtterance struct {
	ID   string
	Text string
	// OnsetLatency is from the utterance's first loud frame to the frame
	// that made the onset (0: the first loud frame itself). Negative never.
	OnsetLatency time.Duration
	// FinalLatency is from the frame of the utterance's last word to the frame
	// that made the final (0: that frame itself).
	FinalLatency time.Duration
	LoudFrames   int  // loud frames of the cached utterance
	Exact        int  // frames found in the index
	Noisy        int  // frames that matched only once noise was allowed for
	AtOffset     bool // the final came from the detector's offset
	// Processing is the wall time the ear spent on the frame that made
	// the final (lookup, voting, any rescan).
	Processing time.Duration
}

// EarStats is what the ear of one call heard.
type EarStats struct {
	CallID string
	Frames int // media frames received
	// Heard lists the finals, in order: one per caller utterance when the
	// ear works.
	Heard  []HeardUtterance
	Onsets int // speech onsets (each should have its final)
	Sounds int // non-speech sounds (VAD onsets that matched no utterance)
	// Unmatched counts loud frames that matched no utterance.
	Unmatched int
	// Searched counts hypotheses the search under noise proposed.
	Searched int
	Indexed  int // utterances in the index at the end of the call
}

// Finals is the number of utterances heard.
func (s EarStats) Finals() int { return len(s.Heard) }

// Texts lists the texts heard, in order.
func (s EarStats) Texts() []string {
	out := make([]string, len(s.Heard))
	for i, h := range s.Heard {
		out[i] = h.Text
	}
	return out
}

// ear hears one call. It is used by one goroutine (the call's reader).
type ear struct {
	idx   *speechIndex
	vad   *audio.VAD
	floor float64
	n     int // frames pushed so far

	speaking  bool // an utterance has had its onset and not its final
	speechID  string
	onsetAt   int // stream frame of the onset
	hyps      map[hypKey]*hyp
	prevEnd   int // stream frame before which no new utterance starts
	lastVote  int // stream frame of the latest vote
	nSpeech   int
	soundOpen bool
	soundID   string
	nSound    int
	runHits   bool // a frame of the current VAD run matched
	unmatched int  // unmatched loud frames since the last search

	stats EarStats
}

func newEar(idx *speechIndex, vc audio.VADConfig) *ear {
	if vc == (audio.VADConfig{}) {
		vc = DefaultEarVAD()
	}
	return &ear{idx: idx, vad: audio.NewVAD(vc), floor: idx.floor, hyps: map[hypKey]*hyp{}, prevEnd: -1}
}

// push hears one media frame (μ-law, normally 160 bytes) and returns the
// native messages it makes, in order.
func (e *ear) push(ulaw []byte) []native.Message {
	t0 := time.Now()
	n := e.n
	e.n++
	e.stats.Frames++
	if len(ulaw) != audio.FrameSamples {
		// Not a whole frame: it cannot match the cache; pad or cut it so
		// the detector still sees 20 ms.
		f := make([]byte, audio.FrameSamples)
		for i := range f {
			f[i] = audio.MulawSilence
		}
		copy(f, ulaw)
		ulaw = f
	}
	if bytes.IndexByte(ulaw, mulawNegZero) >= 0 {
		ulaw = canonMulaw(bytes.Clone(ulaw))
	}
	pcm := audio.DecodeMulaw(ulaw)
	level := audio.LevelDBFS(pcm)
	vev := e.vad.Push(pcm)
	var out []native.Message

	exactHit := false
	if level >= e.floor {
		refs := e.idx.lookup(ulaw)
		soft := false
		if len(refs) == 0 {
			soft = e.softVote(n, pcm, nil)
			if !soft && e.idx.rescan(false) {
				refs = e.idx.lookup(ulaw)
			}
		}
		if len(refs) > 0 {
			exactHit = e.vote(n, refs, pcm)
		}
		if !exactHit && !soft {
			e.stats.Unmatched++
			if !e.speaking {
				e.searchNoisy(n, ulaw)
			}
		}
	}
	confirmed := false
	if !e.speaking {
		confirmed = e.confirm(n)
	}
	if exactHit || confirmed {
		e.runHits = true
		if !e.speaking {
			out = append(out, e.onset(n)...)
		}
	}

	e.contradict(n, ulaw)
	if exactHit || e.lastHitIs(n) {
		e.lastVote = n
	}
	if e.speaking {
		if best, ready := e.decide(n, false); ready {
			out = append(out, e.final(n, best, false, t0))
		} else if len(e.hyps) == 0 && n-e.lastVote > lostFrames {
			// Speech that matches nothing any more: end it, unidentified.
			out = append(out, e.final(n, nil, true, t0))
		}
	}
	switch vev {
	case audio.VADOnset:
		if !e.speaking && !e.runHits && !e.soundOpen {
			e.nSound++
			e.soundID = "n" + itoa(e.nSound)
			e.soundOpen = true
			e.stats.Sounds++
			out = append(out, native.Message{Event: native.EventSound, Sound: &native.Sound{ID: e.soundID, Phase: native.PhaseOnset, Kind: "noise"}})
		}
	case audio.VADOffset:
		if e.speaking {
			best, _ := e.decide(n, true)
			out = append(out, e.final(n, best, true, t0))
		}
		out = append(out, e.endSound()...)
		e.runHits = false
	}
	if !e.vad.Speaking() && vev != audio.VADOffset && level < e.floor {
		e.runHits = false
	}
	return out
}

// searchNoisy runs the search under noise every searchEvery unmatched loud
// frames, adding its best matches as tentative hypotheses.
func (e *ear) searchNoisy(n int, ulaw []byte) {
	e.unmatched++
	if e.unmatched < searchEvery {
		return
	}
	e.unmatched = 0
	for _, m := range e.idx.search(ulaw, searchKeep) {
		// Utterances that share words share frames: every cached frame
		// equal to the one found is as likely.
		refs := e.idx.lookup(m.ref.u.frames[m.ref.j])
		if len(refs) > maxRefsPerFrame {
			continue
		}
		for _, r := range refs {
			d := n - r.j
			if d+r.u.firstLoud <= e.prevEnd {
				continue
			}
			k := hypKey{r.u, d}
			if e.hyps[k] != nil {
				continue
			}
			if len(e.hyps) >= maxHyps {
				e.pruneHyps()
			}
			e.hyps[k] = &hyp{u: r.u, d: d, votes: 1, lastHit: n, tentative: true}
			e.stats.Searched++
		}
	}
}

// confirm drops the tentative hypotheses that stopped matching and
// confirms those with enough votes; it reports whether one was confirmed.
func (e *ear) confirm(n int) bool {
	ok := false
	for k, h := range e.hyps {
		if !h.tentative {
			continue
		}
		switch {
		case h.votes >= confirmVotes:
			h.tentative = false
			ok = true
		case n-h.lastHit > tentativeGap:
			delete(e.hyps, k)
		}
	}
	return ok
}

// vote counts exact hits (skipping placements that would start inside the
// utterance already heard) and reports whether any counted for speech.
func (e *ear) vote(n int, refs []frameRef, pcm audio.PCM) bool {
	hit := false
	voting := len(refs) <= maxRefsPerFrame
	for _, r := range refs {
		d := n - r.j
		if d+r.u.firstLoud <= e.prevEnd {
			continue // an utterance cannot start before the last one ended
		}
		hit = true
		if !voting {
			continue
		}
		k := hypKey{r.u, d}
		h := e.hyps[k]
		if h == nil {
			if len(e.hyps) >= maxHyps {
				e.pruneHyps()
			}
			h = &hyp{u: r.u, d: d}
			e.hyps[k] = h
		}
		if h.lastHit != n || h.votes == 0 {
			h.votes++
			h.exact++
			h.lastHit = n
		}
	}
	if hit && voting {
		e.softVote(n, pcm, refs) // hypotheses the index did not name
	}
	return hit
}

// softVote compares a loud frame with what the leading hypotheses expect
// there: when subtracting the expected frame removes most of the frame's
// energy, the rest is noise over the right speech. Hypotheses already
// named by refs are skipped. It reports whether any hypothesis matched.
func (e *ear) softVote(n int, pcm audio.PCM, refs []frameRef) bool {
	if len(e.hyps) == 0 {
		return false
	}
	named := map[hypKey]bool{}
	for _, r := range refs {
		named[hypKey{r.u, n - r.j}] = true
	}
	top := e.ranked()
	matched := false
	for i, h := range top {
		if i >= softChecks {
			break
		}
		j := n - h.d
		if named[hypKey{h.u, h.d}] || j < 0 || j >= len(h.u.frames) || !h.u.loud[j] || h.lastHit == n {
			continue
		}
		if residualMatch(pcm, audio.DecodeMulaw(h.u.frames[j])) {
			h.votes++
			h.lastHit = n
			matched = true
		}
	}
	return matched
}

// residualMatch: got minus want keeps less than half of got's energy.
func residualMatch(got, want audio.PCM) bool {
	var eg, er float64
	for i := range got {
		g := float64(got[i])
		r := g - float64(want[i])
		eg += g * g
		er += r * r
	}
	return eg > 0 && er < 0.5*eg
}

// ranked lists the hypotheses, best score first (then most recent hit,
// then the earliest start), so the order never depends on map order.
func (e *ear) ranked() []*hyp {
	out := make([]*hyp, 0, len(e.hyps))
	for _, h := range e.hyps {
		out = append(out, h)
	}
	sort.Slice(out, func(a, b int) bool {
		x, y := out[a], out[b]
		switch {
		case x.score() != y.score():
			return x.score() > y.score()
		case x.lastHit != y.lastHit:
			return x.lastHit > y.lastHit
		case x.d != y.d:
			return x.d < y.d
		}
		return x.u.key < y.u.key
	})
	return out
}

func (e *ear) pruneHyps() {
	r := e.ranked()
	for _, h := range r[maxHyps/2:] {
		delete(e.hyps, hypKey{h.u, h.d})
	}
}

// contradict counts, for each hypothesis, the frames it expects loud that
// arrive far quieter: noise can hide speech but never remove it, so such
// a frame says the hypothesis is wrong (a rival sharing its opening, or an
// utterance longer than the one played).
func (e *ear) contradict(n int, ulaw []byte) {
	if len(e.hyps) == 0 {
		return
	}
	eg := frameEnergy(ulaw)
	for _, h := range e.hyps {
		j := n - h.d
		if j < 0 || j >= len(h.u.frames) || !h.u.loud[j] {
			continue
		}
		if es := h.u.energy[j]; eg < es/4 && levelBin(es) >= missFloorDBFS {
			h.misses++
		}
	}
}

// decide picks the utterance heard: the best-scoring hypothesis once its
// last word's frame has arrived, unless a rival with another text scores as
// well and ends later (wait for it), or ends no later (ambiguous: nil).
// With now (the detector's offset), it decides at once: ambiguous is nil.
func (e *ear) decide(n int, now bool) (*hyp, bool) {
	r := e.ranked()
	if len(r) == 0 {
		return nil, now
	}
	best := r[0]
	if !now && n < best.wordsEnd() {
		return nil, false
	}
	for _, h := range r[1:] {
		if h.score() < best.score() {
			break
		}
		if h.u.text == best.u.text {
			continue
		}
		if !now && h.wordsEnd() > n {
			return nil, false
		}
		return nil, true
	}
	return best, true
}

// lastHitIs reports whether any hypothesis got a vote at frame n.
func (e *ear) lastHitIs(n int) bool {
	for _, h := range e.hyps {
		if h.lastHit == n && h.votes > 0 {
			return true
		}
	}
	return false
}

func (e *ear) onset(n int) []native.Message {
	out := e.endSound()
	e.nSpeech++
	e.speechID = "u" + itoa(e.nSpeech)
	e.speaking = true
	e.onsetAt = n
	e.lastVote = n
	e.stats.Onsets++
	return append(out, native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: e.speechID, Phase: native.PhaseOnset}})
}

// final ends the utterance as best's text; a nil best (speech was heard
// but no utterance could be told) gives an empty text.
func (e *ear) final(n int, best *hyp, atOffset bool, t0 time.Time) native.Message {
	h := HeardUtterance{ID: e.speechID, AtOffset: atOffset}
	e.prevEnd = n
	if best != nil {
		u := best.u
		for _, l := range u.loud {
			if l {
				h.LoudFrames++
			}
		}
		h.Text = u.text
		h.OnsetLatency = time.Duration(max(e.onsetAt-(best.d+u.firstLoud), 0)) * audio.FrameDuration
		h.FinalLatency = time.Duration(max(n-best.wordsEnd(), 0)) * audio.FrameDuration
		h.Exact, h.Noisy = best.exact, best.votes-best.exact
		// A next utterance starts after this one's last loud frame, or
		// after now if this one was cut short.
		e.prevEnd = min(best.end(), n)
	}
	h.Processing = time.Since(t0)
	e.stats.Heard = append(e.stats.Heard, h)
	e.speaking = false
	clear(e.hyps)
	// The utterance is over: listen afresh, so a sound right after it is
	// its own onset rather than part of the utterance's hangover.
	e.vad.Reset()
	e.runHits = false
	return native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: e.speechID, Phase: native.PhaseFinal, Text: h.Text}}
}

func (e *ear) endSound() []native.Message {
	if !e.soundOpen {
		return nil
	}
	e.soundOpen = false
	return []native.Message{{Event: native.EventSound, Sound: &native.Sound{ID: e.soundID, Phase: native.PhaseOffset, Kind: "noise"}}}
}

// snapshot returns the stats so far.
func (e *ear) snapshot() EarStats {
	s := e.stats
	s.Heard = append([]HeardUtterance(nil), s.Heard...)
	s.Indexed = e.idx.size()
	return s
}

func itoa(n int) string {
	return strconv.Itoa(n)
}

// SpeechIndex is the ear's index of a speech cache, for an ear outside an
// agents.Server (earstt, the ear as a streaming speech-to-text service).
// One index serves many ears at once.
type SpeechIndex struct{ x *speechIndex }

// NewSpeechIndex indexes the speech cache in dir, with the ear's defaults
// (DefaultMatchFloorDBFS, DefaultRescanEvery). It reads the directory at
// once (a missing one is an empty cache, listed again on the first loud
// frame nothing matches).
func NewSpeechIndex(dir string) *SpeechIndex {
	x := newSpeechIndex(dir, 0, 0)
	x.rescan(true)
	return &SpeechIndex{x: x}
}

// Has reports whether frame (audio.FrameSamples μ-law bytes) is a loud
// frame of a cached utterance, exactly.
func (s *SpeechIndex) Has(frame []byte) bool {
	if bytes.IndexByte(frame, mulawNegZero) >= 0 {
		frame = canonMulaw(bytes.Clone(frame))
	}
	return len(s.x.lookup(frame)) > 0
}

// Loud reports whether frame is loud enough to be matched (at or above
// DefaultMatchFloorDBFS, the index's floor).
func (s *SpeechIndex) Loud(frame []byte) bool {
	return audio.LevelDBFS(audio.DecodeMulaw(frame)) >= s.x.floor
}

// Len is the number of utterances indexed.
func (s *SpeechIndex) Len() int { return s.x.size() }

// Ear hears one stream of the caller's μ-law frames, as a reference
// agent's ear hears a call (the SCRIPTED FAKE recognizer above: it
// identifies only utterances in callproof's own speech cache). Not safe
// for concurrent use.
type Ear struct{ e *ear }

// NewEar is an ear on idx with the reference agents' detector
// (DefaultEarVAD).
func NewEar(idx *SpeechIndex) *Ear { return &Ear{e: newEar(idx.x, audio.VADConfig{})} }

// Push hears the stream's next 20 ms frame (audio.FrameSamples μ-law
// bytes; frames are counted from the stream's first, so a stream must
// start on the caller's frame boundary) and returns what it made: speech
// onsets and finals (native.EventSpeech; a final's Text is "" when the ear
// could not tell which utterance it heard) and non-speech sounds
// (native.EventSound).
func (e *Ear) Push(frame []byte) []native.Message { return e.e.push(frame) }

// Stats is what the ear heard so far.
func (e *Ear) Stats() EarStats { return e.e.snapshot() }
