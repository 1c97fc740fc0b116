package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadJSONL feeds the history reader arbitrary bytes. It must never
// panic, and what it accepts must survive a write and a second read
// unchanged (the codec is stable after one round).
func FuzzReadJSONL(f *testing.F) {
	// The scorer's recorded histories are the real thing.
	files, err := filepath.Glob("../scorer/testdata/histories/*/*.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"\n\n",
		`{"call":"c","seq":1,"at":0,"src":"harness","kind":"call.start","data":{"schema":1}}`,
		`{"call":"c","seq":1,"kind":"call.start","data":null}` + "\n" + `{"call":"c","seq":2,"kind":"tool.held","data":{"id":"t1"}}`,
		`{"call":"c","seq":1,"kind":"call.start"}` + "\n" + `{"call":"c","seq":2,"kind":"no.such.kind","data":[1,{"a":2}]}`,
		`{"call":"c","seq":1,"kind":"call.start","data":{"schema":99}}`,
		`{"call":"c","kind":"tool.held","data":"x"}`,
		`{"call":"c","seq":1,"kind":"call.start","data":{"script":{"steps":[{"id":"a","intent":null,"fault":{}}]}}}`,
		"[1,2]\nnull\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		hs, err := ReadJSONL(bytes.NewReader(data))
		if err != nil {
			return
		}
		first := writeAll(t, hs)
		again, err := ReadJSONL(bytes.NewReader(first))
		if err != nil {
			t.Fatalf("re-reading what was written: %v\n%s", err, first)
		}
		if second := writeAll(t, again); !bytes.Equal(first, second) {
			t.Fatalf("not stable after one round:\n%s\n---\n%s", first, second)
		}
	})
}

func writeAll(t *testing.T, hs []*History) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, h := range hs {
		if err := WriteJSONL(&b, h); err != nil {
			t.Fatalf("writing what was read: %v", err)
		}
	}
	return b.Bytes()
}
