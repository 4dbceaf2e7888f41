package actors

import (
	"context"
	"errors"
	"time"

	"payments/ledger"
	"payments/ledger/instructions"
)

// Driving an instruction through a provider instance, exactly once.
//
// A payout or collection whose method a configured instance serves is
// driven from its committed instruction (instructions.Instruction):
//
//  1. Without one, the adapter prepares it (its idempotency key, or the
//     signed request) and instructions.Prepare commits it before anything
//     is sent. If another leader committed one first, that one is used:
//     a prepared value is never replaced but by the adapter's own
//     Replacement.
//  2. For a send-once instance (SendOnce), instructions.MarkSent commits
//     "sent" before Submit. A worker that finds it committed, with no
//     answer recorded (a crash, a leader change), never submits again: it
//     marks the payout processing and only asks the status. It submits
//     again only after Submit itself answered that nothing was done,
//     committed as "not sent".
//  3. Other instances take the same Prepared again at any time: a new
//     leader re-sends a pending instruction, and one the provider says it
//     never received.
//  4. Submit's answer moves the payout: accepted, or an unknown outcome
//     (a timeout, a 5xx, a lost response), marks it processing; only a
//     definite rejection fails it (refunded, the provider's words in
//     statusMessage). Then Status is asked until the provider gives a
//     final answer, which settles it (SettlePayout, SettleCollection).
//     A Replacement is committed before it is submitted.
//  5. A callback settles it too (System.ProviderCallback), or wakes the
//     worker for an immediate status check; whichever settles first wins,
//     and the other finds the payout final.
//
// Before its first Prepare on a new leader, the worker waits until every
// instance that keeps prepared values in memory (an EVM hot wallet's
// nonces) was given the committed, unfinished ones (Provider.Restore).

const (
	// providerCheckDefault paces status checks when the provider does
	// not say when to ask again.
	providerCheckDefault = 5 * time.Second
	// restoreChunk is how many open instructions a restore reads at a time.
	restoreChunk = 512
)

// Messages of the provider driver.
type (
	// checkNow asks for an immediate status check of an instruction (an
	// unauthenticated callback named it).
	checkNow struct{ id string }
)

// providerFor returns the instance that drives work, if any.
func (d *deps) providerFor(w Work) (Provider, bool) {
	if d.providers == nil {
		return nil, false
	}
	method := ""
	if w.Payout != nil {
		method = w.Payout.Spec.Method
	} else {
		method = w.Collection.Spec.Method
	}
	return d.providers.For(method, w.Direction())
}

// restoreProviders hands every instance its committed, unfinished prepared
// values, then closes done. It retries until it succeeds or the term ends.
func (d *deps) restoreProviders(ctx context.Context, done chan<- struct{}) {
	defer stopOnClosedStore()
	if d.providers == nil {
		close(done)
		return
	}
	inFlight := map[string][]Prepared{}
	var cur ledger.OpenCursor
	for {
		ins, next, last := instructions.Open(d.state.Reader(), cur, restoreChunk)
		for _, in := range ins {
			inFlight[in.Provider] = append(inFlight[in.Provider], Prepared{Key: in.PreparedKey, Payload: []byte(in.Payload)})
		}
		if last {
			break
		}
		cur = next
	}
	w := &worker{deps: d, ctx: ctx}
	for _, p := range d.providers.All() {
		for {
			err := p.Restore(ctx, inFlight[p.Name()])
			if err == nil {
				break
			}
			d.logger.Warn("restoring a provider's instructions in flight failed; retrying", "provider", p.Name(), "err", err)
			if !w.backoff() {
				return
			}
		}
		w.delay = 0
	}
	close(done)
}

// awaitRestored waits until the term's restore is done.
func (w *worker) awaitRestored() bool {
	select {
	case <-w.restored:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// sleepOrWake waits d, or less if a callback asks for a check.
func (w *worker) sleepOrWake(d time.Duration) bool {
	if w.wake == nil {
		return w.sleep(d)
	}
	ctx, cancel := context.WithCancel(w.ctx)
	defer cancel()
	go func() {
		select {
		case <-w.wake:
			cancel()
		case <-ctx.Done():
		}
	}()
	Sleep(ctx, w.deps.clock, d)
	return w.ctx.Err() == nil
}

// waitRetry backs off after a failed step, at least as long as the
// provider asked.
func (w *worker) waitRetry(err error) bool {
	if ra := retryAfter(err); ra > 0 {
		w.delay = max(w.delay, ra)
	}
	return w.backoff()
}

// driveProvider moves work through prov until it is final (final true),
// the term ends, or the log refuses a step (then latest is its latest
// copy).
func (wk *worker) driveProvider(work Work, prov Provider) (latest Work, final bool) {
	for wk.ctx.Err() == nil {
		if workFinal(work) {
			return work, true
		}
		var ok bool
		// 1. The committed instruction, or a new one.
		if work.Instruction == nil {
			if in, found := instructions.Get(wk.deps.state.Reader(), work.ID()); found {
				work.Instruction = &in
				continue
			}
			if work, ok = wk.prepare(work, prov); !ok {
				return work, false
			}
			continue
		}
		in := work.Instruction
		prepared := Prepared{Key: in.PreparedKey, Payload: []byte(in.Payload)}

		// 2. Send it, unless this worker sent this very value already, or
		// it may have arrived and must never go twice.
		if wk.submittedKey != in.PreparedKey && !(in.SendOnce && in.Sent) {
			if in.SendOnce {
				res, ok := wk.propose(&instructions.MarkSent{At: wk.deps.now().UnixMilli(), ID: in.ID, Sent: true})
				if !ok {
					return work, false
				}
				if res.Err != nil {
					if work, ok = wk.refused(work, &instructions.MarkSent{}, res.Err); !ok {
						return work, false
					}
					continue
				}
				work.Instruction = instructions.Of(res)
			}
			wk.submittedKey = in.PreparedKey
			out, err := prov.Submit(wk.ctx, work, prepared)
			if work, ok = wk.submitted(work, prov, out, err); !ok {
				return work, false
			}
			continue
		}
		if work.Payout != nil && work.Payout.Status == ledger.PayoutPending {
			// Sent before, by a leader that did not live to record the
			// answer: the status will tell.
			if work, ok = wk.markProcessing(work, "", "Submitted to the provider; awaiting its answer"); !ok {
				return work, false
			}
			continue
		}

		// 3. Ask where it stands.
		out, err := prov.Status(wk.ctx, work, prepared)
		switch {
		case errors.Is(err, ErrRailNotFound) && !in.SendOnce:
			// Never received: the same request again is the way on.
			wk.submittedKey = ""
			continue
		case err != nil:
			wk.deps.logger.Debug("status check failed", "provider", prov.Name(), "id", in.ID, "err", err)
			if !wk.waitRetry(err) {
				return work, false
			}
			continue
		}
		wk.delay = 0
		if work, ok = wk.record(work, out); !ok {
			return work, false
		}
		if out.Replacement != nil {
			continue // committed by record: the next pass sends it
		}
		if out.Final {
			if work, ok = wk.settle(work, out.Completed, out.Message); !ok {
				return work, false
			}
			continue
		}
		if !wk.sleepOrWake(checkAfter(out)) {
			return work, false
		}
	}
	return work, false
}

// prepare has the adapter prepare work's instruction and commits it; a
// definite rejection fails the payout or collection.
func (wk *worker) prepare(work Work, prov Provider) (Work, bool) {
	if !wk.awaitRestored() {
		return work, false
	}
	prep, err := prov.Prepare(wk.ctx, work)
	switch {
	case errors.Is(err, ErrRailRejected):
		return wk.settle(work, false, railMessage(err))
	case err != nil:
		wk.deps.logger.Warn("preparing an instruction failed", "provider", prov.Name(), "id", work.ID(), "err", err)
		return work, wk.waitRetry(err)
	}
	cmd := &instructions.Prepare{At: wk.deps.now().UnixMilli(), ID: work.ID(), Provider: prov.Name(),
		Collection: work.Collection != nil, Key: prep.Key, Payload: string(prep.Payload), SendOnce: prov.SendOnce(work.Direction())}
	return wk.commit(work, cmd, func(res ledger.Result) Work {
		wk.delay = 0
		// Replayed: another leader's prepared value was committed first,
		// and is the one.
		work.Instruction = instructions.Of(res)
		return work
	})
}

func checkAfter(out ProviderOutcome) time.Duration {
	if out.CheckAfter > 0 {
		return max(out.CheckAfter, retryDelayMin)
	}
	return providerCheckDefault
}

func workFinal(w Work) bool {
	if w.Payout != nil {
		return w.Payout.Status.Terminal()
	}
	return w.Collection.Status.Terminal()
}

// submitted moves work by Submit's answer.
func (wk *worker) submitted(work Work, prov Provider, out ProviderOutcome, err error) (Work, bool) {
	in := work.Instruction
	switch {
	case err == nil:
		wk.delay = 0
		var ok bool
		if work, ok = wk.record(work, out); !ok {
			return work, false
		}
		if out.Final {
			return wk.settle(work, out.Completed, out.Message)
		}
		if work.Payout != nil && work.Payout.Status == ledger.PayoutPending {
			return wk.markProcessing(work, out.ProviderRef, "")
		}
		if !wk.sleepOrWake(checkAfter(out)) {
			return work, false
		}
		return work, true
	case errors.Is(err, ErrRailRejected):
		return wk.settle(work, false, railMessage(err))
	case errors.Is(err, ErrRailNothingDone):
		wk.deps.logger.Warn("the provider did nothing with an instruction; sending it again later", "provider", prov.Name(), "id", in.ID, "err", err)
		if in.SendOnce {
			res, ok := wk.propose(&instructions.MarkSent{At: wk.deps.now().UnixMilli(), ID: in.ID, Sent: false})
			if !ok {
				return work, false
			}
			if res.Err != nil {
				return wk.refused(work, &instructions.MarkSent{}, res.Err)
			}
			work.Instruction = instructions.Of(res)
		}
		return work, wk.waitRetry(err) && wk.resend(&work)
	case in.SendOnce || errors.Is(err, ErrRailTimeout):
		// It may have arrived: the status decides from here.
		wk.deps.logger.Warn("the provider's answer to a submission is unknown; reconciling", "provider", prov.Name(), "id", in.ID, "err", err)
		if work.Payout != nil && work.Payout.Status == ledger.PayoutPending {
			return wk.markProcessing(work, "", "The provider did not confirm the submission in time; reconciling")
		}
		return work, wk.sleepOrWake(providerCheckDefault)
	default:
		wk.deps.logger.Warn("submitting an instruction failed; retrying", "provider", prov.Name(), "id", in.ID, "err", err)
		return work, wk.waitRetry(err) && wk.resend(&work)
	}
}

// resend makes the next pass of the loop submit the instruction again.
func (wk *worker) resend(*Work) bool {
	wk.submittedKey = ""
	return true
}

// record commits what an outcome adds to the instruction: the provider's
// reference, a replacement of the prepared value.
func (wk *worker) record(work Work, out ProviderOutcome) (Work, bool) {
	in := work.Instruction
	if out.ProviderRef != "" && out.ProviderRef != in.ProviderRef {
		res, ok := wk.propose(&instructions.SetReference{At: wk.deps.now().UnixMilli(), ID: in.ID, ProviderRef: out.ProviderRef})
		if !ok {
			return work, false
		}
		if res.Err != nil {
			return wk.refused(work, &instructions.SetReference{}, res.Err)
		}
		work.Instruction = instructions.Of(res)
	}
	if r := out.Replacement; r != nil {
		res, ok := wk.propose(&instructions.Replace{At: wk.deps.now().UnixMilli(), ID: in.ID, Key: r.Key, Payload: string(r.Payload)})
		if !ok {
			return work, false
		}
		if res.Err != nil {
			return wk.refused(work, &instructions.Replace{}, res.Err)
		}
		work.Instruction = instructions.Of(res)
	}
	return work, true
}

// markProcessing marks a pending payout processing.
func (wk *worker) markProcessing(work Work, ref, message string) (Work, bool) {
	cmd := &ledger.MarkPayoutProcessing{At: wk.deps.now().UnixMilli(), ID: work.Payout.ID, ProviderReference: ref, Message: message}
	return wk.commit(work, cmd, func(res ledger.Result) Work {
		wk.parked = false
		work.Payout = res.Payout
		return work
	})
}

// settle ends the payout or collection.
func (wk *worker) settle(work Work, completed bool, message string) (Work, bool) {
	at := wk.deps.now().UnixMilli()
	var cmd ledger.Command
	if work.Payout != nil {
		cmd = &ledger.SettlePayout{At: at, ID: work.Payout.ID, Completed: completed, Message: message}
	} else {
		cmd = &ledger.SettleCollection{At: at, ID: work.Collection.ID, Completed: completed, Message: message}
	}
	return wk.commit(work, cmd, func(res ledger.Result) Work {
		wk.parked = false
		if res.Payout != nil {
			work.Payout = res.Payout
		} else {
			work.Collection = res.Collection
			if work.Collection.Status == ledger.CollectionCompleted {
				wk.followOrder(work.Collection.ID)
			}
		}
		return work
	})
}

// commit proposes cmd, a step of work, and returns the work applied makes
// of its result; a step the ledger refused goes to refused. ok is false
// when the worker must stop.
func (wk *worker) commit(work Work, cmd ledger.Command, applied func(ledger.Result) Work) (Work, bool) {
	res, ok := wk.propose(cmd)
	if !ok {
		return work, false
	}
	if res.Err != nil {
		return wk.refused(work, cmd, res.Err)
	}
	return applied(res), true
}

// refused handles a step the ledger refused: someone else moved the
// payout or collection (a callback, a previous leader's worker that
// committed late), and the state as it is now says what comes next; if
// nothing moved, the step itself was refused and waits a while. ok is
// false when the worker must stop.
func (wk *worker) refused(work Work, cmd ledger.Command, refusal *ledger.Error) (Work, bool) {
	st := wk.deps.state.Reader()
	next := Work{}
	moved := false
	if work.Payout != nil {
		p, found := st.Payout(work.Payout.ID)
		if !found {
			return work, false
		}
		moved = p.Status != work.Payout.Status
		next.Payout = &p
	} else {
		c, found := st.Collection(work.Collection.ID)
		if !found {
			return work, false
		}
		moved = c.Status != work.Collection.Status
		next.Collection = &c
	}
	if in, ok := instructions.Get(st, work.ID()); ok {
		next.Instruction = &in
		if work.Instruction == nil || *work.Instruction != in {
			moved = true
		}
	}
	if !moved && !wk.park("instruction", work.ID(), cmd, refusal) {
		return next, false
	}
	return next, true
}
