package livekit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/livekit/protocol/auth"
	"github.com/livekit/protocol/livekit"
	"google.golang.org/protobuf/proto"
)

// WorkerPath is where a LiveKit server takes agent workers' WebSocket.
const WorkerPath = "/agent"

// WorkerRegisterTimeout bounds a worker's dial and registration.
const WorkerRegisterTimeout = 10 * time.Second

// Job is one room a worker was dispatched into: the room's name, the
// job's metadata, and the URL and token to join it with.
type Job struct {
	Room, Metadata, URL, Token string
}

// Worker is a LiveKit agent worker speaking the server's worker protocol
// (protobuf over a WebSocket on WorkerPath): registered under AgentName,
// it accepts every job the server offers and runs Run in a goroutine per
// job. It lets callproof's own load bot and the tests' Go agent be
// dispatched as LiveKit Agents are, by name or automatically.
type Worker struct {
	URL, APIKey, APISecret string
	// AgentName is the name explicit dispatch uses; "" registers for
	// automatic dispatch into every new room.
	AgentName string
	// Run plays the agent in one job's room until ctx ends or it leaves.
	Run func(ctx context.Context, j Job)
	// Load is the load the worker reports once registered (0 to 1), as a
	// LiveKit Agents worker reports its own: at 1 the server dispatches
	// it no job (tests of a busy worker). Start returns once the server
	// has it.
	Load float32

	ws     *websocket.Conn
	wmu    sync.Mutex // ws writes
	cancel context.CancelFunc
	jobs   sync.WaitGroup
	done   chan struct{}
	pong   chan struct{} // closed once the reported load is in place
}

// Start dials the server and registers; the worker then serves jobs until
// Close (or until the server closes its connection).
func (w *Worker) Start(ctx context.Context) error {
	if w.Run == nil {
		return errors.New("livekit worker: no Run")
	}
	api, err := httpURL(w.URL)
	if err != nil {
		return err
	}
	u, _ := url.Parse(api)
	u.Scheme = map[string]string{"http": "ws", "https": "wss"}[u.Scheme]
	u.Path += WorkerPath
	u.RawQuery = "protocol=1"
	grant := &auth.VideoGrant{Agent: true}
	token, err := auth.NewAccessToken(w.APIKey, w.APISecret).SetVideoGrant(grant).SetValidFor(24 * time.Hour).ToJWT()
	if err != nil {
		return fmt.Errorf("livekit worker: %w", err)
	}
	dctx, cancel := context.WithTimeout(ctx, WorkerRegisterTimeout)
	defer cancel()
	d := websocket.Dialer{Proxy: nil, HandshakeTimeout: WorkerRegisterTimeout}
	ws, resp, err := d.DialContext(dctx, u.String(), http.Header{"Authorization": {"Bearer " + token}})
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		return fmt.Errorf("livekit worker: dialing %s: %w", u, err)
	}
	w.ws = ws
	if err := w.send(&livekit.WorkerMessage{Message: &livekit.WorkerMessage_Register{Register: &livekit.RegisterWorkerRequest{
		Type: livekit.JobType_JT_ROOM, AgentName: w.AgentName, Version: "callproof"}}}); err != nil {
		_ = ws.Close()
		return fmt.Errorf("livekit worker: registering: %w", err)
	}
	_ = ws.SetReadDeadline(time.Now().Add(WorkerRegisterTimeout))
	m, err := w.read()
	if err != nil || m.GetRegister() == nil {
		_ = ws.Close()
		return fmt.Errorf("livekit worker: no registration answer: %v", err)
	}
	_ = ws.SetReadDeadline(time.Time{})
	w.pong = make(chan struct{})
	if w.Load > 0 {
		if err := w.send(&livekit.WorkerMessage{Message: &livekit.WorkerMessage_UpdateWorker{UpdateWorker: &livekit.UpdateWorkerStatus{
			Status: livekit.WorkerStatus_WS_AVAILABLE.Enum(), Load: w.Load}}}); err != nil {
			_ = ws.Close()
			return fmt.Errorf("livekit worker: reporting its load: %w", err)
		}
		// The server handles a worker's messages in order on one
		// goroutine, so its pong to a ping sent after the load says the
		// load is in place: a dispatch after Start returns sees it.
		if err := w.send(&livekit.WorkerMessage{Message: &livekit.WorkerMessage_Ping{Ping: &livekit.WorkerPing{Timestamp: time.Now().UnixMilli()}}}); err != nil {
			_ = ws.Close()
			return fmt.Errorf("livekit worker: pinging: %w", err)
		}
	} else {
		close(w.pong)
	}
	jctx, jcancel := context.WithCancel(context.WithoutCancel(ctx))
	w.cancel, w.done = jcancel, make(chan struct{})
	go w.serve(jctx)
	t := time.NewTimer(WorkerRegisterTimeout)
	defer t.Stop()
	select {
	case <-w.pong:
		return nil
	case <-w.done:
		err = errors.New("the server closed the connection")
	case <-t.C:
		err = fmt.Errorf("no pong within %s", WorkerRegisterTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	w.Close()
	return fmt.Errorf("livekit worker: reporting its load: %w", err)
}

func (w *Worker) send(m *livekit.WorkerMessage) error {
	b, err := proto.Marshal(m)
	if err != nil {
		return err
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	_ = w.ws.SetWriteDeadline(time.Now().Add(WorkerRegisterTimeout))
	return w.ws.WriteMessage(websocket.BinaryMessage, b)
}

func (w *Worker) read() (*livekit.ServerMessage, error) {
	_, b, err := w.ws.ReadMessage()
	if err != nil {
		return nil, err
	}
	m := &livekit.ServerMessage{}
	return m, proto.Unmarshal(b, m)
}

// serve answers the server: every job offered is accepted, every job
// assigned run.
func (w *Worker) serve(ctx context.Context) {
	defer close(w.done)
	for {
		m, err := w.read()
		if err != nil {
			return
		}
		switch {
		case m.GetPong() != nil:
			select {
			case <-w.pong:
			default:
				close(w.pong)
			}
		case m.GetAvailability() != nil:
			job := m.GetAvailability().GetJob()
			_ = w.send(&livekit.WorkerMessage{Message: &livekit.WorkerMessage_Availability{Availability: &livekit.AvailabilityResponse{
				JobId: job.GetId(), Available: true, ParticipantIdentity: "agent-" + job.GetId(), ParticipantName: "agent"}}})
		case m.GetAssignment() != nil:
			a := m.GetAssignment()
			j := Job{Room: a.GetJob().GetRoom().GetName(), Metadata: a.GetJob().GetMetadata(), URL: w.URL, Token: a.GetToken()}
			if a.Url != nil && *a.Url != "" {
				j.URL = *a.Url
			}
			w.jobs.Add(1)
			go func() {
				defer w.jobs.Done()
				w.Run(ctx, j)
			}()
		}
	}
}

// Close leaves the server and ends every job, waiting for them.
func (w *Worker) Close() {
	if w.ws == nil {
		return
	}
	w.cancel()
	_ = w.ws.Close()
	<-w.done
	w.jobs.Wait()
}
