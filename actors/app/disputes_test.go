package app_test

import (
	"testing"

	"payments/actors"
	"payments/actors/app"
	"payments/ledger"
	"payments/ledger/disputes"
)

// completedCollection collects 500.00 GHS into s's organization and waits
// until the sandbox completes it.
func (s *stack) completedCollection(t *testing.T, ref string) ledger.Collection {
	t.Helper()
	r := s.sys.CreateCollection(actors.CollectionRequest{
		OrgID: s.org, ExternalReference: ref, MethodType: ledger.MethodMobileMoney,
		Spec: ledger.CollectionSpec{Currency: "GHS", Amount: 50_000, Method: "gh_mtn", PayerNumber: "233559630374"},
	})
	mustApply(t, "collect", r)
	id := r.Result.Collection.ID
	var col ledger.Collection
	waitFor(t, "the collection completes", func() bool {
		col, _ = s.sys.Reader().Collection(id)
		return col.Status == ledger.CollectionCompleted
	})
	return col
}

func TestOpenDispute(t *testing.T) {
	s := newStack(t, stackOptions{})
	col := s.completedCollection(t, "sale-1")
	amount := func(v string) *string { return &v }
	for _, c := range []struct {
		name   string
		caller app.Caller
		in     app.DisputeOpening
		want   ledger.Code
		field  string // of a validation error
		amount ledger.Minor
	}{
		{"an unknown collection", s.owner, app.DisputeOpening{CollectionID: "col_unknown", Category: "fraud"}, ledger.CodeNotFound, "", 0},
		{"another organization's", app.Caller{OrgID: "org_other"}, app.DisputeOpening{CollectionID: col.ID, Category: "fraud"}, ledger.CodeNotFound, "", 0},
		{"an amount in too many places", s.owner, app.DisputeOpening{CollectionID: col.ID, Amount: amount("1.001"), Category: "fraud"}, ledger.CodeValidation, "amount", 0},
		{"not an amount", s.owner, app.DisputeOpening{CollectionID: col.ID, Amount: amount(""), Category: "fraud"}, ledger.CodeValidation, "amount", 0},
		{"part of it, with a reason", s.owner, app.DisputeOpening{CollectionID: col.ID, Amount: amount("200.00"), Category: "fraud", Reason: "Card stolen"}, "", "", 20_000},
		{"the same again replays", s.owner, app.DisputeOpening{CollectionID: col.ID, Amount: amount("200.00"), Category: "fraud", Reason: "Card stolen"}, "", "", 20_000},
	} {
		r := s.app.OpenDispute(c.caller, c.in)
		wantCode(t, c.name, r, c.want)
		if c.field != "" && (len(r.Result.Err.Fields) != 1 || r.Result.Err.Fields[0].Field != c.field) {
			t.Fatalf("%s: fields %+v", c.name, r.Result.Err.Fields)
		}
		if c.want == "" {
			d := disputes.Of(r.Result)
			if d.Amount != c.amount || d.CollectionID != col.ID || len(d.Messages) != 1 {
				t.Fatalf("%s: %+v", c.name, d)
			}
		}
	}
}

// The merchant answers a dispute, writes to its thread, and the service
// rules on it.
func TestDisputeThread(t *testing.T) {
	s := newStack(t, stackOptions{})
	col := s.completedCollection(t, "sale-1")
	held := "100.00" // not the whole 500.00: its fee left 492.50 available
	opened := s.app.OpenDispute(s.owner, app.DisputeOpening{CollectionID: col.ID, Amount: &held, Category: "chargeback"})
	mustApply(t, "open", opened)
	id := disputes.Of(opened.Result).ID
	file := s.app.CreateFile(s.owner, evidence)
	mustApply(t, "evidence", file)
	fileID := disputes.FileOf(file.Result).ID
	for _, c := range []struct {
		name string
		do   func() actors.Reply
		want ledger.Code
	}{
		{"a message with a file and a link", func() actors.Reply {
			return s.app.AddDisputeMessage(s.owner, app.DisputeMessage{DisputeID: id, Body: "See attached",
				Attachments: []disputes.Attachment{{FileID: fileID}, disputes.LinkedAttachment("note.pdf", "https://docs.example/note.pdf")}})
		}, ""},
		{"a file of nobody's", func() actors.Reply {
			return s.app.AddDisputeMessage(s.owner, app.DisputeMessage{DisputeID: id, Body: "x", Attachments: []disputes.Attachment{{FileID: "file_unknown"}}})
		}, ledger.CodeValidation},
		{"contest with evidence", func() actors.Reply {
			return s.app.RespondToDispute(s.owner, app.DisputeResponse{DisputeID: id, Action: disputes.ActionContest, Reason: "Delivered", FileIDs: []string{fileID}})
		}, ""},
		{"answer twice", func() actors.Reply {
			return s.app.RespondToDispute(s.owner, app.DisputeResponse{DisputeID: id, Action: disputes.ActionAccept})
		}, ledger.CodeBadRequest},
		{"rule on an unknown one", func() actors.Reply { return s.app.ResolveDispute(s.owner, "dsp_unknown", true, "") }, ledger.CodeNotFound},
		{"won", func() actors.Reply { return s.app.ResolveDispute(s.owner, id, true, "The evidence holds") }, ""},
		{"a message after the ruling", func() actors.Reply {
			return s.app.AddDisputeMessage(s.owner, app.DisputeMessage{DisputeID: id, Body: "thanks"})
		}, ledger.CodeBadRequest},
	} {
		wantCode(t, c.name, c.do(), c.want)
	}
	d, _ := disputes.Get(s.sys.Reader(), s.org, id)
	// The thread: the merchant's message and the contest's reason; the
	// ruling is the dispute's status message.
	if d.Status != disputes.StatusDeclined || len(d.Messages) != 2 || d.StatusMessage != "The evidence holds" {
		t.Fatalf("the dispute after: %s %q, %d messages", d.Status, d.StatusMessage, len(d.Messages))
	}
}

// Simulations do not exist on production.
func TestSimulationsOnlyOnTheSandbox(t *testing.T) {
	s := newStack(t, stackOptions{live: true})
	for name, r := range map[string]actors.Reply{
		"open a dispute":    s.app.OpenDispute(s.owner, app.DisputeOpening{CollectionID: "col_x", Category: "fraud"}),
		"resolve a dispute": s.app.ResolveDispute(s.owner, "dsp_x", true, ""),
		"fund a balance":    s.app.FundBalance(s.owner, "GHS", 100, "ref"),
		"advance the clock": s.app.AdvanceClock(s.owner, 1000).Reply,
	} {
		wantCode(t, name, r, ledger.CodeNotFound)
	}
}
