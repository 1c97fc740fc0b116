package pipecat

import (
	"os"
	"regexp"
	"testing"

	"github.com/callproof/callproof/internal/doccheck"
)

// docs/INTEROP.md names the versions of pipecat-ai and of the MCP SDK
// under its MCPClient; each must be the one python/requirements-pipecat.txt
// pins.
func TestInteropDocStatesPinnedVersions(t *testing.T) {
	req, err := os.ReadFile("../../python/requirements-pipecat.txt")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../../docs/INTEROP.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := doccheck.Flat(string(raw))
	for _, name := range []string{"pipecat-ai", "mcp"} {
		pin := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `==(\S+) `).FindStringSubmatch(string(req))
		if pin == nil {
			t.Errorf("requirements-pipecat.txt does not pin %s", name)
			continue
		}
		// `name` or `name[extras]` (or the bare name in a version's parentheses) then the version
		stated := regexp.MustCompile("(?:`"+regexp.QuoteMeta(name)+"(?:\\[[a-z,]+\\])?`|\\("+regexp.QuoteMeta(name)+") ([0-9][0-9.]*[0-9])").FindAllStringSubmatch(doc, -1)
		if len(stated) == 0 {
			t.Errorf("docs/INTEROP.md states no version of %s", name)
		}
		for _, s := range stated {
			if s[1] != pin[1] {
				t.Errorf("docs/INTEROP.md: %s %s, pinned %s", name, s[1], pin[1])
			}
		}
	}
}
