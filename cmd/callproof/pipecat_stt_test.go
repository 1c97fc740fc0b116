package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/spoken"
	"github.com/callproof/callproof/trace"
)

// What a third-party bot's speech-to-text made of the caller's words, for
// docs/INTEROP.md's accuracy figures: the bot logs "call ID: …" when a call
// starts and "heard: 'TEXT'" for each transcript (bot.py, agent.py), and
// the call's history holds what the caller said.

var (
	botCallLine  = regexp.MustCompile(`call (\S+): stt `)
	botHeardLine = regexp.MustCompile(`heard: (.*)$`)
)

// botHeard splits a bot's log (text lines, or JSON lines with the text in
// "message") by call: the transcripts of each call's last
// placement (the calls ran one at a time), in order.
func botHeard(log string) map[string][]string {
	out := map[string][]string{}
	call := ""
	for _, line := range strings.Split(log, "\n") {
		// LiveKit's worker logs JSON lines: the words are the message.
		var j struct {
			Message string `json:"message"`
		}
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "{") && json.Unmarshal([]byte(t), &j) == nil {
			line = j.Message
		}
		if m := botCallLine.FindStringSubmatch(line); m != nil {
			call = m[1]
			out[call] = []string{} // a placement again: its last one counts
			continue
		}
		if m := botHeardLine.FindStringSubmatch(line); m != nil && call != "" {
			if t := pyString(strings.TrimSpace(m[1])); t != "" {
				out[call] = append(out[call], t)
			}
		}
	}
	return out
}

// pyString reads a Python repr of a str ('…' or "…").
func pyString(s string) string {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		s = s[1 : len(s)-1]
	}
	return strings.NewReplacer(`\'`, `'`, `\"`, `"`, `\\`, `\`).Replace(s)
}

// callerSaid is what the caller said in a call's history, utterance by
// utterance.
func callerSaid(h *trace.History) []string {
	var said []string
	for _, e := range h.Events {
		if cs, ok := e.Data.(*trace.CallerSpeech); ok && e.Kind == trace.KindCallerSpeechFinal {
			said = append(said, cs.Text)
		}
	}
	return said
}

// measureSTT logs what the bot's STT (stt) heard of each call of the run
// in out against what its caller said, and the total over the calls as
// "interop: stt STT NAME: …"; strict, with earstt every utterance must be
// heard word for word.
func measureSTT(t *testing.T, out, stt, name, botLog string, strict bool) sttScore {
	t.Helper()
	saved, err := harness.LoadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	heardBy := botHeard(botLog)
	var total sttScore
	for _, h := range saved.Histories {
		said, heard := callerSaid(h), heardBy[h.Call]
		sc := scoreSTT(said, heard)
		t.Logf("stt %s %s: %s; heard %q", stt, h.Call, sc, heard)
		if strict && stt == sttEar && sc.Exact != sc.Utterances {
			t.Errorf("earstt, %s: %s\nsaid %q\nheard %q", h.Call, sc, said, heard)
		}
		total.add(sc)
		if len(said) == 0 {
			total.Silent = append(total.Silent, h.Call)
		}
	}
	t.Logf("interop: stt %s %s: %s", stt, name, total)
	if strict && total.Utterances == 0 {
		t.Errorf("no caller utterance in %s", out)
	}
	return total
}

var (
	digitsRe = regexp.MustCompile(`\d+`)
	notWord  = regexp.MustCompile(`[^a-z' ]+`)
)

// sttWords is an utterance as words a recognizer writes: lower case, no
// punctuation, numbers in words ("5590": "five thousand five hundred
// ninety", as flite says it).
func sttWords(s string) []string {
	s = digitsRe.ReplaceAllStringFunc(s, func(d string) string {
		n, err := strconv.Atoi(d)
		if err != nil || n > 999999 {
			return d
		}
		return " " + spoken.InWords(n, false) + " "
	})
	s = strings.ReplaceAll(strings.ToLower(s), "-", " ")
	return strings.Fields(notWord.ReplaceAllString(s, " "))
}

// sttScore compares what a call's caller said with what the bot heard:
// the utterances heard word for word (their words a run of the heard
// words, so a recognizer that cuts an utterance in segments is not
// penalized for it) and the word errors (edit distance between all the
// words said and all heard) over the words said.
type sttScore struct {
	Utterances, Exact int
	Words, Errors     int
	// Silent lists the calls in which the caller said nothing (measureSTT).
	Silent []string
}

func (s *sttScore) add(o sttScore) {
	s.Utterances += o.Utterances
	s.Exact += o.Exact
	s.Words += o.Words
	s.Errors += o.Errors
}

func (s sttScore) String() string {
	pct := 0.0
	if s.Words > 0 {
		pct = 100 * float64(s.Errors) / float64(s.Words)
	}
	return fmt.Sprintf("%d/%d utterances heard word for word, word errors %d/%d (%.1f%%)", s.Exact, s.Utterances, s.Errors, s.Words, pct)
}

func scoreSTT(said, heard []string) sttScore {
	var all, got []string
	for _, h := range heard {
		got = append(got, sttWords(h)...)
	}
	joined := " " + strings.Join(got, " ") + " "
	s := sttScore{Utterances: len(said)}
	for _, u := range said {
		w := sttWords(u)
		all = append(all, w...)
		if len(w) > 0 && strings.Contains(joined, " "+strings.Join(w, " ")+" ") {
			s.Exact++
		}
	}
	s.Words, s.Errors = len(all), audio.WordErrors(all, got)
	return s
}

func TestScoreSTT(t *testing.T) {
	said := []string{"Hi, I'd like to change the delivery date on order 5590 to December 3.", "Wait, stop, don't change anything."}
	s := scoreSTT(said, said)
	if s.Exact != 2 || s.Errors != 0 || s.Words != 23 {
		t.Errorf("the same words: %+v", s)
	}
	s = scoreSTT(said, []string{"i i'd like to change the delivery date on order five thousand five hundred ninety eight and amber heard", "way to", "of both"})
	if s.Exact != 0 || s.Errors == 0 {
		t.Errorf("pocketsphinx's: %+v", s)
	}
	s = scoreSTT(said[1:], []string{"wait stop", "don't change anything"})
	if s.Exact != 1 || s.Errors != 0 {
		t.Errorf("in segments: %+v", s)
	}
	heard := botHeard("x\ncall int-05: stt EarSTT\nheard: 'a'\ncall int-05: stt EarSTT\nheard: \"don't\"\nheard: ''\n" +
		`{"message": "call int-06: stt EarSTT", "level": "INFO"}` + "\n" + `{"message": "heard: 'Sorry, make that 4.'", "pid": 1}` + "\n")
	if got := fmt.Sprint(heard); got != "map[int-05:[don't] int-06:[Sorry, make that 4.]]" {
		t.Errorf("botHeard: %s", got)
	}
}

// TestPipecatSTTWords measures what the Pipecat bot's speech-to-text
// hears of the core suite's eleven caller utterances (pc-stt-words-1..3:
// each once, 2.5 s apart, in three calls), over Twilio and over SmallWebRTC (in a network
// namespace, as TestRunWebRTCPipecatBot), with earstt and with
// pocketsphinx: each run logs "interop: stt STT pc-stt-words: …" (the
// figures of docs/INTEROP.md). earstt must hear every utterance word for
// word; pocketsphinx's figures are only logged. make interop only.
func TestPipecatSTTWords(t *testing.T) {
	suite := func(root string) []string {
		return []string{"--suite", filepath.Join(root, "agents", "pipecat", "testdata", "stt-words")}
	}
	words := func(root, transport, stt string) pipecatCase {
		return pipecatCase{name: transport + "-" + stt, transport: transport, stt: stt, cancel: true,
			suite: suite(root), call: "pc-stt-words", measure: true}
	}
	stts := []string{sttEar, sttPocketSphinx}
	if os.Getenv(envPipecatNetns) != "" {
		// The child, inside the namespace: one case (-test.run).
		ctx, python, root := pipecatVenv(t)
		speech := t.TempDir()
		for _, stt := range stts {
			tc := words(root, transportWebRTC, stt)
			t.Run(tc.name, func(t *testing.T) { runPipecat(ctx, t, python, root, speech, tc) })
		}
		return
	}
	ctx, python, root := pipecatVenv(t)
	speech := t.TempDir()
	for _, stt := range stts {
		tc := words(root, transportTwilio, stt)
		t.Run(tc.name, func(t *testing.T) { runPipecat(ctx, t, python, root, speech, tc) })
	}
	ns := pipecatNetns(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, stt := range stts {
		name := transportWebRTC + "-" + stt
		t.Run(name, func(t *testing.T) { runInNetns(ctx, t, ns, self, "TestPipecatSTTWords", name) })
	}
}
