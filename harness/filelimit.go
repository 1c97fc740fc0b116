package harness

import (
	"fmt"
	"syscall"
)

// File descriptors a run needs: FilesPerCall for each call at once and
// FilesReserve for the process itself (the backend's listener, results
// files, the runtime). A text call holds its WebSocket to the agent and,
// while a tool request is in flight, the backend's side of it (measured:
// 168 descriptors at the peak of 120 concurrent text calls); an audio call
// adds its recording or, over WebRTC, its UDP socket and signaling.
const (
	FilesPerCall = 3
	FilesReserve = 64
)

// FileLimit is what RaiseFileLimit found and did.
type FileLimit struct {
	Soft, Hard uint64 // RLIMIT_NOFILE after raising
	Raised     bool   // the soft limit was raised (from Was)
	Was        uint64
	// MaxCalls is how many calls at once the hard limit allows.
	MaxCalls int
}

// RaiseFileLimit raises the soft RLIMIT_NOFILE to the hard limit, so
// concurrency is not capped by a low default, and says how many calls at
// once that allows.
func RaiseFileLimit() (FileLimit, error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return FileLimit{}, fmt.Errorf("RLIMIT_NOFILE: %w", err)
	}
	fl := FileLimit{Soft: r.Cur, Hard: r.Max, Was: r.Cur}
	if r.Cur < r.Max {
		r.Cur = r.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
			return fl, fmt.Errorf("raising RLIMIT_NOFILE to %d: %w", r.Max, err)
		}
		fl.Soft, fl.Raised = r.Cur, true
	}
	fl.MaxCalls = max(int((fl.Hard-min(fl.Hard, FilesReserve))/FilesPerCall), 0)
	return fl, nil
}
