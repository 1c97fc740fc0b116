package livekit

import (
	"os"
	"testing"

	"github.com/callproof/callproof/internal/doccheck"
)

// docs/INTEROP.md and the README name the versions of the LiveKit
// packages the stock agent runs on; each must be the one
// python/requirements-livekit.txt pins.
func TestDocsStatePinnedVersions(t *testing.T) {
	req, err := os.ReadFile("../../python/requirements-livekit.txt")
	if err != nil {
		t.Fatal(err)
	}
	for doc, names := range map[string][]string{
		"../../docs/INTEROP.md": {"livekit-agents", "livekit-plugins-silero", "livekit-plugins-openai", "livekit"},
		"../../README.md":       {"livekit-agents"},
	} {
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range doccheck.PinMismatches(string(raw), string(req), names...) {
			t.Errorf("%s: %s", doc, m)
		}
	}
}
