package actors

import (
	"context"
	"errors"
	"time"

	"payments/ledger"
)

// Replicator is the replicated log, as the actors see it. Package raft
// implements it.
type Replicator interface {
	// Append proposes one encoded batch of commands. It may block while the
	// log is busy, which is what lets the next batch grow. The returned
	// Pending reports the batch's results once it is applied, one result per
	// command, in order.
	Append(entry []byte) Pending
}

// Pending is a batch on its way through the log.
type Pending interface {
	// Wait blocks until the batch is applied or has failed. The error is
	// ErrNotLeader (nothing was appended; retrying is safe) or
	// ErrOutcomeUnknown (the batch may or may not be applied).
	Wait() ([]ledger.Result, error)
}

// StateReader gives readers the applied ledger state. A Reader never takes
// a lock that Apply needs; it sees every write acknowledged before the
// read began.
type StateReader interface {
	Reader() *ledger.Reader
}

// Rail is the outside world for payouts and collections: a provider adapter,
// or the sandbox simulator in package rails. Implementations must be safe
// for concurrent use and idempotent by instruction id: the driver resubmits
// after a restart or a leader change.
type Rail interface {
	// SubmitPayout hands the payout to the rail. ErrRailTimeout means the
	// rail may or may not have accepted it; the driver then reconciles
	// through PayoutOutcome.
	SubmitPayout(ctx context.Context, p ledger.Payout) (providerRef string, err error)
	// PayoutOutcome asks the rail how the payout ended.
	PayoutOutcome(ctx context.Context, p ledger.Payout) (RailOutcome, error)
	// StartCollection prompts the payer.
	StartCollection(ctx context.Context, c ledger.Collection) (providerRef string, err error)
	// CollectionOutcome asks the rail whether the payer approved.
	CollectionOutcome(ctx context.Context, c ledger.Collection) (RailOutcome, error)
}

// RailOutcome is what a rail knows of an instruction.
type RailOutcome struct {
	Final      bool          // the instruction has ended
	Completed  bool          // it ended well (when Final)
	Message    string        // why, for the resource's statusMessage
	CheckAfter time.Duration // when not Final: ask again after this long
}

// Errors of the write path.
var (
	// ErrNotLeader: this node cannot accept writes; nothing was done.
	ErrNotLeader = errors.New("actors: not the leader")
	// ErrOutcomeUnknown: the command may or may not have been applied
	// (leadership lost mid-commit). Retrying with the same reference is safe.
	ErrOutcomeUnknown = errors.New("actors: outcome unknown")
	// ErrOverloaded: a queue is full; nothing was done.
	ErrOverloaded = errors.New("actors: overloaded")
	// ErrRailTimeout: the rail did not answer in time; the instruction may
	// have been accepted.
	ErrRailTimeout = errors.New("rail: timed out")
	// ErrRailTransient: the rail failed in a way worth retrying.
	ErrRailTransient = errors.New("rail: transient failure")
)
