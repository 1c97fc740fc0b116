package callsim

import (
	"fmt"

	"github.com/callproof/callproof/protocol/native"
)

// DecodeFrame turns the text of one agent frame into a Frame; an error
// wraps ErrGarbageFrame. Transports of the native protocol use it so every
// one of them draws the line between a message and garbage in one place.
func DecodeFrame(b []byte) (Frame, error) {
	m, err := native.Decode(b)
	if err != nil {
		return Frame{}, fmt.Errorf("%w: %v", ErrGarbageFrame, err)
	}
	return Frame{Message: m, Raw: b}, nil
}
