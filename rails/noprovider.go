package rails

import (
	"context"
	"errors"

	"payments/actors"
	"payments/ledger"
)

// ErrNoProvider is returned by NoProvider for every instruction.
var ErrNoProvider = errors.New("rails: no provider adapter is configured")

// NoProvider is the rail of a production deployment without provider
// adapters. It refuses everything; the HTTP front end refuses to create
// payouts and collections on such a deployment, so nothing reaches it but
// what a misconfiguration sends.
type NoProvider struct{}

var _ actors.Rail = NoProvider{}

func (NoProvider) SubmitPayout(context.Context, ledger.Payout) (string, error) {
	return "", ErrNoProvider
}

func (NoProvider) PayoutOutcome(context.Context, ledger.Payout) (actors.RailOutcome, error) {
	return actors.RailOutcome{}, ErrNoProvider
}

func (NoProvider) StartCollection(context.Context, ledger.Collection) (string, error) {
	return "", ErrNoProvider
}

func (NoProvider) CollectionOutcome(context.Context, ledger.Collection) (actors.RailOutcome, error) {
	return actors.RailOutcome{}, ErrNoProvider
}
