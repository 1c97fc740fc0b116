package scripts

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/callproof/callproof/internal/doccheck"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Flakes section of docs/PERFORMANCE.md states make stress's counts and
// the tests it repeats; stress.sh must have the same defaults.
func TestStressDefaultsMatchDocs(t *testing.T) {
	script, err := os.ReadFile("stress.sh")
	require.NoError(t, err)
	doc, err := os.ReadFile("../docs/PERFORMANCE.md")
	require.NoError(t, err)
	_, flakes, ok := strings.Cut(string(doc), "\n## Flakes\n")
	require.True(t, ok, "docs/PERFORMANCE.md has a Flakes section")
	flakes, _, _ = strings.Cut(flakes, "\n## ")
	flakes = doccheck.Flat(flakes)

	def := func(name string) string {
		m := regexp.MustCompile(name + `="\$\{` + name + `:-([^}]*)\}"`).FindStringSubmatch(string(script))
		require.NotNil(t, m, "stress.sh defaults %s", name)
		return m[1]
	}
	assert.Contains(t, flakes, "`-count="+def("COUNT")+"`", "the count per named test")
	assert.Contains(t, flakes, "(`-count="+def("ROUNDS")+"`)", "the rounds of the live-call packages")
	assert.Contains(t, flakes, "`TIMEOUT` ("+def("TIMEOUT")+")", "the bound on each go test")
	for _, pt := range strings.Fields(def("STRESS_TESTS")) {
		pkg, name, _ := strings.Cut(pt, ":")
		assert.Contains(t, flakes, "`"+name+"` (`./"+pkg+"/`)", "a named test the docs list")
	}
	live := regexp.MustCompile(`LIVE_PACKAGES="([^"]*)"`).FindStringSubmatch(string(script))
	require.NotNil(t, live)
	assert.Contains(t, flakes, "`"+live[1]+"`", "the live-call packages")
}
