package app

import (
	"payments/actors"
	"payments/ledger"
	"payments/rails"
)

// CollectionInput is a request to charge a payer's mobile money wallet,
// its shape checked (the payer's number in digits).
type CollectionInput struct {
	ExternalReference string
	Spec              ledger.CollectionSpec
}

// CreateCollection charges a payer's wallet into the organization's
// balance in the collected currency, or answers the collection its
// reference names: refused on a deployment without providers (503), for a
// method the catalogue does not let collect this currency and amount, or
// one that is not mobile money (validation_error); priced with the
// method's collection fee; then decided by the account's actor
// (actors.System.CreateCollection).
func (a *App) CreateCollection(c Caller, in CollectionInput) actors.Reply {
	if a.cfg.NoProvider {
		return refused(NoProviderError())
	}
	spec := in.Spec
	method, e := a.cfg.Catalogue.Check(rails.Collection, "from.code", "from.amount", spec.Method, spec.Currency, spec.Amount)
	if e != nil {
		return refused(e)
	}
	if method.Type != ledger.MethodMobileMoney {
		return refused(ledger.FieldInvalid("from.code", "must be a mobile money method: collections charge a payer's wallet"))
	}
	fees, _ := method.Fees(rails.Collection) // Check: it serves collections
	return a.sys.CreateCollection(actors.CollectionRequest{
		OrgID:             c.OrgID,
		ExternalReference: in.ExternalReference,
		Attempt:           c.Attempt,
		Spec:              spec,
		MethodType:        method.Type,
		Fee:               fees.Fee(spec.Amount),
	})
}
