// Package provider is the seam between the service and the payment
// providers that move real money: the instructions it hands an adapter, the
// capabilities an adapter may implement (each an interface of its own), the
// outcomes and typed errors it answers with, and the registry that maps
// method codes to configured provider instances.
//
// # Exactly once at the provider
//
// Every outbound instruction is prepared before it is sent: Prepare returns
// the provider's idempotency key (MoMo's X-Reference-Id, M-Pesa's
// OriginatorConversationID) or the exact bytes to send (a signed EVM
// transaction). The caller commits that Prepared value to the replicated log
// before the first Submit, so a new leader re-sends exactly the same request
// and the provider (or the chain, through the nonce) never sees two. An
// adapter must be deterministic given a Prepared value: Submit twice with
// the same one is the same request. An adapter whose provider would act on
// a re-sent request again implements SendOnce, and the caller then never
// re-sends after a send that may have arrived (see SendOnce).
//
// # Outcomes
//
// Only a definite rejection by the provider fails an instruction
// (ErrRejected). A timeout, a 5xx or a lost response is an unknown outcome:
// the caller asks Status until the provider answers. A synchronous answer, a
// callback and a status poll may each report the same end; the caller
// settles an instruction once, whichever arrives first.
//
// # Never
//
// Adapters do no ledger work and hold no state that must survive a restart
// except what they return to be committed (Prepared values, feed cursors).
// They never log secrets or full account numbers.
package provider

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Direction is which way an instance moves money for a method.
type Direction uint8

const (
	Payouts     Direction = 1 << iota // money out to a recipient
	Collections                       // money in, prompted from a payer
	Deposits                          // money in, sent by a customer to details we issued
)

// Instruction is one movement of money through a provider: a payout or a
// collection. Amounts are integer minor units of Currency (its number of
// decimal places is Exponent: 2 for GHS, 6 for USDC), never floats.
type Instruction struct {
	// ID is our resource's id (pay_…, col_…): stable, unique, safe to
	// show the provider as a reference.
	ID          string
	Method      string // method code, e.g. "gh_mtn", "usdc_ethereum"
	Currency    string // ISO 4217 or the token's code
	AmountMinor int64
	Exponent    int
	// The counterparty: a phone number with its country code (digits
	// only), a bank account number, or an on-chain address and tag.
	AccountNumber string
	Address       string
	Tag           string
	Narration     string
	// ProviderRef is the provider's own reference for the instruction as
	// the caller last committed it (Outcome.ProviderRef from a Submit, a
	// callback or a status answer); empty until one was reported. Some
	// providers can be asked for a status only by their reference (an
	// M-Pesa STK push by its CheckoutRequestID).
	ProviderRef string
}

// Prepared is what must be committed to the log before an instruction is
// first sent. Key is the provider-side idempotency key or transaction hash;
// Payload, when set, is the exact request to send (a signed transaction).
// Adapters define the content; callers store and return it unchanged.
type Prepared struct {
	Key     string
	Payload []byte
}

// State is where an instruction stands at the provider.
type State uint8

const (
	StateUnknown    State = iota // the provider has not said (or cannot be reached)
	StatePending                 // accepted, not yet moving (awaiting the payer, in the mempool)
	StateProcessing              // moving
	StateCompleted               // final: the money moved
	StateFailed                  // final: the provider refused or the payer declined
)

func (s State) String() string {
	switch s {
	case StatePending:
		return "pending"
	case StateProcessing:
		return "processing"
	case StateCompleted:
		return "completed"
	case StateFailed:
		return "failed"
	}
	return "unknown"
}

// Final reports whether the state never changes again.
func (s State) Final() bool { return s == StateCompleted || s == StateFailed }

// Outcome is what a provider said of an instruction.
type Outcome struct {
	State State
	// ProviderRef is the provider's own id for the transfer (a financial
	// transaction id, a transaction hash), when it gave one.
	ProviderRef string
	// Message says why, for a failure (shown as statusMessage).
	Message string
	// CheckAfter, when the state is not final, is when to ask again.
	CheckAfter time.Duration
	// Replacement, when set, is a new Prepared that supersedes the one in
	// hand (an EVM transaction re-signed with a higher fee for the same
	// nonce): commit it, then Submit it. Either may end up mined; Status
	// with either Prepared reports the one that did.
	Replacement *Prepared
}

// Payouter sends payouts.
type Payouter interface {
	PreparePayout(ctx context.Context, in Instruction) (Prepared, error)
	SubmitPayout(ctx context.Context, in Instruction, p Prepared) (Outcome, error)
	PayoutStatus(ctx context.Context, in Instruction, p Prepared) (Outcome, error)
}

// Restorer is implemented by an adapter whose Prepare depends on what was
// prepared before and is not final yet: an EVM hot wallet signs with
// consecutive nonces, and the nonce of a committed but unsent transaction
// is invisible to the chain, so it must not be handed out again. The caller
// calls Restore with every committed Prepared value of the instance whose
// instruction is not final (the latest Replacement where there is one)
// when it starts leading, before its first Prepare there. Restore only
// adds to what the adapter holds, so calling it again is harmless.
// Adapters without such state do not implement it.
type Restorer interface {
	Restore(ctx context.Context, inFlight []Prepared) error
}

// Collector prompts payers (a mobile money push, an STK push).
type Collector interface {
	PrepareCollection(ctx context.Context, in Instruction) (Prepared, error)
	SubmitCollection(ctx context.Context, in Instruction, p Prepared) (Outcome, error)
	CollectionStatus(ctx context.Context, in Instruction, p Prepared) (Outcome, error)
}

// DepositRequest asks for details a customer can send money to.
type DepositRequest struct {
	// Owner is our resource the details belong to (a crypto address or
	// virtual account id); Index is a stable number for it, chosen by the
	// caller and committed, from which deterministic details (an HD
	// derivation path) are derived, so a new leader derives the same.
	Owner    string
	Index    uint32
	Method   string
	Currency string
}

// DepositDetails are where a customer sends money.
type DepositDetails struct {
	Address       string // on-chain address
	Tag           string
	AccountNumber string // a virtual bank account
	BankName      string
}

// DepositProvisioner issues deposit details.
type DepositProvisioner interface {
	ProvisionDeposit(ctx context.Context, req DepositRequest) (DepositDetails, error)
}

// Deposit is a transfer of funds to details we issued, as a feed sees it.
type Deposit struct {
	// Identity is the provider's unique identity of the transfer: for a
	// chain "<chain>:<tx hash>:<log index>". One identity is one credit,
	// ever.
	Identity    string
	Method      string
	Currency    string
	AmountMinor int64
	To          string // the address or account it was sent to
	From        string
	// Confirmations so far, and how many the instance requires before the
	// deposit may be credited.
	Confirmations int
	Required      int
	// Dropped: a reorganisation removed a transfer the feed reported
	// before; it must not be credited (and a pending collection for it
	// fails).
	Dropped bool
}

// Confirmed reports whether the deposit may be credited.
func (d Deposit) Confirmed() bool { return !d.Dropped && d.Confirmations >= d.Required }

// DepositFeed reports incoming transfers. Cursor is opaque; the caller
// commits the returned cursor to the log after it committed what the batch
// reported, so a new leader resumes where the old one stopped. A feed may
// report one transfer several times (seen, then confirmed, or dropped); the
// caller deduplicates by Identity.
type DepositFeed interface {
	PollDeposits(ctx context.Context, cursor []byte) (deposits []Deposit, next []byte, err error)
}

// Callback is an inbound notification as received on the instance's ingress
// route.
type Callback struct {
	Header     map[string]string // lower-case names
	Body       []byte
	RemoteAddr string
	// Query is the raw query string of the request URL, without the '?'.
	// Providers that do not say in the body which instruction a callback
	// concerns get it back from the URL the adapter gave them; keep it
	// out of logs, for it may carry a per-instruction token.
	Query string
}

// Notification is what a callback says. When Authenticated is false the
// provider does not sign its callbacks: the notification only names the
// instruction, and the caller must ask Status before believing anything.
type Notification struct {
	Key           string // the Prepared.Key it concerns
	Collection    bool   // a collection's, else a payout's
	Authenticated bool
	Outcome       Outcome
}

// CallbackHandler reads inbound notifications.
type CallbackHandler interface {
	HandleCallback(ctx context.Context, cb Callback) (Notification, error)
}

// SendOnce is implemented by an adapter whose provider does not reliably
// refuse a re-sent instruction, or where a re-send reaches a person twice
// (a second payment prompt on the payer's phone). SendOnce reports the
// directions this holds for. For those, the rule of Prepared (a new leader
// re-sends the same request) does not apply: the caller commits that it is
// submitting before it calls Submit, and once that is committed it calls
// Submit again only after Submit itself answered that nothing was done
// (ErrUnavailable, ErrRateLimited, ErrAuthentication); after any other
// answer, or none (a crash, a leader change), it only asks Status and
// waits for callbacks.
type SendOnce interface {
	SendOnce(d Direction) bool
}

// NameLooker resolves an account holder's name before a payout.
type NameLooker interface {
	LookupName(ctx context.Context, method, accountNumber string) (string, error)
}

// Balancer reports the instance's float at the provider, for
// reconciliation.
type Balancer interface {
	Balances(ctx context.Context) ([]Balance, error)
}

// Balance is a provider-side balance in minor units.
type Balance struct {
	Currency    string
	AmountMinor int64
	Exponent    int
	Account     string // the provider's account or wallet it is held in
}

// Errors an adapter returns, wrapped in *Error where details help.
var (
	// ErrRejected: the provider definitely refused the instruction; it
	// is final and nothing moved.
	ErrRejected = errors.New("provider: rejected")
	// ErrRateLimited: the provider asked us to slow down; nothing was
	// done; retry after Error.RetryAfter.
	ErrRateLimited = errors.New("provider: rate limited")
	// ErrAuthentication: our credentials were refused; nothing was done.
	ErrAuthentication = errors.New("provider: authentication failed")
	// ErrUnknownOutcome: the request may or may not have been taken (a
	// timeout, a lost response, a 5xx after sending): ask Status.
	ErrUnknownOutcome = errors.New("provider: outcome unknown")
	// ErrUnavailable: the provider could not be reached and the request
	// was not sent; retrying is safe.
	ErrUnavailable = errors.New("provider: unavailable")
	// ErrNotFound: the provider does not know the instruction (never
	// received it).
	ErrNotFound = errors.New("provider: not found")
)

// Error is an adapter's error with the provider's words.
type Error struct {
	Kind       error // one of the Err… values above
	Message    string
	RetryAfter time.Duration // with ErrRateLimited
	Err        error         // the cause, if any
}

func (e *Error) Error() string {
	s := e.Kind.Error()
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Is(target error) bool { return target == e.Kind }
func (e *Error) Unwrap() error        { return e.Err }

// Errorf builds an *Error of kind.
func Errorf(kind error, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}
