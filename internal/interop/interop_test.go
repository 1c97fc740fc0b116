package interop

import (
	"testing"
)

// fakeTB records how Missing ended the test.
type fakeTB struct {
	testing.TB
	fatal, skip bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Fatalf(string, ...any) { f.fatal = true }
func (f *fakeTB) Skip(...any)           { f.skip = true }

func TestMissing(t *testing.T) {
	for _, c := range []struct {
		required, ci string
		fatal        bool
	}{
		{"", "", false},
		{"1", "", true},
		{"", "true", true},
		{"0", "false", false},
	} {
		t.Setenv(EnvRequired, c.required)
		t.Setenv("CI", c.ci)
		f := &fakeTB{}
		Missing(f, "node not found")
		if f.fatal != c.fatal || f.skip == c.fatal {
			t.Errorf("%s=%q CI=%q: fatal=%v skip=%v, want fatal=%v", EnvRequired, c.required, c.ci, f.fatal, f.skip, c.fatal)
		}
	}
}
