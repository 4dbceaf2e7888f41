package app

import (
	"payments/actors"
	"payments/ledger"
	"payments/ledger/paymentlinks"
)

// Payment links and payment pages: creating and updating them. The
// checkout sessions that pay a link, and the sandbox's deposits into them,
// are in checkout.go.
//
// A link or page is a record no actor owns: its commands go straight to
// the log, stamped with the leader's clock and an id drawn here. The
// ledger checks them again in log order (the link's state, the page's,
// the customerReference's idempotency).

// PaymentLinkRequest asks for a payment link; the front end has checked
// the shape of every field (lengths, formats, the amount in the currency's
// minor units).
type PaymentLinkRequest struct {
	// CustomerReference makes the create idempotent: the same request again
	// is answered with the link it made (Replayed), a different one with
	// duplicate. "" for none.
	CustomerReference string
	Spec              paymentlinks.LinkSpec
}

// CreatePaymentLink creates a payment link.
func (a *App) CreatePaymentLink(c Caller, in PaymentLinkRequest) actors.Reply {
	if e := checkCryptoAssets(in.Spec.Appearance); e != nil {
		return refused(e)
	}
	if e := a.checkoutMethodsOffered(in.Spec.Appearance.Methods); e != nil {
		return refused(e)
	}
	return a.propose(&paymentlinks.CreateLink{At: a.nowMilli(), ID: actors.NewID("pl_"), OrgID: c.OrgID,
		CustomerReference: in.CustomerReference, Spec: in.Spec})
}

// PageLinkRequest asks for a payer's own link under a payment page, which
// fixes the currency and what the checkout shows.
type PageLinkRequest struct {
	PageID            string
	CustomerReference string // as PaymentLinkRequest's
	Email             string
	Metadata          string // canonical JSON object, or ""
	// Amount is the payer's amount as the request wrote it, nil when it
	// gave none. Only the page knows its currency, so the amount is parsed
	// here once the page is read, by the rules the front end parses
	// amounts with (ledger.ParseAmount).
	Amount *string
}

// CreatePageLink gives a payer of a page a link of their own: of the
// page's fixed amount, or of the amount the payer chose where the page
// lets them.
func (a *App) CreatePageLink(c Caller, in PageLinkRequest) actors.Reply {
	page, ok := paymentlinks.GetPage(a.sys.Reader(), c.OrgID, in.PageID)
	if !ok {
		return refused(notFound("Payment page"))
	}
	spec := paymentlinks.LinkSpec{Email: in.Email}
	spec.Appearance.Metadata = in.Metadata
	switch {
	case in.Amount != nil:
		amount, e := parseAmount("amount", *in.Amount, page.Currency)
		if e != nil {
			return refused(e)
		}
		spec.Amount = amount
	case page.Amount == 0:
		return refused(ledger.FieldInvalid("amount", "is required: the page lets the payer choose the amount"))
	}
	return a.propose(&paymentlinks.CreateLink{At: a.nowMilli(), ID: actors.NewID("pl_"), OrgID: c.OrgID,
		ParentID: page.ID, CustomerReference: in.CustomerReference, Spec: spec})
}

// PaymentPageRequest asks for a payment page: a reusable checkout in one
// currency, of a fixed amount or (Amount 0) of the amount each payer
// chooses.
type PaymentPageRequest struct {
	Currency   string
	Amount     ledger.Minor
	Appearance paymentlinks.Appearance
}

// CreatePaymentPage creates a payment page.
func (a *App) CreatePaymentPage(c Caller, in PaymentPageRequest) actors.Reply {
	if e := checkCryptoAssets(in.Appearance); e != nil {
		return refused(e)
	}
	if e := a.checkoutMethodsOffered(in.Appearance.Methods); e != nil {
		return refused(e)
	}
	return a.propose(&paymentlinks.CreatePage{At: a.nowMilli(), ID: actors.NewID("pp_"), OrgID: c.OrgID,
		Currency: in.Currency, Amount: in.Amount, Appearance: in.Appearance})
}

// CheckoutUpdate changes a payment link or page: Close closes it, and Set
// (ledger.Appearance… bits) names the fields of Appearance to take. A link
// takes only expiresAt, redirectUrl and branding.
type CheckoutUpdate struct {
	ID         string
	Close      bool
	Set        uint16
	Appearance paymentlinks.Appearance
}

// UpdatePaymentLink closes a link or changes its expiry, redirect or
// branding.
func (a *App) UpdatePaymentLink(c Caller, in CheckoutUpdate) actors.Reply {
	return a.propose(&paymentlinks.UpdateLink{At: a.nowMilli(), OrgID: c.OrgID, ID: in.ID,
		Close: in.Close, Set: in.Set, Appearance: in.Appearance})
}

// UpdatePaymentPage closes a page or changes what its checkout accepts and
// shows. Accepted stablecoins mean something only where crypto is: a
// change that names them on a page that would accept no crypto is
// refused, and one that stops accepting crypto forgets them.
func (a *App) UpdatePaymentPage(c Caller, in CheckoutUpdate) actors.Reply {
	if in.Set&paymentlinks.AppearanceMethods != 0 {
		if e := a.checkoutMethodsOffered(in.Appearance.Methods); e != nil {
			return refused(e)
		}
	}
	if in.Set&(paymentlinks.AppearanceMethods|paymentlinks.AppearanceCryptoAssets) != 0 {
		after := in.Appearance
		if page, ok := paymentlinks.GetPage(a.sys.Reader(), c.OrgID, in.ID); ok {
			if in.Set&paymentlinks.AppearanceMethods == 0 {
				after.Methods = page.Current.Methods
			}
			if in.Set&paymentlinks.AppearanceCryptoAssets == 0 {
				after.CryptoAssets, after.CryptoAssetsSet = page.Current.CryptoAssets, page.Current.CryptoAssetsSet
			}
		} // else the ledger answers not_found
		switch {
		case in.Set&paymentlinks.AppearanceCryptoAssets != 0:
			if e := checkCryptoAssets(after); e != nil {
				return refused(e)
			}
		case after.CryptoAssetsSet && !after.Methods.Has(paymentlinks.Crypto):
			in.Set |= paymentlinks.AppearanceCryptoAssets
			in.Appearance.CryptoAssets, in.Appearance.CryptoAssetsSet = "", false
		}
	}
	return a.propose(&paymentlinks.UpdatePage{At: a.nowMilli(), OrgID: c.OrgID, ID: in.ID,
		Close: in.Close, Set: in.Set, Appearance: in.Appearance})
}

// checkoutMethodsOffered holds a production checkout to the methods whose
// money reaches the deployment: mobile money, charged through its
// collection providers. (The sandbox's pooled bank account and derived
// deposit addresses are no one's; no provider collects bank transfers or
// stablecoins for checkout sessions yet.)
func (a *App) checkoutMethodsOffered(methods paymentlinks.MethodSet) *ledger.Error {
	if !a.cfg.Live || a.cfg.NoProvider {
		return nil // a deployment without providers refuses every session (NoProviderError)
	}
	if methods.Has(paymentlinks.BankTransfer) || methods.Has(paymentlinks.Crypto) {
		return ledger.FieldInvalid("allowedMethods", "only mobile_money is taken at checkout on this deployment: no provider collects bank transfers or stablecoins for checkout sessions yet")
	}
	return nil
}

// checkCryptoAssets refuses accepted stablecoins on a checkout that
// accepts no crypto: they would restrict nothing, and a caller who sent
// them meant crypto to be accepted.
func checkCryptoAssets(a paymentlinks.Appearance) *ledger.Error {
	if a.CryptoAssetsSet && !a.Methods.Has(paymentlinks.Crypto) {
		return ledger.FieldInvalid("allowedCryptoAssets", "must be omitted unless allowedMethods includes crypto")
	}
	return nil
}
