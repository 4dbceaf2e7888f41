package rails

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"payments/actors"
	"payments/ledger"
	"payments/rails/provider"
)

// Providers is the bridge between the actors and the configured provider
// instances: it implements actors.Providers over a provider.Registry,
// turning the ledger's payouts and collections into the adapters'
// instructions and the adapters' outcomes and typed errors into the
// actors'. It holds no state of its own; the adapters are safe for
// concurrent use, and so is it.
type Providers struct {
	reg       *provider.Registry
	catalogue *Catalogue
	all       []actors.Provider
	byName    map[string]*instance
}

var _ actors.Providers = (*Providers)(nil)

// NewProviders bridges reg; methods are looked up in cat (nil: the
// default catalogue) to name a deposit's chain.
func NewProviders(reg *provider.Registry, cat *Catalogue) *Providers {
	if cat == nil {
		cat = DefaultCatalogue()
	}
	ps := &Providers{reg: reg, catalogue: cat, byName: map[string]*instance{}}
	for _, in := range reg.Instances() {
		i := &instance{in: in, catalogue: cat}
		ps.all = append(ps.all, i)
		ps.byName[in.Name] = i
	}
	return ps
}

// Offered is the catalogue c restricted to what the registry's instances
// serve (Catalogue.Restrict): what a production deployment offers.
func (ps *Providers) Offered(c *Catalogue) *Catalogue {
	return c.Restrict(func(code string, dir Direction) bool {
		switch dir {
		case Payout:
			return ps.reg.Serves(code, provider.Payouts)
		case Collection:
			return ps.reg.Serves(code, provider.Collections)
		case Deposit:
			return ps.reg.Serves(code, provider.Deposits)
		}
		return false
	})
}

// Registry is the registry the bridge serves.
func (ps *Providers) Registry() *provider.Registry { return ps.reg }

func (ps *Providers) For(method string, d actors.Direction) (actors.Provider, bool) {
	in, ok := ps.reg.For(method, direction(d))
	if !ok {
		return nil, false
	}
	return ps.byName[in.Name], true
}

func (ps *Providers) Named(name string) (actors.Provider, bool) {
	i, ok := ps.byName[name]
	return i, ok
}

func (ps *Providers) All() []actors.Provider { return ps.all }

// Serves reports whether some instance serves method in direction d.
func (ps *Providers) Serves(method string, d actors.Direction) bool {
	return ps.reg.Serves(method, direction(d))
}

func direction(d actors.Direction) provider.Direction {
	var out provider.Direction
	if d&actors.DirectionPayouts != 0 {
		out |= provider.Payouts
	}
	if d&actors.DirectionCollections != 0 {
		out |= provider.Collections
	}
	if d&actors.DirectionDeposits != 0 {
		out |= provider.Deposits
	}
	return out
}

// instance is one configured provider instance, as the actors see it.
type instance struct {
	in        *provider.Instance
	catalogue *Catalogue
}

func (i *instance) Name() string { return i.in.Name }

func (i *instance) Serves(method string, d actors.Direction) bool {
	return i.in.Serves(method, direction(d))
}

func (i *instance) SendOnce(d actors.Direction) bool {
	so, ok := i.in.Adapter.(provider.SendOnce)
	return ok && so.SendOnce(direction(d))
}

// instruction is work as the adapter takes it.
func instruction(w actors.Work) provider.Instruction {
	var in provider.Instruction
	if p := w.Payout; p != nil {
		in = provider.Instruction{ID: p.ID, Method: p.Spec.Method, Currency: p.Spec.Currency, AmountMinor: int64(p.Spec.Amount),
			AccountNumber: p.Spec.AccountNumber, Address: p.Spec.Address, Tag: p.Spec.Tag, Narration: p.Spec.Narration}
	} else {
		c := w.Collection
		in = provider.Instruction{ID: c.ID, Method: c.Spec.Method, Currency: c.Spec.Currency, AmountMinor: int64(c.Spec.Amount),
			AccountNumber: c.Spec.PayerNumber, Narration: c.Spec.Narration}
	}
	if cur, ok := ledger.LookupCurrency(in.Currency); ok {
		in.Exponent = cur.Decimals
	}
	if w.Instruction != nil {
		in.ProviderRef = w.Instruction.ProviderRef
	}
	return in
}

// moneyOps are an adapter's operations on one direction of money: a
// Payouter's or a Collector's.
type moneyOps struct {
	prepare        func(context.Context, provider.Instruction) (provider.Prepared, error)
	submit, status func(context.Context, provider.Instruction, provider.Prepared) (provider.Outcome, error)
}

// moneyOps returns the adapter's operations for w's direction, or the
// error that the instance does not serve it.
func (i *instance) moneyOps(w actors.Work) (moneyOps, error) {
	if w.Payout != nil {
		a, ok := i.in.Adapter.(provider.Payouter)
		if !ok {
			return moneyOps{}, notServed(i.in.Name, "payouts")
		}
		return moneyOps{a.PreparePayout, a.SubmitPayout, a.PayoutStatus}, nil
	}
	a, ok := i.in.Adapter.(provider.Collector)
	if !ok {
		return moneyOps{}, notServed(i.in.Name, "collections")
	}
	return moneyOps{a.PrepareCollection, a.SubmitCollection, a.CollectionStatus}, nil
}

func (i *instance) Prepare(ctx context.Context, w actors.Work) (actors.Prepared, error) {
	ops, err := i.moneyOps(w)
	if err != nil {
		return actors.Prepared{}, err
	}
	p, err := ops.prepare(ctx, instruction(w))
	if err != nil {
		return actors.Prepared{}, railError(err)
	}
	return actors.Prepared{Key: p.Key, Payload: p.Payload}, nil
}

func (i *instance) Submit(ctx context.Context, w actors.Work, p actors.Prepared) (actors.ProviderOutcome, error) {
	return i.call(ctx, w, p, false)
}

func (i *instance) Status(ctx context.Context, w actors.Work, p actors.Prepared) (actors.ProviderOutcome, error) {
	return i.call(ctx, w, p, true)
}

func (i *instance) call(ctx context.Context, w actors.Work, p actors.Prepared, status bool) (actors.ProviderOutcome, error) {
	ops, err := i.moneyOps(w)
	if err != nil {
		return actors.ProviderOutcome{}, err
	}
	do := ops.submit
	if status {
		do = ops.status
	}
	out, err := do(ctx, instruction(w), provider.Prepared{Key: p.Key, Payload: p.Payload})
	if err != nil {
		return actors.ProviderOutcome{}, railError(err)
	}
	return outcome(out), nil
}

func outcome(o provider.Outcome) actors.ProviderOutcome {
	out := actors.ProviderOutcome{
		RailOutcome: actors.RailOutcome{Final: o.State.Final(), Completed: o.State == provider.StateCompleted,
			Message: o.Message, CheckAfter: o.CheckAfter},
		ProviderRef: o.ProviderRef,
	}
	if r := o.Replacement; r != nil {
		out.Replacement = &actors.Prepared{Key: r.Key, Payload: r.Payload}
	}
	return out
}

func (i *instance) Restore(ctx context.Context, inFlight []actors.Prepared) error {
	r, ok := i.in.Adapter.(provider.Restorer)
	if !ok || len(inFlight) == 0 {
		return nil
	}
	ps := make([]provider.Prepared, len(inFlight))
	for j, p := range inFlight {
		ps[j] = provider.Prepared{Key: p.Key, Payload: p.Payload}
	}
	if err := r.Restore(ctx, ps); err != nil {
		return railError(err)
	}
	return nil
}

func (i *instance) HandleCallback(ctx context.Context, cb actors.Callback) (actors.Notification, error) {
	h, ok := i.in.Adapter.(provider.CallbackHandler)
	if !ok {
		return actors.Notification{}, actors.ErrNoCallbacks
	}
	n, err := h.HandleCallback(ctx, provider.Callback{Header: cb.Header, Body: cb.Body, RemoteAddr: cb.RemoteAddr, Query: cb.Query})
	if err != nil {
		// Every refusal of an adapter is the caller's mistake (or a
		// forgery): read nothing into it.
		return actors.Notification{}, &actors.RailError{Kind: actors.ErrBadCallback, Err: err}
	}
	return actors.Notification{Key: n.Key, Collection: n.Collection, Authenticated: n.Authenticated, Outcome: outcome(n.Outcome)}, nil
}

func (i *instance) HasDepositFeed() bool {
	_, ok := i.in.Adapter.(provider.DepositFeed)
	return ok && len(i.depositMethods()) > 0
}

func (i *instance) depositMethods() []string {
	var out []string
	for _, m := range i.in.Methods() {
		if i.in.Serves(m, provider.Deposits) {
			out = append(out, m)
		}
	}
	return out
}

func (i *instance) PollDeposits(ctx context.Context, cursor []byte) ([]actors.FeedDeposit, []byte, error) {
	f, ok := i.in.Adapter.(provider.DepositFeed)
	if !ok {
		return nil, cursor, notServed(i.in.Name, "deposits")
	}
	deps, next, err := f.PollDeposits(ctx, cursor)
	if err != nil {
		return nil, nil, railError(err)
	}
	out := make([]actors.FeedDeposit, 0, len(deps))
	for _, d := range deps {
		m, _ := i.catalogue.Method(d.Method)
		fees, ok := m.Fees(Deposit)
		if !ok {
			// The catalogue does not parse without one for a method
			// that takes deposits: a feed naming another is broken.
			return nil, nil, fmt.Errorf("rails: %s reported a deposit by %q, which takes no deposits", i.in.Name, d.Method)
		}
		amount := ledger.Minor(d.AmountMinor)
		out = append(out, actors.FeedDeposit{
			Identity: d.Identity, Method: d.Method, Chain: m.Chain, Currency: d.Currency, Amount: amount, Fee: fees.Fee(amount),
			To: d.To, Hash: transferHash(d.Identity), Confirmations: d.Confirmations, Required: d.Required, Dropped: d.Dropped,
		})
	}
	return out, next, nil
}

// transferHash is the transaction hash in a chain transfer's identity
// ("<chain>:<tx hash>:<log index>"), or the identity itself.
func transferHash(identity string) string {
	parts := strings.Split(identity, ":")
	if len(parts) == 3 {
		return parts[1]
	}
	return identity
}

func (i *instance) NoteDepositIndexes(n uint32) {
	p, ok := i.in.Adapter.(provider.DepositProvisioner)
	if !ok || n == 0 {
		return
	}
	// Provisioning the highest allocated index again tells the feed every
	// index below it is issued; the details are derived, nothing is sent.
	p.ProvisionDeposit(context.Background(), provider.DepositRequest{Index: n - 1})
}

func (i *instance) ProvisionDeposit(ctx context.Context, req actors.DepositRequest) (string, string, error) {
	p, ok := i.in.Adapter.(provider.DepositProvisioner)
	if !ok {
		return "", "", notServed(i.in.Name, "deposits")
	}
	d, err := p.ProvisionDeposit(ctx, provider.DepositRequest{Owner: req.Owner, Index: req.Index, Method: req.Method, Currency: req.Currency})
	if err != nil {
		return "", "", railError(err)
	}
	return d.Address, d.Tag, nil
}

func notServed(name, what string) error {
	return &actors.RailError{Kind: actors.ErrRailRejected, Message: "provider " + name + " does not do " + what}
}

// railError is an adapter's error as the actors classify it.
func railError(err error) error {
	kind := actors.ErrRailTransient
	switch {
	case errors.Is(err, provider.ErrRejected):
		kind = actors.ErrRailRejected
	case errors.Is(err, provider.ErrUnknownOutcome):
		kind = actors.ErrRailTimeout
	case errors.Is(err, provider.ErrNotFound):
		kind = actors.ErrRailNotFound
	case errors.Is(err, provider.ErrUnavailable), errors.Is(err, provider.ErrRateLimited), errors.Is(err, provider.ErrAuthentication):
		kind = actors.ErrRailNothingDone
	}
	var pe *provider.Error
	if errors.As(err, &pe) && pe.Message != "" {
		// The provider's words, once: they become a statusMessage.
		return &actors.RailError{Kind: kind, Message: pe.Message, RetryAfter: pe.RetryAfter}
	}
	return &actors.RailError{Kind: kind, Err: err}
}

// ResolveName asks the instance that pays out by m for the holder of
// accountNumber, when its adapter looks names up (MoMo's basicuserinfo);
// ErrNoProvider when none does. A production deployment resolves names
// only through its providers, never the sandbox's.
func (ps *Providers) ResolveName(ctx context.Context, m Method, accountNumber string) (Resolution, error) {
	in, ok := ps.reg.For(m.Code, provider.Payouts)
	if !ok {
		return Resolution{}, ErrNoProvider
	}
	l, ok := in.Adapter.(provider.NameLooker)
	if !ok {
		return Resolution{}, ErrNoProvider
	}
	name, err := l.LookupName(ctx, m.Code, accountNumber)
	switch {
	case err == nil:
		return Resolution{Outcome: OutcomeValid, AccountName: name}, nil
	case errors.Is(err, provider.ErrNotFound), errors.Is(err, provider.ErrRejected):
		return Resolution{Outcome: OutcomeAccountNotFound, Message: "No account with this number exists on " + m.Name}, nil
	}
	return Resolution{}, err
}
