package hearing

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// TestVerdicts replays the scorer's corpus (scorer/testdata/histories)
// with every agent utterance spoken by flite, sent through 8 kHz μ-law,
// recognized and normalized, and compares axis 6 with the verdict on the
// original text. It is slow (tens of minutes per voice):
//
//	CALLPROOF_ASR_VERDICTS=1 go test ./callsim/hearing -run TestVerdicts -v -timeout 2h
//
// "with contract" applies the uncertainty contract the scorer does not
// implement yet: axis 6 is unknown when an agent utterance that ends after
// the caller's last words is Uncertain.
func TestVerdicts(t *testing.T) {
	if os.Getenv("CALLPROOF_ASR_VERDICTS") == "" {
		t.Skip("set CALLPROOF_ASR_VERDICTS=1 to replay the scorer corpus through the recognizer (slow)")
	}
	needTools(t)
	files, _ := filepath.Glob("../../scorer/testdata/histories/*/*.jsonl")
	sort.Strings(files)
	voices := listEnv("CALLPROOF_ASR_VOICES", "rms")
	r := &Recognizer{Args: strings.Fields(os.Getenv("CALLPROOF_ASR_ARGS")), CrossCheck: os.Getenv("CALLPROOF_ASR_CROSSCHECK") != "0"}
	for _, voice := range voices {
		counts := map[string]int{}
		contract := map[string]int{}
		valContract := map[string]int{}
		utts, uncertain := 0, 0
		for _, f := range files {
			h := readHistory(t, f)
			orig := axis6(scorer.Score(h))
			heard, unc, n, lastUnc, lastValUnc := hearHistory(t, r, voice, h)
			utts += n
			uncertain += unc
			got := axis6(scorer.Score(heard))
			key := string(orig) + "→" + string(got)
			counts[key]++
			withContract := got
			if lastUnc {
				withContract = scorer.Unknown
			}
			contract[string(orig)+"→"+string(withContract)]++
			withVal := got
			if lastValUnc {
				withVal = scorer.Unknown
			}
			valContract[string(orig)+"→"+string(withVal)]++
			if orig != got || lastUnc {
				t.Logf("%s: %s → %s (uncertain after the caller's last words: %v)", filepath.Base(f), orig, got, lastUnc)
			}
		}
		t.Logf("voice %s: %d calls, %d agent utterances (%d uncertain)\n\traw: %v\n\twith contract: %v\n\twith contract, values-only cross-check: %v",
			voice, len(files), utts, uncertain, fmtCounts(counts), fmtCounts(contract), fmtCounts(valContract))
	}
}

func fmtCounts(m map[string]int) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var b strings.Builder
	for _, k := range ks {
		fmt.Fprintf(&b, "%s %d, ", k, m[k])
	}
	return strings.TrimSuffix(b.String(), ", ")
}

func axis6(s scorer.CallScore) scorer.Verdict {
	for _, a := range s.Axes {
		if a.Axis == scorer.Axes()[5] {
			return a.Verdict
		}
	}
	return ""
}

func readHistory(t *testing.T, path string) *trace.History {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hs, err := trace.ReadJSONL(f)
	if err != nil || len(hs) != 1 {
		t.Fatalf("%s: %v (%d histories)", path, err, len(hs))
	}
	return hs[0]
}

// hearHistory returns a copy of h whose agent speech is what the
// recognizer heard, how many utterances were uncertain, how many there
// were, and whether one that ended after the caller's last words was.
func hearHistory(t *testing.T, r *Recognizer, voice string, h *trace.History) (*trace.History, int, int, bool, bool) {
	t.Helper()
	start := h.Start()
	g := BuildGrammar(start.Tools, start.Records)
	final := map[string]string{} // utterance → its last text
	lastCaller := 0
	for _, e := range h.Events {
		switch d := e.Data.(type) {
		case *trace.AgentSpeech:
			if d.Text != "" {
				final[d.Utterance] = d.Text
			}
		case *trace.CallerSpeech:
			lastCaller = e.Seq
		}
	}
	type heard struct {
		text     string
		unc, val bool // Hear's Uncertain; the values-only cross-check's
	}
	got := map[string]heard{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for id, text := range final {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			pcm, err := telephone(voice, spoken(text, "digits"))
			var res Result
			if err == nil {
				res, err = r.Recognize(context.Background(), pcm, g)
			}
			if err != nil {
				t.Error(err)
				return
			}
			hd := g.Hear(res)
			mu.Lock()
			got[id] = heard{hd.Text, hd.Uncertain, valuesDisagree(g, res)}
			mu.Unlock()
		}()
	}
	wg.Wait()
	out := &trace.History{Call: h.Call}
	unc, lastUnc, lastVal := 0, false, false
	for _, hd := range got {
		if hd.unc {
			unc++
		}
	}
	for _, e := range h.Events {
		if d, ok := e.Data.(*trace.AgentSpeech); ok {
			c := *d
			if c.Text != "" {
				c.Text = got[d.Utterance].text
			}
			if e.Kind == trace.KindAgentSpeechEnd && e.Seq > lastCaller {
				lastUnc = lastUnc || got[d.Utterance].unc
				lastVal = lastVal || got[d.Utterance].val
			}
			e.Data = &c
		}
		out.Events = append(out.Events, e)
	}
	return out, unc, len(final), lastUnc, lastVal
}
