//go:build linux || darwin

package sockpeek

import (
	"errors"
	"net"
	"syscall"
)

// Peek reports what is waiting in conn: data (a byte or more), or closed
// (a read of zero bytes is the peer's FIN; a reset is the peer gone).
// "Would block" is neither. It runs beside net/http's own reads, which are
// parked in the poller, not in the socket, and takes nothing from them. A
// conn without a socket to peek reports neither.
func Peek(conn net.Conn) (data, closed bool) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false, false
	}
	var buf [1]byte
	_ = raw.Control(func(fd uintptr) {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil:
			data, closed = n > 0, n == 0
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR):
		default:
			closed = true // ECONNRESET and the like
		}
	})
	return data, closed
}
