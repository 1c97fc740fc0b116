package scorer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/callproof/callproof/trace"
)

// inflate makes a corpus history look like a recorded one: agent speech
// streams word by word (agent.speech_text) and caller speech arrives with
// partial transcripts, as they do on a real call.
func inflate(h *trace.History) *trace.History {
	out := &trace.History{Call: h.Call}
	add := func(e trace.Event) {
		e.Seq = len(out.Events) + 1
		out.Events = append(out.Events, e)
	}
	for _, e := range h.Events {
		switch d := e.Data.(type) {
		case *trace.AgentSpeech:
			if e.Kind == trace.KindAgentSpeechText {
				words := strings.Fields(d.Text)
				for i := 1; i < len(words); i++ {
					add(trace.Event{Call: e.Call, At: e.At, Source: e.Source, Kind: e.Kind,
						Data: &trace.AgentSpeech{Utterance: d.Utterance, Text: strings.Join(words[:i], " ")}})
				}
			}
		case *trace.CallerSpeech:
			if e.Kind == trace.KindCallerSpeechFinal {
				words := strings.Fields(d.Text)
				for i := 1; i < len(words); i++ {
					p := *d
					p.Text, p.Intent = strings.Join(words[:i], " "), nil
					add(trace.Event{Call: e.Call, At: e.At, Source: e.Source, Kind: trace.KindCallerSpeechPartial, Data: &p})
				}
			}
		}
		add(e)
	}
	return out
}

func benchHistories(b *testing.B) []*trace.History {
	var hs []*trace.History
	for _, name := range []string{"seed_early_correction", "seed1_stale_order_number", "seed2_inflight_not_cancelled",
		"seed3_update_never_landed", "unsafe_retry", "noise_ignored", "wrong_record_adopted"} {
		hs = append(hs, inflate(load(b, fixtureNamed(b, name))))
	}
	return hs
}

func TestInflatedKeepsVerdicts(t *testing.T) {
	for _, f := range fixtures {
		h := load(t, f)
		a, c := Score(h), Score(inflate(h))
		if vector(a) != vector(c) || a.Primary != c.Primary {
			t.Errorf("%s: inflating changed %s/%s to %s/%s", f.name, vector(a), a.Primary, vector(c), c.Primary)
		}
	}
}

// recordedHistories loads the real recorded calls (recorded_test.go).
func recordedHistories(b *testing.B) []*trace.History {
	var hs []*trace.History
	for _, r := range recorded {
		f, err := os.Open(filepath.Join("testdata", "histories", r.dir, "rec_"+r.agent+"_"+r.scenario+".jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		got, err := trace.ReadJSONL(f)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		hs = append(hs, got...)
	}
	return hs
}

// BenchmarkScoreRecorded scores the real recorded calls of the corpus.
func BenchmarkScoreRecorded(b *testing.B) { benchScore(b, recordedHistories(b)) }

// BenchmarkScore scores hand-built corpus calls inflated to live shape.
func BenchmarkScore(b *testing.B) { benchScore(b, benchHistories(b)) }

func benchScore(b *testing.B, hs []*trace.History) {
	events := 0
	for _, h := range hs {
		events += len(h.Events)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h := hs[i%len(hs)].Clone()
		if cs := Score(h); len(cs.Axes) != 6 {
			b.Fatal("bad score")
		}
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/sec, "calls/s")
	b.ReportMetric(float64(b.N)*float64(events)/float64(len(hs))/sec, "events/s")
	b.ReportMetric(float64(events)/float64(len(hs)), "events/call")
}
