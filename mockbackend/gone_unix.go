//go:build linux || darwin

package mockbackend

import (
	"errors"
	"net"
	"syscall"
)

// peerClosed peeks at conn without consuming or blocking: a read of zero
// bytes is the peer's FIN, a reset is the peer gone; data or "would block"
// is a live peer. It runs beside net/http's own background read, which
// is parked in the poller, not in the socket, and takes nothing from it.
func peerClosed(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	var buf [1]byte
	_ = raw.Control(func(fd uintptr) {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil:
			closed = n == 0
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR):
		default:
			closed = true // ECONNRESET and the like
		}
	})
	return closed
}
