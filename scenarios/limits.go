package scenarios

import (
	"fmt"
	"io"
	"time"

	"go.yaml.in/yaml/v3"
)

// Limits on what a scenario file may hold. The loader rejects a file over
// any of them with a file:line: field: message error before it decodes
// anything, so no input can make it use unbounded memory or time, and every
// compiled duration is one a call can run (and scale) without overflowing.
// docs/SCENARIOS.md lists them; a test keeps the two in step.
const (
	// MaxFileSize bounds a scenario file, in bytes.
	MaxFileSize = 1 << 20
	// MaxNodes bounds the YAML nodes (mappings, sequences, scalars) of a
	// file counted with every alias expanded, as the decoder walks them.
	MaxNodes = 20000
	// MaxExpandedBytes bounds the text of all scalars (keys and values)
	// counted with every alias expanded.
	MaxExpandedBytes = 2 << 20
	// MaxDepth bounds how deep mappings and sequences nest (the top-level
	// mapping is depth 1).
	MaxDepth = 16
	// MaxItems bounds the entries of any one mapping or sequence (steps,
	// tools, records, faults, slots, setup, ...).
	MaxItems = 256
	// MaxKeyLen bounds a mapping key, in bytes.
	MaxKeyLen = 64

	// MaxCallTimeout bounds timeouts.call.
	MaxCallTimeout = time.Hour
	// MaxStepTimeout bounds timeouts.step and a trigger's on.timeout.
	MaxStepTimeout = 10 * time.Minute
	// MaxQuiet bounds timeouts.quiet.
	MaxQuiet = time.Minute
	// MaxStepDuration bounds a step's duration (speech, noise, silence,
	// dtmf) and a trigger's on.delay and on.fallback.
	MaxStepDuration = 10 * time.Minute
	// MaxHold bounds a hold step's max.
	MaxHold = 10 * time.Minute
	// MaxFaultDelay bounds a fault's delay (and a compact setup's
	// delay_ms).
	MaxFaultDelay = time.Minute
	// MaxFaultTimes bounds a fault's times (and a compact setup's times).
	MaxFaultTimes = 100
	// MaxHoldSkip bounds a hold match's skip.
	MaxHoldSkip = 100
	// MaxTriggerPartials bounds a trigger's on.partials.
	MaxTriggerPartials = 100
	// MaxRecordVersion bounds a starting record's version.
	MaxRecordVersion = 1000000

	// MaxLimitEventTextBytes bounds limits.max_event_text_bytes.
	MaxLimitEventTextBytes = 1 << 20
	// MaxLimitCallTextBytes bounds limits.max_call_text_bytes.
	MaxLimitCallTextBytes = 64 << 20
	// MaxLimitHistoryBytes bounds limits.max_history_bytes.
	MaxLimitHistoryBytes = 256 << 20
	// MaxLimitHistoryEvents bounds limits.max_history_events.
	MaxLimitHistoryEvents = 1000000
	// MaxLimitToolRequestsPerSecond bounds
	// limits.max_tool_requests_per_second.
	MaxLimitToolRequestsPerSecond = 10000
	// MaxLimitToolRequestsPerCall bounds limits.max_tool_requests_per_call.
	MaxLimitToolRequestsPerCall = 1000000
	// MaxLimitIdleTimeout bounds limits.idle_timeout.
	MaxLimitIdleTimeout = 10 * time.Minute
	// MaxLimitToolConnections bounds limits.max_tool_connections and
	// limits.max_idle_tool_connections.
	MaxLimitToolConnections = 4096
	// MaxLimitToolHeaderBytes bounds limits.max_tool_header_bytes
	// (net/http's own default).
	MaxLimitToolHeaderBytes = 1 << 20
	// MaxLimitToolHeaderTimeout bounds limits.tool_header_timeout.
	MaxLimitToolHeaderTimeout = time.Minute
	// MaxCustomParameters bounds the entries of custom_parameters.
	MaxCustomParameters = 32
	// MaxCustomParameterBytes bounds one custom_parameters value (a key is
	// bounded by MaxKeyLen).
	MaxCustomParameterBytes = 1 << 10
)

// readLimited reads r up to one byte past MaxFileSize, so that an
// oversized file is refused without reading all of it.
func readLimited(r io.Reader) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, MaxFileSize+1))
}

// budget walks a parsed document the way the decoder will, following
// aliases, and reports the first place where it would pass MaxNodes,
// MaxExpandedBytes, MaxDepth, MaxItems or MaxKeyLen. It stops there, so it
// costs at most MaxNodes steps whatever the input (an alias bomb, or an
// alias that contains itself).
type budget struct {
	file  string
	nodes int
	bytes int
	path  []string // field path segments of the node being walked
	err   *Error
}

// checkBudget returns nil when root is within every limit.
func checkBudget(file string, root *yaml.Node) *Error {
	b := &budget{file: file}
	b.walk(root, 0, 1)
	return b.err
}

func (b *budget) fail(line int, format string, args ...any) {
	p := ""
	for _, s := range b.path {
		if len(s) > 0 && s[0] == '[' {
			p += s
		} else {
			p = join(p, s)
		}
	}
	b.err = &Error{File: b.file, Line: line, Field: p, Msg: fmt.Sprintf(format, args...)}
}

// walk visits n at depth. Inside an alias's expansion, alias is the line
// of the outermost alias being expanded, so an error points at the use
// that blew the budget rather than into the anchored text.
func (b *budget) walk(n *yaml.Node, alias, depth int) bool {
	for hops := 0; n.Kind == yaml.AliasNode && n.Alias != nil; hops++ {
		if alias == 0 {
			alias = n.Line
		}
		if hops > MaxDepth {
			b.fail(alias, "alias chain longer than %d (MaxDepth)", MaxDepth)
			return false
		}
		n = n.Alias
	}
	line := alias
	if line == 0 {
		line = n.Line
	}
	b.nodes++
	if b.nodes > MaxNodes {
		b.fail(line, "more than %d YAML nodes once aliases are expanded (MaxNodes)", MaxNodes)
		return false
	}
	b.bytes += len(n.Value)
	if b.bytes > MaxExpandedBytes {
		b.fail(line, "more than %d bytes of text once aliases are expanded (MaxExpandedBytes)", MaxExpandedBytes)
		return false
	}
	if n.Kind != yaml.MappingNode && n.Kind != yaml.SequenceNode {
		return true
	}
	if depth > MaxDepth {
		b.fail(line, "nested more than %d deep (MaxDepth)", MaxDepth)
		return false
	}
	items := len(n.Content)
	if n.Kind == yaml.MappingNode {
		items /= 2
	}
	if items > MaxItems {
		b.fail(line, "%d entries, more than %d (MaxItems)", items, MaxItems)
		return false
	}
	for i, c := range n.Content {
		if n.Kind == yaml.SequenceNode {
			b.path = append(b.path, fmt.Sprintf("[%d]", i))
		} else if i%2 == 1 {
			b.path = append(b.path, keyText(n.Content[i-1]))
		} else {
			// A key: count it, and check its length.
			if k := keyText(c); len(k) > MaxKeyLen {
				kl := alias
				if kl == 0 {
					kl = c.Line
				}
				b.fail(kl, "key of %d bytes, longer than %d (MaxKeyLen)", len(k), MaxKeyLen)
				return false
			}
			if !b.walk(c, alias, depth+1) {
				return false
			}
			continue
		}
		ok := b.walk(c, alias, depth+1)
		b.path = b.path[:len(b.path)-1]
		if !ok {
			return false
		}
	}
	return true
}

// keyText is a key's text for a field path ("" for a key that is no
// scalar, which the decoder reports).
func keyText(k *yaml.Node) string {
	if k = resolve(k); k.Kind != yaml.ScalarNode {
		return ""
	}
	return k.Value
}
