package scenarios

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callproof/callproof/trace"
	"go.yaml.in/yaml/v3"
)

// seedFiles returns the built-in pack files and this package's testdata
// scenarios whose extension is one of exts.
func seedFiles(f *testing.F, exts ...string) [][]byte {
	f.Helper()
	var out [][]byte
	want := func(name string) bool {
		for _, e := range exts {
			if strings.EqualFold(filepath.Ext(name), e) {
				return true
			}
		}
		return false
	}
	err := fs.WalkDir(PackFS(), ".", func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() || !want(p) {
			return err
		}
		data, err := fs.ReadFile(PackFS(), p)
		out = append(out, data)
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/*")
	for _, name := range files {
		if want(name) {
			data, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			out = append(out, data)
		}
	}
	return out
}

// checkLoad is the property both fuzz targets hold the loader to: it never
// panics (the fuzzer reports one), every error is a file:line: field:
// message *Error, a clean load compiles, and everything compiled is within
// the documented bounds.
func checkLoad(t *testing.T, name string, data []byte) {
	s, err := LoadBytes(name, data)
	if err != nil {
		var es Errors
		if !errors.As(err, &es) {
			t.Fatalf("error is %T, want Errors", err)
		}
		for _, e := range es {
			var se *Error
			if !errors.As(e, &se) || se.File != name {
				t.Fatalf("error %q is not an *Error of %s", e, name)
			}
		}
	}
	if s == nil {
		return
	}
	verrs := s.Validate()
	c, cerr := Compile(s)
	if (cerr == nil) != (len(verrs) == 0) {
		t.Fatalf("Validate and Compile disagree: %v / %v", verrs, cerr)
	}
	if err != nil {
		return
	}
	if cerr != nil {
		t.Fatalf("loaded cleanly but does not compile: %v", cerr)
	}
	checkBounds(t, c)
}

func checkBounds(t *testing.T, c *Compiled) {
	sc := c.Script
	within := func(what string, d, max time.Duration) {
		if d < 0 || d > max {
			t.Fatalf("%s %v is outside 0..%v", what, d, max)
		}
	}
	within("call timeout", sc.CallTimeout, MaxCallTimeout)
	within("step timeout", sc.StepTimeout, MaxStepTimeout)
	within("quiet", sc.Quiet, MaxQuiet)
	checkFault := func(f *trace.Fault) {
		within("fault delay", f.Delay, MaxFaultDelay)
		if f.Times < 0 || f.Times > MaxFaultTimes {
			t.Fatalf("fault times %d outside 0..%d", f.Times, MaxFaultTimes)
		}
	}
	for _, st := range sc.Steps {
		within("step duration", st.Duration, max(MaxStepDuration, MaxHold))
		within("trigger delay", st.On.Delay, MaxStepDuration)
		within("trigger timeout", st.On.Timeout, MaxStepTimeout)
		within("trigger fallback", st.On.Fallback, MaxStepDuration)
		if st.Fault != nil {
			checkFault(st.Fault)
		}
	}
	for i := range c.Faults {
		checkFault(&c.Faults[i])
	}
	for _, r := range c.Records {
		if r.Version < 1 || r.Version > MaxRecordVersion {
			t.Fatalf("record version %d outside 1..%d", r.Version, MaxRecordVersion)
		}
	}
}

// hostile are inputs that once broke the loader or probe its limits.
func hostile() []string {
	return []string{
		"setup:\n  a:\n",
		"id: t\ncategory: correction\nsetup: &x [*x]\n",
		billionLaughs(),
		"steps: [null, {do: null}, {on: null}]\ntools: [null]\nrecords: [null]\nfaults: [null]\n",
		"timeouts: {call: 2562047h}\n",
		"? [a]\n: b\n",
		"<<: {id: t}\n",
		"a: !!binary aGVsbG8=\n",
	}
}

func FuzzLoadYAML(f *testing.F) {
	for _, data := range seedFiles(f, ".yaml", ".yml", ".json") {
		f.Add(data)
	}
	for _, s := range hostile() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkLoad(t, "f.yaml", data) })
}

func FuzzLoadJSON(f *testing.F) {
	for _, data := range seedFiles(f, ".json") {
		f.Add(data)
	}
	// The packs, rewritten as JSON.
	for _, data := range seedFiles(f, ".yaml", ".yml") {
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			f.Fatal(err)
		}
		js, err := json.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(js)
	}
	f.Add([]byte(`{"setup":{"a":null}}`))
	f.Add([]byte(`{"id":null,"steps":[null,{"do":"say","on":null}],"tools":[{}],"records":[{"fields":{"a":null}}]}`))
	f.Add([]byte(`{"timeouts":{"call":"2562047h"},"faults":[{"kind":"latency","delay":"-1s","probability":1e400}]}`))
	f.Fuzz(func(t *testing.T, data []byte) { checkLoad(t, "f.json", data) })
}
