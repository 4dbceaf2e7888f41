package actors

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"payments/ledger"
)

// Config wires a System to the rest of the service.
type Config struct {
	Log    Replicator
	State  StateReader
	Rail   Rail
	Now    func() time.Time // the leader's clock; time.Now when nil
	Logger *slog.Logger

	// Clock times the rail driver's waits and retries, the expiry
	// ticker, and webhook retries unless Webhooks.Clock is set (default:
	// the system clock, read through Now).
	Clock Clock

	// IdleTimeout is how long an account actor lives without messages
	// (default two minutes).
	IdleTimeout time.Duration
	// InFlightMax bounds the write requests inside the actors at once; past
	// it, requests are refused with ErrOverloaded (default 16384). This is
	// the bound on every account actor's mailbox.
	InFlightMax int
	// CommitTimeout is how long a write waits for its command to be applied
	// before answering ErrOutcomeUnknown (default ten seconds).
	CommitTimeout time.Duration

	// Webhooks configures webhook delivery (webhooks.go).
	Webhooks WebhookConfig

	// Providers are the production deployment's provider instances
	// (providers.go): payouts and collections whose method one serves are
	// driven through it, its deposit feed is watched. Nil: every payout
	// and collection goes through Rail.
	Providers Providers
	// DepositPollInterval paces the deposit watchers (default
	// DepositPollIntervalDefault).
	DepositPollInterval time.Duration
}

// deps is what every actor of a System shares. It is immutable once built.
type deps struct {
	proposer    *Proposer
	state       StateReader
	rail        Rail
	providers   Providers     // nil without provider instances
	depositPoll time.Duration // deposits.go
	now         func() time.Time
	clock       Clock // Config.Clock
	logger      *slog.Logger
	root        *actor.RootContext
	driver      *actor.PID
	idleTimeout time.Duration
	// parked counts rail transitions the ledger refused and the driver
	// retried with backoff (driver.go).
	parked atomic.Uint64

	// What the metrics read (stats.go).
	mailboxes                                  mailboxCounter
	driverQueued, driverRunning, driverWaiting atomic.Int64 // the rail driver's, after each message
	webhooks                                   webhookCounters
}

// track hands a newly created payout or collection to the rail driver.
func (d *deps) track(p *ledger.Payout, c *ledger.Collection) {
	switch {
	case p != nil:
		d.root.Send(d.driver, &trackPayout{p})
	case c != nil:
		d.root.Send(d.driver, &trackCollection{collection: c})
	}
}

// System is the service's actors: the account actors behind their router,
// the rail driver, and the proposer they share. Its methods are safe for
// concurrent use; each write waits for its command to be applied.
type System struct {
	stopOnce      sync.Once
	actors        *actor.ActorSystem
	deps          *deps
	proposer      *Proposer
	admit         chan struct{}
	commitTimeout time.Duration
	timers        sync.Pool // *time.Timer, stopped

	// The routers of the per-resource actors.
	router *actor.PID // balance accounts (account.go)
	quotes *actor.PID // quotes (quote.go)
	orders *actor.PID // orders (order.go)

	expiry *expiryTicker // proposes Tick when a deadline passes (expiry.go)

	// Webhook delivery (webhooks.go); nil without a payload renderer.
	webhooks      *webhookEngine
	webhookPolicy WebhookURLPolicy
}

// Reply is the answer to a write. Err is set when the outcome is not a
// ledger result: ErrNotLeader, ErrOverloaded, ErrOutcomeUnknown. Otherwise
// Result says what happened (Result.Err for a rejection).
type Reply struct {
	Result ledger.Result
	Err    error
}

// Start builds and starts a System.
func Start(cfg Config) *System {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	clock := cfg.Clock
	if clock == nil {
		clock = systemClock{now}
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = accountIdleTimeout
	}
	if cfg.InFlightMax <= 0 {
		cfg.InFlightMax = 16384
	}
	if cfg.CommitTimeout <= 0 {
		cfg.CommitTimeout = 10 * time.Second
	}
	if cfg.DepositPollInterval <= 0 {
		cfg.DepositPollInterval = DepositPollIntervalDefault
	}
	as := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return logger.With("component", "actors")
	}))
	proposer := NewProposer(cfg.Log)
	d := &deps{
		proposer:    proposer,
		state:       cfg.State,
		rail:        cfg.Rail,
		providers:   cfg.Providers,
		depositPoll: cfg.DepositPollInterval,
		now:         now,
		clock:       clock,
		logger:      logger,
		root:        as.Root,
		idleTimeout: cfg.IdleTimeout,
	}
	d.driver = as.Root.Spawn(d.props(func() actor.Actor { return newDriverActor(d) }))
	router := as.Root.Spawn(d.props(func() actor.Actor {
		return &accountRouter{deps: d, children: make(routedChildren[accountKey])}
	}))
	orders := as.Root.Spawn(d.props(func() actor.Actor {
		return &orderRouter{deps: d, children: make(routedChildren[orderKey])}
	}))
	s := &System{
		actors:        as,
		deps:          d,
		router:        router,
		orders:        orders,
		proposer:      proposer,
		admit:         make(chan struct{}, cfg.InFlightMax),
		commitTimeout: cfg.CommitTimeout,
		webhookPolicy: cfg.Webhooks.Policy,
	}
	s.quotes = spawnQuoteRouter(as, d)
	s.expiry = startExpiryTicker(s, ExpiryInterval)
	if cfg.Webhooks.Payload != nil {
		s.webhooks = startWebhooks(d, as, cfg.Webhooks)
	}
	return s
}

// Stop stops the actors and the proposer. Writes still in flight are
// answered ErrNotLeader or ErrOutcomeUnknown.
func (s *System) Stop() {
	s.stopOnce.Do(func() {
		s.expiry.close()
		s.actors.Root.Stop(s.deps.driver)
		if s.webhooks != nil {
			s.actors.Root.Stop(s.webhooks.driver)
		}
		s.proposer.Stop()
		s.actors.Root.Stop(s.router)
		s.actors.Root.Stop(s.quotes)
		s.actors.Root.Stop(s.orders)
		s.actors.Shutdown()
	})
}

// FollowLeadership tells the System each time its node wins or loses the
// leadership (leadership carries the node's notices: raft.Node.Leadership),
// until stop is closed.
func (s *System) FollowLeadership(leadership <-chan bool, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case leading := <-leadership:
			s.SetLeading(leading)
		}
	}
}

// SetLeading tells the System whether this node leads the cluster (and has
// applied everything committed before its term). Only the leader drives
// rails.
func (s *System) SetLeading(leading bool) {
	s.actors.Root.Send(s.deps.driver, &leadership{leading: leading})
	s.expiry.leading.Store(leading)
	if s.webhooks != nil {
		s.actors.Root.Send(s.webhooks.driver, &whLeadership{leading: leading})
	}
}

// Reader returns the readers' view of the applied state; see StateReader.
func (s *System) Reader() *ledger.Reader { return s.deps.state.Reader() }

// stopOnClosedStore, deferred at the top of a goroutine of the node's own
// work, ends it quietly when a read found the state store closed: the node
// is shutting down. Any other panic goes on.
func stopOnClosedStore() {
	r := recover()
	if r == nil {
		return
	}
	if se, ok := r.(ledger.StoreError); ok && errors.Is(se, ledger.ErrStoreClosed) {
		return
	}
	panic(r)
}

// ParkedTransitions counts the rail transitions the ledger refused, which
// the driver retried after a backoff instead of at once.
func (s *System) ParkedTransitions() uint64 { return s.deps.parked.Load() }

// Now is the leader's clock.
func (s *System) Now() time.Time { return s.deps.now() }

// PayoutRequest is a validated request to create a payout.
type PayoutRequest struct {
	OrgID             string
	ExternalReference string
	// Attempt names the client's request: the id the node that received
	// it gave it, kept when a node relays it or sends it again to a new
	// leader. A payout that this very attempt created is answered as a
	// creation, not a replay. "" for none.
	Attempt    string
	Spec       ledger.PayoutSpec
	MethodType ledger.MethodType
	// Principal and Fee are the payout's price, in the debited currency:
	// it debits their sum. Principal is what is converted and delivered
	// (for a cross-currency payout, FX.FromAmount); for a payout fixed on
	// the from side, Spec.Amount is the whole debit, Principal + Fee.
	Principal ledger.Minor
	Fee       ledger.Minor
	// FX prices a cross-currency payout (debited from FX.FromCurrency,
	// delivered in Spec.Currency); nil for a same-currency payout. Spec's
	// amount is the one the caller gave, on its side.
	FX *FXPricing
	// Spend counts the payout against the key's caps (spend.go); nil
	// counts nothing.
	Spend *Spend
}

// FXPricing is a cross-currency payout's price at the current rate: both
// amounts and the all-in rate (units of the to currency per from unit).
type FXPricing struct {
	FromCurrency string
	FromAmount   ledger.Minor
	ToAmount     ledger.Minor
	Rate         string
}

// CreatePayout creates a payout, or returns the one its reference already
// names. It waits until the command is applied, at most CommitTimeout; past
// it the answer is ErrOutcomeUnknown, since the command may still apply.
func (s *System) CreatePayout(req PayoutRequest) Reply {
	return s.ask(func(reply chan<- Reply) accountMessage {
		// A payout debits the balance in its from currency: that
		// account's actor reserves the funds.
		m := &payoutRequest{
			key:        accountKey{req.OrgID, req.Spec.Currency},
			ref:        req.ExternalReference,
			attempt:    req.Attempt,
			spec:       req.Spec,
			methodType: req.MethodType,
			principal:  req.Principal,
			fee:        req.Fee,
			spend:      req.Spend,
			reply:      reply,
		}
		if req.FX != nil {
			fx := *req.FX
			m.key.currency, m.fx = fx.FromCurrency, &fx
		}
		return m
	})
}

// CollectionRequest is a validated request to create a collection.
type CollectionRequest struct {
	OrgID             string
	ExternalReference string
	Attempt           string // see PayoutRequest
	Spec              ledger.CollectionSpec
	MethodType        ledger.MethodType
	Fee               ledger.Minor // the operation priced it (actors/app)
}

// CreateCollection creates a collection; see CreatePayout.
func (s *System) CreateCollection(req CollectionRequest) Reply {
	return s.ask(func(reply chan<- Reply) accountMessage {
		return &collectionRequest{
			key:        accountKey{req.OrgID, req.Spec.Currency},
			ref:        req.ExternalReference,
			attempt:    req.Attempt,
			spec:       req.Spec,
			methodType: req.MethodType,
			fee:        req.Fee,
			reply:      reply,
		}
	})
}

// FundBalance credits a sandbox balance; see CreatePayout.
func (s *System) FundBalance(orgID, currency string, amount ledger.Minor, ref string) Reply {
	return s.ask(func(reply chan<- Reply) accountMessage {
		return &fundRequest{key: accountKey{orgID, currency}, ref: ref, amount: amount, reply: reply}
	})
}

func (s *System) ask(build func(chan<- Reply) accountMessage) Reply {
	return s.askVia(s.router, func(reply chan<- Reply) any { return build(reply) })
}

// askVia sends the message build makes to the router pid and waits for the
// reply, at most CommitTimeout.
func (s *System) askVia(pid *actor.PID, build func(chan<- Reply) any) Reply {
	select {
	case s.admit <- struct{}{}:
	default:
		return Reply{Err: ErrOverloaded}
	}
	reply := make(chan Reply, 1)
	s.actors.Root.Send(pid, build(reply))
	// A stopped timer from the pool: a request costs no timer allocation.
	// (Since Go 1.23 a stopped timer's channel holds no stale value.)
	t, _ := s.timers.Get().(*time.Timer)
	if t == nil {
		t = time.NewTimer(s.commitTimeout)
	} else {
		t.Reset(s.commitTimeout)
	}
	defer func() {
		t.Stop()
		s.timers.Put(t)
	}()
	select {
	case r := <-reply:
		<-s.admit
		return r
	case <-t.C:
		// The actor still answers into the buffered channel; hold the
		// admission until it does, so the bound stays true.
		go func() {
			<-reply
			<-s.admit
		}()
		return Reply{Err: ErrOutcomeUnknown}
	}
}

// Propose commits a command that no actor owns (organizations, keys) and
// waits for its result; see CreatePayout for ctx.
func (s *System) Propose(ctx context.Context, cmd ledger.Command) Reply {
	reply := make(chan Reply, 1)
	if err := s.proposer.Propose(cmd, func(r ledger.Result, err error) { reply <- Reply{r, err} }); err != nil {
		return Reply{Err: err}
	}
	select {
	case r := <-reply:
		return r
	case <-ctx.Done():
		return Reply{Err: ErrOutcomeUnknown}
	}
}
