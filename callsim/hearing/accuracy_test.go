package hearing

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestEntityAccuracy measures how many entities survive flite → 8 kHz
// μ-law → pocketsphinx → Normalize, per voice. It is slow (minutes):
//
//	CALLPROOF_ASR_ACCURACY=1 go test ./callsim/hearing -run TestEntityAccuracy -v
//
// CALLPROOF_ASR_VOICES (default kal16,rms,awb), CALLPROOF_ASR_STYLES
// (digits, flite; default digits), CALLPROOF_ASR_ARGS (extra decoder
// flags), CALLPROOF_ASR_MIRROR (image gain, -1 for none), CALLPROOF_ASR_JOBS
// (parallel decodes, default 1), CALLPROOF_ASR_CHANNEL=wide (16 kHz
// straight from flite, no telephone: the ceiling), CALLPROOF_ASR_CROSSCHECK=0
// (one decode) and CALLPROOF_ASR_NOKNOWN=1 (no record codes as whole
// phrases) vary the run.
func TestEntityAccuracy(t *testing.T) {
	if os.Getenv("CALLPROOF_ASR_ACCURACY") == "" {
		t.Skip("set CALLPROOF_ASR_ACCURACY=1 to measure recognizer entity accuracy (slow)")
	}
	needTools(t)
	voices := listEnv("CALLPROOF_ASR_VOICES", "kal16,rms,awb")
	styles := listEnv("CALLPROOF_ASR_STYLES", "digits")
	r := &Recognizer{Args: strings.Fields(os.Getenv("CALLPROOF_ASR_ARGS")), CrossCheck: os.Getenv("CALLPROOF_ASR_CROSSCHECK") != "0"}
	if m := os.Getenv("CALLPROOF_ASR_MIRROR"); m != "" {
		r.mirror, _ = strconv.ParseFloat(m, 64)
	}
	samples := corpus()
	jobs, _ := strconv.Atoi(os.Getenv("CALLPROOF_ASR_JOBS"))
	jobs = max(jobs, 1)
	wide := os.Getenv("CALLPROOF_ASR_CHANNEL") == "wide" // 16 kHz straight from flite: the ceiling
	type row struct {
		name                                      string
		ents, hits, sents, exact, wrong, snapped  int
		uncertain, confidentlyWrong, flaggedWrong int
		flaggedRight, valFlagWrong, valFlagRight  int
		kindHit, kindAll                          map[string]int
		decode                                    time.Duration
	}
	var rows []row
	for _, voice := range voices {
		for _, style := range styles {
			rw := row{name: voice + "/" + style, kindHit: map[string]int{}, kindAll: map[string]int{}}
			type outcome struct {
				res  Result
				took time.Duration
				err  error
			}
			outs := make([]outcome, len(samples))
			var wg sync.WaitGroup
			sem := make(chan struct{}, jobs)
			for i, s := range samples {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sem <- struct{}{}
					defer func() { <-sem }()
					tools, recs := s.tools()
					g := BuildGrammar(tools, recs)
					g.noKnown = os.Getenv("CALLPROOF_ASR_NOKNOWN") != ""
					start := time.Now()
					if wide {
						var pcm []int16
						if pcm, outs[i].err = studio(voice, spoken(s.text, style)); outs[i].err == nil {
							outs[i].res, outs[i].err = r.decode16(context.Background(), DefaultBin, pcm, g, true, r.CrossCheck)
						}
					} else {
						var pcm []int16
						if pcm, outs[i].err = telephone(voice, spoken(s.text, style)); outs[i].err == nil {
							outs[i].res, outs[i].err = r.Recognize(context.Background(), pcm, g)
						}
					}
					outs[i].took = time.Since(start)
				}()
			}
			wg.Wait()
			for i, s := range samples {
				res := outs[i].res
				rw.decode += outs[i].took
				if outs[i].err != nil {
					t.Fatalf("%s: %v", s.text, outs[i].err)
				}
				tools, recs := s.tools()
				g := BuildGrammar(tools, recs)
				h := g.Hear(res)
				hit, exact := score(s.want, h.Entities)
				rw.ents += len(s.want)
				rw.hits += hit
				rw.sents++
				for _, e := range s.want {
					rw.kindAll[e.Kind]++
				}
				got := map[Entity]int{}
				for _, e := range h.Entities {
					got[e]++
				}
				for _, e := range s.want {
					if got[e] > 0 {
						got[e]--
						rw.kindHit[e.Kind]++
					}
				}
				if exact {
					rw.exact++
				}
				if valuesDisagree(g, res) {
					if exact {
						rw.valFlagRight++
					} else {
						rw.valFlagWrong++
					}
				}
				if h.Uncertain {
					rw.uncertain++
					if !exact {
						rw.flaggedWrong++
					} else {
						rw.flaggedRight++
					}
				} else if !exact {
					rw.confidentlyWrong++
				}
				if s.wrong {
					rw.wrong++
					for _, e := range h.Entities {
						if e.Kind == KindCode && e.Value != wantCode(s.want) && contains(g.codes, e.Value) {
							rw.snapped++
							break
						}
					}
				}
				if !exact || h.Uncertain {
					t.Logf("%s %q\n\theard %q\n\tgot %v want %v uncertain=%v %s", rw.name, s.text, res.Text, h.Entities, s.want, h.Uncertain, h.Why)
				}
			}
			rows = append(rows, rw)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d utterances (%d with a code no record holds), decoder args %q %q, cross-check %v, mirror %v\n",
		len(samples), rows[0].wrong, decoderArgs(defaultTuning(), r.Args), decoderArgs(checkTuning(), r.Args), r.CrossCheck, r.mirrorGain())
	fmt.Fprintf(&b, "| voice/codes | entities | sentences exact | code | date | time | amount | count | value | wrong code snapped | not exact: flagged / not (flagged on values alone) | exact: flagged (on values alone) | decode s/utt |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, rw := range rows {
		fmt.Fprintf(&b, "| %s | %d/%d = %.2f | %d/%d = %.2f |", rw.name, rw.hits, rw.ents, ratio(rw.hits, rw.ents), rw.exact, rw.sents, ratio(rw.exact, rw.sents))
		for _, k := range []string{KindCode, KindDate, KindTime, KindAmount, KindCount, KindValue} {
			fmt.Fprintf(&b, " %d/%d |", rw.kindHit[k], rw.kindAll[k])
		}
		fmt.Fprintf(&b, " %d/%d | %d / %d (%d) | %d (%d) | %.1f |\n", rw.snapped, rw.wrong, rw.flaggedWrong, rw.confidentlyWrong, rw.valFlagWrong,
			rw.flaggedRight, rw.valFlagRight, rw.decode.Seconds()/float64(rw.sents))
	}
	t.Log(b.String())
}

// valuesDisagree is the cross-check on values alone (without claim
// words), to show what each half of Hear's test contributes.
func valuesDisagree(g *Grammar, res Result) bool {
	if res.Check == nil {
		return false
	}
	a, b := g.Normalize(res.Words), g.Normalize(res.Check)
	return a.Uncertain || b.Uncertain || !sameEntities(a.Entities, b.Entities)
}

func wantCode(es []Entity) string {
	for _, e := range es {
		if e.Kind == KindCode {
			return e.Value
		}
	}
	return ""
}

func contains(xs []string, x string) bool {
	i := sort.SearchStrings(xs, x)
	return i < len(xs) && xs[i] == x
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func listEnv(name, def string) []string {
	v := os.Getenv(name)
	if v == "" {
		v = def
	}
	return strings.Split(v, ",")
}
