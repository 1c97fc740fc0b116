package audio

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Voice-quality measurement: how well each TTS voice survives the phone
// path. Not a unit test (minutes of CPU): it runs only with
//
//	CALLPROOF_VOICE_QUALITY=1 go test ./callsim/audio -run TestVoiceQuality -v
//
// Each voice speaks confirmationSentences; the speech is put through
// 8 kHz (as Synth returns it) and μ-law, optionally with TV babble, then
// brought to 16 kHz for Debian's pocketsphinx_continuous with its en-us
// model and a word-loop grammar over the sentences' vocabulary. The score
// is word accuracy, 1 - (S+D+I)/N, after folding homophones the grammar
// cannot separate ("for"/"four").
//
// The en-us model is wideband (its filterbank reaches 6.8 kHz), so how the
// 8 kHz audio is brought to 16 kHz decides as much as the voice: with
// Resample (band-limited, nothing above 4 kHz) the stock model does worse
// than guessing. So three front ends are measured: Resample with the stock
// model; Resample with a narrowband copy of the model (feat.params:
// filterbank to 4 kHz, 20 filters); and zero-order-hold upsampling, whose
// spectral images fill 4-8 kHz, with the stock model. All use a word
// insertion penalty of 1e-3 (the default 0.65 lets the word loop insert
// "a" and "and" everywhere) and no noise removal. The results and the
// choice of DefaultVoice are in docs/PERFORMANCE.md, "Speech: voice choice".

var confirmationSentences = []string{
	"your order four four seven one is confirmed for march third",
	"i have changed the size to ten and a half",
	"your table for six is booked for friday at seven thirty in the evening",
	"the delivery is moved to june twenty first between nine and eleven",
	"your new total is forty two dollars and fifty cents",
	"i have updated the quantity from two to three large shirts",
	"your appointment is on tuesday the fifth of november at two fifteen",
	"the refund of eighty nine dollars will reach your card in five days",
	"your booking reference is nine zero three eight two",
	"i cancelled the order for the medium jacket in size twelve",
	"the flight on august seventeenth now leaves at six forty five",
	"you asked for two extra large and one small is that right",
	"your room is booked from the second to the fourth of may",
	"the pickup is now at eight in the morning on saturday",
	"i changed the shoe size from nine to nine and a half",
	"your order number ends in six six one zero",
	"the package weighs three point five kilograms",
	"your reservation for four people is now at eight fifteen",
	"the new delivery date is thursday the twenty ninth of october",
	"i have confirmed two tickets for the show on december first",
}

var qualityVoices = []string{"flite/kal", "flite/kal16", "flite/rms", "flite/slt", "flite/awb", "espeak-ng/en-us"}

// homophones the word-loop grammar cannot tell apart by sound.
var homophones = map[string]string{"for": "four", "to": "two", "too": "two", "won": "one", "ate": "eight"}

func foldWords(s string) []string {
	w := strings.Fields(strings.ToLower(s))
	for i, x := range w {
		if h, ok := homophones[x]; ok {
			w[i] = h
		}
	}
	return w
}

// numberWords are the words that carry the values a confirmation is
// judged on: digits, counts, ordinals (dates), "point" and "half".
var numberWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`zero oh one two three four five six seven eight nine ten eleven twelve
		thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy
		eighty ninety hundred thousand first second third fourth fifth sixth seventh eighth ninth tenth
		eleventh twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth
		twentieth thirtieth point half`) {
		m[w] = true
	}
	return m
}()

func onlyNumbers(words []string) []string {
	var out []string
	for _, w := range words {
		if numberWords[w] {
			out = append(out, w)
		}
	}
	return out
}

func TestWordErrors(t *testing.T) {
	tests := []struct {
		ref, hyp string
		want     int
	}{
		{"four four seven one", "four four seven one", 0},
		{"four four seven one", "for four seven one", 0}, // homophone folded
		{"four four seven one", "four seven one", 1},
		{"four four seven one", "four four seven seven one", 1},
		{"four four seven one", "five four eleven one", 2},
		{"order four four one", "four four seven one", 2},
		{"a b", "", 2},
	}
	for _, tt := range tests {
		if got := WordErrors(foldWords(tt.ref), foldWords(tt.hyp)); got != tt.want {
			t.Errorf("%q vs %q: %d errors, want %d", tt.ref, tt.hyp, got, tt.want)
		}
	}
	if got := onlyNumbers(foldWords("your order for four seven one at half past")); strings.Join(got, " ") != "four four seven one half" {
		t.Errorf("onlyNumbers = %v", got)
	}
}

// qualityColumn is one way of hearing the voices: what the phone path
// does to the 8 kHz speech, how it reaches 16 kHz, and which model.
type qualityColumn struct {
	name   string
	prep   func(p PCM, seed int64) PCM // 8 kHz in, 8 kHz out
	up     func(p PCM) []int16         // 8 kHz to 16 kHz
	narrow bool                        // the narrowband copy of the model
}

func mulaw(p PCM, _ int64) PCM { return DecodeMulaw(EncodeMulaw(p)) }

func mulawTV(p PCM, seed int64) PCM {
	out := clonePCM(p)
	tv, _ := Noise("tv", out.Duration(), seed)
	Mix(out, tv, speechLevel(p)-15-(-24)) // TV 15 dB under the speech
	return DecodeMulaw(EncodeMulaw(out))
}

func resample16k(p PCM) []int16 { return Resample(p, SampleRate, 16000) }

// holdUpsample repeats each sample: the images of 0-4 kHz above 4 kHz
// stay, which a wideband model's upper filters then see.
func holdUpsample(p PCM) []int16 {
	out := make([]int16, 2*len(p))
	for i, s := range p {
		out[2*i], out[2*i+1] = s, s
	}
	return out
}

var qualityColumns = []qualityColumn{
	{"μ-law, Resample, stock model", mulaw, resample16k, false},
	{"μ-law, Resample, narrowband model", mulaw, resample16k, true},
	{"μ-law, hold, stock model", mulaw, holdUpsample, false},
	{"μ-law + TV at 15 dB SNR, hold, stock model", mulawTV, holdUpsample, false},
}

const stockModel = "/usr/share/pocketsphinx/model/en-us/en-us"

// narrowbandModel copies the stock model with its filterbank cut to 4 kHz.
func narrowbandModel(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "en-us-narrow")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(stockModel)
	if err != nil {
		t.Skipf("pocketsphinx-en-us model not found: %v", err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(stockModel, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "feat.params" {
			b = []byte(strings.NewReplacer("-upperf 6800", "-upperf 4000", "-nfilt 25", "-nfilt 20").Replace(string(b)))
		}
		if err := os.WriteFile(filepath.Join(out, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// speechLevel is the RMS level of p's frames above -50 dBFS (pauses out).
func speechLevel(p PCM) float64 {
	var active PCM
	for _, f := range Frames(p) {
		if LevelDBFS(f) > -50 {
			active = append(active, f...)
		}
	}
	return LevelDBFS(active)
}

func TestVoiceQuality(t *testing.T) {
	if os.Getenv("CALLPROOF_VOICE_QUALITY") != "1" {
		t.Skip("voice-quality measurement: set CALLPROOF_VOICE_QUALITY=1 (takes minutes)")
	}
	for _, tool := range []string{"flite", "espeak-ng", "pocketsphinx_continuous"} {
		needTool(t, tool)
	}
	dir := t.TempDir()
	narrow := narrowbandModel(t, dir)
	grammar := filepath.Join(dir, "words.jsgf")
	vocab := map[string]bool{}
	var words []string
	for _, s := range confirmationSentences {
		for _, w := range strings.Fields(s) {
			if !vocab[w] {
				vocab[w] = true
				words = append(words, w)
			}
		}
	}
	jsgf := "#JSGF V1.0;\ngrammar words;\npublic <utt> = ( " + strings.Join(words, " | ") + " )+ ;\n"
	if err := os.WriteFile(grammar, []byte(jsgf), 0o644); err != nil {
		t.Fatal(err)
	}

	type job struct {
		voice, col string
		sentence   int
		wav        string
		narrow     bool
	}
	type result struct {
		errors, words       int
		numErrors, numWords int // on number words only
		exact               bool
		hyp                 string
	}
	results := map[[2]string][]result{}
	synthTime := map[string]time.Duration{}
	var jobs []job
	ctx := context.Background()
	for _, name := range qualityVoices {
		s, err := NewSynth(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, text := range confirmationSentences {
			start := time.Now()
			p, err := s.Synthesize(ctx, text)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			synthTime[name] += time.Since(start)
			for ci, c := range qualityColumns {
				wav := filepath.Join(dir, fmt.Sprintf("%s-%d-%d.wav", strings.ReplaceAll(name, "/", "_"), ci, i))
				f, err := os.Create(wav)
				if err != nil {
					t.Fatal(err)
				}
				if err := WriteWAVRate(f, c.up(c.prep(p, int64(i))), 16000, 1); err != nil {
					t.Fatal(err)
				}
				f.Close()
				jobs = append(jobs, job{name, c.name, i, wav, c.narrow})
			}
		}
	}

	var mu sync.Mutex
	var wg sync.WaitGroup
	queue := make(chan job)
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				model := stockModel
				if j.narrow {
					model = narrow
				}
				out, err := exec.Command("pocketsphinx_continuous", "-infile", j.wav, "-jsgf", grammar,
					"-hmm", model, "-wip", "1e-3", "-remove_noise", "no", "-logfn", os.DevNull).Output()
				if err != nil {
					t.Errorf("pocketsphinx on %s: %v", j.wav, err)
					continue
				}
				hyp := strings.Join(strings.Fields(string(out)), " ")
				ref, got := foldWords(confirmationSentences[j.sentence]), foldWords(hyp)
				e := WordErrors(ref, got)
				refNum := onlyNumbers(ref)
				ne := WordErrors(refNum, onlyNumbers(got))
				mu.Lock()
				k := [2]string{j.voice, j.col}
				results[k] = append(results[k], result{e, len(ref), ne, len(refNum), e == 0, hyp})
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	wg.Wait()

	var b strings.Builder
	fmt.Fprintf(&b, "Word accuracy / accuracy on number words only (sentences recognized exactly, of %d):\n\n", len(confirmationSentences))
	fmt.Fprintf(&b, "| voice | synth time per sentence |")
	for _, c := range qualityColumns {
		fmt.Fprintf(&b, " %s |", c.name)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(qualityColumns)) + "\n")
	for _, name := range qualityVoices {
		fmt.Fprintf(&b, "| %s | %d ms |", name, (synthTime[name] / time.Duration(len(confirmationSentences))).Milliseconds())
		for _, c := range qualityColumns {
			var errs, n, numErrs, numN, exact int
			for _, r := range results[[2]string{name, c.name}] {
				errs += r.errors
				n += r.words
				numErrs += r.numErrors
				numN += r.numWords
				if r.exact {
					exact++
				}
			}
			fmt.Fprintf(&b, " %.1f / %.1f %% (%d) |", 100*(1-float64(errs)/float64(n)),
				100*(1-float64(numErrs)/float64(numN)), exact)
		}
		b.WriteString("\n")
	}
	fmt.Print(b.String())
	if testing.Verbose() {
		for _, name := range qualityVoices {
			for _, c := range qualityColumns[2:3] {
				for _, r := range results[[2]string{name, c.name}] {
					if !r.exact {
						fmt.Printf("%s %s: %q (%d errors)\n", name, c.name, r.hyp, r.errors)
					}
				}
			}
		}
	}
}
