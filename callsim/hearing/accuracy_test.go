package hearing

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
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
// flags) and CALLPROOF_ASR_MIRROR (image gain, -1 for none) vary the run.
func TestEntityAccuracy(t *testing.T) {
	if os.Getenv("CALLPROOF_ASR_ACCURACY") == "" {
		t.Skip("set CALLPROOF_ASR_ACCURACY=1 to measure recognizer entity accuracy (slow)")
	}
	needTools(t)
	voices := listEnv("CALLPROOF_ASR_VOICES", "kal16,rms,awb")
	styles := listEnv("CALLPROOF_ASR_STYLES", "digits")
	r := &Recognizer{Args: strings.Fields(os.Getenv("CALLPROOF_ASR_ARGS"))}
	if m := os.Getenv("CALLPROOF_ASR_MIRROR"); m != "" {
		r.mirror, _ = strconv.ParseFloat(m, 64)
	}
	samples := corpus()
	type row struct {
		name                                      string
		ents, hits, sents, exact, wrong, snapped  int
		uncertain, confidentlyWrong, flaggedWrong int
		kindHit, kindAll                          map[string]int
		decode                                    time.Duration
	}
	var rows []row
	for _, voice := range voices {
		for _, style := range styles {
			rw := row{name: voice + "/" + style, kindHit: map[string]int{}, kindAll: map[string]int{}}
			for _, s := range samples {
				tools, recs := s.tools()
				g := BuildGrammar(tools, recs)
				pcm := telephone(t, voice, spoken(s.text, style))
				start := time.Now()
				res, err := r.Recognize(context.Background(), pcm, g)
				rw.decode += time.Since(start)
				if err != nil {
					t.Fatalf("%s: %v", s.text, err)
				}
				h := g.Normalize(res.Words)
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
				if h.Uncertain {
					rw.uncertain++
					if !exact {
						rw.flaggedWrong++
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
	fmt.Fprintf(&b, "\n%d utterances (%d with a code no record holds), decoder args %q, mirror %v\n", len(samples), rows[0].wrong, r.Args, r.mirrorGain())
	fmt.Fprintf(&b, "| voice/codes | entities | sentences exact | code | date | time | amount | count | value | wrong code snapped | uncertain (of them wrong) | wrong, not flagged | decode s/utt |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, rw := range rows {
		fmt.Fprintf(&b, "| %s | %d/%d = %.2f | %d/%d = %.2f |", rw.name, rw.hits, rw.ents, ratio(rw.hits, rw.ents), rw.exact, rw.sents, ratio(rw.exact, rw.sents))
		for _, k := range []string{KindCode, KindDate, KindTime, KindAmount, KindCount, KindValue} {
			fmt.Fprintf(&b, " %d/%d |", rw.kindHit[k], rw.kindAll[k])
		}
		fmt.Fprintf(&b, " %d/%d | %d (%d) | %d | %.1f |\n", rw.snapped, rw.wrong, rw.uncertain, rw.flaggedWrong, rw.confidentlyWrong, rw.decode.Seconds()/float64(rw.sents))
	}
	t.Log(b.String())
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
