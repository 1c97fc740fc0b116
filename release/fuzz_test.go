package release

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad: a baseline.json of any bytes is refused with an error naming
// the file, or loads into a baseline that saves and loads back the same;
// never a panic. And a history file of any bytes reads without a panic,
// its bad lines reported as warnings.
func FuzzLoad(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "baseline.json.golden")); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":1,"k":1,"scenarios":[{"scenario":"a","trials":1,"integrity":2}]}`))
	f.Add([]byte("{\"version\":1,\"time\":\"2026-12-01T00:00:00Z\"}\n{torn"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, BaselineFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := Load(dir); err == nil {
			out := t.TempDir()
			if err := Save(out, b); err != nil {
				t.Fatalf("a loaded baseline does not save: %v", err)
			}
			if _, err := Load(out); err != nil {
				t.Fatalf("a saved baseline does not load: %v", err)
			}
		}
		hist := filepath.Join(dir, "history.jsonl")
		if err := os.WriteFile(hist, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, _ = ReadHistory(hist)
	})
}
