package native

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ErrNotObject: a frame whose JSON is valid but not an object.
var ErrNotObject = errors.New("not a JSON object")

// Decode parses one frame. It accepts exactly one JSON object (surrounding
// white space allowed); anything else, "null" included, is an error.
func Decode(b []byte) (Message, error) {
	var m Message
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		if !json.Valid(b) {
			return m, json.Unmarshal(b, &m)
		}
		return m, ErrNotObject
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return Message{}, err
	}
	return m, nil
}
