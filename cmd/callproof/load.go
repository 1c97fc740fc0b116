package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/testkit/loadbot"
)

const loadUsage = `usage: callproof load [--calls N] [--duration D] [--agent URL] [--json]

Measures how many real-time audio calls this machine's harness sustains:
places N Twilio Media Streams calls at once, each streaming 20 ms μ-law
frames and speaking every 3 s for D, and reports how late the caller's
frames went out (the median call's p50, the worst call's p99, the worst
frame), the calls that fell more than a frame behind, and CPU and memory
per call. Without --agent it starts a minimal bot (it plays a second of
tone back for every two seconds it hears) in a separate process.
exit: 0 every call kept within a frame of real time, 1 some fell behind,
2 bad usage, 3 the run could not happen.
`

func cmdLoad(args []string, stdout, stderr io.Writer) int {
	c := newCLI("load", loadUsage, stdout, stderr)
	calls := c.Int("calls", 100, "calls at once")
	dur := c.Duration("duration", 20*time.Second, "how long each call streams")
	agent := c.String("agent", "", "a Twilio Media Streams agent's ws:// URL (default: start the load bot)")
	asJSON := c.Bool("json", false, "print the figures as JSON")
	voice := c.String("voice", "", "the caller's voice (default "+audioDefaultVoice()+")")
	cache := c.String("speech-cache", "", "speech cache (default "+harness.DefaultSpeechCache()+")")
	if _, code, ok := c.positional(args, 0); !ok {
		return code
	}
	if *calls < 1 || *dur <= 0 {
		fmt.Fprintln(stderr, "callproof load: --calls and --duration must be positive")
		return exitUsage
	}
	ctx, stop := interruptible("load", stderr)
	defer stop()
	url := *agent
	if url == "" {
		bot, u, err := startLoadBot(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "callproof load: %v\n", err)
			return exitBroken
		}
		defer func() { _ = bot.Process.Kill(); _ = bot.Wait() }()
		url = u
	} else if err := checkAgent(url); err != nil {
		fmt.Fprintf(stderr, "callproof load: %v\n", err)
		return exitUsage
	}
	tr, err := harness.TwilioTransport(harness.AudioOptions{SpeechCache: *cache, Voice: *voice})
	if err != nil {
		fmt.Fprintf(stderr, "callproof load: %v\n", err)
		return exitBroken
	}
	res, err := harness.RunLoad(ctx, harness.LoadOptions{Agent: url, Calls: *calls, Duration: *dur, Transport: tr})
	if err != nil {
		fmt.Fprintf(stderr, "callproof load: %v\n", err)
		return exitBroken
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
	} else {
		fmt.Fprintf(stdout, "calls %d (failed %d) · %s each · %d frames\n", res.Calls, res.Failed, *dur, res.Frames)
		fmt.Fprintf(stdout, "frame lateness: median call p50 %s · worst call p99 %s · worst frame %s · calls behind %d\n",
			res.P50, res.WorstP99, res.Max.Round(time.Millisecond), res.CallsBehind)
		fmt.Fprintf(stdout, "agent utterances heard %d\n", res.AgentUtterances)
		fmt.Fprintf(stdout, "harness CPU per call %.1f%% of a core · peak RSS %d MiB (%d KiB per call)\n",
			100*res.CPUPerCallSecond.Seconds(), res.PeakRSSBytes>>20, res.RSSPerCallBytes>>10)
		for _, e := range res.Errors {
			fmt.Fprintf(stdout, "error: %s\n", e)
		}
	}
	if res.Failed > 0 {
		return exitBroken
	}
	if res.CallsBehind > 0 {
		return 1
	}
	return exitOK
}

// startLoadBot runs `callproof load-bot` as a separate process and reads
// the address it listens on.
func startLoadBot(ctx context.Context) (*exec.Cmd, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.CommandContext(ctx, self, "load-bot")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case l := <-line:
		if addr, ok := strings.CutPrefix(l, "listening "); ok {
			return cmd, "ws://" + addr + "/", nil
		}
		_ = cmd.Process.Kill()
		return nil, "", fmt.Errorf("load bot said %q", l)
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		return nil, "", fmt.Errorf("load bot did not start within 10s")
	}
}

// cmdLoadBot serves the load bot on a loopback port until killed; not in
// the command list (callproof load starts it).
func cmdLoadBot(args []string, stdout, stderr io.Writer) int {
	c := newCLI("load-bot", "usage: callproof load-bot [--listen ADDR]\n", stdout, stderr)
	listen := c.String("listen", "127.0.0.1:0", "address")
	if _, code, ok := c.positional(args, 0); !ok {
		return code
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "callproof load-bot: %v\n", err)
		return exitBroken
	}
	fmt.Fprintf(stdout, "listening %s\n", ln.Addr())
	ctx, stop := interruptible("load-bot", stderr)
	defer stop()
	if err := (&loadbot.Bot{}).Serve(ctx, ln); err != nil {
		fmt.Fprintf(stderr, "callproof load-bot: %v\n", err)
		return exitBroken
	}
	return exitOK
}
