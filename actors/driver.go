package actors

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"payments/ledger"
)

// The rail driver moves payouts and collections through their rails. It runs
// on the leader only and works from committed state, like an outbox: every
// payout or collection that is not final is work, whoever created it and
// whichever leader was in charge before. A new leader scans the state and
// resumes everything in flight; the rails are idempotent by instruction id,
// so resubmitting after a crash is harmless.
//
// The driver actor owns the set of instructions being worked on. Each one is
// driven by a worker goroutine that talks to the rail (slow, remote I/O that
// must never block an actor's mailbox) and proposes the transitions; it
// reports back to the driver with a message when it stops.

type (
	// The tracked records are copies owned by their command's result;
	// nobody modifies them.
	trackPayout     struct{ payout *ledger.Payout }
	trackCollection struct{ collection *ledger.Collection }
	leadership      struct{ leading bool }
	rescanTick      struct{}
	workerDone      struct {
		id   string
		term uint64
	}
)

const (
	driverWorkersMax = 8192            // instructions driven at once
	driverRescan     = 5 * time.Second // how often to look for orphaned work
	retryDelayMin    = 50 * time.Millisecond
	retryDelayMax    = 30 * time.Second
)

type driverActor struct {
	deps    *deps
	leading bool
	term    uint64 // counts leadership gains; workers of an old term are ignored
	ctx     context.Context
	cancel  context.CancelFunc
	active  map[string]struct{}
	queue   []any // *trackPayout or *trackCollection waiting for a worker
	running int
	stopped bool
}

func newDriverActor(d *deps) *driverActor {
	return &driverActor{deps: d, active: make(map[string]struct{})}
}

func (dr *driverActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		dr.scheduleRescan(ctx)
	case *actor.Stopping:
		dr.stopped = true
		dr.endTerm()
	case *leadership:
		if m.leading == dr.leading {
			return
		}
		dr.endTerm()
		dr.leading = m.leading
		if m.leading {
			dr.term++
			dr.ctx, dr.cancel = context.WithCancel(context.Background())
			dr.rescan(ctx)
		}
	case *rescanTick:
		if dr.stopped {
			return
		}
		dr.rescan(ctx)
		dr.scheduleRescan(ctx)
	case *trackPayout:
		dr.track(ctx, m.payout.ID, m)
	case *trackCollection:
		dr.track(ctx, m.collection.ID, m)
	case *workerDone:
		if m.term != dr.term {
			return
		}
		dr.running--
		delete(dr.active, m.id)
		for dr.running < driverWorkersMax && len(dr.queue) > 0 {
			next := dr.queue[0]
			dr.queue = dr.queue[1:]
			dr.start(ctx, next)
		}
	}
}

func (dr *driverActor) endTerm() {
	if dr.cancel != nil {
		dr.cancel()
		dr.cancel = nil
	}
	dr.leading = false
	dr.active = make(map[string]struct{})
	dr.queue = nil
	dr.running = 0
}

func (dr *driverActor) scheduleRescan(ctx actor.Context) {
	self, root := ctx.Self(), dr.deps.root
	time.AfterFunc(driverRescan, func() { root.Send(self, &rescanTick{}) })
}

// rescan tracks every open payout and collection the driver is not working
// on: everything after a leader change, and anything a full queue dropped.
func (dr *driverActor) rescan(ctx actor.Context) {
	if !dr.leading {
		return
	}
	var payouts []ledger.Payout
	var collections []ledger.Collection
	st := dr.deps.state.RLockState()
	payouts = st.OpenPayouts()
	collections = st.OpenCollections()
	dr.deps.state.RUnlockState()
	for i := range payouts {
		dr.track(ctx, payouts[i].ID, &trackPayout{&payouts[i]})
	}
	for i := range collections {
		dr.track(ctx, collections[i].ID, &trackCollection{&collections[i]})
	}
}

func (dr *driverActor) track(ctx actor.Context, id string, work any) {
	if !dr.leading {
		return
	}
	if _, ok := dr.active[id]; ok {
		return
	}
	dr.active[id] = struct{}{}
	if dr.running >= driverWorkersMax {
		if len(dr.queue) < 4*driverWorkersMax {
			dr.queue = append(dr.queue, work)
		} else {
			delete(dr.active, id) // the next rescan picks it up
		}
		return
	}
	dr.start(ctx, work)
}

func (dr *driverActor) start(ctx actor.Context, work any) {
	dr.running++
	w := &worker{deps: dr.deps, ctx: dr.ctx}
	self, root, term := ctx.Self(), dr.deps.root, dr.term
	go func() {
		var id string
		switch m := work.(type) {
		case *trackPayout:
			id = m.payout.ID
			w.drivePayout(*m.payout)
		case *trackCollection:
			id = m.collection.ID
			w.driveCollection(*m.collection)
		}
		root.Send(self, &workerDone{id: id, term: term})
	}()
}

// worker drives one instruction until it is final, the term ends, or the
// log refuses its proposals.
type worker struct {
	deps  *deps
	ctx   context.Context
	delay time.Duration
}

// backoff waits before retrying a failed step: exponential with jitter.
func (w *worker) backoff() bool {
	if w.delay == 0 {
		w.delay = retryDelayMin
	} else {
		w.delay = min(2*w.delay, retryDelayMax)
	}
	return w.sleep(w.delay/2 + rand.N(w.delay/2+1))
}

func (w *worker) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// propose commits a transition. ok is false when the worker must stop: the
// node lost leadership or the log is unavailable; the next leader resumes.
func (w *worker) propose(cmd ledger.Command) (ledger.Result, bool) {
	res, err := w.deps.proposer.ProposeWait(cmd)
	if err != nil {
		if !errors.Is(err, ErrOverloaded) {
			return res, false
		}
		if !w.backoff() {
			return res, false
		}
		return w.propose(cmd)
	}
	return res, true
}

func (w *worker) drivePayout(p ledger.Payout) {
	for w.ctx.Err() == nil {
		var cmd ledger.Command
		switch p.Status {
		case ledger.PayoutPending:
			ref, err := w.deps.rail.SubmitPayout(w.ctx, p)
			switch {
			case err == nil:
				cmd = &ledger.MarkPayoutProcessing{At: w.deps.now().UnixMilli(), ID: p.ID, ProviderReference: ref}
			case errors.Is(err, ErrRailTimeout):
				cmd = &ledger.MarkPayoutProcessing{At: w.deps.now().UnixMilli(), ID: p.ID,
					Message: "The rail did not confirm the submission in time; reconciling"}
			default:
				w.deps.logger.Warn("payout submission failed", "payout", p.ID, "err", err)
				if !w.backoff() {
					return
				}
				continue
			}
		case ledger.PayoutProcessing:
			out, err := w.deps.rail.PayoutOutcome(w.ctx, p)
			if err != nil {
				w.deps.logger.Warn("payout status check failed", "payout", p.ID, "err", err)
				if !w.backoff() {
					return
				}
				continue
			}
			if !out.Final {
				if !w.sleep(max(out.CheckAfter, retryDelayMin)) {
					return
				}
				continue
			}
			cmd = &ledger.SettlePayout{At: w.deps.now().UnixMilli(), ID: p.ID, Completed: out.Completed, Message: out.Message}
		default:
			return
		}
		res, ok := w.propose(cmd)
		if !ok {
			return
		}
		w.delay = 0
		if res.Err != nil {
			// Someone else moved the payout (a previous leader's worker
			// that committed late): continue from the state as it is.
			var found bool
			st := w.deps.state.RLockState()
			p, found = st.Payout(p.ID)
			w.deps.state.RUnlockState()
			if !found {
				return
			}
			continue
		}
		p = *res.Payout
	}
}

func (w *worker) driveCollection(c ledger.Collection) {
	started := false
	for w.ctx.Err() == nil && !c.Status.Terminal() {
		if !started {
			_, err := w.deps.rail.StartCollection(w.ctx, c)
			if err != nil && !errors.Is(err, ErrRailTimeout) {
				w.deps.logger.Warn("collection prompt failed", "collection", c.ID, "err", err)
				if !w.backoff() {
					return
				}
				continue
			}
			started = true
		}
		out, err := w.deps.rail.CollectionOutcome(w.ctx, c)
		if err != nil {
			w.deps.logger.Debug("collection status check failed", "collection", c.ID, "err", err)
			if !w.backoff() {
				return
			}
			continue
		}
		if !out.Final {
			if !w.sleep(max(out.CheckAfter, retryDelayMin)) {
				return
			}
			continue
		}
		res, ok := w.propose(&ledger.SettleCollection{At: w.deps.now().UnixMilli(), ID: c.ID, Completed: out.Completed, Message: out.Message})
		if !ok {
			return
		}
		w.delay = 0
		if res.Err != nil {
			var found bool
			st := w.deps.state.RLockState()
			c, found = st.Collection(c.ID)
			w.deps.state.RUnlockState()
			if !found {
				return
			}
			continue
		}
		c = *res.Collection
		if c.Status == ledger.CollectionCompleted {
			w.followOrder(c.ID)
		}
	}
}
