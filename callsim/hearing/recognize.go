package hearing

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Debian's pocketsphinx 0.8 and pocketsphinx-en-us paths.
const (
	DefaultBin  = "pocketsphinx_continuous"
	DefaultHMM  = "/usr/share/pocketsphinx/model/en-us/en-us"
	DefaultDict = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"
	// DefaultTimeout bounds one decoder run; a 10 s utterance decodes in
	// about a second on one core.
	DefaultTimeout = 30 * time.Second
	// g2pTimeout bounds one flite run that spells out an unknown word.
	g2pTimeout = 5 * time.Second
)

// Recognizer runs pocketsphinx_continuous on one utterance at a time. The
// zero value uses Debian's paths. It is safe for concurrent use.
type Recognizer struct {
	Bin, HMM, Dict string
	// Flite, when set, spells words the dictionary lacks (names in the
	// records) with flite's letter-to-sound rules. "" looks flite up on
	// PATH; "-" disables it (such words are then left out of the grammar).
	Flite string
	// Timeout bounds each program run; 0 means DefaultTimeout.
	Timeout time.Duration
	// Args are extra decoder flags (e.g. "-lw", "8"), for tuning; they
	// replace the defaults of the same name.
	Args []string
	// CrossCheck decodes each utterance a second time with other weights
	// (Result.Check) and a third time with a grammar that offers none of
	// the records' codes (Result.Free); Grammar.Hear then marks the
	// utterance Uncertain when the decodes disagree on an entity, on the
	// kinds of claim words, or on a code the first decode took from the
	// records. It triples the decoding time and is what makes Uncertain
	// useful (docs/PERFORMANCE.md).
	CrossCheck bool
	// Nice, when above 0, runs the decoder under nice(1) at that
	// niceness: recognition then yields the CPU to the calls' frame
	// clocks and to the agent (DefaultNice in the harness).
	Nice int
	// Pool, when set, bounds the decoder runs under way at once, across
	// every Recognizer sharing it.
	Pool *Pool

	// mirror is the upsampler's image gain; 0 means defaultMirror. Tests
	// set it to measure alternatives.
	mirror float64

	mu   sync.Mutex
	dict map[string][]string // word → pronunciation lines, loaded once
	g2p  map[string]string   // word → phones from flite ("" when it failed)
	seen map[[sha256.Size]byte]*decoded
	// remembered counts the runs saved.
	remembered atomic.Int64
}

// MaxRemembered bounds the decodes a Recognizer remembers (decoded): a
// run of 200 calls has about a thousand utterances.
const MaxRemembered = 20000

// decoded is one decoder run's outcome, shared with every identical run
// asked for while it was under way or after: copies of a scenario hear
// the same synthesized replies, byte for byte, and pocketsphinx gives the
// same words for the same samples, grammar and flags.
type decoded struct {
	done  chan struct{}
	words []string
	err   error
}

// Result is what the decoder heard.
type Result struct {
	Text  string
	Words []string
	// Check is the cross-check decode's words (Recognizer.CrossCheck).
	Check []string
	// Free is the words of the decode whose grammar offers no record code
	// (Recognizer.CrossCheck): a code the first decode heard only because
	// the grammar offered it — a wrong order number "snapped" onto a
	// record's, the false pass or false fail a grammar of known codes can
	// cause — comes out differently here.
	Free []string
	// Confidence is the word agreement of the two decodes (0..1) with
	// CrossCheck, else 0: pocketsphinx 0.8 gives no usable posterior for
	// grammar search (every word comes out at 1.0). Decide on
	// Heard.Uncertain, not on this number.
	Confidence float64
}

// Recognize decodes 8 kHz mono 16-bit samples against g.
func (r *Recognizer) Recognize(ctx context.Context, pcm []int16, g *Grammar) (Result, error) {
	path, err := r.lookPath() // wraps exec.ErrNotFound when it is missing
	if err != nil || len(pcm) == 0 {
		return Result{}, err
	}
	return r.decode8(ctx, path, pcm, g, true, r.CrossCheck)
}

// Decode is Recognize's first decode alone, whatever CrossCheck says: the
// one every utterance needs. Check adds the cross-check later, to the
// utterances whose words a verdict reads.
func (r *Recognizer) Decode(ctx context.Context, pcm []int16, g *Grammar) (Result, error) {
	path, err := r.lookPath()
	if err != nil || len(pcm) == 0 {
		return Result{}, err
	}
	return r.decode8(ctx, path, pcm, g, true, false)
}

// Check adds the cross-check decodes (Result.Check, Result.Free) to res,
// the first decode of pcm: Grammar.Hear of the result is then what
// Recognize with CrossCheck gives.
func (r *Recognizer) Check(ctx context.Context, pcm []int16, g *Grammar, res Result) (Result, error) {
	path, err := r.lookPath()
	if err != nil {
		return Result{}, err
	}
	if len(pcm) == 0 {
		res.Check, res.Free = []string{}, []string{}
		return res, nil
	}
	c, err := r.decode8(ctx, path, pcm, g, false, true)
	if err != nil {
		return Result{}, err
	}
	res.Check, res.Free = c.Check, c.Free
	res.Confidence = agreement(res.Words, res.Check)
	return res, nil
}

func (r *Recognizer) lookPath() (string, error) {
	bin := r.Bin
	if bin == "" {
		bin = DefaultBin
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", fmt.Errorf("hearing: %w", err)
	}
	return path, nil
}

// decode16 decodes 16 kHz samples: the first decode (first) and the
// cross-check's two (check).
// decode8 decodes 8 kHz samples in a turn of the pool's (Pool.prepare):
// the preparation below happens only for the utterances about to be
// decoded, not for every one waiting.
func (r *Recognizer) decode8(ctx context.Context, path string, pcm []int16, g *Grammar, first, check bool) (Result, error) {
	done, err := r.Pool.prepare(ctx)
	if err != nil {
		return Result{}, err
	}
	defer done()
	return r.decode16(ctx, path, upsample2(pcm, r.mirrorGain()), g, first, check)
}

func (r *Recognizer) decode16(ctx context.Context, path string, pcm16 []int16, g *Grammar, first, check bool) (Result, error) {
	dict, err := r.dictionary()
	if err != nil {
		return Result{}, err
	}
	dir, err := os.MkdirTemp("", "hearing-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)

	words := g.Words()
	entries := r.pronounce(ctx, dict, g, words)
	known := func(w string) bool { _, ok := entries[w]; return ok }
	gram := g.render(known)
	free := *g
	free.noKnown = true
	var db strings.Builder
	keys := make([]string, 0, len(entries))
	for w := range entries {
		keys = append(keys, w)
	}
	sort.Strings(keys)
	for _, w := range keys {
		for _, line := range entries[w] {
			db.WriteString(line)
			db.WriteByte('\n')
		}
	}
	files := map[string][]byte{
		"g.gram":      []byte(gram),
		"free.gram":   []byte(free.render(known)),
		"g.dict":      []byte(db.String()),
		"in.wav":      wav16k(pcm16),
		"decoder.log": nil,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return Result{}, err
		}
	}
	hmm := r.HMM
	if hmm == "" {
		hmm = DefaultHMM
	}
	base := []string{"-hmm", hmm, "-dict", filepath.Join(dir, "g.dict"), "-jsgf", filepath.Join(dir, "g.gram"),
		"-infile", filepath.Join(dir, "in.wav"), "-samprate", "16000", "-time", "yes",
		"-logfn", filepath.Join(dir, "decoder.log")}
	decodeWith := func(base, tuning []string) ([]string, error) {
		out, err := r.run(ctx, path, append(slices.Clone(base), tuning...)...)
		if err != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "decoder.log"))
			return nil, fmt.Errorf("hearing: pocketsphinx: %v: %s", err, lastLines(log, 3))
		}
		return parseTimes(out), nil
	}
	decodeWith = r.remember(ctx, files, decodeWith)
	decode := func(tuning []string) ([]string, error) { return decodeWith(base, tuning) }
	var res Result
	if first {
		if res.Words, err = decode(decoderArgs(defaultTuning(), r.Args)); err != nil {
			return Result{}, err
		}
		res.Text = strings.Join(res.Words, " ")
	}
	if check {
		if res.Check, err = decode(decoderArgs(checkTuning(), r.Args)); err != nil {
			return Result{}, err
		}
		if res.Check == nil {
			res.Check = []string{} // checked, and heard nothing
		}
		res.Confidence = agreement(res.Words, res.Check)
		freeBase := slices.Clone(base)
		freeBase[slices.Index(freeBase, "-jsgf")+1] = filepath.Join(dir, "free.gram")
		if res.Free, err = decodeWith(freeBase, decoderArgs(defaultTuning(), r.Args)); err != nil {
			return Result{}, err
		}
		if res.Free == nil {
			res.Free = []string{}
		}
	}
	return res, nil
}

// remember wraps a decoder run so that a run identical to one already
// done or under way (the same samples, grammar, dictionary and flags)
// takes its words instead of decoding again. A failed run is forgotten,
// so one call's timeout is not another's.
func (r *Recognizer) remember(ctx context.Context, files map[string][]byte, run func(base, tuning []string) ([]string, error)) func(base, tuning []string) ([]string, error) {
	return func(base, tuning []string) ([]string, error) {
		h := sha256.New()
		for _, name := range []string{"in.wav", "g.dict", "g.gram", "free.gram"} {
			fmt.Fprintf(h, "%s %d\n", name, len(files[name]))
			h.Write(files[name])
		}
		for _, a := range append(slices.Clone(base), tuning...) {
			// Paths name the run's own temporary files: keep only which.
			fmt.Fprintf(h, "%s\n", filepath.Base(a))
		}
		var key [sha256.Size]byte
		h.Sum(key[:0])
		for {
			r.mu.Lock()
			d, ok := r.seen[key]
			if !ok {
				if r.seen == nil {
					r.seen = map[[sha256.Size]byte]*decoded{}
				}
				d = &decoded{done: make(chan struct{})}
				if len(r.seen) < MaxRemembered {
					r.seen[key] = d
				}
				r.mu.Unlock()
				d.words, d.err = run(base, tuning)
				if d.err != nil {
					r.mu.Lock()
					if r.seen[key] == d {
						delete(r.seen, key)
					}
					r.mu.Unlock()
				}
				close(d.done)
				return slices.Clone(d.words), d.err
			}
			r.mu.Unlock()
			select {
			case <-d.done:
				if d.err == nil {
					r.remembered.Add(1)
					return slices.Clone(d.words), nil
				}
				// Its run failed (its call's own deadline, say): try again.
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
	}
}

// Remembered is how many decoder runs were saved by taking an identical
// run's words.
func (r *Recognizer) Remembered() int64 { return r.remembered.Load() }

// agreement is how much two decodes share: twice their longest common
// word subsequence over their total length (1 when both are empty).
func agreement(a, b []string) float64 {
	if len(a)+len(b) == 0 {
		return 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			default:
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return 2 * float64(prev[len(b)]) / float64(len(a)+len(b))
}

// defaultTuning are the decoder flags measured best for this grammar
// (docs/PERFORMANCE.md): narrower beams than pocketsphinx's defaults cut
// decoding time by about 2.7 with the same words heard; a word insertion
// penalty and language weight well above the defaults (0.65, 6.5) stop
// short free words ("for", "once", "a") from taking a code's digits.
func defaultTuning() []string {
	return []string{"-beam", "1e-30", "-pbeam", "1e-30", "-wbeam", "1e-20", "-wip", "0.05", "-lw", "10"}
}

// checkTuning is the cross-check decode's: the same search with the
// decoder's default language weight. Where the audio is clear both hear
// the same entities; where it is not, they tend to go wrong differently
// (docs/PERFORMANCE.md has how many wrong and right utterances it flags).
func checkTuning() []string {
	return []string{"-beam", "1e-30", "-pbeam", "1e-30", "-wbeam", "1e-20", "-wip", "0.05"}
}

// decoderArgs is a tuning with extra flags applied over it (the decoder
// rejects a flag given twice).
func decoderArgs(def, extra []string) []string {
	var out []string
	for i := 0; i+1 < len(def); i += 2 {
		if !slices.Contains(extra, def[i]) {
			out = append(out, def[i], def[i+1])
		}
	}
	return append(out, extra...)
}

// defaultMirror: the image at full level (zero-stuffing) recognized best.
const defaultMirror = 1.0

func (r *Recognizer) mirrorGain() float64 {
	if r.mirror != 0 {
		return max(r.mirror, 0)
	}
	return defaultMirror
}

func (r *Recognizer) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultTimeout
}

// run executes one bounded program and returns its stdout.
func (r *Recognizer) run(ctx context.Context, path string, args ...string) ([]byte, error) {
	release, err := r.Pool.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, r.timeout())
	defer cancel()
	if r.Nice > 0 {
		if nice, err := exec.LookPath("nice"); err == nil {
			args = append([]string{"-n", strconv.Itoa(r.Nice), path}, args...)
			path = nice
		}
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.WaitDelay = time.Second // do not wait on a stuck pipe after the kill
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%v after %v", ctx.Err(), r.timeout())
		}
		return nil, err
	}
	return out.Bytes(), nil
}

// parseTimes reads -time yes output ("word start end prob" per line),
// dropping silences, fillers and alternate-pronunciation marks.
func parseTimes(out []byte) []string {
	var words []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 || !isNumber(f[1]) || !isNumber(f[2]) || !isNumber(f[3]) {
			continue // the hypothesis line comes first and may have four words
		}
		w := f[0]
		if i := strings.IndexByte(w, '('); i > 0 {
			w = w[:i]
		}
		if w == "" || strings.HasPrefix(w, "<") || strings.HasPrefix(w, "[") || strings.HasPrefix(w, "(") {
			continue
		}
		words = append(words, w)
	}
	return words
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// dictionary loads the pronunciation dictionary once per Recognizer.
func (r *Recognizer) dictionary() (map[string][]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dict != nil {
		return r.dict, nil
	}
	path := r.Dict
	if path == "" {
		path = DefaultDict
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("hearing: dictionary: %w", err)
	}
	d := map[string][]string{}
	for _, line := range strings.Split(string(data), "\n") {
		w, _, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if i := strings.IndexByte(w, '('); i > 0 {
			w = w[:i]
		}
		d[w] = append(d[w], line)
	}
	r.dict = d
	r.g2p = map[string]string{}
	return d, nil
}

// pronounce returns dictionary lines for the words, spelling unknown names
// with flite when it can; words it cannot pronounce are absent.
func (r *Recognizer) pronounce(ctx context.Context, dict map[string][]string, g *Grammar, words []string) map[string][]string {
	out := make(map[string][]string, len(words))
	for _, w := range words {
		if lines, ok := dict[w]; ok {
			out[w] = lines
			continue
		}
		if !g.spellable(w) {
			continue // a vocabulary word the dictionary lacks is a misspelt form: leave it out
		}
		if ph := r.spell(ctx, w); ph != "" {
			out[w] = []string{w + " " + ph}
		}
	}
	return out
}

// spell asks flite for a word's phones ("okafor" → "OW K AH F ER").
func (r *Recognizer) spell(ctx context.Context, w string) string {
	r.mu.Lock()
	ph, done := r.g2p[w]
	r.mu.Unlock()
	if done {
		return ph
	}
	if r.Flite != "-" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyz'") == "" {
		bin := r.Flite
		if bin == "" {
			bin = "flite"
		}
		if path, err := exec.LookPath(bin); err == nil {
			ctx, cancel := context.WithTimeout(ctx, g2pTimeout)
			out, err := exec.CommandContext(ctx, path, "-t", w, "-ps", "-o", "none").Output()
			cancel()
			if err == nil {
				ph = fliteToCMU(string(out))
			}
		}
	}
	r.mu.Lock()
	r.g2p[w] = ph
	r.mu.Unlock()
	return ph
}

// fliteToCMU maps flite's phone names onto the en-us model's set.
func fliteToCMU(ps string) string {
	var out []string
	for _, p := range strings.Fields(ps) {
		switch p {
		case "pau", "h#", "brth":
			continue
		case "ax":
			p = "ah"
		case "axr":
			p = "er"
		}
		out = append(out, strings.ToUpper(p))
	}
	return strings.Join(out, " ")
}

// wav16k wraps 16 kHz mono samples in a 44-byte WAV header, which is what
// pocketsphinx_continuous checks for a .wav input.
func wav16k(pcm []int16) []byte {
	const rate = 16000
	n := uint32(2 * len(pcm))
	b := make([]byte, 44+len(pcm)*2)
	le := binary.LittleEndian
	copy(b, "RIFF")
	le.PutUint32(b[4:], 36+n)
	copy(b[8:], "WAVEfmt ")
	le.PutUint32(b[16:], 16)
	le.PutUint16(b[20:], 1) // PCM
	le.PutUint16(b[22:], 1) // mono
	le.PutUint32(b[24:], rate)
	le.PutUint32(b[28:], 2*rate)
	le.PutUint16(b[32:], 2)
	le.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	le.PutUint32(b[40:], n)
	for i, v := range pcm {
		le.PutUint16(b[44+2*i:], uint16(v))
	}
	return b
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
