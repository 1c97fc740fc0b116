package readdeadline

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/callproof/callproof/callsim"
)

// Conn is what the deadline is set on (a *websocket.Conn).
type Conn interface {
	SetReadDeadline(t time.Time) error
}

// Keeper keeps one connection's read deadline. It is safe for concurrent
// use; deadlines may change while a read is blocked and apply to it.
type Keeper struct {
	conn     Conn
	mu       sync.Mutex
	last     time.Time     // last frame, pong or ping from the agent
	idle     time.Duration // 0: none
	deadline time.Time     // call deadline; zero: none
}

// New returns a keeper for c, counting the agent alive from now.
func New(c Conn) *Keeper { return &Keeper{conn: c, last: time.Now()} }

// SetCallDeadline makes reads fail after t.
func (k *Keeper) SetCallDeadline(t time.Time) {
	k.mu.Lock()
	k.deadline = t
	k.applyLocked()
	k.mu.Unlock()
}

// SetIdleTimeout makes reads fail once the agent has sent nothing for d,
// counted from now; zero turns it off.
func (k *Keeper) SetIdleTimeout(d time.Duration) {
	k.mu.Lock()
	k.idle = d
	k.last = time.Now()
	k.applyLocked()
	k.mu.Unlock()
}

// Idle is the idle timeout (0: none).
func (k *Keeper) Idle() time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.idle
}

// Alive records a sign of life and moves the deadline on.
func (k *Keeper) Alive() {
	k.mu.Lock()
	k.last = time.Now()
	k.applyLocked()
	k.mu.Unlock()
}

// Deadline is the call deadline (zero: none).
func (k *Keeper) Deadline() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.deadline
}

func (k *Keeper) applyLocked() {
	t := k.deadline
	if k.idle > 0 {
		if i := k.last.Add(k.idle); t.IsZero() || i.Before(t) {
			t = i
		}
	}
	_ = k.conn.SetReadDeadline(t)
}

// TimedOut explains a read that hit its deadline, wrapping
// callsim.ErrUnresponsive.
func (k *Keeper) TimedOut() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.deadline.IsZero() && !time.Now().Before(k.deadline) {
		return fmt.Errorf("%w: read past the call deadline", callsim.ErrUnresponsive)
	}
	return fmt.Errorf("%w: no frame and no answer to pings for %s", callsim.ErrUnresponsive, k.idle)
}

// IsTimeout says whether a read error is a deadline (gorilla hands read
// deadlines back as its own net.Error).
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}
