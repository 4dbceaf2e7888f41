package app

import (
	"payments/actors"
	"payments/ledger"
	"payments/ledger/disputes"
)

// Disputes: opened by the service against a completed collection (on the
// sandbox, by a simulation), answered by the merchant, resolved by the
// service. Each change is one ledger command, which moves the hold on the
// balance and records the events.

// DisputeResponse is the merchant's answer to an open dispute.
type DisputeResponse struct {
	DisputeID string
	Action    string // disputes.ActionAccept or disputes.ActionContest
	Reason    string
	FileIDs   []string // evidence: files of purpose dispute.evidence
}

// RespondToDispute accepts or contests one of the caller's disputes; a
// reason is posted to its thread.
func (a *App) RespondToDispute(c Caller, in DisputeResponse) actors.Reply {
	return a.propose(&disputes.Respond{
		At: a.sys.Now().UnixMilli(), ID: in.DisputeID, OrgID: c.OrgID, Action: in.Action, Reason: in.Reason,
		FileIDs: in.FileIDs, MessageID: actors.NewID("dsm_"),
	})
}

// DisputeMessage is a merchant's message to a dispute's thread.
type DisputeMessage struct {
	DisputeID   string
	Body        string
	Attachments []disputes.Attachment // files of the organization, or linked documents (disputes.LinkedAttachment)
}

// AddDisputeMessage posts the caller's message to one of its disputes.
func (a *App) AddDisputeMessage(c Caller, in DisputeMessage) actors.Reply {
	return a.propose(&disputes.AddMessage{
		At: a.sys.Now().UnixMilli(), DisputeID: in.DisputeID, OrgID: c.OrgID, MessageID: actors.NewID("dsm_"),
		AuthorType: disputes.AuthorMerchant, Body: in.Body, Attachments: in.Attachments,
	})
}

// DisputeOpening is the sandbox's simulation of a dispute against a
// completed collection.
type DisputeOpening struct {
	CollectionID string
	// Amount is the amount held, as the request gave it (a decimal in the
	// collection's currency); nil holds the whole collection.
	Amount   *string
	Category string // fraud, chargeback or other
	Reason   string // posted as the service's first message, if set
}

// OpenDispute opens a dispute against one of the caller's collections and
// holds its amount on the balance; the same collection again replays it.
// The amount is read in the collection's currency, so its bad form is
// found here (validation_error on "amount").
func (a *App) OpenDispute(c Caller, in DisputeOpening) actors.Reply {
	if e := a.sandboxOnly(); e != nil {
		return refused(e)
	}
	col, found := a.sys.Reader().Collection(in.CollectionID)
	if !found || col.OrgID != c.OrgID {
		return refused(&ledger.Error{Code: ledger.CodeNotFound, Message: "Collection not found"})
	}
	amount := col.Spec.Amount
	if in.Amount != nil {
		cur, _ := ledger.LookupCurrency(col.Spec.Currency)
		m, err := ledger.ParseAmount(*in.Amount, cur)
		if err != nil {
			return refused(ledger.FieldInvalid("amount", ledger.AsError(err).Message))
		}
		amount = m
	}
	cmd := &disputes.Open{
		At: a.sys.Now().UnixMilli(), ID: actors.NewID("dsp_"), OrgID: c.OrgID, CollectionID: col.ID,
		Amount: amount, Category: in.Category, Reason: in.Reason,
	}
	if in.Reason != "" {
		cmd.MessageID = actors.NewID("dsm_")
	}
	return a.propose(cmd)
}

// ResolveDispute is the sandbox's simulation of the service's ruling on
// one of the caller's disputes: won releases the hold, lost debits it.
func (a *App) ResolveDispute(c Caller, disputeID string, won bool, message string) actors.Reply {
	if e := a.sandboxOnly(); e != nil {
		return refused(e)
	}
	return a.propose(&disputes.Resolve{At: a.sys.Now().UnixMilli(), ID: disputeID, OrgID: c.OrgID, Won: won, Message: message})
}
