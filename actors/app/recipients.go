package app

import (
	"payments/actors"
	"payments/ledger/recipients"
)

// Recipients: saved payout destinations. The front end checks a
// recipient's shape against the catalogue and resolves its holder's name
// on the rail before it comes here; the ledger keeps the rules of its
// lifecycle.

// CreateRecipient saves a recipient in the caller's organization.
func (a *App) CreateRecipient(c Caller, spec recipients.Spec) actors.Reply {
	return a.propose(&recipients.Create{At: a.sys.Now().UnixMilli(), ID: actors.NewID("rcp_"), OrgID: c.OrgID, Spec: spec})
}

// CreateRecipients saves recipients together, in one command; the reply's
// recipients.Batch(Result) has one outcome per spec, in order.
func (a *App) CreateRecipients(c Caller, specs []recipients.Spec) actors.Reply {
	now := a.sys.Now().UnixMilli()
	cmd := &recipients.CreateBatch{At: now, OrgID: c.OrgID, Items: make([]recipients.Create, 0, len(specs))}
	for _, spec := range specs {
		cmd.Items = append(cmd.Items, recipients.Create{At: now, ID: actors.NewID("rcp_"), OrgID: c.OrgID, Spec: spec})
	}
	return a.propose(cmd)
}

// RecipientChange is a change of the recipient ID.
type RecipientChange struct {
	ID string
	recipients.Change
}

// UpdateRecipient changes one of the caller's recipients.
func (a *App) UpdateRecipient(c Caller, in RecipientChange) actors.Reply {
	return a.propose(&recipients.Update{At: a.sys.Now().UnixMilli(), ID: in.ID, OrgID: c.OrgID, Change: in.Change})
}

// DeleteRecipient removes one of the caller's recipients from use and from
// view; payouts already made keep their reference to it.
func (a *App) DeleteRecipient(c Caller, id string) actors.Reply {
	return a.propose(&recipients.Delete{At: a.sys.Now().UnixMilli(), ID: id, OrgID: c.OrgID})
}
