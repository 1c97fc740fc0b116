package mockbackend

import (
	"fmt"
	"net/http"
	"time"

	"github.com/callproof/callproof/trace"
)

// stage runs the rest of a request and returns its answer.
type stage func(x *exchange) reply

// injector is one fault kind: it wraps the rest of the request, so faults
// compose by nesting (the first selected fault is outermost). Each records
// fault.applied just before its effect.
type injector interface {
	wrap(next stage) stage
}

// faultSlot is a configured fault with its count of matching requests.
type faultSlot struct {
	spec trace.Fault
	unit injector
	seen int
}

func newInjector(f trace.Fault) (injector, error) {
	if f.Delay < 0 {
		return nil, fmt.Errorf("mockbackend: fault %s: negative delay", f.Kind)
	}
	status := f.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	if status < 100 || status > 599 {
		return nil, fmt.Errorf("mockbackend: fault %s: bad status %d", f.Kind, f.Status)
	}
	switch f.Kind {
	case trace.FaultLatency:
		return latency{f.Delay}, nil
	case trace.FaultTimeout:
		return hang{}, nil
	case trace.FaultStatus:
		return failBefore{status, f.Delay}, nil
	case trace.FaultStatusAfter:
		return failAfter{status}, nil
	case trace.FaultEmpty:
		return emptyBody{}, nil
	case trace.FaultWrongRecord:
		if f.Record == "" {
			return nil, fmt.Errorf("mockbackend: fault %s needs a record key", f.Kind)
		}
		return wrongRecord{f.Record}, nil
	case trace.FaultLateSuccess:
		return lateSuccess{f.Delay}, nil
	case trace.FaultDuplicate:
		return duplicate{}, nil
	case trace.FaultDropResp:
		return dropResponse{}, nil
	}
	return nil, fmt.Errorf("mockbackend: unknown fault kind %q", f.Kind)
}

func (c *Call) addFault(f trace.Fault) error {
	if f.Probability < 0 || f.Probability > 1 {
		return fmt.Errorf("mockbackend: fault %s: probability %v outside [0,1]", f.Kind, f.Probability)
	}
	if f.Times < 0 {
		return fmt.Errorf("mockbackend: fault %s: negative times", f.Kind)
	}
	u, err := newInjector(f)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.faults = append(c.faults, &faultSlot{spec: f, unit: u})
	c.mu.Unlock()
	return nil
}

// pickFaults selects the faults for one request. Times counts matching
// requests whether or not the probability draw then fires; draws come from
// the call's seeded source in request order, so a seed replays them.
func (c *Call) pickFaults(x *exchange) []injector {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []injector
	for _, s := range c.faults {
		if !s.spec.Match.Matches(x.name, x.args) {
			continue
		}
		s.seen++
		if s.spec.Times > 0 && s.seen > s.spec.Times {
			continue
		}
		if p := s.spec.Probability; p > 0 && p < 1 && c.random().Float64() >= p {
			continue
		}
		out = append(out, s.unit)
	}
	return out
}

// applied records that a fault takes effect on x now.
func (x *exchange) applied(kind trace.FaultKind, status int) {
	x.emit(trace.KindFaultApplied, trace.ToolEvent{Fault: string(kind), Status: status})
	x.amend(func(r *LedgerRow) { r.Faults = append(r.Faults, kind) })
}

// latency waits before executing; a client that leaves meanwhile cancels.
type latency struct{ d time.Duration }

func (f latency) wrap(next stage) stage {
	return func(x *exchange) reply {
		x.applied(trace.FaultLatency, 0)
		if !x.wait(f.d) {
			return x.abandon()
		}
		return next(x)
	}
}

// hang never answers: the request ends when the client gives up or the
// call closes, and nothing commits.
type hang struct{}

func (hang) wrap(stage) stage {
	return func(x *exchange) reply {
		x.applied(trace.FaultTimeout, 0)
		select {
		case <-x.ctx.Done():
		case <-x.c.ctx.Done():
		}
		return x.abandon()
	}
}

// failBefore answers status without executing, after an optional delay (a
// slow failure gives a scenario time to arm a hold for the retry).
type failBefore struct {
	status int
	d      time.Duration
}

func (f failBefore) wrap(stage) stage {
	return func(x *exchange) reply {
		x.applied(trace.FaultStatus, f.status)
		if f.d > 0 && !x.wait(f.d) {
			return x.abandon()
		}
		return errorReply(f.status, errorType(f.status), "injected failure", "")
	}
}

// failAfter executes, then answers status as if it had failed.
type failAfter struct{ status int }

func (f failAfter) wrap(next stage) stage {
	return func(x *exchange) reply {
		rep := next(x)
		if !rep.succeeded() {
			return rep
		}
		x.applied(trace.FaultStatusAfter, f.status)
		return errorReply(f.status, errorType(f.status), "injected failure", "")
	}
}

// emptyBody executes, then answers 200 with no body.
type emptyBody struct{}

func (emptyBody) wrap(next stage) stage {
	return func(x *exchange) reply {
		rep := next(x)
		if !rep.succeeded() {
			return rep
		}
		x.applied(trace.FaultEmpty, 0)
		return reply{status: http.StatusOK}
	}
}

// wrongRecord executes the real change but answers with another record
// of the same table (or, if there is none, the real one under that key).
type wrongRecord struct{ key string }

func (f wrongRecord) wrap(next stage) stage {
	return func(x *exchange) reply {
		rep := next(x)
		if !rep.succeeded() {
			return rep
		}
		x.applied(trace.FaultWrongRecord, 0)
		txn := x.c.db.Txn(false)
		r, ok := lookupRecord(txn, x.tool.spec.Table, f.key)
		if !ok {
			r, _ = lookupRecord(txn, x.tool.spec.Table, x.args[x.tool.spec.KeyArg])
			r.Table, r.Key = x.tool.spec.Table, f.key
		}
		return reply{status: http.StatusOK, body: recordBody(r)}
	}
}

// lateSuccess answers 202 pending at once and commits after the delay,
// once the 202 is out, unless the call closes first. The commit also
// waits for the agent's first act after the 202 (lateCommit), at most
// LateSuccessActWait more.
type lateSuccess struct{ d time.Duration }

func (f lateSuccess) wrap(next stage) stage {
	return func(x *exchange) reply {
		x.applied(trace.FaultLateSuccess, 0)
		op := x.c.nextOperation()
		x.amend(func(r *LedgerRow) { r.Operation = op })
		late := *x
		late.ctx = x.c.ctx                    // nobody waits on the commit: only the call bounds it
		late.after, late.ownsKey = nil, false // the 202 is what the key stores
		lc := x.c.watchLate(x.ref)            // before the 202 is recorded
		x.after = append(x.after, func() {
			x.c.wg.Add(1) // the handler holds the group open, so Add is safe
			go func() {
				defer x.c.wg.Done()
				defer x.c.dropLate(lc)
				if !late.wait(f.d) || !lc.waitAct(&late) {
					at := late.emit(trace.KindToolCancelled, trace.ToolEvent{Reason: "call closed before the late commit"})
					late.amend(func(r *LedgerRow) { r.Cancelled = ptr(at) })
					return
				}
				if rep := next(&late); !rep.cancelled && !rep.succeeded() {
					at := late.emit(trace.KindToolCancelled, trace.ToolEvent{Reason: "late commit failed", Status: rep.status, Error: rep.errMsg})
					late.amend(func(r *LedgerRow) { r.Cancelled = ptr(at) })
				}
			}()
		})
		return reply{status: http.StatusAccepted, body: pendingBody(op)}
	}
}

// duplicate has the request delivered twice; the second delivery runs
// once the first is settled (see Call.redeliver).
type duplicate struct{}

func (duplicate) wrap(next stage) stage {
	return func(x *exchange) reply {
		x.applied(trace.FaultDuplicate, 0)
		x.duplicate = true
		return next(x)
	}
}

// dropResponse executes, then closes the connection without answering.
type dropResponse struct{}

func (dropResponse) wrap(next stage) stage {
	return func(x *exchange) reply {
		rep := next(x)
		if rep.gone || rep.rejected {
			return rep
		}
		x.applied(trace.FaultDropResp, 0)
		rep.drop = true
		return rep
	}
}
