package app_test

import (
	"testing"

	"payments/actors"
	"payments/actors/app"
	"payments/ledger"
	"payments/ledger/recipients"
)

var mtnRecipient = recipients.Spec{Method: "gh_mtn", MethodType: ledger.MethodMobileMoney, Country: "GH", Currency: "GHS",
	AccountName: "Ama Mensah", AccountNumber: "233559630374"}

func TestRecipients(t *testing.T) {
	s := newStack(t, stackOptions{})
	created := s.app.CreateRecipient(s.owner, mtnRecipient)
	mustApply(t, "create", created)
	id := recipients.Of(created.Result).ID
	noName := mtnRecipient
	noName.AccountName = ""
	for _, c := range []struct {
		name string
		do   func() actors.Reply
		want ledger.Code
	}{
		{"a recipient without the name its rail needs", func() actors.Reply { return s.app.CreateRecipient(s.owner, noName) }, ledger.CodeValidation},
		{"relabel", func() actors.Reply {
			return s.app.UpdateRecipient(s.owner, app.RecipientChange{ID: id, Change: recipients.Change{SetLabel: true, Label: "Ama's wallet"}})
		}, ""},
		{"deactivate", func() actors.Reply {
			return s.app.UpdateRecipient(s.owner, app.RecipientChange{ID: id, Change: recipients.Change{SetActive: true, Active: false}})
		}, ""},
		{"another organization's", func() actors.Reply {
			return s.app.UpdateRecipient(app.Caller{OrgID: "org_other"}, app.RecipientChange{ID: id, Change: recipients.Change{SetLabel: true, Label: "x"}})
		}, ledger.CodeNotFound},
		{"delete", func() actors.Reply { return s.app.DeleteRecipient(s.owner, id) }, ""},
		{"change a deleted one", func() actors.Reply {
			return s.app.UpdateRecipient(s.owner, app.RecipientChange{ID: id, Change: recipients.Change{SetActive: true, Active: true}})
		}, ledger.CodeNotFound},
	} {
		wantCode(t, c.name, c.do(), c.want)
	}
	if _, ok := recipients.Get(s.sys.Reader(), s.org, id); ok {
		t.Fatal("a deleted recipient is still seen")
	}
}

// A batch is one command with an outcome per item, in order, each with
// its own id.
func TestCreateRecipientsInOneBatch(t *testing.T) {
	s := newStack(t, stackOptions{})
	bad := mtnRecipient
	bad.AccountNumber = ""
	second := mtnRecipient
	second.AccountNumber = "233241234567"
	r := s.app.CreateRecipients(s.owner, []recipients.Spec{mtnRecipient, bad, second})
	mustApply(t, "batch", r)
	out := recipients.Batch(r.Result)
	if len(out) != 3 || out[0].Err != nil || out[1].Err == nil || out[2].Err != nil {
		t.Fatalf("outcomes %+v", out)
	}
	if out[0].Recipient.ID == out[2].Recipient.ID || out[2].Recipient.Spec.AccountNumber != second.AccountNumber {
		t.Fatalf("the saved ones: %+v %+v", out[0].Recipient, out[2].Recipient)
	}
}
