package actors

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"payments/ledger"
)

// The rail driver moves payouts and collections through their rails. It runs
// on the leader only and works from committed state, like an outbox: every
// payout or collection that is not final is work, whoever created it and
// whichever leader was in charge before. A new leader walks the open ones
// and resumes them all. The sandbox's rail is idempotent by instruction id,
// so resubmitting after a crash is harmless; a configured provider
// instance is driven from the instruction committed before its first
// request (driver_provider.go), which says exactly what a new leader may
// send again. Collections made by deposits are the deposit watcher's
// (deposits.go), not the driver's.
//
// The driver actor owns the set of instructions being worked on. Each one is
// driven by a worker goroutine that talks to the rail (slow, remote I/O that
// must never block an actor's mailbox) and proposes the transitions; it
// reports back to the driver with a message when it stops. Its bounds:
// driverWorkersMax workers, and a queue of 4×driverWorkersMax behind them.
// The walk of the open instructions goes a chunk at a time and pauses
// while the queue has no room for a chunk, so a backlog of any size is
// taken up as capacity frees, never scanned twice; work dropped by a full
// queue from outside the walk is picked up by a new walk, and a worker
// that stops before its instruction is final (the log refused a proposal)
// hands it back to be tried again.
//
// A worker holds its slot only while it talks to the rail or proposes. An
// instruction whose outcome is not due yet (a settlement the rail reports
// in half a second, a payer who has minutes to approve) leaves its worker
// and waits on a timer, still counted active, then takes the next free
// worker: the slots bound the rail's I/O in flight, not the instructions
// waiting, so the rate the driver settles at does not fall behind the rate
// payouts are created at (with a worker asleep through each settlement it
// was capped at driverWorkersMax per settlement time, and a node taking
// more grew its open set, and its memory, without bound).

type (
	// The tracked records are copies owned by their command's result;
	// nobody modifies them.
	trackPayout     struct{ payout *ledger.Payout }
	trackCollection struct {
		collection *ledger.Collection
		started    bool // the payer was prompted: do not prompt again
	}
	leadership struct{ leading bool }
	rescanTick struct{}
	// walkStep takes the next chunk of the walk of open instructions.
	walkStep   struct{ term uint64 }
	workerDone struct {
		id    string
		term  uint64
		final bool // the instruction is final; else work is its latest copy
		work  any
		// wait, when not final, is how long the outcome is not due: the
		// instruction waits that long, still active, then resumes.
		wait time.Duration
	}
	retrack struct {
		term uint64
		id   string
		work any
	}
	// resume is an instruction back from waiting for its outcome.
	resume struct {
		term uint64
		work any
	}
)

const (
	driverWorkersMax = 8192 // instructions driven at once
	driverQueueMax   = 4 * driverWorkersMax
	driverWalkChunk  = 512             // open instructions read per step of a walk
	driverRescan     = 5 * time.Second // how often to look for dropped work
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
	waiting int // instructions waiting for their outcome, off the workers
	stopped bool

	// The walk of the open instructions: payouts, then collections.
	walking    bool
	walkPaused bool // waiting for room in the queue
	walkColls  bool // past the payouts
	walkCursor ledger.OpenCursor
	dropped    bool // work was dropped outside a walk: walk again

	// restored is closed once the term's providers were given their
	// instructions in flight (driver_provider.go).
	restored chan struct{}
	// wakes are the running provider workers' wake-up channels, by id.
	wakes map[string]chan struct{}
}

// publish leaves the backlog where the metrics read it.
func (dr *driverActor) publish() {
	dr.deps.driverQueued.Store(int64(len(dr.queue)))
	dr.deps.driverRunning.Store(int64(dr.running))
	dr.deps.driverWaiting.Store(int64(dr.waiting))
}

func newDriverActor(d *deps) *driverActor {
	return &driverActor{deps: d, active: make(map[string]struct{}), wakes: make(map[string]chan struct{})}
}

func (dr *driverActor) Receive(ctx actor.Context) {
	defer dr.publish()
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
			dr.restored = make(chan struct{})
			go dr.deps.restoreProviders(dr.ctx, dr.restored)
			dr.deps.startDepositWatchers(dr.ctx)
			dr.startWalk(ctx)
		}
	case *rescanTick:
		if dr.stopped {
			return
		}
		if dr.leading && dr.dropped && !dr.walking {
			dr.dropped = false
			dr.startWalk(ctx)
		}
		dr.scheduleRescan(ctx)
	case *walkStep:
		if m.term == dr.term && dr.leading && dr.walking {
			dr.walkChunk(ctx)
		}
	case *trackPayout:
		dr.track(ctx, m.payout.ID, m)
	case *trackCollection:
		dr.track(ctx, m.collection.ID, m)
	case *retrack:
		if m.term == dr.term {
			dr.track(ctx, m.id, m.work)
		}
	case *checkNow:
		dr.checkNow(ctx, m.id)
	case *resume:
		if m.term != dr.term {
			return
		}
		dr.waiting--
		if dr.running < driverWorkersMax {
			dr.start(ctx, m.work)
		} else {
			dr.queue = append(dr.queue, m.work) // it was counted active: it holds its place
		}
	case *workerDone:
		if m.term != dr.term {
			return
		}
		dr.running--
		delete(dr.wakes, m.id)
		if !m.final && m.wait > 0 && dr.leading {
			// The outcome is not due: wait off the workers, still active.
			dr.waiting++
			self, root, r := ctx.Self(), dr.deps.root, &resume{term: m.term, work: m.work}
			dr.deps.clock.AfterFunc(m.wait, func() { root.Send(self, r) })
		} else {
			delete(dr.active, m.id)
		}
		if !m.final && m.wait == 0 && dr.leading {
			// The log refused a proposal while this node still leads
			// (an outcome it could not learn): try again later.
			self, root, r := ctx.Self(), dr.deps.root, &retrack{term: m.term, id: m.id, work: m.work}
			dr.deps.clock.AfterFunc(retryDelayMax/10, func() { root.Send(self, r) })
		}
		for dr.running < driverWorkersMax && len(dr.queue) > 0 {
			next := dr.queue[0]
			dr.queue = dr.queue[1:]
			dr.start(ctx, next)
		}
		if dr.walkPaused && dr.room() {
			dr.walkPaused = false
			ctx.Send(ctx.Self(), &walkStep{term: dr.term})
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
	dr.wakes = make(map[string]chan struct{})
	dr.queue = nil
	dr.running, dr.waiting = 0, 0
	dr.walking, dr.walkPaused = false, false
}

func (dr *driverActor) scheduleRescan(ctx actor.Context) {
	self, root := ctx.Self(), dr.deps.root
	dr.deps.clock.AfterFunc(driverRescan, func() { root.Send(self, &rescanTick{}) })
}

// startWalk begins a walk of every open payout and collection: after a
// leader change, and after work was dropped.
func (dr *driverActor) startWalk(ctx actor.Context) {
	dr.walking, dr.walkPaused, dr.walkColls, dr.walkCursor = true, false, false, ""
	ctx.Send(ctx.Self(), &walkStep{term: dr.term})
}

// room reports whether a whole chunk of the walk fits in the queue.
func (dr *driverActor) room() bool { return len(dr.queue)+driverWalkChunk <= driverQueueMax }

// walkChunk tracks the next chunk of open instructions, then asks for the
// next step, or pauses until the queue has room.
func (dr *driverActor) walkChunk(ctx actor.Context) {
	if !dr.room() {
		dr.walkPaused = true
		return
	}
	st := dr.deps.state.Reader()
	var done bool
	if !dr.walkColls {
		var payouts []ledger.Payout
		payouts, dr.walkCursor, done = st.OpenPayouts(dr.walkCursor, driverWalkChunk)
		for i := range payouts {
			dr.track(ctx, payouts[i].ID, &trackPayout{&payouts[i]})
		}
		if done {
			dr.walkColls, dr.walkCursor, done = true, "", false
		}
	} else {
		var collections []ledger.Collection
		collections, dr.walkCursor, done = st.OpenCollections(dr.walkCursor, driverWalkChunk)
		for i := range collections {
			if collections[i].Deposit == nil { // deposits are the watcher's
				dr.track(ctx, collections[i].ID, &trackCollection{collection: &collections[i]})
			}
		}
	}
	if done {
		dr.walking = false
		return
	}
	ctx.Send(ctx.Self(), &walkStep{term: dr.term})
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
		if len(dr.queue) < driverQueueMax {
			dr.queue = append(dr.queue, work)
		} else {
			delete(dr.active, id)
			dr.dropped = true // a walk picks it up
		}
		return
	}
	dr.start(ctx, work)
}

func (dr *driverActor) start(ctx actor.Context, work any) {
	dr.running++
	w := &worker{deps: dr.deps, ctx: dr.ctx, restored: dr.restored}
	var pw Work
	started := false // a collection's payer was prompted
	switch m := work.(type) {
	case *trackPayout:
		pw.Payout = m.payout
	case *trackCollection:
		pw.Collection, started = m.collection, m.started
	}
	prov, viaProvider := dr.deps.providerFor(pw)
	if viaProvider {
		wake := make(chan struct{}, 1)
		dr.wakes[pw.ID()] = wake
		w.wake = wake
	}
	self, root, term := ctx.Self(), dr.deps.root, dr.term
	go func() {
		defer stopOnClosedStore()
		done := &workerDone{term: term, final: true, id: pw.ID()}
		switch {
		case viaProvider:
			if latest, final := w.driveProvider(pw, prov); !final {
				done.final = false
				if latest.Payout != nil {
					done.work = &trackPayout{latest.Payout}
				} else {
					done.work = &trackCollection{collection: latest.Collection}
				}
			}
		case pw.Payout != nil:
			if p, final := w.drivePayout(*pw.Payout); !final {
				done.final, done.work, done.wait = false, &trackPayout{payout: &p}, w.outcomeDue
			}
		default:
			if c, final := w.driveCollection(*pw.Collection, started); !final {
				done.final, done.work, done.wait = false, &trackCollection{collection: &c, started: true}, w.outcomeDue
			}
		}
		root.Send(self, done)
	}()
}

// checkNow wakes the worker of id for a status check, or starts one if
// none runs (it is open and this node leads).
func (dr *driverActor) checkNow(ctx actor.Context, id string) {
	if wake, ok := dr.wakes[id]; ok {
		select {
		case wake <- struct{}{}:
		default:
		}
		return
	}
	if !dr.leading {
		return
	}
	st := dr.deps.state.Reader()
	if p, ok := st.Payout(id); ok && !p.Status.Terminal() {
		dr.track(ctx, id, &trackPayout{&p})
	} else if c, ok := st.Collection(id); ok && !c.Status.Terminal() && c.Deposit == nil {
		dr.track(ctx, id, &trackCollection{collection: &c})
	}
}

// worker drives one instruction until it is final, the term ends, or the
// log refuses its proposals.
type worker struct {
	deps   *deps
	ctx    context.Context
	delay  time.Duration
	parked bool // a refusal was logged

	// Of provider workers (driver_provider.go): closed once the term's
	// restore is done; a callback's prompt for a status check; the
	// prepared key this worker submitted last.
	restored     <-chan struct{}
	wake         <-chan struct{}
	submittedKey string

	// outcomeDue is set when the worker stops because its instruction's
	// outcome is not due for this long (the instruction is not final).
	outcomeDue time.Duration
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

func (w *worker) sleep(d time.Duration) bool { return Sleep(w.ctx, w.deps.clock, d) }

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

// park waits before proposing again a transition that the ledger refused
// while nothing else moved the instruction (a refund that cannot book, say):
// proposing it at once would loop through the log as fast as it commits.
// The first refusal of a worker is logged, every one is counted.
func (w *worker) park(kind, id string, cmd ledger.Command, refusal *ledger.Error) bool {
	w.deps.parked.Add(1)
	if !w.parked {
		w.parked = true
		w.deps.logger.Warn("the ledger refused a rail transition; retrying with backoff",
			kind, id, "command", fmt.Sprintf("%T", cmd), "code", refusal.Code, "message", refusal.Message)
	}
	return w.backoff()
}

// drivePayout moves p until it is final (final is true) or the worker must
// stop: the term ended, or the log refused a proposal; p is then the
// latest copy the worker has.
func (w *worker) drivePayout(p ledger.Payout) (latest ledger.Payout, final bool) {
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
					return p, false
				}
				continue
			}
		case ledger.PayoutProcessing:
			out, err := w.deps.rail.PayoutOutcome(w.ctx, p)
			if settle, retry := w.settlement(out, err, w.deps.logger.Warn, "payout status check failed", "payout", p.ID); retry {
				continue
			} else if !settle {
				return p, false
			}
			cmd = &ledger.SettlePayout{At: w.deps.now().UnixMilli(), ID: p.ID, Completed: out.Completed, Message: out.Message}
		default:
			return p, true
		}
		var stop bool
		if p, _, stop, final = proposeStep(w, "payout", p, p.ID, cmd,
			func(p ledger.Payout) ledger.PayoutStatus { return p.Status },
			func(id string) (ledger.Payout, bool) { return w.deps.state.Reader().Payout(id) },
			func(res ledger.Result) ledger.Payout { return *res.Payout }); stop {
			return p, final
		}
	}
	return p, false
}

// settlement judges the rail's answer to an outcome check of kind id:
// settle says the outcome is final and can be proposed; retry that the
// check failed (logged with log and msg) and the drive tries again after
// a backoff; neither, that the drive stops here for now.
func (w *worker) settlement(out RailOutcome, err error, log func(string, ...any), msg, kind, id string) (settle, retry bool) {
	if err != nil {
		log(msg, kind, id, "err", err)
		return false, w.backoff()
	}
	if !out.Final {
		w.outcomeDue = max(out.CheckAfter, retryDelayMin)
		return false, false
	}
	return true, false
}

// proposeStep proposes cmd, a step of v (a payout or a collection, kind
// and id name it), and says what the drive goes on from: applied when the
// step committed, stop (with final) when the drive ends here.
func proposeStep[T any, S comparable](w *worker, kind string, v T, id string, cmd ledger.Command,
	status func(T) S, read func(string) (T, bool), result func(ledger.Result) T) (next T, applied, stop, final bool) {
	res, ok := w.propose(cmd)
	if !ok {
		return v, false, true, false
	}
	if res.Err != nil {
		// Someone else may have moved it (a previous leader's worker that
		// committed late): continue from the state as it is; if nothing
		// moved it, the ledger refused the step itself.
		now, found := read(id)
		if !found {
			return v, false, true, true
		}
		if status(now) == status(v) && !w.park(kind, id, cmd, res.Err) {
			return now, false, true, false
		}
		return now, false, false, false
	}
	w.delay, w.parked = 0, false
	return result(res), true, false, false
}

// driveCollection moves c until it is final; see drivePayout.
// started says the payer was prompted already: a collection back from
// waiting for its outcome is not prompted again.
func (w *worker) driveCollection(c ledger.Collection, started bool) (latest ledger.Collection, final bool) {
	for w.ctx.Err() == nil && !c.Status.Terminal() {
		if !started {
			_, err := w.deps.rail.StartCollection(w.ctx, c)
			if err != nil && !errors.Is(err, ErrRailTimeout) {
				w.deps.logger.Warn("collection prompt failed", "collection", c.ID, "err", err)
				if !w.backoff() {
					return c, false
				}
				continue
			}
			started = true
		}
		out, err := w.deps.rail.CollectionOutcome(w.ctx, c)
		if settle, retry := w.settlement(out, err, w.deps.logger.Debug, "collection status check failed", "collection", c.ID); retry {
			continue
		} else if !settle {
			return c, false
		}
		cmd := &ledger.SettleCollection{At: w.deps.now().UnixMilli(), ID: c.ID, Completed: out.Completed, Message: out.Message}
		var applied, stop bool
		if c, applied, stop, final = proposeStep(w, "collection", c, c.ID, cmd,
			func(c ledger.Collection) ledger.CollectionStatus { return c.Status },
			func(id string) (ledger.Collection, bool) { return w.deps.state.Reader().Collection(id) },
			func(res ledger.Result) ledger.Collection { return *res.Collection }); stop {
			return c, final
		}
		if applied && c.Status == ledger.CollectionCompleted {
			w.followOrder(c.ID)
		}
	}
	return c, c.Status.Terminal()
}
