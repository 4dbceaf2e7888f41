package money

import (
	"github.com/goccy/go-json/jsontext"

	"payments/http/core"
	"payments/ledger"
	"payments/ledger/publicids"
)

type payoutJSON struct {
	ID                string         `json:"id"`
	Status            string         `json:"status"`
	From              payoutFromJSON `json:"from"`
	To                payoutToJSON   `json:"to"`
	Fee               core.MoneyJSON `json:"fee"`
	Rate              *string        `json:"rate"`
	Narration         *string        `json:"narration"`
	ExternalReference string         `json:"externalReference"`
	Metadata          jsontext.Value `json:"metadata"`
	StatusMessage     *string        `json:"statusMessage"`
	CompletedAt       *string        `json:"completedAt"`
	CreatedAt         string         `json:"createdAt"`
	UpdatedAt         string         `json:"updatedAt"`
	Timeline          []timelineJSON `json:"timeline,omitempty"`
}

type payoutFromJSON struct {
	AccountNumber string `json:"accountNumber"`
	core.MoneyJSON
	KYC jsontext.Value `json:"kyc"`
}

type payoutToJSON struct {
	Code string `json:"code"`
	core.MoneyJSON
	AccountNumber *string        `json:"accountNumber"`
	Address       *string        `json:"address"`
	Tag           *string        `json:"tag,omitempty"`           // non-nullable in the reference: omitted when unset
	RoutingNumber *string        `json:"routingNumber,omitempty"` // a bank payout's bank, when it names one
	RecipientID   *string        `json:"recipientId"`
	KYC           jsontext.Value `json:"kyc"`
}

type timelineJSON struct {
	At     string  `json:"at"`
	Kind   string  `json:"kind"`
	Title  string  `json:"title"`
	Detail *string `json:"detail"`
}

// completedAt is a record's completedAt: the time it completed at, null
// until it has.
func completedAt(completed bool, at int64) *string {
	if !completed {
		return nil
	}
	return core.OptionalTimestamp(at)
}

func renderPayout(p *ledger.Payout) payoutJSON {
	// A cross-currency payout's from side, fee and rate are its FX
	// details; otherwise both sides are the same money and rate is null.
	fromCur := p.FromCurrency()
	var rate *string
	if p.FX != nil {
		rate = core.Optional(p.FX.Rate)
	}
	return payoutJSON{
		ID:     p.ID,
		Status: p.Status.String(),
		From: payoutFromJSON{
			AccountNumber: p.AccountNumber,
			MoneyJSON:     core.MoneyOf(p.Debit(), fromCur), // everything debited, fee included (NOTES: amount sides)
			KYC:           core.ObjectOrEmpty(p.Spec.FromKYC),
		},
		To: payoutToJSON{
			Code:          p.Spec.Method,
			MoneyJSON:     core.MoneyOf(p.Spec.Amount, p.Spec.Currency),
			AccountNumber: core.Optional(p.Spec.AccountNumber),
			Address:       core.Optional(p.Spec.Address),
			Tag:           core.Optional(p.Spec.Tag),
			RoutingNumber: core.Optional(p.Spec.RoutingNumber),
			RecipientID:   core.Optional(p.Spec.RecipientID),
			KYC:           core.ObjectOrEmpty(p.Spec.ToKYC),
		},
		Fee:               core.MoneyOf(p.Fee, fromCur),
		Rate:              rate,
		Narration:         core.Optional(p.Spec.Narration),
		ExternalReference: p.ExternalReference,
		Metadata:          core.ObjectOrEmpty(p.Spec.Metadata),
		StatusMessage:     core.Optional(p.StatusMessage),
		CompletedAt:       completedAt(p.Status == ledger.PayoutCompleted, p.CompletedAt),
		CreatedAt:         core.Timestamp(p.CreatedAt),
		UpdatedAt:         core.Timestamp(p.UpdatedAt),
	}
}

// payoutTimeline is the payout's audit trail, derived from its record: the
// state changes and the bookings they made.
func payoutTimeline(p *ledger.Payout) []timelineJSON {
	cur, from := p.Spec.Currency, p.FromCurrency()
	detail := func(s string) *string { return &s }
	t := []timelineJSON{
		{At: core.Timestamp(p.CreatedAt), Kind: "created", Title: "Payout created",
			Detail: detail(cur + " " + core.Money(p.Spec.Amount, cur) + " via " + p.Spec.Method)},
		{At: core.Timestamp(p.CreatedAt), Kind: "debit", Title: "Balance debited",
			Detail: detail(from + " " + core.Money(p.Debit(), from) + " from " + p.AccountNumber)},
	}
	if p.FX != nil {
		t = append(t, timelineJSON{At: core.Timestamp(p.CreatedAt), Kind: "status", Title: "Converted",
			Detail: detail(from + " " + core.Money(p.FromAmount(), from) + " to " + cur + " " + core.Money(p.Spec.Amount, cur) + " at " + p.FX.Rate)})
	}
	if p.Fee > 0 {
		t = append(t, timelineJSON{At: core.Timestamp(p.CreatedAt), Kind: "fee", Title: "Fee charged",
			Detail: detail(from + " " + core.Money(p.Fee, from))})
	}
	if p.ProcessingAt != 0 {
		t = append(t, timelineJSON{At: core.Timestamp(p.ProcessingAt), Kind: "processing", Title: "Submitted to the rail",
			Detail: core.Optional(core.FirstNonEmpty(p.ProviderReference, "awaiting confirmation"))})
	}
	switch p.Status {
	case ledger.PayoutCompleted:
		t = append(t, timelineJSON{At: core.Timestamp(p.CompletedAt), Kind: "completed", Title: "Payout completed", Detail: core.Optional(p.StatusMessage)})
	case ledger.PayoutFailed:
		t = append(t,
			timelineJSON{At: core.Timestamp(p.FailedAt), Kind: "failed", Title: "Payout failed", Detail: core.Optional(p.StatusMessage)},
			timelineJSON{At: core.Timestamp(p.FailedAt), Kind: "refund", Title: "Debit and fee refunded",
				Detail: detail(from + " " + core.Money(p.Debit(), from) + " to " + p.AccountNumber)})
	}
	return t
}

type collectionJSON struct {
	ID                string             `json:"id"`
	Type              string             `json:"type"`
	Status            string             `json:"status"`
	From              collectionFromJSON `json:"from"`
	To                collectionToJSON   `json:"to"`
	Fee               core.MoneyJSON     `json:"fee"`
	Rate              string             `json:"rate"`
	Details           *jsontext.Value    `json:"details"`
	Narration         *string            `json:"narration"`
	ExternalReference *string            `json:"externalReference"`
	Metadata          jsontext.Value     `json:"metadata"`
	StatusMessage     *string            `json:"statusMessage"`
	CompletedAt       *string            `json:"completedAt"`
	CreatedAt         string             `json:"createdAt"`
}

type collectionFromJSON struct {
	AccountNumber string  `json:"accountNumber"`
	Code          *string `json:"code"` // null on deposits
	core.MoneyJSON
	KYC jsontext.Value `json:"kyc"`
}

type collectionToJSON struct {
	AccountNumber *string `json:"accountNumber"`
	core.MoneyJSON
}

func renderCollection(c *ledger.Collection) collectionJSON {
	amt := core.MoneyOf(c.Spec.Amount, c.Spec.Currency)
	return collectionJSON{
		ID:     c.ID,
		Type:   c.Type,
		Status: c.Status.String(),
		From: collectionFromJSON{
			AccountNumber: c.Spec.PayerNumber,
			Code:          core.Optional(c.Spec.Method),
			MoneyJSON:     amt,
			KYC:           core.ObjectOrEmpty(c.Spec.KYC),
		},
		To:                collectionToJSON{AccountNumber: core.Optional(c.AccountNumber), MoneyJSON: amt},
		Fee:               core.MoneyOf(c.Fee, c.Spec.Currency),
		Rate:              "1",
		Details:           depositDetails(c),
		Narration:         core.Optional(c.Spec.Narration),
		ExternalReference: core.Optional(c.ExternalReference),
		Metadata:          core.ObjectOrEmpty(c.Spec.Metadata),
		StatusMessage:     core.Optional(c.StatusMessage),
		CompletedAt:       completedAt(c.Status == ledger.CollectionCompleted, c.CompletedAt),
		CreatedAt:         core.Timestamp(c.CreatedAt),
	}
}

type accountJSON struct {
	ID               string  `json:"id"`
	Currency         string  `json:"currency"`
	AvailableBalance string  `json:"availableBalance"`
	PendingBalance   string  `json:"pendingBalance"`
	TotalBalance     string  `json:"totalBalance"`
	EstimatedUSD     *string `json:"estimatedUsd"`
	CreatedAt        string  `json:"createdAt"`
}

// renderAccountNow renders a balance account as the account reads show
// it: estimatedUsd is its total at the current rate to USD, null only when
// no rate exists.
func renderAccountNow(s *core.Server, a *ledger.Account) accountJSON {
	out := renderAccount(a)
	out.EstimatedUSD = estimatedUSD(s, a.Currency, a.Total)
	return out
}

// renderAccount renders a balance account as of its record: an event's
// payload, fixed when it is built, carries no estimate (null).
func renderAccount(a *ledger.Account) accountJSON {
	return accountJSON{
		ID:               a.Number,
		Currency:         a.Currency,
		AvailableBalance: core.Money(a.Available(), a.Currency),
		PendingBalance:   core.Money(a.Held, a.Currency),
		TotalBalance:     core.Money(a.Total, a.Currency),
		CreatedAt:        core.Timestamp(a.CreatedAt),
	}
}

// estimatedUSD is amount of currency in USD at the current rate (rounded
// down to the cent), or nil when there is no rate for the pair.
func estimatedUSD(s *core.Server, currency string, amount ledger.Minor) *string {
	usd, ok := s.Config.App.USDValue(currency, amount)
	if !ok {
		return nil
	}
	return core.Optional(core.Money(usd, "USD"))
}

type entryJSON struct {
	ID       string `json:"id"`
	Sequence uint64 `json:"sequence"`
	Type     string `json:"type"`
	core.MoneyJSON
	AccountNumber     string  `json:"accountNumber"`
	BalanceAfter      string  `json:"balanceAfter"`
	ReferenceType     *string `json:"referenceType"`
	ReferenceID       *string `json:"referenceId"`
	ExternalReference *string `json:"externalReference"`
	CreatedAt         string  `json:"createdAt"`
}

// referenceEntryTypes maps the ledger's entry types that the reference's
// type enum lacks onto its nearest value, so that a typed client of the
// reference reads every entry; [2] is for a debit and a credit where the
// same type books both. Types not here are the reference's own.
var referenceEntryTypes = map[string][2]string{
	"fx_payout_debit":     {"payout_debit", "payout_debit"},
	"fx_payout_reversal":  {"payout_refund", "payout_refund"},
	"fx_payout_clearing":  {"conversion_debit", "conversion_credit"},
	"order_fx_debit":      {"conversion_debit", "conversion_debit"},
	"order_fx_credit":     {"conversion_credit", "conversion_credit"},
	"order_fx_clearing":   {"conversion_debit", "conversion_credit"},
	"conversion_clearing": {"conversion_debit", "conversion_credit"},
	"dispute_debit":       {"chargeback_debit", "chargeback_debit"},
	"dispute_reversal":    {"chargeback_debit", "manual_credit"},
	"payout_settlement":   {"payout_debit", "payout_credit"},
	"funding_source":      {"manual_credit", "manual_credit"},
	"collection_source":   {"collection_credit", "collection_credit"},
}

func referenceEntryType(e *ledger.Entry) string {
	name := e.Type.String()
	if m, ok := referenceEntryTypes[name]; ok {
		if e.Amount < 0 {
			return m[0]
		}
		return m[1]
	}
	return name
}

func renderEntry(ids *publicids.IDs, n *ledger.NumberedEntry, currency string) entryJSON {
	e := &n.Entry
	return entryJSON{
		ID:                ids.EntryID(n.Seq),
		Sequence:          n.Seq,
		Type:              referenceEntryType(e),
		MoneyJSON:         core.MoneyOf(e.Amount, currency),
		AccountNumber:     e.Account,
		BalanceAfter:      core.Money(e.BalanceAfter, currency),
		ReferenceType:     core.Optional(e.Type.ReferenceType()),
		ReferenceID:       core.Optional(ids.PublicRef(e.RefID)),
		ExternalReference: core.Optional(e.ExternalRef),
		CreatedAt:         core.Timestamp(e.At),
	}
}
