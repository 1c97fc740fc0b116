package webrtc_test

// The Janus interop test's runtime: a network namespace of the test's own,
// a janus configured from scratch inside it, the test binary re-executed
// inside it as the WebRTC client (janus_test.go), and a client of janus's
// HTTP API. Every address in the namespace is a loopback one (127.0.0.1 on
// lo, janus's 127.0.0.2 on a veth whose two ends stay inside), and every
// packet travels its lo.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/cmplx"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pion "github.com/pion/webrtc/v4"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/internal/interop"
	"github.com/callproof/callproof/internal/netns"
)

const (
	// janusChildEnv carries the child's childParams (JSON). The child test
	// is skipped without it.
	janusChildEnv = "CALLPROOF_JANUS_CHILD"
	// janusPort is the HTTP API's port on the namespace's 127.0.0.1: the
	// namespace is the test's own, so any port is free.
	janusPort = 8188
	// janusRTPPorts is the UDP range janus gathers its candidates in.
	janusRTPPorts = "20000-20999"
	// janusICEAddr is janus's ICE address, on janusVeth; janusVethPeer is
	// the veth's other end, up so that janusVeth is running. Both stay in
	// the namespace.
	janusICEAddr  = "127.0.0.2"
	janusVeth     = "janus0"
	janusVethPeer = "janus1"
	// janusPlugin is the plugin the calls attach to.
	janusPlugin = "janus.plugin.echotest"

	// Bounds.
	janusStartTimeout = 20 * time.Second // janus answers GET /janus/info
	janusStopTimeout  = 5 * time.Second  // janus exits after SIGTERM, else SIGKILL
	janusRequest      = 10 * time.Second // one plain request to the HTTP API
	janusLongPoll     = 35 * time.Second // one long poll (janus answers a keepalive after 30 s)
	janusAnswerWait   = 10 * time.Second // the offer's answer event
)

// janusNS is a network namespace with janus running in it.
type janusNS struct {
	ns  *netns.NS // callproof-janus-<random>
	dir string    // configs, janus's log, the children's results
	url string    // the HTTP API, reachable from inside the namespace only
	log string    // janus's stdout and stderr

	cmd    *exec.Cmd
	exited chan struct{} // closed when janus has exited
	waitMu sync.Mutex
	err    error // janus's exit status, once exited
	kids   int
}

// janusLibs finds the echotest plugin and the HTTP transport of the
// installed janus (Debian puts them under /usr/lib/<triplet>/janus).
func janusLibs() (plugin, transport string, err error) {
	for _, root := range []string{"/usr/lib/*/janus", "/usr/lib/janus", "/usr/local/lib/janus", "/opt/janus/lib/janus"} {
		p, _ := filepath.Glob(filepath.Join(root, "plugins", "libjanus_echotest.so"))
		tr, _ := filepath.Glob(filepath.Join(root, "transports", "libjanus_http.so"))
		if len(p) > 0 && len(tr) > 0 {
			return p[0], tr[0], nil
		}
	}
	return "", "", errors.New("libjanus_echotest.so and libjanus_http.so not found under /usr/lib/*/janus, /usr/lib/janus, /usr/local/lib/janus")
}

// startJanusNS creates the namespace, starts janus in it and waits until
// its HTTP API answers. It skips the test when not root, when `ip netns
// add` or the veth fails or when janus is not installed (a failure under
// `make test`, `make interop` and CI: interop.Missing).
// Cleanup stops janus, then deletes the namespace, even when the test
// fails.
func startJanusNS(t *testing.T) *janusNS {
	t.Helper()
	janusBin, err := exec.LookPath("janus")
	if err == nil {
		_, _, err = janusLibs()
	}
	if err != nil {
		msg := fmt.Sprintf("janus interop: janus is not installed (scripts/install-janus.sh): %v", err)
		interop.Missing(t, msg)
	}
	ns := netns.New(t, "callproof-janus-")
	if ns == nil {
		return nil
	}
	j := &janusNS{
		ns:     ns,
		dir:    t.TempDir(),
		url:    fmt.Sprintf("http://127.0.0.1:%d/janus", janusPort),
		exited: make(chan struct{}),
	}
	// Janus gathers no candidate on a loopback interface (ice.c skips
	// IFF_LOOPBACK), so it gets a loopback address of its own on an
	// interface that is not lo (netns.AddLoopbackVeth). Every packet still
	// travels the namespace's lo, between 127.0.0.1 (ours) and
	// janusICEAddr (janus's).
	if err := ns.AddLoopbackVeth(janusVeth, janusVethPeer, janusICEAddr); err != nil {
		interop.Missing(t, fmt.Sprintf("janus interop: no veth here? %v", err))
	}

	conf := filepath.Join(j.dir, "conf")
	require.NoError(t, writeJanusConfig(conf))
	j.log = filepath.Join(j.dir, "janus.log")
	logf, err := os.Create(j.log)
	require.NoError(t, err)
	defer logf.Close()
	// `ip netns exec` enters the namespace and execs janus: the process
	// started is janus itself.
	j.cmd = ns.Command(context.Background(), janusBin,
		"--config="+filepath.Join(conf, "janus.jcfg"),
		"--configs-folder="+conf,
		"--plugins-folder="+filepath.Join(conf, "plugins"),
		"--disable-colors", "--debug-level=4", "--debug-timestamps")
	j.cmd.Stdout, j.cmd.Stderr = logf, logf
	// Should the test binary die without its cleanup, janus dies with it
	// (Pdeathsig, set by netns).
	require.NoError(t, j.cmd.Start(), "start janus")
	go func() {
		err := j.cmd.Wait()
		j.waitMu.Lock()
		j.err = err
		j.waitMu.Unlock()
		close(j.exited)
	}()
	t.Cleanup(func() { j.stop(t) })

	// GET /janus/info from inside the namespace: the child probes.
	started := time.Now()
	res := j.child(t, childParams{Mode: "probe"}, janusStartTimeout+10*time.Second)
	if res.Err != "" {
		t.Fatalf("janus did not answer GET %s/info within %v: %s\njanus log:\n%s", j.url, janusStartTimeout, res.Err, j.logTail())
	}
	t.Logf("janus %s up in %v in namespace %s (plugins %v, transports %v)", res.Info.Version, time.Since(started).Round(time.Millisecond), j.ns.Name, res.Info.Plugins, res.Info.Transports)
	return j
}

// stop ends janus: SIGTERM, then SIGKILL if it is still running
// janusStopTimeout later.
func (j *janusNS) stop(t *testing.T) {
	if t.Failed() {
		t.Logf("janus log:\n%s", j.logTail())
	}
	select {
	case <-j.exited:
		t.Errorf("janus had exited before the test ended: %v\n%s", j.exitErr(), j.logTail())
		return
	default:
	}
	_ = j.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-j.exited:
		if err := j.exitErr(); err != nil {
			t.Logf("janus exit after SIGTERM: %v", err)
		}
	case <-time.After(janusStopTimeout):
		_ = j.cmd.Process.Kill()
		select {
		case <-j.exited:
		case <-time.After(janusStopTimeout):
			t.Errorf("janus (pid %d) still running after SIGKILL", j.cmd.Process.Pid)
			return
		}
		t.Errorf("janus ignored SIGTERM for %v and was killed\n%s", janusStopTimeout, j.logTail())
	}
}

func (j *janusNS) exitErr() error {
	j.waitMu.Lock()
	defer j.waitMu.Unlock()
	return j.err
}

// logTail is the end of janus's log, for failure messages.
func (j *janusNS) logTail() string {
	b, err := os.ReadFile(j.log)
	if err != nil {
		return err.Error()
	}
	const keep = 6000
	if len(b) > keep {
		b = append([]byte("…"), b[len(b)-keep:]...)
	}
	return string(b)
}

// writeJanusConfig writes a janus configuration that loads the HTTP
// transport on 127.0.0.1 and the echotest plugin, and nothing else: the
// plugins and transports folders hold links to those two libraries only,
// and the event handler and logger folders are empty. No STUN, no TURN,
// no admin API.
func writeJanusConfig(dir string) error {
	plugin, transport, err := janusLibs()
	if err != nil {
		return err
	}
	for _, sub := range []string{"plugins", "transports", "events", "loggers"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	if err := os.Symlink(plugin, filepath.Join(dir, "plugins", filepath.Base(plugin))); err != nil {
		return err
	}
	if err := os.Symlink(transport, filepath.Join(dir, "transports", filepath.Base(transport))); err != nil {
		return err
	}
	files := map[string]string{
		"janus.jcfg": fmt.Sprintf(`general: {
	configs_folder = %q
	plugins_folder = %q
	transports_folder = %q
	events_folder = %q
	loggers_folder = %q
	debug_level = 4
	server_name = "callproof-janus-interop"
	session_timeout = 60
}
certificates: {
}
media: {
	ipv6 = false
	rtp_port_range = %q
}
nat: {
	nice_debug = false
	ignore_mdns = true
	ice_enforce_list = %q
}
plugins: {
}
transports: {
}
loggers: {
}
events: {
	broadcast = false
}
`, dir, filepath.Join(dir, "plugins"), filepath.Join(dir, "transports"), filepath.Join(dir, "events"), filepath.Join(dir, "loggers"), janusRTPPorts, janusVeth),
		"janus.transport.http.jcfg": fmt.Sprintf(`general: {
	json = "plain"
	base_path = "/janus"
	http = true
	ip = "127.0.0.1"
	port = %d
	https = false
}
admin: {
	admin_http = false
	admin_https = false
}
`, janusPort),
		"janus.plugin.echotest.jcfg": "general: {\n}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// The child: the test binary re-executed inside the namespace.

// childParams is what the parent asks of a child.
type childParams struct {
	Mode string // "probe": wait for GET /janus/info; "pion": echo with a plain pion peer; "call": echo through callsim/webrtc
	URL  string // janus's HTTP API
	Out  string // where the child writes its childResult (JSON)
	// HostNetNS is the parent's network namespace (/proc/self/ns/net): the
	// child refuses to run in it.
	HostNetNS string
	Timeout   time.Duration // the child's own bound on its work

	// "call" mode.
	SpeechDir string // the speech cache
	Text      string // the utterance
	RecordTo  string // the call's stereo recording
	Trickle   bool
}

// childResult is what a child reports.
type childResult struct {
	Err        string   `json:"err,omitempty"`
	NetNS      string   `json:"netns"`
	Interfaces []string `json:"interfaces"`
	Info       struct {
		Version    string   `json:"version"`
		Plugins    []string `json:"plugins"`
		Transports []string `json:"transports"`
	} `json:"info"`

	OfferToAnswer time.Duration `json:"offerToAnswer"` // signaling: offer posted → answer event
	DialTime      time.Duration `json:"dialTime"`      // Dial or ICE+DTLS connected
	OfferCands    []string      `json:"offerCands"`    // our candidates in the offer
	AnswerCands   []string      `json:"answerCands"`   // janus's candidates in its answer
	Trickled      []string      `json:"trickled"`      // our candidates sent by trickle
	Events        []string      `json:"events"`        // janus events after the answer (webrtcup, media, …)
	Utterance     time.Duration `json:"utterance"`     // the prepared utterance

	// "pion" mode.
	FramesSent    int    `json:"framesSent"`
	FramesEchoed  int    `json:"framesEchoed"`
	FramesMatched int    `json:"framesMatched"` // echoed frames byte-equal to a sent one
	DataEcho      string `json:"dataEcho"`      // janus's answer to a data channel message

	// "call" mode: what Recv returned.
	Frames       []string `json:"frames"`       // events, in order
	RecvErr      string   `json:"recvErr"`      // the error that ended them
	GarbageFrame bool     `json:"garbageFrame"` // RecvErr wraps callsim.ErrGarbageFrame
}

// child runs the test binary inside the namespace as TestJanusEchoChild
// with p, and returns what it reported. The child is killed after timeout.
func (j *janusNS) child(t *testing.T, p childParams, timeout time.Duration) childResult {
	t.Helper()
	j.kids++
	p.URL = j.url
	p.Out = filepath.Join(j.dir, fmt.Sprintf("child-%d.json", j.kids))
	p.Timeout = timeout - 5*time.Second
	host, err := netns.Current()
	require.NoError(t, err)
	p.HostNetNS = host
	out, runErr := j.ns.Child("TestJanusEchoChild", janusChildEnv, p, timeout)
	t.Logf("child %d (%s):\n%s", j.kids, p.Mode, indent(out))

	var res childResult
	b, err := os.ReadFile(p.Out)
	switch {
	case err != nil:
		res.Err = fmt.Sprintf("child %s wrote no result (%v): exit %v", p.Mode, err, runErr)
	case json.Unmarshal(b, &res) != nil:
		res.Err = fmt.Sprintf("child %s: unreadable result %q", p.Mode, b)
	case runErr != nil && res.Err == "":
		res.Err = fmt.Sprintf("child %s failed: %v", p.Mode, runErr)
	}
	if res.Err == "" && res.NetNS == host {
		res.Err = "the child ran in the test's own network namespace"
	}
	return res
}

func indent(s string) string {
	return "\t" + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n\t")
}

// childParamsFromEnv reads the child's parameters, or skips the test when
// it is not a child.
func childParamsFromEnv(t *testing.T) childParams {
	raw := os.Getenv(janusChildEnv)
	if raw == "" {
		t.Skip("runs only as TestJanusEcho's child, inside its network namespace")
	}
	var p childParams
	require.NoError(t, json.Unmarshal([]byte(raw), &p))
	return p
}

// checkIsolated makes sure the child is where it must be: not in the
// test's network namespace, in one with no interface but lo and the
// test's veth, and no address outside 127.0.0.0/8.
func checkIsolated(p childParams, res *childResult) error {
	ns, err := netns.Current()
	if err != nil {
		return err
	}
	res.NetNS = ns
	if ns == p.HostNetNS {
		return fmt.Errorf("still in the host's network namespace %s", ns)
	}
	res.Interfaces, err = netns.CheckIsolated(janusVeth, janusVethPeer)
	if err != nil {
		return err
	}
	u := strings.TrimPrefix(p.URL, "http://")
	if !strings.HasPrefix(u, "127.0.0.1:") {
		return fmt.Errorf("janus URL %q is not on 127.0.0.1", p.URL)
	}
	return nil
}

// The janus HTTP API (https://janus.conf.meetecho.com/docs/rest.html).

// janusMsg is one message from janus: a response or an event.
type janusMsg struct {
	Janus       string `json:"janus"`
	Transaction string `json:"transaction,omitempty"`
	SessionID   uint64 `json:"session_id,omitempty"`
	Sender      uint64 `json:"sender,omitempty"`
	Data        struct {
		ID uint64 `json:"id"`
	} `json:"data"`
	Error *struct {
		Code   int    `json:"code"`
		Reason string `json:"reason"`
	} `json:"error,omitempty"`
	PluginData *struct {
		Plugin string          `json:"plugin"`
		Data   json.RawMessage `json:"data"`
	} `json:"plugindata,omitempty"`
	JSEP *struct {
		Type string `json:"type"`
		SDP  string `json:"sdp"`
	} `json:"jsep,omitempty"`
	Type      string `json:"type,omitempty"`      // media: audio or video
	Receiving *bool  `json:"receiving,omitempty"` // media
	Reason    string `json:"reason,omitempty"`    // hangup
	Uplink    *bool  `json:"uplink,omitempty"`    // slowlink
}

// String sums an event up for the result.
func (m janusMsg) String() string {
	s := m.Janus
	switch {
	case m.Janus == "media" && m.Receiving != nil:
		s += fmt.Sprintf(" %s receiving=%v", m.Type, *m.Receiving)
	case m.Janus == "hangup":
		s += " " + m.Reason
	case m.Janus == "slowlink" && m.Uplink != nil:
		s += fmt.Sprintf(" uplink=%v", *m.Uplink)
	case m.PluginData != nil:
		s += " " + string(m.PluginData.Data)
	}
	if m.JSEP != nil {
		s += " jsep=" + m.JSEP.Type
	}
	return s
}

// janusClient is one janus session with one echotest handle: a callsim
// webrtc Signaler.
type janusClient struct {
	base string
	hc   *http.Client

	session, handle uint64
	events          chan janusMsg // from the long poll
	stopPoll        context.CancelFunc
	pollDone        chan struct{}

	hangMu sync.Mutex
	hungUp bool

	mu            sync.Mutex
	seen          []janusMsg
	offerToAnswer time.Duration
	offer, answer string
	trickled      []string // candidates sent by trickle
}

// newJanusClient returns a client of the HTTP API at base; the session
// and the handle are made with the offer.
func newJanusClient(base string) *janusClient {
	return &janusClient{
		base:     base,
		hc:       &http.Client{Timeout: janusLongPoll},
		events:   make(chan janusMsg, 64),
		pollDone: make(chan struct{}),
		stopPoll: func() {},
	}
}

// open creates a session, starts its long poll and attaches the echotest
// plugin.
func (c *janusClient) open(ctx context.Context) error {
	m, err := c.post(ctx, "", map[string]any{"janus": "create"})
	if err != nil {
		return fmt.Errorf("janus create: %w", err)
	}
	c.session = m.Data.ID
	pctx, cancel := context.WithCancel(context.Background())
	c.stopPoll = cancel
	go c.poll(pctx)
	m, err = c.post(ctx, c.sessionPath(), map[string]any{"janus": "attach", "plugin": janusPlugin})
	if err != nil {
		return fmt.Errorf("janus attach %s: %w", janusPlugin, err)
	}
	c.handle = m.Data.ID
	return nil
}

func (c *janusClient) sessionPath() string { return "/" + strconv.FormatUint(c.session, 10) }
func (c *janusClient) handlePath() string {
	return c.sessionPath() + "/" + strconv.FormatUint(c.handle, 10)
}

// post sends one request and returns janus's synchronous answer (success
// or ack); a janus error is an error.
func (c *janusClient) post(ctx context.Context, path string, body map[string]any) (janusMsg, error) {
	ctx, cancel := context.WithTimeout(ctx, janusRequest)
	defer cancel()
	body["transaction"] = randomHex(8)
	b, err := json.Marshal(body)
	if err != nil {
		return janusMsg{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(b))
	if err != nil {
		return janusMsg{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return janusMsg{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return janusMsg{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return janusMsg{}, fmt.Errorf("HTTP %d: %s", resp.StatusCode, raw)
	}
	var m janusMsg
	if err := json.Unmarshal(raw, &m); err != nil {
		return janusMsg{}, fmt.Errorf("not JSON: %q", raw)
	}
	if m.Error != nil {
		return m, fmt.Errorf("janus error %d: %s", m.Error.Code, m.Error.Reason)
	}
	if m.Transaction != body["transaction"] {
		return m, fmt.Errorf("answer to transaction %q, want %q", m.Transaction, body["transaction"])
	}
	return m, nil
}

// poll long-polls the session's events (GET /janus/SESSION?maxev=1, which
// janus holds up to 30 s) until stopped or the session is gone.
func (c *janusClient) poll(ctx context.Context) {
	defer close(c.pollDone)
	defer close(c.events)
	for ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, janusLongPoll)
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, fmt.Sprintf("%s%s?maxev=1&rid=%d", c.base, c.sessionPath(), time.Now().UnixMilli()), nil)
		if err != nil {
			cancel()
			return
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			cancel()
			if ctx.Err() != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		cancel()
		if err != nil {
			continue
		}
		var ms []janusMsg
		if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' {
			_ = json.Unmarshal(t, &ms)
		} else {
			var m janusMsg
			if json.Unmarshal(t, &m) == nil {
				ms = append(ms, m)
			}
		}
		for _, m := range ms {
			if m.Janus == "keepalive" {
				continue
			}
			if m.Janus == "error" { // the session is gone
				return
			}
			c.mu.Lock()
			c.seen = append(c.seen, m)
			c.mu.Unlock()
			select {
			case c.events <- m:
			default: // nobody waits for it; it is in seen
			}
		}
	}
}

// Offer sends the offer to the echotest handle and waits for the answer
// event: its jsep.
func (c *janusClient) Offer(ctx context.Context, offer string) (string, error) {
	start := time.Now()
	if c.session == 0 {
		if err := c.open(ctx); err != nil {
			return "", err
		}
	}
	c.mu.Lock()
	c.offer = offer
	c.mu.Unlock()
	body := map[string]any{
		"janus": "message",
		"body":  map[string]any{"audio": true, "video": false, "data": true},
		"jsep":  map[string]any{"type": "offer", "sdp": offer},
	}
	if _, err := c.post(ctx, c.handlePath(), body); err != nil {
		return "", fmt.Errorf("janus message (offer): %w", err)
	}
	wait := time.NewTimer(janusAnswerWait)
	defer wait.Stop()
	for {
		select {
		case m, ok := <-c.events:
			if !ok {
				return "", errors.New("janus: the session's event stream ended before the answer")
			}
			if m.PluginData != nil && bytes.Contains(m.PluginData.Data, []byte(`"error"`)) {
				return "", fmt.Errorf("janus echotest refused the offer: %s", m.PluginData.Data)
			}
			if m.JSEP != nil && m.JSEP.Type == "answer" {
				c.mu.Lock()
				c.offerToAnswer = time.Since(start)
				c.answer = m.JSEP.SDP
				c.mu.Unlock()
				return m.JSEP.SDP, nil
			}
		case <-wait.C:
			return "", fmt.Errorf("janus: no answer within %v", janusAnswerWait)
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// Trickle sends candidates to the handle.
func (c *janusClient) Trickle(ctx context.Context, cands []pion.ICECandidateInit) error {
	list := make([]map[string]any, 0, len(cands))
	for _, cd := range cands {
		j := map[string]any{"candidate": cd.Candidate}
		if cd.SDPMid != nil {
			j["sdpMid"] = *cd.SDPMid
		}
		if cd.SDPMLineIndex != nil {
			j["sdpMLineIndex"] = *cd.SDPMLineIndex
		}
		list = append(list, j)
	}
	if len(list) == 0 {
		return nil
	}
	c.mu.Lock()
	for _, cd := range cands {
		c.trickled = append(c.trickled, strings.TrimPrefix(cd.Candidate, "candidate:"))
	}
	c.mu.Unlock()
	_, err := c.post(ctx, c.handlePath(), map[string]any{"janus": "trickle", "candidates": list})
	return err
}

// Hangup ends the call and the session: hangup on the handle, destroy the
// session, stop polling. Safe to call more than once.
func (c *janusClient) Hangup(ctx context.Context) error {
	c.hangMu.Lock()
	defer c.hangMu.Unlock()
	if c.session == 0 || c.hungUp {
		return nil
	}
	c.hungUp = true
	var err error
	if c.handle != 0 {
		_, err = c.post(ctx, c.handlePath(), map[string]any{"janus": "hangup"})
	}
	// The long poll ends before the session does, so it never asks for a
	// session janus no longer has.
	c.stopPoll()
	select {
	case <-c.pollDone:
	case <-ctx.Done():
		if err == nil {
			err = fmt.Errorf("janus: the long poll did not stop: %w", ctx.Err())
		}
	}
	if _, derr := c.post(ctx, c.sessionPath(), map[string]any{"janus": "destroy"}); err == nil {
		err = derr
	}
	return err
}

// report copies what the client saw into res.
func (c *janusClient) report(res *childResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	res.OfferToAnswer = c.offerToAnswer
	res.Events = nil
	for _, m := range c.seen {
		res.Events = append(res.Events, m.String())
	}
	res.OfferCands, res.AnswerCands = sdpCandidates(c.offer), sdpCandidates(c.answer)
	res.Trickled = slices.Clone(c.trickled)
}

// sdpCandidates lists an SDP's candidates, each once (a bundle repeats
// them in every section).
func sdpCandidates(sdp string) []string {
	var out []string
	for _, l := range strings.Split(sdp, "\n") {
		if c, ok := strings.CutPrefix(strings.TrimSpace(l), "a=candidate:"); ok && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// janusInfo waits, at most d, for GET /janus/info to answer.
func janusInfo(ctx context.Context, base string, d time.Duration, res *childResult) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	hc := &http.Client{Timeout: 2 * time.Second}
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/info", nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err == nil {
			var info struct {
				Janus      string                     `json:"janus"`
				Version    string                     `json:"version_string"`
				Plugins    map[string]json.RawMessage `json:"plugins"`
				Transports map[string]json.RawMessage `json:"transports"`
			}
			err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&info)
			resp.Body.Close()
			if err == nil && info.Janus == "server_info" {
				res.Info.Version = info.Version
				for p := range info.Plugins {
					res.Info.Plugins = append(res.Info.Plugins, p)
				}
				for p := range info.Transports {
					res.Info.Transports = append(res.Info.Transports, p)
				}
				return nil
			}
			if err == nil {
				err = fmt.Errorf("GET /janus/info: %q, want server_info", info.Janus)
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Audio analysis.

// stereoWAV reads a stereo recording into its channels.
func stereoWAV(path string) (left, right audio.PCM, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	samples, info, err := audio.DecodeWAV(f)
	if err != nil {
		return nil, nil, err
	}
	if info.Channels != 2 || info.SampleRate != audio.SampleRate {
		return nil, nil, fmt.Errorf("%s: %d channels at %d Hz, want 2 at %d", path, info.Channels, info.SampleRate, audio.SampleRate)
	}
	for i := 0; i+1 < len(samples); i += 2 {
		left, right = append(left, samples[i]), append(right, samples[i+1])
	}
	return left, right, nil
}

// mulaw is p as it comes out of a μ-law round trip.
func mulaw(p audio.PCM) audio.PCM { return audio.DecodeMulaw(audio.EncodeMulaw(p)) }

// bestLag is the delay of echo behind sent, in samples, within [0,
// maxLag], that maximizes their cross-correlation (computed by FFT).
func bestLag(sent, echo audio.PCM, maxLag int) (lag int, score float64) {
	n := 1
	for n < len(sent)+len(echo) {
		n <<= 1
	}
	a, b := make([]complex128, n), make([]complex128, n)
	for i, v := range sent {
		a[i] = complex(float64(v), 0)
	}
	for i, v := range echo {
		b[i] = complex(float64(v), 0)
	}
	fft(a, false)
	fft(b, false)
	for i := range a {
		a[i] = b[i] * cmplx.Conj(a[i]) // corr[k] = Σ echo[i+k]·sent[i]
	}
	fft(a, true)
	lag, score = 0, math.Inf(-1)
	for k := 0; k <= maxLag && k < n; k++ {
		if v := real(a[k]); v > score {
			lag, score = k, v
		}
	}
	return lag, score
}

// fft is an in-place radix-2 FFT (inverse scaled by 1/n); len(x) is a
// power of two.
func fft(x []complex128, inverse bool) {
	n := len(x)
	for i, j := 1, 0; i < n; i++ {
		bit := n >> 1
		for ; j&bit != 0; bit >>= 1 {
			j ^= bit
		}
		j |= bit
		if i < j {
			x[i], x[j] = x[j], x[i]
		}
	}
	sign := -1.0
	if inverse {
		sign = 1
	}
	for size := 2; size <= n; size <<= 1 {
		w := cmplx.Rect(1, sign*2*math.Pi/float64(size))
		for start := 0; start < n; start += size {
			wk := complex(1, 0)
			for k := 0; k < size/2; k++ {
				u, v := x[start+k], x[start+k+size/2]*wk
				x[start+k], x[start+k+size/2] = u+v, u-v
				wk *= w
			}
		}
	}
	if inverse {
		for i := range x {
			x[i] /= complex(float64(n), 0)
		}
	}
}

// echoMatch compares the caller's utterance (the span of left from its
// first to its last non-zero sample) with right lag samples later: how
// many samples of it match exactly after a μ-law round trip, and the
// utterance's bounds.
func echoMatch(left, right audio.PCM, lag int) (matched, total, from, to int) {
	q := mulaw(left)
	from, to = -1, -1
	for i, v := range q {
		if v != 0 {
			if from < 0 {
				from = i
			}
			to = i + 1
		}
	}
	if from < 0 {
		return 0, 0, 0, 0
	}
	for i := from; i < to; i++ {
		if j := i + lag; j < len(right) && right[j] == q[i] {
			matched++
		}
	}
	return matched, to - from, from, to
}
