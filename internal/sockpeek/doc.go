// Package sockpeek tells what is waiting in a connection's socket without
// consuming it or blocking: data, the peer's close, or nothing. It lets a
// party decide by what has reached it rather than by when its own
// goroutines got round to reading it (the mock backend before it releases
// a held request; the reference agents before they give up on one).
package sockpeek
