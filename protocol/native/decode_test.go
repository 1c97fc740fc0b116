package native_test

import (
	"errors"
	"testing"

	"github.com/callproof/callproof/protocol/native"
)

func TestDecode(t *testing.T) {
	m, err := native.Decode([]byte(` {"event":"hangup","hangup":{"reason":"done"}} `))
	if err != nil || m.Event != native.EventHangup || m.Hangup.Reason != "done" {
		t.Fatalf("got %+v, %v", m, err)
	}
	for _, s := range []string{`null`, `[1]`, `"x"`, `3`} {
		if _, err := native.Decode([]byte(s)); !errors.Is(err, native.ErrNotObject) {
			t.Errorf("%s: %v, want ErrNotObject", s, err)
		}
	}
	for _, s := range []string{``, `{`, `{"event":1}`, `{} {}`, "\xff"} {
		if _, err := native.Decode([]byte(s)); err == nil {
			t.Errorf("%q decoded", s)
		}
	}
}
