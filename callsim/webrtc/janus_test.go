package webrtc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	pion "github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/callsim/audiocall"
	cpwebrtc "github.com/callproof/callproof/callsim/webrtc"
	"github.com/callproof/callproof/internal/rtcpeer"
	"github.com/callproof/callproof/protocol/native"
)

// TestJanusEcho calls Janus's EchoTest plugin (an independent WebRTC
// implementation: janus, libnice, libsrtp, usrsctp) inside a network
// namespace of the test's own, and checks that what goes out comes back
// intact (docs/INTEROP.md, "WebRTC: Janus echo test").
func TestJanusEcho(t *testing.T) {
	if testing.Short() {
		t.Skip("janus interop: not in -short mode")
	}
	j := startJanusNS(t)

	t.Run("pion", func(t *testing.T) {
		res := j.child(t, childParams{Mode: "pion"}, 40*time.Second)
		require.Empty(t, res.Err)
		t.Logf("plain pion peer: offer→answer %v, connected %v after the answer; %d frames sent, %d echoed, %d byte-equal; our candidates %q, janus's %q; janus events %q; data channel echo %q",
			res.OfferToAnswer, res.DialTime, res.FramesSent, res.FramesEchoed, res.FramesMatched, res.OfferCands, res.AnswerCands, res.Events, res.DataEcho)
		assert.ElementsMatch(t, []string{"lo", janusVeth, janusVethPeer}, res.Interfaces)
		assert.GreaterOrEqual(t, res.FramesMatched, res.FramesSent*95/100, "at least 95 %% of the frames come back byte for byte")
		assert.Equal(t, "Janus EchoTest here! You wrote: hello", res.DataEcho)
		assert.Contains(t, res.Events, "webrtcup")
	})

	if _, err := exec.LookPath("flite"); err != nil {
		t.Skip("janus interop: flite not installed (scripts/install-speech.sh)")
	}
	// The parent synthesizes; the children find the utterance cached.
	speech := filepath.Join(t.TempDir(), "speech")
	synth, err := audio.NewSynth(audio.DefaultVoice)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = (&audio.Cache{Dir: speech, Synth: synth}).Speech(ctx, janusEchoText)
	require.NoError(t, err)
	for _, trickle := range []bool{false, true} {
		name := "callsim"
		if trickle {
			name += "-trickle"
		}
		t.Run(name, func(t *testing.T) { janusCallEcho(t, j, speech, trickle) })
	}
}

// janusCallEcho has a child call the echo through callsim/webrtc and
// checks the recording: the agent's channel is the caller's, a lag later,
// sample for sample.
func janusCallEcho(t *testing.T, j *janusNS, speech string, trickle bool) {
	rec := filepath.Join(t.TempDir(), "call.wav")
	res := j.child(t, childParams{Mode: "call", SpeechDir: speech, Text: janusEchoText, RecordTo: rec, Trickle: trickle}, 60*time.Second)
	require.Empty(t, res.Err)
	t.Logf("callsim/webrtc: offer→answer %v, Dial %v; our candidates %q in the offer, %q trickled; janus's %q; janus events %q; Recv: %q then %q",
		res.OfferToAnswer, res.DialTime, res.OfferCands, res.Trickled, res.AnswerCands, res.Events, res.Frames, res.RecvErr)
	assert.Contains(t, res.Events, "webrtcup")
	assert.Contains(t, res.Events, "media audio receiving=true")
	if trickle {
		assert.NotEmpty(t, res.Trickled, "candidates went by trickle")
	}
	// The echotest answers every data-channel message with "Janus EchoTest
	// here! You wrote: " and the message: not a JSON object, so a garbage
	// frame (docs/PROTOCOL.md), the first thing Recv returns. The media
	// goes on until Close.
	assert.Empty(t, res.Frames)
	assert.True(t, res.GarbageFrame, "Recv's error: %s", res.RecvErr)

	left, right, err := stereoWAV(rec)
	require.NoError(t, err)
	lag, _ := bestLag(mulaw(left), right, audio.Samples(2*time.Second))
	matched, total, from, to := echoMatch(left, right, lag)
	require.NotZero(t, total, "the caller's channel is silent")
	frac := float64(matched) / float64(total)
	if trickle && len(res.OfferCands) > 0 {
		t.Logf("note: the trickle offer already carried %d candidates (pion had gathered them when the offer was read)", len(res.OfferCands))
	}
	t.Logf("recording %v: the utterance (%v prepared) at %v–%v (%d samples, %.1f dBFS) is echoed %v later (%d samples): %d of %d samples equal after a μ-law round trip (%.2f %%); echo %.1f dBFS",
		left.Duration(), res.Utterance, sampleTime(from), sampleTime(to), total, audio.LevelDBFS(left[from:to]),
		sampleTime(lag), lag, matched, total, 100*frac, audio.LevelDBFS(right[min(from+lag, len(right)):min(to+lag, len(right))]))
	if !assert.GreaterOrEqual(t, frac, 0.95, "at least 95 %% of the utterance's samples come back exactly") {
		for _, d := range []int{-audio.FrameSamples, audio.FrameSamples, 2 * audio.FrameSamples} {
			if lag+d >= 0 {
				m, _, _, _ := echoMatch(left, right, lag+d)
				t.Logf("at lag %v instead: %d of %d equal (a frame lost or late shifts the rest)", sampleTime(lag+d), m, total)
			}
		}
	}
	assert.Less(t, sampleTime(lag), 500*time.Millisecond, "the echo's lag")
}

// sampleTime is n samples as time.
func sampleTime(n int) time.Duration { return time.Duration(n) * time.Second / audio.SampleRate }

// TestJanusEchoChild is TestJanusEcho's WebRTC client, run by it inside
// the namespace; skipped otherwise.
func TestJanusEchoChild(t *testing.T) {
	p := childParamsFromEnv(t)
	var res childResult
	ctx, cancel := context.WithTimeout(context.Background(), p.Timeout)
	defer cancel()
	err := checkIsolated(p, &res)
	if err == nil {
		switch p.Mode {
		case "probe":
			err = janusInfo(ctx, p.URL, janusStartTimeout, &res)
		case "pion":
			err = pionEcho(ctx, p, &res)
		case "call":
			err = callEcho(ctx, p, &res)
		default:
			err = fmt.Errorf("unknown mode %q", p.Mode)
		}
	}
	if err != nil {
		res.Err = err.Error()
	}
	b, merr := json.MarshalIndent(res, "", "  ")
	require.NoError(t, merr)
	require.NoError(t, os.WriteFile(p.Out, b, 0o644))
	t.Logf("%s", b)
	require.NoError(t, err)
}

// pionEcho calls the echotest with a plain pion peer (the rtcpeer API:
// PCMU only, loopback candidates) and sends 2 s of random μ-law frames
// and one data channel message.
func pionEcho(ctx context.Context, p childParams, res *childResult) error {
	api, err := rtcpeer.NewAPI(rtcpeer.Options{LoopbackOnly: true})
	if err != nil {
		return err
	}
	pc, err := api.NewPeerConnection(pion.Configuration{})
	if err != nil {
		return err
	}
	defer pc.Close()
	track, err := pion.NewTrackLocalStaticSample(rtcpeer.PCMU, "audio", "callproof")
	if err != nil {
		return err
	}
	if _, err := pc.AddTransceiverFromTrack(track, pion.RTPTransceiverInit{Direction: pion.RTPTransceiverDirectionSendrecv}); err != nil {
		return err
	}
	dc, err := pc.CreateDataChannel("chat", nil)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var echoed [][]byte
	pc.OnTrack(func(tr *pion.TrackRemote, _ *pion.RTPReceiver) {
		for {
			pkt, _, err := tr.ReadRTP()
			if err != nil {
				return
			}
			mu.Lock()
			echoed = append(echoed, slices.Clone(pkt.Payload))
			mu.Unlock()
		}
	})
	dataEcho := make(chan string, 4)
	dcOpen := make(chan struct{})
	dc.OnOpen(func() { close(dcOpen) })
	dc.OnMessage(func(m pion.DataChannelMessage) {
		select {
		case dataEcho <- string(m.Data):
		default:
		}
	})
	connected := make(chan struct{})
	failed := make(chan pion.PeerConnectionState, 1)
	var once sync.Once
	pc.OnConnectionStateChange(func(s pion.PeerConnectionState) {
		switch s {
		case pion.PeerConnectionStateConnected:
			once.Do(func() { close(connected) })
		case pion.PeerConnectionStateFailed, pion.PeerConnectionStateClosed:
			select {
			case failed <- s:
			default:
			}
		}
	})

	jc := newJanusClient(p.URL)
	defer func() {
		hctx, cancel := context.WithTimeout(context.Background(), janusRequest)
		defer cancel()
		_ = jc.Hangup(hctx)
		jc.report(res)
	}()

	offer, err := pc.CreateOffer(nil)
	if err != nil {
		return err
	}
	gathered := pion.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(offer); err != nil {
		return err
	}
	select {
	case <-gathered:
	case <-time.After(5 * time.Second):
		return errors.New("pion: candidate gathering took over 5 s")
	}
	answer, err := jc.Offer(ctx, pc.LocalDescription().SDP)
	if err != nil {
		return err
	}
	answered := time.Now()
	if err := pc.SetRemoteDescription(pion.SessionDescription{Type: pion.SDPTypeAnswer, SDP: answer}); err != nil {
		return fmt.Errorf("janus's answer: %w", err)
	}
	select {
	case <-connected:
		res.DialTime = time.Since(answered)
	case s := <-failed:
		return fmt.Errorf("pion: peer connection %s", s)
	case <-time.After(10 * time.Second):
		return fmt.Errorf("pion: not connected 10 s after the answer (ICE %s)", pc.ICEConnectionState())
	}
	select {
	case <-dcOpen:
	case <-time.After(5 * time.Second):
		return errors.New("pion: data channel not open 5 s after connecting")
	}
	if err := dc.SendText("hello"); err != nil {
		return err
	}

	rng := rand.New(rand.NewPCG(1, 2))
	sent := make([][]byte, 100) // 2 s
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := range sent {
		sent[i] = make([]byte, 160)
		for k := range sent[i] {
			sent[i][k] = byte(rng.UintN(256))
		}
		<-tick.C
		if err := track.WriteSample(media.Sample{Data: sent[i], Duration: 20 * time.Millisecond}); err != nil {
			return err
		}
	}
	select {
	case res.DataEcho = <-dataEcho:
	case <-time.After(2 * time.Second):
	}
	time.Sleep(500 * time.Millisecond)

	mu.Lock()
	defer mu.Unlock()
	res.FramesSent, res.FramesEchoed = len(sent), len(echoed)
	for _, s := range sent {
		for _, e := range echoed {
			if slices.Equal(s, e) {
				res.FramesMatched++
				break
			}
		}
	}
	return nil
}

// janusEchoText is the utterance the call plays to the echo.
const janusEchoText = "Please move order 5590 to December third."

// callEcho calls the echotest through callsim/webrtc's Transport, with
// the janus client as its Signaler: start, one utterance, the echo
// played out, stop, Close (which writes the recording).
func callEcho(ctx context.Context, p childParams, res *childResult) error {
	synth, err := audio.NewSynth(audio.DefaultVoice)
	if err != nil {
		return err
	}
	jc := newJanusClient(p.URL)
	tr := &cpwebrtc.Transport{
		Config:   audiocall.Config{Speech: &audio.Cache{Dir: p.SpeechDir, Synth: synth}, RecordTo: p.RecordTo},
		Signaler: func(string, string) cpwebrtc.Signaler { return jc },
		Trickle:  p.Trickle,
		CallID:   "janus-echo",
	}
	dialed := time.Now()
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	conn, err := tr.Dial(dctx, p.URL)
	cancel()
	jc.report(res)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	res.DialTime = time.Since(dialed)

	// The simulator's pump: every event until the first error.
	var mu sync.Mutex
	var frames []string
	var recvErr error
	pumped := make(chan struct{})
	go func() {
		defer close(pumped)
		for {
			f, err := conn.Recv(ctx)
			mu.Lock()
			if err != nil {
				recvErr = err
			} else {
				frames = append(frames, fmt.Sprintf("%s %s", f.Message.Event, f.Raw))
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		_ = conn.Close() // again, on the way out early
		select {
		case <-pumped:
		case <-time.After(5 * time.Second):
		}
		mu.Lock()
		defer mu.Unlock()
		res.Frames = frames
		if recvErr != nil {
			res.RecvErr, res.GarbageFrame = recvErr.Error(), errors.Is(recvErr, callsim.ErrGarbageFrame)
		}
		jc.report(res)
	}()
	voice, ok := conn.(callsim.Voice)
	if !ok {
		return fmt.Errorf("%T has no voice (callsim.Voice)", conn)
	}
	if err := conn.Send(ctx, native.Message{Event: native.EventStart, Start: &native.Start{CallID: "janus-echo", TimeScale: 1}}); err != nil {
		return fmt.Errorf("send start: %w", err)
	}
	d, err := voice.PrepareSpeech(ctx, "u1", p.Text)
	if err != nil {
		return err
	}
	res.Utterance = d
	time.Sleep(200 * time.Millisecond)
	if err := conn.Send(ctx, native.Message{Event: native.EventSpeech, Speech: &native.Speech{ID: "u1", Phase: native.PhaseOnset}}); err != nil && !errors.Is(err, callsim.ErrGarbageFrame) {
		// Play returns the reader's error: janus's prefixed echo of
		// client-ready is a garbage frame (the parent checks it).
		return fmt.Errorf("send speech onset: %w", err)
	}
	time.Sleep(d + time.Second) // the echo is back within milliseconds
	_ = conn.Send(ctx, native.Message{Event: native.EventStop, Stop: &native.Stop{}})
	if err := conn.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	select {
	case <-pumped:
	case <-time.After(5 * time.Second):
		return errors.New("Recv still blocked 5 s after Close")
	}
	return nil
}
