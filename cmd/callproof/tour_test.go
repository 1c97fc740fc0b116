package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestTour runs testdata/tour/tour.txtar: the README's tour, as written,
// against a reference agent the script serves in the background, in a
// work directory laid out like a fresh clone (examples/, scenarios/packs/).
func TestTour(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "tour"),
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			for _, d := range []string{"examples", filepath.Join("scenarios", "packs", "core")} {
				if err := os.CopyFS(filepath.Join(env.WorkDir, d), os.DirFS(filepath.Join(root, d))); err != nil {
					return err
				}
			}
			port, err := freePort()
			if err != nil {
				return err
			}
			env.Setenv("PORT", port)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// waitfor ADDR: until something listens there (10 s at most).
			"waitfor": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: waitfor ADDR")
				}
				deadline := time.Now().Add(10 * time.Second)
				for {
					c, err := net.DialTimeout("tcp", args[0], time.Second)
					if err == nil {
						c.Close()
						return
					}
					if time.Now().After(deadline) {
						ts.Fatalf("nothing listens on %s: %v", args[0], err)
					}
					time.Sleep(50 * time.Millisecond)
				}
			},
		},
	})
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port), nil
}

// TestTourMatchesReadme keeps the tour script honest: every command in the
// README tour's shell blocks has a "# tour:" line in the script, verbatim,
// and the commands run under it are that command, with the binary's name,
// the port and quoting normalised, a redirection done by cp, and at most
// --only and --scale appended.
func TestTourMatchesReadme(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join("testdata", "tour", "tour.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := tourCommands(t, string(readme))
	if len(cmds) < 10 {
		t.Fatalf("found %d commands in the README tour: is the section still there?", len(cmds))
	}
	lines := strings.Split(string(script), "\n")
	for _, cmd := range cmds {
		at := -1
		for i, l := range lines {
			if l == "# tour: "+cmd {
				at = i
				break
			}
		}
		if at < 0 {
			t.Errorf("README tour command not in tour.txtar:\n# tour: %s", cmd)
			continue
		}
		if strings.HasPrefix(cmd, "go build ") || strings.HasPrefix(cmd, "go run ./cmd/callproof agent ") {
			continue // the binary is built; the agent runs in the background
		}
		var execs []string
		for _, l := range lines[at+1:] {
			if strings.HasPrefix(l, "# tour:") {
				break
			}
			l = strings.TrimPrefix(l, "! ")
			if strings.HasPrefix(l, "exec ") || strings.HasPrefix(l, "cp stdout ") {
				execs = append(execs, l)
			}
		}
		want := tourExecs(cmd)
		if len(execs) != len(want) {
			t.Errorf("%s:\n  runs %q\n  want %q", cmd, execs, want)
			continue
		}
		for i := range want {
			if !tourMatch(execs[i], want[i]) {
				t.Errorf("%s:\n  runs %q\n  want %q (plus at most --only and --scale)", cmd, execs[i], want[i])
			}
		}
	}
}

// tourCommands lists the commands of the shell blocks in the README's tour.
func tourCommands(t *testing.T, readme string) []string {
	start := strings.Index(readme, "## A five-minute tour")
	if start < 0 {
		t.Fatal("README has no five-minute tour section")
	}
	end := strings.Index(readme[start+1:], "\n## ") // the tour ends at the next section
	if end < 0 {
		end = len(readme)
	} else {
		end += start + 1
	}
	var cmds []string
	in := false
	for _, l := range strings.Split(readme[start:end], "\n") {
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
		case strings.HasPrefix(l, "```"):
			in = false
		case in && strings.TrimSpace(l) != "":
			cmds = append(cmds, l)
		}
	}
	return cmds
}

// tourExecs is what the script must run for a README command.
func tourExecs(cmd string) []string {
	if i := strings.Index(cmd, "  #"); i >= 0 {
		cmd = cmd[:i]
	}
	cmd = strings.NewReplacer("go run ./cmd/callproof", "callproof", "bin/callproof", "callproof",
		"127.0.0.1:8080", "127.0.0.1:$PORT", `"`, "").Replace(strings.TrimSpace(cmd))
	var out []string
	for _, part := range strings.Split(cmd, "&&") {
		part = strings.TrimSpace(part)
		if before, file, ok := strings.Cut(part, " > "); ok {
			out = append(out, "exec "+strings.TrimSpace(before), "cp stdout "+strings.TrimSpace(file))
			continue
		}
		out = append(out, "exec "+part)
	}
	return out
}

func tourMatch(got, want string) bool {
	if got == want {
		return true
	}
	rest, ok := strings.CutPrefix(got, want+" ")
	return ok && regexp.MustCompile(`^(--only \S+ )?--scale \S+$|^--only \S+$`).MatchString(rest)
}
