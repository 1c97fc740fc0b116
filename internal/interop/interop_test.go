package interop

import (
	"testing"
)

// fakeTB records how Missing or Behind ended the test.
type fakeTB struct {
	testing.TB
	fatal, skip bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Fatalf(string, ...any) { f.fatal = true }
func (f *fakeTB) Skip(...any)           { f.skip = true }

// envCase is one setting of CALLPROOF_INTEROP_REQUIRED and CI, and
// whether the test must then fail rather than skip.
type envCase struct {
	required, ci string
	fatal        bool
}

// checkEnds runs end under each setting and checks it failed or skipped.
func checkEnds(t *testing.T, end func(testing.TB, string), cases []envCase) {
	t.Helper()
	for _, c := range cases {
		t.Setenv(EnvRequired, c.required)
		t.Setenv("CI", c.ci)
		f := &fakeTB{}
		end(f, "the reason")
		if f.fatal != c.fatal || f.skip == c.fatal {
			t.Errorf("%s=%q CI=%q: fatal=%v skip=%v, want fatal=%v", EnvRequired, c.required, c.ci, f.fatal, f.skip, c.fatal)
		}
	}
}

func TestMissing(t *testing.T) {
	checkEnds(t, Missing, []envCase{
		{"", "", false},
		{"1", "", true},
		{"", "true", true},
		{"0", "false", false},
	})
}

// A call never kept in real time skips the test, but fails it under
// CI=true (CALLPROOF_INTEROP_REQUIRED alone does not: on a busy
// developer's machine make interop may still skip such a call).
func TestBehind(t *testing.T) {
	checkEnds(t, Behind, []envCase{
		{"", "", false},
		{"1", "", false},
		{"", "true", true},
		{"1", "false", false},
	})
}
