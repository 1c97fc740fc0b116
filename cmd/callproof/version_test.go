package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVersionPrintsTheConstant(t *testing.T) {
	code, out, errOut := fxCLI(t, "version")
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, Version+"\n", out)

	code, _, _ = fxCLI(t, "version", "extra")
	assert.Equal(t, exitUsage, code)
}

// The version has one of the forms docs/CLI.md says map onto PEP 440, and
// is declared on the one line scripts/build_wheel.py reads.
func TestVersionFormIsDocumented(t *testing.T) {
	assert.Regexp(t, `^\d+\.\d+\.\d+(-(alpha|beta|rc|dev)\.\d+)?$`, Version)
	src, err := os.ReadFile("version.go")
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^const Version = "`+regexp.QuoteMeta(Version)+`"$`, string(src))

	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "CLI.md"))
	require.NoError(t, err)
	for _, pre := range []string{"-alpha.N", "-beta.N", "-rc.N", "-dev.N"} {
		assert.True(t, strings.Contains(string(doc), "`MAJOR.MINOR.PATCH"+pre+"`"), "docs/CLI.md states how %s maps", pre)
	}
}
