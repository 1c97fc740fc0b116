package native_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

func protocolDoc(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/PROTOCOL.md")
	require.NoError(t, err)
	return string(raw)
}

// payloadSet reports whether m carries the payload its event names.
func payloadSet(m native.Message) bool {
	switch m.Event {
	case native.EventStart:
		return m.Start != nil
	case native.EventSpeech:
		return m.Speech != nil
	case native.EventSound:
		return m.Sound != nil
	case native.EventDTMF:
		return m.DTMF != nil
	case native.EventStop:
		return m.Stop != nil
	case native.EventAck:
		return m.Ack != nil
	case native.EventAgentSpeech:
		return m.AgentSpeech != nil
	case native.EventClear:
		return m.Clear != nil
	case native.EventToolIntent:
		return m.ToolIntent != nil
	case native.EventState:
		return m.State != nil
	case native.EventHangup:
		return m.Hangup != nil
	case native.EventTransfer:
		return m.Transfer != nil
	}
	return false
}

var jsonBlock = regexp.MustCompile("(?s)```json\n(.*?)```")

// TestProtocolDocExamples decodes every frame PROTOCOL.md shows, strictly:
// a field the Go types do not have, or an event without its payload,
// fails. Lines that are only "…" stand for frames left out.
func TestProtocolDocExamples(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range jsonBlock.FindAllStringSubmatch(protocolDoc(t), -1) {
		block := m[1]
		if strings.Contains(block, "<payload>") {
			continue // the envelope's outline
		}
		var lines []string
		for _, l := range strings.Split(block, "\n") {
			if strings.TrimSpace(l) != "…" {
				lines = append(lines, l)
			}
		}
		dec := json.NewDecoder(strings.NewReader(strings.Join(lines, "\n")))
		for {
			var raw json.RawMessage
			err := dec.Decode(&raw)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "a JSON block of docs/PROTOCOL.md:\n%s", block)
			var probe map[string]any
			require.NoError(t, json.Unmarshal(raw, &probe))
			if _, ok := probe["event"]; !ok {
				continue // a tool answer: mockbackend's docs test checks those
			}
			strict := json.NewDecoder(bytes.NewReader(raw))
			strict.DisallowUnknownFields()
			var msg native.Message
			if assert.NoError(t, strict.Decode(&msg), "frame %s", raw) {
				assert.True(t, payloadSet(msg), "frame %s: event %q without its payload", raw, msg.Event)
				seen[msg.Event] = true
			}
		}
	}
	for _, ev := range events() {
		assert.True(t, seen[ev], "docs/PROTOCOL.md shows no %q frame", ev)
	}
}

func events() []string {
	return []string{
		native.EventStart, native.EventSpeech, native.EventSound, native.EventDTMF, native.EventStop,
		native.EventAck, native.EventAgentSpeech, native.EventClear, native.EventToolIntent, native.EventState,
		native.EventHangup, native.EventTransfer,
	}
}

// TestProtocolDocNames: every event has its section, every phase and
// header is named.
func TestProtocolDocNames(t *testing.T) {
	doc := protocolDoc(t)
	for _, ev := range events() {
		assert.Regexp(t, "\n### (.*`"+regexp.QuoteMeta(ev)+"`)", doc, "no ### section for %q", ev)
	}
	for _, ph := range []string{native.PhaseOnset, native.PhasePartial, native.PhaseFinal, native.PhaseOffset,
		native.PhaseStart, native.PhaseText, native.PhaseEnd} {
		assert.Contains(t, doc, "`"+ph+"`")
	}
	for _, h := range []string{native.HeaderIdempotencyKey, native.HeaderStateVersion} {
		assert.Contains(t, doc, "\n"+h+": ", "the request example shows %s", h)
		assert.Contains(t, doc, "`"+h+"`")
	}
}

// tableFirstColumn reads the first column of the table that follows
// intro in the doc: the `name` of every row.
func tableFirstColumn(t *testing.T, doc, intro string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, intro)
	require.True(t, ok, "docs/PROTOCOL.md lacks %q", intro)
	row := regexp.MustCompile("^\\| `(\\w+)` \\|")
	var names []string
	started := false
	for _, l := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(l, "|") {
			if started {
				break
			}
			continue
		}
		started = true
		if m := row.FindStringSubmatch(l); m != nil {
			names = append(names, m[1])
		}
	}
	sort.Strings(names)
	return names
}

func jsonFields(v any) []string {
	var names []string
	typ := reflect.TypeOf(v)
	for i := range typ.NumField() {
		tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		names = append(names, tag)
	}
	sort.Strings(names)
	return names
}

// TestProtocolDocCatalogue: the catalogue's tables list exactly the JSON
// fields of trace.ToolSpec and trace.ArgSpec, with every effect and type.
func TestProtocolDocCatalogue(t *testing.T) {
	doc := protocolDoc(t)
	assert.Equal(t, jsonFields(trace.ToolSpec{}), tableFirstColumn(t, doc, "Each is an object with:"))
	assert.Equal(t, jsonFields(trace.ArgSpec{}), tableFirstColumn(t, doc, "Each argument:"))

	line := func(field string) string {
		m := regexp.MustCompile("\n\\| `" + field + "` \\| ([^|]*) \\|").FindStringSubmatch(doc)
		require.NotNil(t, m, "no row for %s", field)
		return m[1]
	}
	list := func(cell string) []string {
		var out []string
		for _, m := range regexp.MustCompile("`(\\w+)`").FindAllStringSubmatch(cell, -1) {
			out = append(out, m[1])
		}
		sort.Strings(out)
		return out
	}
	var effects []string
	for _, e := range trace.Effects() {
		effects = append(effects, string(e))
	}
	sort.Strings(effects)
	assert.Equal(t, effects, list(line("effect")))
	types := append([]string(nil), trace.ArgTypes()...)
	sort.Strings(types)
	assert.Equal(t, types, list(line("type")))
}

// TestProtocolDocStartFields: the start section explains every field of
// start, each in its own bullet.
func TestProtocolDocStartFields(t *testing.T) {
	doc := protocolDoc(t)
	_, sec, ok := strings.Cut(doc, "### `start`")
	require.True(t, ok, "no ### `start` section")
	sec, _, _ = strings.Cut(sec, "\n### ")
	for _, f := range jsonFields(native.Start{}) {
		assert.Regexp(t, "\n- (`\\w+`( \\([^)]*\\))? and )?`"+f+"`", sec, "the start section has no bullet for %q", f)
	}
}
