package harness

import (
	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/nativews"
	"github.com/callproof/callproof/mockbackend"
	"github.com/callproof/callproof/mockbackend/mcptools"
	"github.com/callproof/callproof/trace"
)

// EnvOptions configures the in-process parts of a run.
type EnvOptions struct {
	Clock       trace.Clock // default: the system clock
	BackendAddr string      // default: 127.0.0.1:0
}

// Env is a started mock backend plus a simulator and transport: what every
// run needs besides the agent.
type Env struct {
	Backend   *mockbackend.Server
	Simulator *callsim.Simulator
	Transport callsim.Transport
	// TransportName is recorded in call.start and the results' meta.json.
	TransportName string
	Clock         trace.Clock
}

// NewEnv starts the mock backend on loopback.
func NewEnv(o EnvOptions) (*Env, error) {
	if o.Clock == nil {
		o.Clock = trace.SystemClock{}
	}
	b := mockbackend.New(mockbackend.Options{Addr: o.BackendAddr, Clock: o.Clock, MCP: mcptools.Handler})
	if err := b.Start(); err != nil {
		return nil, err
	}
	return &Env{
		Backend:       b,
		Simulator:     callsim.New(callsim.Options{Clock: o.Clock}),
		Transport:     &nativews.Transport{},
		TransportName: "native",
		Clock:         o.Clock,
	}, nil
}

// Runner returns a runner wired to this environment.
func (e *Env) Runner() *Runner {
	return &Runner{Backend: e.Backend, Simulator: e.Simulator, Transport: e.Transport, Clock: e.Clock, TransportName: e.TransportName}
}

// Close stops the backend.
func (e *Env) Close() error { return e.Backend.Close() }
