package core

import (
	"github.com/goccy/go-json/jsontext"

	"payments/ledger"
)

type payoutJSON struct {
	ID                string         `json:"id"`
	Status            string         `json:"status"`
	From              payoutFromJSON `json:"from"`
	To                payoutToJSON   `json:"to"`
	Fee               moneyJSON      `json:"fee"`
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
	AccountNumber string         `json:"accountNumber"`
	Amount        string         `json:"amount"`
	Currency      string         `json:"currency"`
	KYC           jsontext.Value `json:"kyc"`
}

type payoutToJSON struct {
	Code          string         `json:"code"`
	Amount        string         `json:"amount"`
	Currency      string         `json:"currency"`
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

func renderPayout(p *ledger.Payout) payoutJSON {
	amt := money(p.Spec.Amount, p.Spec.Currency)
	var completedAt *string
	if p.Status == ledger.PayoutCompleted {
		completedAt = optionalTimestamp(p.CompletedAt)
	}
	// A cross-currency payout's from side, fee and rate are its FX
	// details; otherwise both sides are the same money and rate is null.
	fromCur := p.FromCurrency()
	var rate *string
	if p.FX != nil {
		rate = optional(p.FX.Rate)
	}
	return payoutJSON{
		ID:     p.ID,
		Status: p.Status.String(),
		From: payoutFromJSON{
			AccountNumber: p.AccountNumber,
			Amount:        money(p.Debit(), fromCur), // everything debited, fee included (NOTES: amount sides)
			Currency:      fromCur,
			KYC:           objectOrEmpty(p.Spec.FromKYC),
		},
		To: payoutToJSON{
			Code:          p.Spec.Method,
			Amount:        amt,
			Currency:      p.Spec.Currency,
			AccountNumber: optional(p.Spec.AccountNumber),
			Address:       optional(p.Spec.Address),
			Tag:           optional(p.Spec.Tag),
			RoutingNumber: optional(p.Spec.RoutingNumber),
			RecipientID:   optional(p.Spec.RecipientID),
			KYC:           objectOrEmpty(p.Spec.ToKYC),
		},
		Fee:               moneyJSON{Amount: money(p.Fee, fromCur), Currency: fromCur},
		Rate:              rate,
		Narration:         optional(p.Spec.Narration),
		ExternalReference: p.ExternalReference,
		Metadata:          objectOrEmpty(p.Spec.Metadata),
		StatusMessage:     optional(p.StatusMessage),
		CompletedAt:       completedAt,
		CreatedAt:         timestamp(p.CreatedAt),
		UpdatedAt:         timestamp(p.UpdatedAt),
	}
}

// payoutTimeline is the payout's audit trail, derived from its record: the
// state changes and the bookings they made.
func payoutTimeline(p *ledger.Payout) []timelineJSON {
	cur, from := p.Spec.Currency, p.FromCurrency()
	detail := func(s string) *string { return &s }
	t := []timelineJSON{
		{At: timestamp(p.CreatedAt), Kind: "created", Title: "Payout created",
			Detail: detail(cur + " " + money(p.Spec.Amount, cur) + " via " + p.Spec.Method)},
		{At: timestamp(p.CreatedAt), Kind: "debit", Title: "Balance debited",
			Detail: detail(from + " " + money(p.Debit(), from) + " from " + p.AccountNumber)},
	}
	if p.FX != nil {
		t = append(t, timelineJSON{At: timestamp(p.CreatedAt), Kind: "status", Title: "Converted",
			Detail: detail(from + " " + money(p.FromAmount(), from) + " to " + cur + " " + money(p.Spec.Amount, cur) + " at " + p.FX.Rate)})
	}
	if p.Fee > 0 {
		t = append(t, timelineJSON{At: timestamp(p.CreatedAt), Kind: "fee", Title: "Fee charged",
			Detail: detail(from + " " + money(p.Fee, from))})
	}
	if p.ProcessingAt != 0 {
		t = append(t, timelineJSON{At: timestamp(p.ProcessingAt), Kind: "processing", Title: "Submitted to the rail",
			Detail: optional(firstNonEmpty(p.ProviderReference, "awaiting confirmation"))})
	}
	switch p.Status {
	case ledger.PayoutCompleted:
		t = append(t, timelineJSON{At: timestamp(p.CompletedAt), Kind: "completed", Title: "Payout completed", Detail: optional(p.StatusMessage)})
	case ledger.PayoutFailed:
		t = append(t,
			timelineJSON{At: timestamp(p.FailedAt), Kind: "failed", Title: "Payout failed", Detail: optional(p.StatusMessage)},
			timelineJSON{At: timestamp(p.FailedAt), Kind: "refund", Title: "Debit and fee refunded",
				Detail: detail(from + " " + money(p.Debit(), from) + " to " + p.AccountNumber)})
	}
	return t
}

type collectionJSON struct {
	ID                string             `json:"id"`
	Type              string             `json:"type"`
	Status            string             `json:"status"`
	From              collectionFromJSON `json:"from"`
	To                collectionToJSON   `json:"to"`
	Fee               moneyJSON          `json:"fee"`
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
	AccountNumber string         `json:"accountNumber"`
	Code          *string        `json:"code"` // null on deposits
	Amount        string         `json:"amount"`
	Currency      string         `json:"currency"`
	KYC           jsontext.Value `json:"kyc"`
}

type collectionToJSON struct {
	AccountNumber *string `json:"accountNumber"`
	Amount        string  `json:"amount"`
	Currency      string  `json:"currency"`
}

func renderCollection(c *ledger.Collection) collectionJSON {
	amt := money(c.Spec.Amount, c.Spec.Currency)
	var completedAt *string
	if c.Status == ledger.CollectionCompleted {
		completedAt = optionalTimestamp(c.CompletedAt)
	}
	return collectionJSON{
		ID:     c.ID,
		Type:   c.Type,
		Status: c.Status.String(),
		From: collectionFromJSON{
			AccountNumber: c.Spec.PayerNumber,
			Code:          optional(c.Spec.Method),
			Amount:        amt,
			Currency:      c.Spec.Currency,
			KYC:           objectOrEmpty(c.Spec.KYC),
		},
		To:                collectionToJSON{AccountNumber: optional(c.AccountNumber), Amount: amt, Currency: c.Spec.Currency},
		Fee:               moneyJSON{Amount: money(c.Fee, c.Spec.Currency), Currency: c.Spec.Currency},
		Rate:              "1",
		Details:           depositDetails(c),
		Narration:         optional(c.Spec.Narration),
		ExternalReference: optional(c.ExternalReference),
		Metadata:          objectOrEmpty(c.Spec.Metadata),
		StatusMessage:     optional(c.StatusMessage),
		CompletedAt:       completedAt,
		CreatedAt:         timestamp(c.CreatedAt),
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
func (s *Server) renderAccountNow(a *ledger.Account) accountJSON {
	out := renderAccount(a)
	out.EstimatedUSD = s.estimatedUSD(a.Currency, a.Total)
	return out
}

// renderAccount renders a balance account as of its record: an event's
// payload, fixed when it is built, carries no estimate (null).
func renderAccount(a *ledger.Account) accountJSON {
	return accountJSON{
		ID:               a.Number,
		Currency:         a.Currency,
		AvailableBalance: money(a.Available(), a.Currency),
		PendingBalance:   money(a.Held, a.Currency),
		TotalBalance:     money(a.Total, a.Currency),
		CreatedAt:        timestamp(a.CreatedAt),
	}
}

// estimatedUSD is amount of currency in USD at the current rate (rounded
// down to the cent), or nil when there is no rate for the pair.
func (s *Server) estimatedUSD(currency string, amount ledger.Minor) *string {
	usd, ok := s.cfg.App.USDValue(currency, amount)
	if !ok {
		return nil
	}
	return optional(money(usd, "USD"))
}

type entryJSON struct {
	ID                string  `json:"id"`
	Sequence          uint64  `json:"sequence"`
	Type              string  `json:"type"`
	Amount            string  `json:"amount"`
	Currency          string  `json:"currency"`
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

func renderEntry(ids *ledger.PublicIDs, n *ledger.NumberedEntry, currency string) entryJSON {
	e := &n.Entry
	return entryJSON{
		ID:                ids.EntryID(n.Seq),
		Sequence:          n.Seq,
		Type:              referenceEntryType(e),
		Amount:            money(e.Amount, currency),
		Currency:          currency,
		AccountNumber:     e.Account,
		BalanceAfter:      money(e.BalanceAfter, currency),
		ReferenceType:     optional(e.Type.ReferenceType()),
		ReferenceID:       optional(ids.PublicRef(e.RefID)),
		ExternalReference: optional(e.ExternalRef),
		CreatedAt:         timestamp(e.At),
	}
}
