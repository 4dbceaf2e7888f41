package money

import (
	"github.com/goccy/go-json/jsontext"

	"payments/http/core"
	"payments/ledger"
	"payments/ledger/orders"
)

// The order's shape: the caller's two sides, the instructions, the amounts
// expected and received, the linked legs. Absent values are null.

type orderJSON struct {
	ID                string                `json:"id"`
	Status            string                `json:"status"`
	From              orderFromJSON         `json:"from"`
	To                orderToJSON           `json:"to"`
	Fee               core.MoneyJSON        `json:"fee"`
	Rate              *string               `json:"rate"`
	Instructions      orderInstructionsJSON `json:"instructions"`
	ExpectedAmount    string                `json:"expectedAmount"`
	ReceivedAmount    *string               `json:"receivedAmount"`
	CollectionID      *string               `json:"collectionId"`
	PayoutID          *string               `json:"payoutId"`
	ExternalReference string                `json:"externalReference"`
	Narration         *string               `json:"narration"`
	Metadata          jsontext.Value        `json:"metadata"`
	StatusMessage     *string               `json:"statusMessage"`
	ExpiresAt         *string               `json:"expiresAt"`
	CompletedAt       *string               `json:"completedAt"`
	CreatedAt         string                `json:"createdAt"`
	UpdatedAt         string                `json:"updatedAt"`
	Timeline          []timelineJSON        `json:"timeline,omitempty"`
}

type orderFromJSON struct {
	Code string `json:"code"`
	core.MoneyJSON
	AccountNumber *string        `json:"accountNumber"`
	Bank          *string        `json:"bank"`
	Address       *string        `json:"address"`
	Tag           *string        `json:"tag,omitempty"`
	Chain         *string        `json:"chain"`
	KYC           jsontext.Value `json:"kyc"`
}

type orderToJSON struct {
	Code          string `json:"code"`
	AccountNumber string `json:"accountNumber"`
	core.MoneyJSON
	Tag *string        `json:"tag,omitempty"`
	KYC jsontext.Value `json:"kyc"`
}

type orderInstructionsJSON struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	core.MoneyJSON
	Address       *string `json:"address"`
	Tag           *string `json:"tag,omitempty"`
	Chain         *string `json:"chain,omitempty"`
	Bank          *string `json:"bank"`
	AccountNumber *string `json:"accountNumber"`
	AccountName   *string `json:"accountName"`
}

// renderOrder is the API shape of an order, as every endpoint and every
// order.* event payload shows it (without the timeline, which only the get
// by id adds).
func renderOrder(o *orders.Order) orderJSON {
	from, to := o.Spec.FromCurrency, o.Spec.ToCurrency
	in := &o.Instructions
	expected := core.MoneyOf(o.Expected(), from)
	var received *string
	if o.ReceivedAt != 0 {
		received = core.Optional(core.Money(o.ReceivedAmount, from))
	}
	return orderJSON{
		ID:     o.ID,
		Status: o.Status.String(),
		From: orderFromJSON{
			Code:          o.Spec.FromMethod,
			MoneyJSON:     expected, // what the customer sends, fee included (NOTES: amount sides)
			AccountNumber: core.Optional(core.FirstNonEmpty(o.Spec.FromAccountNumber, in.AccountNumber)),
			Bank:          core.Optional(in.Bank),
			Address:       core.Optional(in.Address),
			Tag:           core.Optional(in.Tag),
			Chain:         core.Optional(in.Chain),
			KYC:           core.ObjectOrEmpty(o.Spec.FromKYC),
		},
		To: orderToJSON{
			Code:          o.Spec.ToMethod,
			AccountNumber: o.Spec.ToAccountNumber,
			MoneyJSON:     core.MoneyOf(o.ToAmount, to),
			Tag:           core.Optional(o.Spec.ToTag),
			KYC:           core.ObjectOrEmpty(o.Spec.ToKYC),
		},
		Fee:  core.MoneyOf(o.Fee, from),
		Rate: core.Optional(o.Rate),
		Instructions: orderInstructionsJSON{
			Type:          in.Type,
			Message:       instructionsMessage(in, expected.Amount, from),
			MoneyJSON:     expected,
			Address:       core.Optional(in.Address),
			Tag:           core.Optional(in.Tag),
			Chain:         core.Optional(in.Chain),
			Bank:          core.Optional(in.Bank),
			AccountNumber: core.Optional(in.AccountNumber),
			AccountName:   core.Optional(in.AccountName),
		},
		ExpectedAmount:    expected.Amount,
		ReceivedAmount:    received,
		CollectionID:      core.Optional(o.CollectionID),
		PayoutID:          core.Optional(o.PayoutID),
		ExternalReference: o.ExternalReference,
		Narration:         core.Optional(o.Spec.Narration),
		Metadata:          core.ObjectOrEmpty(o.Spec.Metadata),
		StatusMessage:     core.Optional(o.StatusMessage),
		ExpiresAt:         core.OptionalTimestamp(o.ExpiresAt),
		CompletedAt:       completedAt(o.Status == orders.Completed, o.CompletedAt),
		CreatedAt:         core.Timestamp(o.CreatedAt),
		UpdatedAt:         core.Timestamp(o.UpdatedAt),
	}
}

// instructionsMessage is what to show the customer, verbatim.
func instructionsMessage(in *orders.Instructions, amount, currency string) string {
	switch in.Type {
	case orders.InstructionsCrypto:
		m := "Send " + amount + " " + currency + " on " + in.Chain + " to " + in.Address
		if in.Tag != "" {
			m += " with memo " + in.Tag
		}
		return m
	case orders.InstructionsVirtualAccount:
		return "Transfer " + amount + " " + currency + " to account " + in.AccountNumber + " (" + in.AccountName + ") at " + in.Bank
	default:
		return "Approve the prompt for " + amount + " " + currency + " sent to " + in.AccountNumber
	}
}

// orderTimeline is every state change of the order and its two legs, oldest
// first, as the order recorded them.
func orderTimeline(o *orders.Order) []timelineJSON {
	out := make([]timelineJSON, 0, len(o.Steps))
	for _, st := range o.Steps {
		var kind, title string
		switch st.Leg {
		case orders.LegCollection:
			kind, title = orderLegStep(ledger.CollectionStatus(st.Status).String())
			title = "Collection: " + title
		case orders.LegPayout:
			kind, title = orderLegStep(ledger.PayoutStatus(st.Status).String())
			title = "Payout: " + title
		default:
			status := orders.Status(st.Status)
			kind, title = "status", orderStepTitles[status]
			switch status {
			case orders.Created:
				kind = "created"
			case orders.ProcessingPayout:
				kind = "processing"
			case orders.Completed:
				kind = "completed"
			case orders.Failed:
				kind = "failed"
			}
		}
		out = append(out, timelineJSON{At: core.Timestamp(st.At), Kind: kind, Title: title, Detail: core.Optional(st.Message)})
	}
	return out
}

func orderLegStep(status string) (kind, title string) {
	switch status {
	case "pending":
		return "created", "Created"
	case "processing":
		return "processing", "Processing"
	case "completed":
		return "completed", "Completed"
	default:
		return "failed", "Failed"
	}
}

var orderStepTitles = map[orders.Status]string{
	orders.Created:               "Order created",
	orders.AwaitingFunds:         "Awaiting funds",
	orders.AwaitingConfirmations: "Awaiting confirmations",
	orders.FundsReceived:         "Funds received",
	orders.Overpaid:              "Overpaid",
	orders.Underpaid:             "Underpaid",
	orders.ProcessingPayout:      "Processing payout",
	orders.Completed:             "Order completed",
	orders.Failed:                "Order failed",
	orders.Expired:               "Order expired",
}
