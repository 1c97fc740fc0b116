package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/harness/hostile"
)

// flawList collects repeated --with / --without flags.
type flawList []string

func (f *flawList) String() string     { return strings.Join(*f, ",") }
func (f *flawList) Set(v string) error { *f = append(*f, strings.Split(v, ",")...); return nil }

func cmdAgent(args []string, stdout, stderr io.Writer) int {
	head := "usage: callproof agent naive|careful [--listen ADDR] [--with FLAW] [--without FLAW]\n" +
		"                                      [--transport native|twilio] [--speech-cache DIR] [--voice ENGINE/VOICE] [--no-transcript]\n\n" +
		"Serves a reference agent over the native WebSocket protocol, or with\n" +
		"--transport twilio as a Twilio Media Streams bot (audio; its ear is a\n" +
		"scripted fake that identifies the caller's utterances in the speech cache,\n" +
		"so give it the caller's --speech-cache). In audio mode GET /stats/ear on\n" +
		"the same address returns what its ear heard in each finished call (the\n" +
		"latest " + strconv.Itoa(agents.DefaultKeepEarStats) + "), for `callproof load --fidelity`.\nflaws:"
	for _, f := range agents.AllFlaws() {
		head += " " + string(f)
	}
	c := newCLI("agent", head+"\n", stdout, stderr)
	listen := c.String("listen", "127.0.0.1:8080", "address to serve the agent's WebSocket on")
	var with, without flawList
	c.Var(&with, "with", "switch a flaw on (repeatable)")
	c.Var(&without, "without", "switch a flaw off (repeatable)")
	transport := c.String("transport", "native", "wire protocol: native (JSON text) or twilio (Twilio Media Streams audio)")
	speechCache := c.String("speech-cache", "", "twilio: the caller's speech cache, shared with callproof run (default "+agents.DefaultSpeechCache()+")")
	voice := c.String("voice", "", "twilio: the agent's synthesized voice, engine/voice (default "+agents.DefaultAgentVoice+")")
	noTranscript := c.Bool("no-transcript", false, "twilio: do not send the agent's own words after each utterance (the harness then recognizes its audio)")
	if wantsHelp(args) {
		return c.help()
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		c.Usage()
		return exitUsage
	}
	name := args[0]
	if name == "hostile" {
		return cmdAgentHostile(args[1:], stdout, stderr)
	}
	if _, code, ok := c.positional(args[1:], 0); !ok {
		return code
	}
	cfg, err := agents.Named(name)
	if err != nil {
		fmt.Fprintf(stderr, "callproof agent: %v\n", err)
		return exitUsage
	}
	known := map[agents.Flaw]bool{}
	for _, f := range agents.AllFlaws() {
		known[f] = true
	}
	for _, set := range []struct {
		names []string
		on    bool
	}{{with, true}, {without, false}} {
		for _, n := range set.names {
			f := agents.Flaw(strings.TrimSpace(n))
			if !known[f] {
				fmt.Fprintf(stderr, "callproof agent: unknown flaw %q\n", n)
				return exitUsage
			}
			if cfg.Flaws == nil {
				cfg.Flaws = map[agents.Flaw]bool{}
			}
			cfg.Flaws[f] = set.on
		}
	}
	mode := ""
	switch *transport {
	case "native":
		if *speechCache != "" || *voice != "" || *noTranscript {
			fmt.Fprintln(stderr, "callproof agent: --speech-cache, --voice and --no-transcript are for audio: add --transport twilio")
			return exitUsage
		}
	case "twilio":
		dir := *speechCache
		if dir == "" {
			dir = agents.DefaultSpeechCache()
		}
		var mu sync.Mutex
		cfg.Audio = &agents.AudioConfig{SpeechCache: dir, Voice: *voice, NoTranscript: *noTranscript, Logf: func(format string, a ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(stderr, "agent %s: "+format+"\n", append([]any{name}, a...)...)
		}}
		mode = " (Twilio Media Streams, audio; speech cache " + dir + ")"
	default:
		fmt.Fprintf(stderr, "callproof agent: --transport %q: want native or twilio\n", *transport)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	running, err := agents.Start(ctx, cfg, *listen)
	if err != nil {
		fmt.Fprintf(stderr, "callproof agent: %v\n", err)
		return exitUsage
	}
	if cfg.Audio != nil {
		if u, err := earStatsURL(running.URL); err == nil {
			mode = strings.TrimSuffix(mode, ")") + "; ear counts at " + u + ")"
		}
	}
	fmt.Fprintf(stdout, "agent %s listening on %s%s\n", name, running.URL, mode)
	<-ctx.Done()
	running.Close()
	return exitOK
}

// cmdAgentHostile serves a misbehaving test agent (hidden: for measuring
// the harness against it, docs/PERFORMANCE.md).
func cmdAgentHostile(args []string, stdout, stderr io.Writer) int {
	head := "usage: callproof agent hostile [--listen ADDR] [--behaviour NAME]\n\nServes a misbehaving test agent.\nbehaviours:"
	for _, b := range hostile.Behaviours() {
		head += " " + string(b)
	}
	c := newCLI("agent hostile", head+"\n", stdout, stderr)
	listen := c.String("listen", "127.0.0.1:8080", "address to serve the agent's WebSocket on")
	behaviour := c.String("behaviour", string(hostile.Worst), "how to misbehave")
	if wantsHelp(args) {
		return c.help()
	}
	if _, code, ok := c.positional(args, 0); !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	running, err := hostile.Start(ctx, hostile.Options{Behaviour: hostile.Behaviour(*behaviour)}, *listen)
	if err != nil {
		fmt.Fprintf(stderr, "callproof agent hostile: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "agent hostile (%s) listening on %s\n", *behaviour, running.URL)
	<-ctx.Done()
	running.Close()
	return exitOK
}
