package scorer

import (
	"fmt"

	"github.com/callproof/callproof/trace"
)

// buckets runs every root-cause rule on a failed call, in precedence order.
// wrong_record only counts when nothing above explains the call, and
// unclassified only when nothing fits at all.
func (v *view) buckets() []BucketHit {
	var hits []BucketHit
	add := func(b Bucket, fs []Finding) {
		if len(fs) > 0 {
			hits = append(hits, BucketHit{Bucket: b, Findings: fs})
		}
	}
	add(BucketStaleToolArgs, v.bucketStaleArgs())
	add(BucketInflightNotCanceled, v.bucketInflight())
	add(BucketUnverifiedResult, v.bucketUnverified())
	add(BucketNoiseBargeIn, v.bucketNoise())
	add(BucketUnsafeRetry, v.bucketUnsafeRetry())
	add(BucketEarlyConfirmation, v.bucketEarly())
	add(BucketMissingIdempotency, v.bucketNoIdempotency())
	add(BucketNotExecuted, v.bucketNotExecuted())
	add(BucketGaveUp, v.bucketGaveUp())
	add(BucketUncompensated, v.bucketUncompensated())
	add(BucketStaleState, v.bucketStaleState())
	add(BucketNeverConfirmed, v.bucketNeverConfirmed())
	if len(hits) == 0 {
		add(BucketWrongRecord, v.bucketWrongRecord())
	}
	if len(hits) == 0 {
		add(BucketNotExecuted, v.falseConfirmation())
	}
	if len(hits) == 0 {
		hits = append(hits, BucketHit{Bucket: BucketUnclassified, Findings: []Finding{{Text: "no root-cause rule fits this failure"}}})
	}
	return hits
}

// stale_tool_args: a consequential call received after an intent change
// carrying values that change superseded, or after the action was withdrawn.
func (v *view) bucketStaleArgs() []Finding {
	var out []Finding
	for _, r := range v.reqs {
		if !r.consequential() || r.recv == 0 || r.rejected > 0 || r.compensation() {
			continue
		}
		m := v.markSpoken(r.recv)
		if m == nil {
			continue
		}
		if !m.in.Execute {
			out = append(out, v.find(r.tool+" was received after the caller withdrew the action", m.seq, r.recv))
		} else if !matches(r.tool, r.args, m) && v.staleArgs(r, m) {
			out = append(out, v.find(describe(r.tool, r.args)+" was received with superseded values after the caller changed them", m.seq, r.recv))
		} else {
			// Built before the change, still open at it, and committed
			// after it with values the change replaced: the write carried
			// stale arguments to the end. (A withdrawn action with no
			// replaced value is inflight_not_cancelled alone.)
			if w := v.invalidatedOpen(r); w != nil && w.in.Execute && v.staleArgs(r, w) {
				for _, c := range r.commits {
					if c > w.seq {
						out = append(out, v.find(describe(r.tool, r.args)+" was in flight when the caller replaced its values and committed them anyway", r.recv, w.seq, c))
						break
					}
				}
			}
		}
	}
	return out
}

// inflight_not_cancelled: a consequential call in flight when the caller
// invalidated it, left to commit, or never closed at all (no answer, no
// cancel by the end of the call).
func (v *view) bucketInflight() []Finding {
	var out []Finding
	for _, r := range v.reqs {
		m := v.invalidatedOpen(r)
		if m == nil {
			// Not open at the change's final words, but still unanswered
			// (or answered only "accepted") when the change began, and
			// landing after it: the agent let it run on.
			if w := v.openAtOnset(r); w != nil {
				for _, c := range r.commits {
					if c > w.seq {
						out = append(out, v.find(describe(r.tool, r.args)+" had not been accepted when the caller began the change, and committed after it"+v.repairedSeq(c), r.recv, w.onset, c))
						break
					}
				}
			}
			continue
		}
		if r.closed() == 0 && len(r.commits) == 0 {
			out = append(out, v.find(describe(r.tool, r.args)+" was in flight when the caller changed the request and was never cancelled or answered", r.recv, m.seq))
			continue
		}
		for _, c := range r.commits {
			if c > m.seq {
				out = append(out, v.find(describe(r.tool, r.args)+" was received before the caller's change, never cancelled, and committed after it"+v.repairedSeq(c), r.recv, m.seq, c))
				break
			}
		}
	}
	return out
}

// unverified_tool_result: a bad answer followed by a done-claim with no
// verifying call in between (a read, or the same call answered cleanly).
func (v *view) bucketUnverified() []Finding {
	var out []Finding
	for _, r := range v.reqs {
		// after(), like the other rules on bad answers: a timeout whose
		// retry reached the backend before the disconnect was noticed is
		// answered from the retry on, whatever order the events settle in.
		m := r.after()
		if r.problem == "" || m == 0 {
			continue
		}
		for _, u := range v.utts {
			hedge := u.f.hedged && definite(r) // "it should go through" after an error
			if u.start <= m || !u.completed() || u.f.claim != claimDone && !hedge {
				continue
			}
			// A done-claim on a pending (202) answer before the write
			// landed is early_confirmation: the more exact diagnosis.
			early := r.problem == "pending" && (len(r.commits) == 0 || r.commits[0] > u.start)
			if !early && !v.verifiedBetween(r, m, u.start) {
				what := "a done-claim"
				if hedge {
					what = "a hedged done-claim"
				}
				out = append(out, v.find(article(r.problem)+" answer to "+r.tool+" was followed by "+what+" without a verifying read", m, u.start))
			}
			break
		}
	}
	return out
}

func (v *view) verifiedBetween(bad *request, from, to int) bool {
	for _, r := range v.reqs {
		if r.recv <= from || r.responded == 0 || r.responded >= to || r.problem != "" || r.status != 200 {
			continue
		}
		if !r.consequential() || effect(r) == effect(bad) {
			return true
		}
	}
	return false
}

// noise_as_barge_in: the agent cleared its speech during a noise window.
func (v *view) bucketNoise() []Finding {
	var out []Finding
	for _, w := range v.noise {
		to := v.lastAt
		if w.end > 0 {
			to = w.to + v.yield
		}
		for _, u := range v.utts {
			if u.clear > w.start && u.stopAt <= to {
				out = append(out, v.find("agent cleared its speech for background noise", w.start, u.clear))
				break
			}
		}
	}
	return out
}

// unsafe_retry: a consequential call that errored (or lost its answer)
// after committing, then a retry without the same idempotency key that
// committed the effect again.
func (v *view) bucketUnsafeRetry() []Finding {
	var out []Finding
	for _, a := range v.reqs {
		if !a.consequential() || len(a.commits) == 0 || (a.problem != "error" && a.problem != "dropped" && a.problem != "timeout" && a.problem != "empty") {
			continue
		}
		for _, b := range v.reqs {
			if b == a || b.recv <= a.after() || len(b.commits) == 0 || effect(a) != effect(b) {
				continue
			}
			if b.idem == "" || b.idem != a.idem {
				out = append(out, v.find("after "+article(a.problem)+" answer to a "+a.tool+" that had committed, a retry without the same idempotency key committed again",
					a.commits[0], a.moment(), b.recv, b.commits[0]))
				break
			}
		}
	}
	return out
}

// early_confirmation: a done-claim spoken while nothing had committed yet,
// with the write landing after it.
func (v *view) bucketEarly() []Finding {
	cs := v.commits()
	for _, u := range v.utts {
		if !u.completed() || u.f.claim != claimDone {
			continue
		}
		before, after := false, 0
		for _, c := range cs {
			if c.seq < u.start {
				before = true
			} else if after == 0 {
				after = c.seq
			}
		}
		if !before && after > 0 {
			return []Finding{v.find("agent claimed done before the write committed", u.start, after)}
		}
		// A pending (202) answer taken as done, and the write never
		// landed by the end of the call: confirmed before the result.
		for _, r := range v.reqs {
			if r.problem == "pending" && r.consequential() && len(r.commits) == 0 && r.responded < u.start {
				return []Finding{v.find("agent claimed done on a pending answer to "+r.tool+" whose write never landed", r.responded, u.start)}
			}
		}
	}
	return nil
}

// missing_idempotency_key: the same effect committed twice by unkeyed
// requests with no bad answer in between to excuse a retry.
func (v *view) bucketNoIdempotency() []Finding {
	cs := v.commits()
	for i, c := range cs {
		for _, p := range cs[:i] {
			if effect(p.r) != effect(c.r) || c.r.idem != "" {
				continue
			}
			if p.r != c.r && p.r.problem != "" && p.r.after() > 0 && p.r.after() < c.r.recv {
				continue // a retry after an error: unsafe_retry's case
			}
			return []Finding{v.find(c.r.tool+" committed the same effect twice from requests without an idempotency key", p.seq, c.seq)}
		}
	}
	return nil
}

// action_not_executed (seed 000's "claimed but not executed"): the agent
// claimed done and nothing was committed.
func (v *view) bucketNotExecuted() []Finding {
	if len(v.commits()) > 0 {
		return nil
	}
	for _, u := range v.utts {
		if u.completed() && u.f.claim == claimDone {
			return []Finding{v.find("agent claimed done but the backend recorded no write", u.start, v.snapSeq)}
		}
	}
	return nil
}

// falseConfirmation is action_not_executed's second case, tried only when
// no other rule explains the call: the confirmation claims a change the
// backend does not hold, and nothing was in flight that could still have
// made it.
func (v *view) falseConfirmation() []Finding {
	u := v.confirmingUtterance()
	if u == nil || u.f.claim != claimDone || v.snap == nil || v.final == nil {
		return nil
	}
	for _, r := range v.reqs {
		if r.consequential() && r.openAt(u.start) {
			return nil
		}
	}
	missing := !v.final.in.Execute && v.unchanged
	for _, k := range v.targets() {
		if !v.heldAsWanted(record(v.want, k[0], k[1]), record(v.held, k[0], k[1])) {
			missing = true
		}
	}
	if !missing {
		return nil
	}
	return []Finding{v.find("agent's confirmation claims a change the backend does not hold, with nothing in flight", u.start, v.snapSeq)}
}

// gave_up_on_transient_error: the caller still wanted the action, nothing
// of it was ever written, every try of it was answered with a transient
// error (5xx, 429) or timed out, and the agent ended by saying it was not
// done. Honest, but the caller's request was dropped after too few tries.
func (v *view) bucketGaveUp() []Finding {
	if v.final == nil || !v.final.in.Execute || len(v.commits()) > 0 {
		return nil
	}
	var tries []*request
	for _, r := range v.reqs {
		if r.consequential() && r.tool == v.final.in.Action && r.recv > 0 && r.dupOf == "" {
			tries = append(tries, r)
		}
	}
	if len(tries) == 0 {
		return nil
	}
	for _, r := range tries {
		// A request the agent itself gave up on (cancelled, never
		// answered, nothing written) was a timeout as far as it knew.
		abandoned := r.cancelled > 0 && r.responded == 0 && len(r.commits) == 0
		transient := abandoned || r.problem == "timeout" || r.problem == "error" && (r.status >= 500 || r.status == 429)
		if !transient {
			return nil
		}
	}
	u := v.confirmingUtterance()
	if u == nil || u.f.claim != claimNotDone {
		return nil
	}
	last := tries[len(tries)-1]
	return []Finding{v.find(fmt.Sprintf("every one of %d tries of %s was a transient failure, and the agent gave up", len(tries), last.tool), last.moment(), u.start)}
}

// wrong_record: a commit to a record the final intent does not target.
func (v *view) bucketWrongRecord() []Finding {
	t := v.targets()
	var out []Finding
	for _, c := range v.commits() {
		if !c.r.compensation() && !contains(t, [2]string{c.table, c.key}) {
			out = append(out, v.find(c.r.tool+" committed to "+c.table+"/"+c.key+", a record the caller never meant", c.seq))
		}
	}
	return out
}

// uncompensated_write: a commit that matched the intent in force when it
// landed (so not stale), that the caller's final intent no longer wants,
// and whose values the backend still holds where the intended state
// differs: nobody put it back.
func (v *view) bucketUncompensated() []Finding {
	if v.snap == nil || v.final == nil {
		return nil
	}
	var out []Finding
	for _, c := range v.commits() {
		if c.r.compensation() || matches(c.r.tool, c.r.args, v.final) {
			continue
		}
		m := v.markBefore(c.seq)
		if m != nil && v.acceptedBefore(c.r, m) {
			m = v.markBefore(c.r.responded) // accepted before the change: judged as of then
		}
		if m == nil || !matches(c.r.tool, c.r.args, m) {
			continue // stale when it landed: the buckets above judge it
		}
		if m := v.markSpoken(c.r.recv); m == nil || !matches(c.r.tool, c.r.args, m) {
			continue // sent while the caller was already changing it: stale too
		}
		got, want := record(v.net, c.table, c.key), record(v.want, c.table, c.key)
		if got == nil {
			continue
		}
		for k, a := range c.r.args {
			if k == c.r.spec.KeyArg {
				continue
			}
			held := v.norm(v.argType(c.r.tool, k), got.Fields[k]) == a
			wanted := want != nil && v.norm(v.argType(c.r.tool, k), want.Fields[k]) == a
			if held && !wanted {
				out = append(out, v.find(describe(c.r.tool, c.r.args)+" committed before the caller changed the request and was never put back", c.seq, v.finalSeq, v.snapSeq))
				break
			}
		}
	}
	return out
}

// stale_working_state: after the caller changed the request, the agent's
// first revealing act (self-report, tool-intent notice, utterance) still
// showed the values the change replaced — nothing stale reached the
// backend, but the agent had not taken the change in yet.
func (v *view) bucketStaleState() []Finding {
	var out []Finding
	for i := range v.marks {
		m := &v.marks[i]
		if !m.changed || i == 0 {
			continue
		}
		keys := changedSlots(&v.marks[i-1], m)
		seq, j := v.firstAct(m.seq, func(e *trace.Event) int {
			if e.Kind == trace.KindToolReceived || e.Kind == trace.KindToolCancelled {
				return actSkip // requests are judged by the buckets above
			}
			return v.judge(e, m, keys)
		})
		if j == actFail {
			out = append(out, v.find("the agent's first act after the caller's change still showed the old values", m.seq, seq))
		}
	}
	return out
}

// never_confirmed: the caller stayed on, yet after the last change the
// agent made no claim at all about the outcome (axis 6's "never
// confirmed").
func (v *view) bucketNeverConfirmed() []Finding {
	if v.final == nil || v.snap == nil || v.confirmingUtterance() != nil {
		return nil
	}
	if _, r := v.hungUpInFlight(); r != nil || v.cutByHangup() != nil || v.unreadStatement() != nil || v.hungUpOnAnswer() > 0 {
		return nil
	}
	return []Finding{v.find("the agent never told the caller how the request ended", v.finalSeq, v.snapSeq)}
}

// openAtOnset returns the first intent change whose onset found the
// consequential request r sent and not yet answered (or answered with an
// error or not at all: never accepted), that r no longer matches.
func (v *view) openAtOnset(r *request) *mark {
	if !r.consequential() || r.recv == 0 {
		return nil
	}
	for i := range v.marks {
		m := &v.marks[i]
		if !m.changed || r.recv >= m.onset || matches(r.tool, r.args, m) {
			continue
		}
		if c := r.closed(); c == 0 || c > m.onset || r.status >= 400 || r.dropped {
			return m
		}
	}
	return nil
}
