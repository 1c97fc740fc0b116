package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/internal/safetext"
)

// minScale is the smallest --scale accepted: below it a correct agent
// cannot keep up and gets agent errors (docs/CLI.md).
const minScale = 0.01

// exitKilled is the exit code of a second interrupt: the shell's 128+SIGINT.
const exitKilled = 130

// cli is one command's flag set: errors and usage go to stderr, while
// -h/--help prints the usage to stdout and exits 0.
type cli struct {
	*flag.FlagSet
	stdout, stderr io.Writer
}

// newCLI makes a command's flag set; head is the usage text printed above
// the flags.
func newCLI(name, head string, stdout, stderr io.Writer) *cli {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &cli{FlagSet: fs, stdout: stdout, stderr: stderr}
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), head)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(fs.Output())
			fs.PrintDefaults()
		}
	}
	return c
}

// isHelp says whether an argument asks for help.
func isHelp(a string) bool {
	switch a {
	case "-h", "--h", "-help", "--help":
		return true
	}
	return false
}

// wantsHelp says whether args ask for help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelp(a) {
			return true
		}
	}
	return false
}

// help prints the usage to stdout.
func (c *cli) help() int {
	c.SetOutput(c.stdout)
	c.Usage()
	c.SetOutput(c.stderr)
	return exitOK
}

// parse parses flags wherever they stand among the arguments ("gate DIR
// --policy F" as well as "gate --policy F DIR") and returns the positional
// arguments in order; "--" ends flag parsing. When it returns false, the
// command exits with the code given (0 for --help, 2 for bad flags).
func (c *cli) parse(args []string) ([]string, int, bool) {
	if wantsHelp(args) {
		return nil, c.help(), false
	}
	var pos []string
	for {
		if err := c.Parse(args); err != nil {
			return nil, exitUsage, false
		}
		rest := c.Args()
		if len(rest) == 0 {
			return pos, exitOK, true
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), exitOK, true
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// positional parses args and requires exactly n positional arguments,
// printing the usage when the count is wrong.
func (c *cli) positional(args []string, n int) ([]string, int, bool) {
	pos, code, ok := c.parse(args)
	if ok && len(pos) != n {
		c.Usage()
		return nil, exitUsage, false
	}
	return pos, code, ok
}

// set says whether a flag was given on the command line.
func (c *cli) set(name string) bool {
	found := false
	c.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// checkScale validates a time scale flag.
func checkScale(scale float64) error {
	if math.IsNaN(scale) || math.IsInf(scale, 0) || scale < minScale || scale > 10 {
		return fmt.Errorf("--scale %v: want a number in [%v, 10] (1 is real time; below %v a correct agent cannot keep up)", scale, minScale, minScale)
	}
	return nil
}

// checkAgent validates an --agent flag.
func checkAgent(u string) error { return checkAgentFor("", u) }

// checkAgentFor checks --agent for a wire dialect (--transport).
func checkAgentFor(transport, u string) error {
	if u == "" {
		return fmt.Errorf("--agent is required")
	}
	if err := harness.CheckAgentURLFor(transport, u); err != nil {
		return fmt.Errorf("--agent: %w", err)
	}
	return nil
}

// interruptible returns a context cancelled by the first SIGINT or SIGTERM,
// telling the user the run is stopping; a second signal exits at once with
// exitKilled (every finished call is already on disk).
func interruptible(name string, stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	quit := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-quit:
			return
		}
		fmt.Fprintf(stderr, "\ncallproof %s: interrupted: stopping, unfinished calls are recorded as cancelled (interrupt again to quit at once)\n", name)
		cancel()
		select {
		case <-sigs:
			fmt.Fprintf(stderr, "callproof %s: interrupted twice: quitting now\n", name)
			os.Exit(exitKilled)
		case <-quit:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(quit)
		cancel()
	}
}

// checkedWriter remembers the first write error, so a command whose output
// was lost (a full disk, a closed pipe) never exits 0.
type checkedWriter struct {
	w    io.Writer
	err  error
	file io.Writer // what w writes to, for File
}

// guarded is a checkedWriter whose text is escaped on the way to w
// (safetext.Writer): agent text never reaches a terminal or log raw,
// whichever command prints it. Flush it before exiting.
func guarded(w io.Writer) (*checkedWriter, *safetext.Writer) {
	sw := safetext.NewWriter(w)
	return &checkedWriter{w: sw, file: w}, sw
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// File lets the progress bar see whether stderr is a terminal.
func (c *checkedWriter) File() *os.File {
	f, _ := c.file.(*os.File)
	if f == nil {
		f, _ = c.w.(*os.File)
	}
	return f
}

// warn prints warnings, one per line, prefixed with the command.
func warn(w io.Writer, name string, lines []string) {
	for _, l := range lines {
		fmt.Fprintf(w, "callproof %s: warning: %s\n", name, l)
	}
}

// joinIDs lists call ids for a message.
func joinIDs(ids []string) string { return strings.Join(ids, ", ") }
