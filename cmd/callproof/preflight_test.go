package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/internal/doccheck"
)

// An agent address that accepts connections and never answers: run
// gives up within the dial timeout plus a second, names the URL, and
// leaves no results directory.
func TestRunPreflightWithinTheDialTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	held := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held <- c // kept open, unanswered, until the test ends
		}
	}()
	defer func() {
		l.Close()
		for len(held) > 0 {
			(<-held).Close()
		}
	}()
	url := "ws://" + l.Addr().String() + "/"
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	began := time.Now()
	code := run([]string{"run", "--agent", url, "--out", out, "--only", "corr-01"}, &stdout, &stderr)
	took := time.Since(began)
	assert.Equal(t, exitNoAgent, code, stderr.String())
	assert.Less(t, took, callsim.DefaultDialTimeout+time.Second)
	assert.Contains(t, stderr.String(), "callproof run: preflight: no agent answers at "+url+" (native dialect): ")
	assert.Empty(t, stdout.String())
	_, err = os.Stat(out)
	assert.True(t, os.IsNotExist(err), "no results directory: %v", err)
}

// docs/CLI.md's exit code table lists exactly the codes the commands
// use, and the top-level usage line names each but 130.
func TestExitCodesDocumented(t *testing.T) {
	codes := map[int]bool{exitOK: true, exitGate: true, exitUsage: true, exitBroken: true, exitIncomplete: true, exitNoAgent: true, exitKilled: true}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "CLI.md"))
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(doc), "\n## Exit codes\n")
	require.True(t, ok, "docs/CLI.md has no Exit codes section")
	table, _, _ = strings.Cut(table, "\n## ")
	var documented []int
	for _, m := range regexp.MustCompile(`(?m)^\| (\d+) \|`).FindAllStringSubmatch(table, -1) {
		n, _ := strconv.Atoi(m[1])
		documented = append(documented, n)
	}
	var want []int
	for c := range codes {
		want = append(want, c)
	}
	sort.Ints(want)
	assert.Equal(t, want, documented)

	var usageText bytes.Buffer
	usage(&usageText, commands())
	for _, c := range want {
		if c != exitKilled {
			assert.Regexp(t, `exit codes: .*\b`+strconv.Itoa(c)+` [a-z]`, usageText.String())
		}
	}
}

// The preflight's bound is the one docs/CLI.md states.
func TestPreflightBoundDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "CLI.md"))
	require.NoError(t, err)
	refs := doccheck.Refs(doccheck.Flat(string(doc)), "callsim")["callsim.DefaultDialTimeout"]
	require.NotEmpty(t, refs, "docs/CLI.md states the preflight's bound")
	for _, s := range refs {
		v, err := doccheck.Value(callsim.DefaultDialTimeout, s)
		require.NoError(t, err)
		assert.Equal(t, callsim.DefaultDialTimeout, v)
	}
}
