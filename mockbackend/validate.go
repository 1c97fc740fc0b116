package mockbackend

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/callproof/callproof/trace"
)

var integerRe = regexp.MustCompile(`^-?[0-9]+$`)           // immutable: safe to share
var numberRe = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`) // immutable: safe to share

// argError is a request error that names the argument (or header) at fault.
type argError struct {
	param string
	msg   string
}

// decodeArgs returns a request body's arguments as strings. JSON numbers
// become their decimal string; anything else is an error. (The handler
// reads the whole body first, so the server notices a client that leaves
// while the request waits.)
func decodeArgs(b []byte) (map[string]string, *argError) {
	args := map[string]string{}
	if len(bytes.TrimSpace(b)) == 0 {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return nil, &argError{msg: "body must be a JSON object of arguments"}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &argError{msg: "body must hold exactly one JSON object"}
	}
	for _, name := range trace.SortedKeys(raw) {
		switch v := raw[name].(type) {
		case string:
			args[name] = v
		case json.Number:
			s, ok := decimalString(v)
			if !ok {
				return nil, &argError{param: name, msg: fmt.Sprintf("argument %q: %q is not a number", name, v)}
			}
			args[name] = s
		default:
			return nil, &argError{param: name, msg: fmt.Sprintf("argument %q must be a string or a number", name)}
		}
	}
	return args, nil
}

// decimalString writes a JSON number in plain decimal: 2 → "2", 2.50 →
// "2.5", 1e3 → "1000".
func decimalString(n json.Number) (string, bool) {
	s := n.String()
	if integerRe.MatchString(s) {
		return s, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "", false
	}
	return strconv.FormatFloat(f, 'f', -1, 64), true
}

// validate checks args against the tool's schema, reporting the first
// problem in catalogue order, then unknown arguments in name order.
func (t *tool) validate(args map[string]string) *argError {
	for _, a := range t.spec.Args {
		v, ok := args[a.Name]
		if !ok || v == "" {
			if a.Required {
				return &argError{param: a.Name, msg: fmt.Sprintf("missing required argument %q", a.Name)}
			}
			continue
		}
		switch a.Type {
		case "integer":
			if !integerRe.MatchString(v) {
				return &argError{param: a.Name, msg: fmt.Sprintf("argument %q must be an integer, got %q", a.Name, v)}
			}
		case "date":
			if _, err := time.Parse(time.DateOnly, v); err != nil || len(v) != len(time.DateOnly) {
				return &argError{param: a.Name, msg: fmt.Sprintf("argument %q must be a date YYYY-MM-DD, got %q", a.Name, v)}
			}
		case trace.ArgTime:
			if _, err := time.Parse("15:04", v); err != nil || len(v) != 5 {
				return &argError{param: a.Name, msg: fmt.Sprintf("argument %q must be a time HH:MM (24-hour), got %q", a.Name, v)}
			}
		case trace.ArgNumber:
			if !numberRe.MatchString(v) {
				return &argError{param: a.Name, msg: fmt.Sprintf("argument %q must be a decimal number, got %q", a.Name, v)}
			}
		}
		if len(a.Enum) > 0 && !slices.Contains(a.Enum, v) {
			return &argError{param: a.Name, msg: fmt.Sprintf("argument %q must be one of %q, got %q", a.Name, a.Enum, v)}
		}
		if re := t.patterns[a.Name]; re != nil && !re.MatchString(v) {
			return &argError{param: a.Name, msg: fmt.Sprintf("argument %q does not match %s, got %q", a.Name, a.Pattern, v)}
		}
	}
	for _, name := range trace.SortedKeys(args) {
		if _, known := t.args[name]; !known {
			return &argError{param: name, msg: fmt.Sprintf("unknown argument %q", name)}
		}
	}
	return nil
}
