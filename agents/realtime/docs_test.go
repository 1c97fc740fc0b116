package realtime_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/callproof/callproof/agents/realtime"
	"github.com/callproof/callproof/callsim/twilio"
	"github.com/callproof/callproof/internal/doccheck"
)

// docs/INTEROP.md states the fake's defaults as VALUE (`realtime.Name`);
// this test holds them to the code, and every exported constant to the doc.
func TestInteropDocMatchesFake(t *testing.T) {
	code := map[string]any{
		"realtime.DefaultThreshold":     realtime.DefaultThreshold,
		"realtime.DefaultOnset":         realtime.DefaultOnset,
		"realtime.DefaultSilence":       realtime.DefaultSilence,
		"realtime.DefaultChunk":         realtime.DefaultChunk,
		"realtime.DefaultSpeed":         realtime.DefaultSpeed,
		"realtime.DefaultToolTimeout":   realtime.DefaultToolTimeout,
		"realtime.DefaultWriteWait":     realtime.DefaultWriteWait,
		"realtime.NodeAgentStop":        realtime.NodeAgentStop,
		"realtime.OrderDeskConfirm":     realtime.OrderDeskConfirm,
		"realtime.OrderDeskRestore":     realtime.OrderDeskRestore,
		"realtime.OrderDeskUpdateArgs":  realtime.OrderDeskUpdateArgs,
		"realtime.OrderDeskRestoreArgs": realtime.OrderDeskRestoreArgs,
		"realtime.OrderDeskSilence":     realtime.OrderDeskSilence,
		"realtime.FromClient":           string(realtime.FromClient),
		"realtime.FromServer":           string(realtime.FromServer),
		"realtime.Note":                 string(realtime.Note),
	}
	declared, err := doccheck.ExportedConsts(".", "realtime")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range declared {
		if _, ok := code[name]; !ok {
			t.Errorf("%s: a new constant; state it in docs/INTEROP.md and add it here", name)
		}
	}
	raw, err := os.ReadFile("../../docs/INTEROP.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := doccheck.Refs(string(raw), "realtime")
	for name, want := range code {
		written, ok := doc[name]
		if !ok {
			t.Errorf("docs/INTEROP.md never states %s as VALUE (`%s`)", name, name)
		}
		for _, w := range written {
			like := want
			if _, isFloat := want.(float64); isFloat {
				like = int64(0) // the doc writes these as whole numbers
			}
			got, err := doccheck.Value(like, w)
			if n, isInt := got.(int64); isInt {
				if _, isFloat := want.(float64); isFloat {
					got = float64(n)
				}
			}
			if err != nil || got != want {
				t.Errorf("%s: docs/INTEROP.md says %s, the code %v (%v)", name, w, want, err)
			}
		}
	}
	for name := range doc {
		if _, ok := code[name]; !ok {
			t.Errorf("docs/INTEROP.md refers to %s, which this test does not know", name)
		}
	}
}

// The pinned versions in docs/INTEROP.md are package.json's, and the
// custom parameter names agree across the agent (server.mjs), the caller
// (callsim/twilio, its source read for the constant's value, and the
// constant the interop test uses) and the doc.
func TestInteropDocMatchesAgent(t *testing.T) {
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	doc := doccheck.Flat(read("../../docs/INTEROP.md"))
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal([]byte(read("../../agents/openai-twilio/package.json")), &pkg); err != nil {
		t.Fatal(err)
	}
	for name, version := range pkg.Dependencies {
		if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(version) {
			t.Errorf("package.json: %s %q is not an exact version", name, version)
		}
		if row := "| `" + name + "` | " + version; !strings.Contains(doc, row) {
			t.Errorf("docs/INTEROP.md has no row %q", row)
		}
	}

	server := read("../../agents/openai-twilio/server.mjs")
	var caller string
	files, _ := filepath.Glob("../../callsim/twilio/*.go")
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			caller += read(f)
		}
	}
	for _, p := range []struct{ js, goName, here string }{
		{"PARAM_TOOLS_URL", "ParamToolsBaseURL", paramToolsURL},
		{"PARAM_TOOLS_TOKEN", "ParamToolsToken", paramToolsTok},
		{"PARAM_TOOLS_MCP_URL", "ParamToolsMCPURL", twilio.ParamToolsMCPURL},
	} {
		js := regexp.MustCompile(`const ` + p.js + ` = '([^']+)'`).FindStringSubmatch(server)
		goc := regexp.MustCompile(p.goName + `\s*=\s*"([^"]+)"`).FindStringSubmatch(caller)
		switch {
		case js == nil:
			t.Errorf("server.mjs: no %s", p.js)
		case goc == nil:
			t.Errorf("callsim/twilio: no %s", p.goName)
		case js[1] != goc[1] || js[1] != p.here:
			t.Errorf("%s: server.mjs %q, callsim/twilio %q, this test %q", p.goName, js[1], goc[1], p.here)
		case !strings.Contains(doc, "`"+js[1]+"`"):
			t.Errorf("docs/INTEROP.md does not name `%s`", js[1])
		}
	}
	// The agent's bounds, HTTP and MCP alike: each stated as N s (`NAME`),
	// and each statement the constant's value.
	for _, name := range []string{"START_TIMEOUT_MS", "CONNECT_TIMEOUT_MS", "TOOL_TIMEOUT_MS", "SHUTDOWN_GRACE_MS"} {
		m := regexp.MustCompile(`const ` + name + ` = ([0-9_]+);`).FindStringSubmatch(server)
		if m == nil {
			t.Errorf("server.mjs: no %s", name)
			continue
		}
		ms, err := strconv.Atoi(strings.ReplaceAll(m[1], "_", ""))
		if err != nil {
			t.Fatal(err)
		}
		stated := regexp.MustCompile(`([0-9.]+) s \(`+"`"+name+"`"+`\)`).FindAllStringSubmatch(doc, -1)
		if len(stated) == 0 {
			t.Errorf("docs/INTEROP.md never states %s as N s (`%s`)", name, name)
		}
		for _, s := range stated {
			if s[1] != strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) {
				t.Errorf("docs/INTEROP.md: %s s (`%s`), server.mjs %d ms", s[1], name, ms)
			}
		}
	}
}
