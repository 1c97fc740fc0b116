package callsim

import (
	"strings"
	"unicode/utf8"

	"github.com/callproof/callproof/trace"
)

// clipper cuts the agent text of one event to the per-event cap and
// counts the text the agent sent for it. Strings are taken in a fixed
// order (map keys sorted), so the same message is always cut the same way.
type clipper struct {
	left int   // bytes this event may still keep
	sent int64 // bytes of text the agent sent in this event
	cut  bool  // something was cut
}

func newClipper(limit int) *clipper { return &clipper{left: limit} }

// str keeps what fits of s. A cut copies the kept part, so the rest of a
// huge string is not held in memory by the recorded event.
func (c *clipper) str(s string) string {
	c.sent += int64(len(s))
	if len(s) <= c.left {
		c.left -= len(s)
		return s
	}
	c.cut = true
	n := runeStart(s, c.left)
	c.left = 0
	return strings.Clone(s[:n]) + TruncationMarker
}

// bytes is str for raw frame bytes; only the kept part is copied.
func (c *clipper) bytes(b []byte) string {
	c.sent += int64(len(b))
	if len(b) <= c.left {
		c.left -= len(b)
		return string(b)
	}
	c.cut = true
	n := c.left // < len(b)
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	c.left = 0
	return string(b[:n]) + TruncationMarker
}

// strMap keeps the entries that fit, in key order: the one that crosses
// the cap is cut, the rest are dropped.
func (c *clipper) strMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, min(len(m), 16))
	for _, k := range trace.SortedKeys(m) {
		v := m[k]
		if c.left == 0 {
			c.sent += int64(len(k) + len(v))
			if len(k)+len(v) > 0 {
				c.cut = true
			}
			continue
		}
		k2 := c.str(k)
		out[k2] = c.str(v)
	}
	return out
}

// runeStart backs n off to the start of a rune, so a cut never splits one.
func runeStart(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// overHistory reports whether rec's history is over lim's budget.
func overHistory(rec *trace.Recorder, lim Limits) bool {
	bytes, events := rec.Size()
	return bytes > lim.MaxHistoryBytes || events > lim.MaxHistoryEvents
}
