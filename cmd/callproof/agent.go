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
	"github.com/callproof/callproof/agents/earstt"
	"github.com/callproof/callproof/agents/hostile"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/trace"
)

// flawList collects repeated --with / --without flags.
type flawList []string

func (f *flawList) String() string     { return strings.Join(*f, ",") }
func (f *flawList) Set(v string) error { *f = append(*f, strings.Split(v, ",")...); return nil }

func cmdAgent(args []string, stdout, stderr io.Writer) int {
	head := "usage: callproof agent naive|careful [--listen ADDR] [--with FLAW] [--without FLAW] [--catalogue FILE] [--generic]\n" +
		"                                      [--transport native|twilio|webrtc] [--speech-cache DIR] [--voice ENGINE/VOICE] [--no-transcript]\n" +
		"                                      [--no-self-reports]\n\n" +
		"Serves a reference agent over the native WebSocket protocol, with\n" +
		"--transport twilio as a Twilio Media Streams bot, or with --transport\n" +
		"webrtc as a WebRTC bot that answers offers (SmallWebRTC: POST/PATCH\n" +
		agents.OfferPath + "; WHIP: POST " + agents.WHIPPath + ", PATCH/DELETE " + agents.WHIPPath + "/ID; loopback only).\n" +
		"In audio (twilio, webrtc) its ear is a scripted fake that identifies the\n" +
		"caller's utterances in the speech cache, so give it the caller's\n" +
		"--speech-cache; GET /stats/ear on the same address returns what its ear\n" +
		"heard in each finished call (the latest " + strconv.Itoa(agents.DefaultKeepEarStats) + "), for `callproof load --fidelity`.\n" +
		"A call's tools come from its start frame; any catalogue but the built-in\n" +
		"order desk's is read generically (values by argument type, the tool by its\n" +
		"name and description). --catalogue gives the tools for calls whose start\n" +
		"carries none and, like --generic, reads every call generically.\nflaws:"
	for _, f := range agents.AllFlaws() {
		head += " " + string(f)
	}
	c := newCLI("agent", head+"\n", stdout, stderr)
	listen := c.String("listen", "127.0.0.1:8080", "address to serve the agent on")
	var with, without flawList
	c.Var(&with, "with", "switch a flaw on (repeatable)")
	c.Var(&without, "without", "switch a flaw off (repeatable)")
	transport := c.String("transport", "native", "wire protocol: native (JSON text), twilio (Twilio Media Streams audio) or webrtc (WebRTC audio)")
	speechCache := c.String("speech-cache", "", "twilio, webrtc: the caller's speech cache, shared with callproof run (default "+agents.DefaultSpeechCache()+")")
	voice := c.String("voice", "", "twilio, webrtc: the agent's synthesized voice, engine/voice (default "+agents.DefaultAgentVoice+")")
	noTranscript := c.Bool("no-transcript", false, "twilio, webrtc: do not send the agent's own words after each utterance (the harness then recognizes its audio)")
	catalogue := c.String("catalogue", "", "a catalogue file (callproof init's form): the tools of calls whose start carries none; implies --generic")
	generic := c.Bool("generic", false, "read every call through its catalogue, the order desk's too")
	noSelfReports := c.Bool("no-self-reports", false, "webrtc: send no state, tool intents or ack on the data channel (as a Twilio bot cannot)")
	if len(args) > 0 && args[0] == "ear-stt" { // its own flags and help
		return cmdAgentEarSTT(args[1:], stdout, stderr)
	}
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
	cfg.Generic = *generic || *catalogue != ""
	if *catalogue != "" {
		tools, err := scenarios.LoadCatalogFile(*catalogue)
		if err != nil {
			fmt.Fprintf(stderr, "callproof agent: --catalogue: %v\n", err)
			return exitUsage
		}
		cfg.Catalogue = toolSpecs(tools)
	}
	if *noSelfReports && *transport != "webrtc" {
		fmt.Fprintln(stderr, "callproof agent: --no-self-reports is for --transport webrtc (a Twilio bot sends none anyway)")
		return exitUsage
	}
	mode := ""
	switch *transport {
	case "native":
		if *speechCache != "" || *voice != "" || *noTranscript {
			fmt.Fprintln(stderr, "callproof agent: --speech-cache, --voice and --no-transcript are for audio: add --transport twilio or webrtc")
			return exitUsage
		}
	case "twilio", "webrtc":
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
		if *transport == "webrtc" {
			cfg.Audio.Wire = agents.WireWebRTC
			cfg.Audio.NoSelfReports = *noSelfReports
			mode = "" // said once listening: it names the WHIP URL
		}
	default:
		fmt.Fprintf(stderr, "callproof agent: --transport %q: want native, twilio or webrtc\n", *transport)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	running, err := agents.Start(ctx, cfg, *listen)
	if err != nil {
		fmt.Fprintf(stderr, "callproof agent: %v\n", err)
		return exitUsage
	}
	if cfg.Audio != nil && cfg.Audio.Wire == agents.WireWebRTC {
		mode = " (WebRTC, audio: SmallWebRTC offers here, WHIP offers at " +
			strings.TrimSuffix(running.URL, agents.OfferPath) + agents.WHIPPath + "; speech cache " + cfg.Audio.SpeechCache + ")"
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

// toolSpecs turns a catalogue file's tools into the form start carries.
func toolSpecs(tools []scenarios.Tool) []trace.ToolSpec {
	out := make([]trace.ToolSpec, 0, len(tools))
	for _, t := range tools {
		s := trace.ToolSpec{Name: t.Name, Description: t.Description, Effect: trace.Effect(t.Effect), Table: t.Table,
			KeyArg: t.KeyArg, Consequential: t.Consequential, StatusField: t.StatusField, StatusValue: t.StatusValue}
		for _, a := range t.Args {
			s.Args = append(s.Args, trace.ArgSpec{Name: a.Name, Type: a.Type, Required: a.Required, Enum: a.Enum, Pattern: a.Pattern, Description: a.Description})
		}
		out = append(out, s)
	}
	return out
}

// cmdAgentEarSTT serves earstt, the scripted stand-in for a cloud STT
// that third-party bots hear callproof's caller with (hidden: for running
// the Pipecat bot or the stock LiveKit agent by hand, docs/INTEROP.md).
func cmdAgentEarSTT(args []string, stdout, stderr io.Writer) int {
	head := "usage: callproof agent ear-stt [--listen ADDR] [--speech-cache DIR]\n\n" +
		"Serves earstt, a SCRIPTED FAKE streaming speech-to-text service (agents/earstt):\n" +
		"it recognizes only the utterances in callproof's own speech cache.\n"
	c := newCLI("agent ear-stt", head, stdout, stderr)
	listen := c.String("listen", "127.0.0.1:0", "address to serve on")
	speechCache := c.String("speech-cache", "", "the caller's speech cache, shared with callproof run (default "+agents.DefaultSpeechCache()+")")
	if wantsHelp(args) {
		return c.help()
	}
	if _, code, ok := c.positional(args, 0); !ok {
		return code
	}
	if *speechCache == "" {
		*speechCache = agents.DefaultSpeechCache()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := earstt.Start(ctx, *listen, earstt.Config{SpeechCache: *speechCache,
		Logf: func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }})
	if err != nil {
		fmt.Fprintf(stderr, "callproof agent ear-stt: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "ear-stt listening on %s\n", srv.URL)
	<-ctx.Done()
	srv.Close()
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
