package doccheck

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestRefsAndValues(t *testing.T) {
	doc := "| a | 30s (`scenarios.DefaultCallTimeout`) | 4 KiB (`callsim.Max`) | `flood` (`callsim.ReasonFlood`) |"
	refs := Refs(doc, "callsim")
	if len(refs) != 2 || refs["callsim.Max"][0] != "4 KiB" || refs["callsim.ReasonFlood"][0] != "`flood`" {
		t.Fatalf("refs %v", refs)
	}
	for _, c := range []struct {
		want any
		s    string
		got  any
	}{{time.Second, "30s", 30 * time.Second}, {int64(0), "4 KiB", int64(4096)}, {int64(0), "1,000", int64(1000)}, {"", "`flood`", "flood"}} {
		if v, err := Value(c.want, c.s); err != nil || v != c.got {
			t.Errorf("Value(%q) = %v, %v", c.s, v, err)
		}
	}
	if _, err := Value(int64(0), "3 GiB"); err == nil {
		t.Error("unknown unit accepted")
	}
	if !regexp.MustCompile(Spoken(1500*time.Millisecond)).MatchString("1.5 s") || !regexp.MustCompile(Spoken(2*time.Minute)).MatchString("2 min") {
		t.Error("Spoken")
	}
	if Flat("a\n  b") != "a b" {
		t.Error("Flat")
	}
	names, err := ExportedConsts(".", "doccheck")
	if err != nil || len(names) != 0 {
		t.Errorf("ExportedConsts: %v %v", names, err)
	}
}

func TestPinMismatches(t *testing.T) {
	req := "a-b==1.2.3 \\\n    --hash=sha256:00\nc==0.1 \\\n"
	doc := "uses `a-b` 1.2.3 and `a-b[x,y]` 1.2.3, (c 0.2), and `d` 4.5"
	got := PinMismatches(doc, req, "a-b", "c", "d", "e")
	want := []string{"c: stated 0.2, pinned 0.1", "d: not pinned", "e: not pinned"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("PinMismatches = %q, want %q", got, want)
	}
	if got := PinMismatches("nothing here", req, "a-b"); len(got) != 1 || !strings.Contains(got[0], "no version stated") {
		t.Errorf("PinMismatches without a stated version = %q", got)
	}
}
