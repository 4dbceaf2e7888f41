package actors

import (
	"context"
	"errors"
	"time"

	"payments/ledger"
	"payments/ledger/instructions"
)

// The production rails, as the actors see them: provider instances that
// move real money (package rails implements Providers over its registry of
// configured adapters). The rail driver drives payouts and collections
// through them from committed instructions (driver_provider.go), the
// deposit watcher polls their feeds (deposits.go), and callbacks reach
// them through System.ProviderCallback. A deployment without providers
// (the sandbox) leaves Config.Providers nil and drives everything through
// Config.Rail as before.

// Direction is which way an instance moves money for a method.
type Direction uint8

// Directions.
const (
	DirectionPayouts Direction = 1 << iota
	DirectionCollections
	DirectionDeposits
)

// Providers are the deployment's provider instances. Implementations are
// safe for concurrent use.
type Providers interface {
	// For returns the instance serving method in direction d.
	For(method string, d Direction) (Provider, bool)
	// Named returns the instance called name.
	Named(name string) (Provider, bool)
	// All lists the instances in configuration order.
	All() []Provider
}

// Prepared is an instruction as an adapter prepared it: the provider's
// idempotency key and, for some, the exact request (a signed
// transaction). It is committed (instructions.Prepare) before it is
// first sent.
type Prepared struct {
	Key     string
	Payload []byte
}

// ProviderOutcome is what a provider said of an instruction.
type ProviderOutcome struct {
	RailOutcome
	// ProviderRef is the provider's own reference, when it gave one.
	ProviderRef string
	// Replacement supersedes the prepared value in hand (a stuck EVM
	// transaction re-signed with higher fees at the same nonce): commit
	// it, then submit it.
	Replacement *Prepared
}

// Work is an instruction as the driver hands it to an instance: the payout
// or the collection (one of them), and its committed instruction once it
// has one.
type Work struct {
	Payout      *ledger.Payout
	Collection  *ledger.Collection
	Instruction *instructions.Instruction
}

// ID is the payout's or collection's id.
func (w Work) ID() string {
	if w.Payout != nil {
		return w.Payout.ID
	}
	return w.Collection.ID
}

// Direction is the work's direction.
func (w Work) Direction() Direction {
	if w.Payout != nil {
		return DirectionPayouts
	}
	return DirectionCollections
}

// Callback is a provider's inbound notification as the ingress route
// received it. Query may carry per-instruction tokens: never log it.
type Callback struct {
	Header     map[string]string // lower-case names
	Body       []byte
	RemoteAddr string
	Query      string
}

// Notification is what a callback says of an instruction: the key it was
// first prepared with, and an outcome that is believed only when
// Authenticated (otherwise it only prompts a status check).
type Notification struct {
	Key           string
	Collection    bool
	Authenticated bool
	Outcome       ProviderOutcome
}

// FeedDeposit is a transfer as a deposit feed reported it.
type FeedDeposit struct {
	Identity      string // one transfer, one identity, ever: "<chain>:<tx hash>:<log index>"
	Method        string
	Chain         string // the catalogue's chain id of Method
	Currency      string
	Amount        ledger.Minor
	Fee           ledger.Minor // the method's deposit fee on Amount, from the catalogue
	To, Tag       string
	Hash          string // the transaction hash, shown as the deposit's hash
	Confirmations int
	Required      int
	Dropped       bool
}

// Confirmed reports whether the deposit may be credited.
func (d FeedDeposit) Confirmed() bool { return !d.Dropped && d.Confirmations >= d.Required }

// DepositRequest asks an instance for deposit details: Index is allocated
// by the ledger (deposits.AllocateIndex), so every node derives the
// same details from it.
type DepositRequest struct {
	Owner    string // the crypto address's id
	Index    uint32
	Method   string
	Currency string
}

// Provider is one configured instance.
type Provider interface {
	Name() string
	// Serves reports whether the instance serves method in direction d.
	Serves(method string, d Direction) bool
	// SendOnce reports whether instructions of direction d must never
	// be sent again once a send may have arrived (see
	// instructions.MarkSent).
	SendOnce(d Direction) bool

	// Prepare, Submit and Status of a payout or collection. Submit with
	// the same Prepared is the same request. Errors wrap ErrRailRejected
	// (final: nothing moved), ErrRailNothingDone (nothing was done,
	// retrying is safe; see RetryAfter), ErrRailTimeout (the outcome is
	// unknown: ask Status), ErrRailNotFound (the provider never received
	// it) or ErrRailTransient.
	Prepare(ctx context.Context, w Work) (Prepared, error)
	Submit(ctx context.Context, w Work, p Prepared) (ProviderOutcome, error)
	Status(ctx context.Context, w Work, p Prepared) (ProviderOutcome, error)
	// Restore hands the adapter every committed, unfinished prepared
	// value of the instance when this node starts leading, before its
	// first Prepare there; a no-op for adapters that keep no such state.
	Restore(ctx context.Context, inFlight []Prepared) error

	// HandleCallback reads a callback; ErrNoCallbacks when the instance
	// takes none, ErrBadCallback for one it refuses.
	HandleCallback(ctx context.Context, cb Callback) (Notification, error)

	// HasDepositFeed reports whether the instance reports deposits.
	HasDepositFeed() bool
	// PollDeposits reports transfers from cursor on, and the cursor to
	// commit with them.
	PollDeposits(ctx context.Context, cursor []byte) ([]FeedDeposit, []byte, error)
	// NoteDepositIndexes tells the feed that indexes below n are
	// allocated (a new leader's first word to it).
	NoteDepositIndexes(n uint32)
	// ProvisionDeposit derives deposit details from an allocated index.
	ProvisionDeposit(ctx context.Context, req DepositRequest) (address, tag string, err error)
}

// Errors of provider instances, wrapped in *RailError by implementations.
var (
	// ErrRailRejected: the provider definitely refused; nothing moved.
	ErrRailRejected = errors.New("rail: rejected")
	// ErrRailNothingDone: the provider could not be reached, asked us to
	// slow down or refused our credentials; nothing was done.
	ErrRailNothingDone = errors.New("rail: nothing was done")
	// ErrRailNotFound: the provider does not know the instruction.
	ErrRailNotFound = errors.New("rail: instruction not found")
	// ErrNoCallbacks: the instance takes no callbacks.
	ErrNoCallbacks = errors.New("rail: the instance takes no callbacks")
	// ErrBadCallback: a callback the instance refuses (unreadable,
	// naming nothing, without its token).
	ErrBadCallback = errors.New("rail: bad callback")
	// ErrUnknownProvider: no instance has the name.
	ErrUnknownProvider = errors.New("rail: no such provider instance")
)

// RailError is a provider's error with its words.
type RailError struct {
	Kind       error // ErrRailRejected, ErrRailNothingDone, ErrRailTimeout, ErrRailNotFound, ErrRailTransient…
	Message    string
	RetryAfter time.Duration
	Err        error
}

func (e *RailError) Error() string {
	s := e.Kind.Error()
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *RailError) Is(target error) bool { return target == e.Kind }
func (e *RailError) Unwrap() error        { return e.Err }

// railMessage is what an error says for a statusMessage.
func railMessage(err error) string {
	var re *RailError
	if errors.As(err, &re) && re.Message != "" {
		return re.Message
	}
	return err.Error()
}

// retryAfter is how long an error asks to wait, zero when it does not.
func retryAfter(err error) time.Duration {
	var re *RailError
	if errors.As(err, &re) {
		return re.RetryAfter
	}
	return 0
}
