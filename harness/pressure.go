package harness

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// PressureFile is where Linux reports CPU pressure stall information: the
// "some" line's total is how long, cumulatively, at least one runnable
// task waited for a CPU.
const PressureFile = "/proc/pressure/cpu"

// CPUStall reads the machine's cumulative CPU stall time ("some" total)
// from PressureFile; false where the kernel has no such file.
func CPUStall() (time.Duration, bool) {
	b, err := os.ReadFile(PressureFile)
	if err != nil {
		return 0, false
	}
	return parseStall(b)
}

// parseStall reads the "some" line's total= (microseconds).
func parseStall(b []byte) (time.Duration, bool) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) == 0 || string(f[0]) != "some" {
			continue
		}
		for _, kv := range f[1:] {
			if v, ok := bytes.CutPrefix(kv, []byte("total=")); ok {
				us, err := strconv.ParseInt(string(v), 10, 64)
				if err != nil || us < 0 {
					return 0, false
				}
				return time.Duration(us) * time.Microsecond, true
			}
		}
	}
	return 0, false
}

// pressureSince is the share of the wall time since (wall0, stall0)
// during which the machine was CPU-stalled, or nil.
func pressureSince(read func() (time.Duration, bool), wall0 time.Time, stall0 time.Duration, ok0 bool) *float64 {
	if read == nil || !ok0 {
		return nil
	}
	stall, ok := read()
	wall := time.Since(wall0)
	if !ok || wall <= 0 || stall < stall0 {
		return nil
	}
	p := min(float64(stall-stall0)/float64(wall), 1)
	return &p
}
