package pipecat

import (
	"os"
	"regexp"
	"testing"

	"github.com/callproof/callproof/mockbackend/mcptools"
)

// fake_llm.py keys a write by the argument the MCP endpoint offers, and
// leaves that and the state version out of the arguments it compares: its
// names must be the endpoint's.
func TestFakeKeysByTheEndpointsArguments(t *testing.T) {
	src, err := os.ReadFile("fake_llm.py")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^KEY_ARG, VERSION_ARG = "([^"]+)", "([^"]+)"$`).FindSubmatch(src)
	if m == nil {
		t.Fatal(`fake_llm.py has no line KEY_ARG, VERSION_ARG = "…", "…"`)
	}
	if string(m[1]) != mcptools.ArgIdempotencyKey || string(m[2]) != mcptools.ArgStateVersion {
		t.Errorf("fake_llm.py: KEY_ARG, VERSION_ARG = %q, %q; the endpoint's are %q, %q", m[1], m[2], mcptools.ArgIdempotencyKey, mcptools.ArgStateVersion)
	}
}
