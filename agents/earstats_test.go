package agents

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim/audio"
)

// silentSynth stands in for flite where no audio is listened to.
type silentSynth struct{}

func (silentSynth) Name() string { return "test/silent" }
func (silentSynth) Synthesize(context.Context, string) (audio.PCM, error) {
	return make(audio.PCM, audio.FrameSamples*10), nil
}

func earCall(id string, texts ...string) EarStats {
	s := EarStats{CallID: id, Onsets: len(texts), Frames: 100}
	for i, t := range texts {
		s.Heard = append(s.Heard, HeardUtterance{ID: "u" + strconv.Itoa(i+1), Text: t})
	}
	return s
}

func callIDs(cs []EarCall) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.CallID)
	}
	return out
}

// The log keeps the latest calls only, oldest first, across wrap-arounds;
// the totals count every call.
func TestEarLogKeepsTheLatest(t *testing.T) {
	l := newEarLog(3)
	for i := 1; i <= 8; i++ {
		l.add(earCall("c"+strconv.Itoa(i), "a", "b"))
	}
	var ids []string
	for _, s := range l.list() {
		ids = append(ids, s.CallID)
	}
	assert.Equal(t, []string{"c6", "c7", "c8"}, ids)
	r := l.report(0, false)
	assert.Equal(t, []string{"c6", "c7", "c8"}, callIDs(r.Calls))
	assert.Equal(t, []int{6, 7, 8}, []int{r.Calls[0].Seq, r.Calls[1].Seq, r.Calls[2].Seq})
	assert.Equal(t, EarTotals{Calls: 8, Utterances: 16, Onsets: 16, Kept: 3, Dropped: 5, Cap: 3}, r.Totals)
	assert.Equal(t, []string{"c8"}, callIDs(l.report(7, false).Calls))
	assert.Empty(t, l.report(8, false).Calls)
	assert.Empty(t, l.report(0, true).Calls)
	assert.Equal(t, DefaultKeepEarStats, newEarLog(0).totals.Cap)
}

func TestEarStatsEndpoint(t *testing.T) {
	cfg := Careful()
	cfg.Audio = &AudioConfig{SpeechCache: t.TempDir(), Synth: silentSynth{}, KeepEarStats: 2}
	srv := NewServer(cfg)
	t.Cleanup(func() { _ = srv.Close() })
	srv.audio.record(earCall("load-0", "Hi."))
	srv.audio.record(earCall("load-1", "Hi.", "Sorry."))
	cut := earCall("load-2", "Hi.")
	cut.Heard[0].AtOffset = true
	cut.Onsets = 2
	srv.audio.record(cut)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)

	get := func(query string) (int, EarReport) {
		t.Helper()
		resp, err := http.Get(hs.URL + EarStatsPath + query)
		require.NoError(t, err)
		defer resp.Body.Close()
		var r EarReport
		if resp.StatusCode == http.StatusOK {
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
		}
		return resp.StatusCode, r
	}
	code, r := get("")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, []EarCall{
		{Seq: 2, CallID: "load-1", Heard: []EarHeard{{ID: "u1", Text: "Hi."}, {ID: "u2", Text: "Sorry."}}, Onsets: 2, Frames: 100},
		{Seq: 3, CallID: "load-2", Heard: []EarHeard{{ID: "u1", Text: "Hi.", CutShort: true}}, Onsets: 2, Frames: 100},
	}, r.Calls)
	assert.Equal(t, EarTotals{Calls: 3, Utterances: 4, Onsets: 5, Kept: 2, Dropped: 1, Cap: 2}, r.Totals)
	assert.Equal(t, r, srv.EarReport(0))

	_, r = get("?after=2")
	assert.Equal(t, []string{"load-2"}, callIDs(r.Calls))
	_, r = get("?totals")
	assert.Empty(t, r.Calls)
	assert.Equal(t, 3, r.Totals.Calls)
	code, _ = get("?after=x")
	assert.Equal(t, http.StatusBadRequest, code)
	resp, err := http.Post(hs.URL+EarStatsPath, "text/plain", strings.NewReader(""))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

	// Text mode has no ear: the path is a WebSocket like any other.
	textAgent := NewServer(Careful())
	t.Cleanup(func() { _ = textAgent.Close() })
	text := httptest.NewServer(textAgent)
	t.Cleanup(text.Close)
	resp, err = http.Get(text.URL + EarStatsPath)
	require.NoError(t, err)
	resp.Body.Close()
	assert.NotEqual(t, http.StatusOK, resp.StatusCode)
}
