package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
)

var testDigest = func() string { h := sha256.Sum256([]byte("pdf")); return hex.EncodeToString(h[:]) }()

// disputeFixture is an organization with two completed collections of
// 500.00 GHS (fee 7.50 each) and a dispute.evidence file.
func disputeFixture(t *testing.T) *testState {
	t.Helper()
	s := newTestState(t)
	for _, org := range []string{"org_a", "org_b"} {
		hash := sha256.Sum256([]byte(org))
		if res := s.Apply(&CreateOrganization{At: 1, ID: org, Name: "A", Key: CreateAPIKey{At: 1, ID: "key_" + org[4:], OrgID: org, Hash: string(hash[:])}}); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	for i, id := range []string{"col_1", "col_2", "col_3"} {
		res := s.Apply(&CreateCollection{At: 2, ID: id, OrgID: "org_a", ExternalReference: id,
			Spec: CollectionSpec{Currency: "GHS", Amount: 50_000, Method: "gh_mtn", PayerNumber: "233241234567"}, MethodType: MethodMobileMoney, Fee: 750})
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		if i < 2 {
			if res := s.Apply(&SettleCollection{At: 3, ID: id, Completed: true}); res.Err != nil {
				t.Fatal(res.Err)
			}
		}
	}
	for _, f := range []*CreateFile{
		{At: 4, ID: "file_ev", OrgID: "org_a", Purpose: "dispute.evidence", Filename: "receipt.pdf", ContentType: "application/pdf", Size: 3, SHA256: testDigest},
		{At: 4, ID: "file_logo", OrgID: "org_a", Purpose: "business.logo", Filename: "logo.png", ContentType: "image/png", Size: 3, SHA256: testDigest},
		{At: 4, ID: "file_b", OrgID: "org_b", Purpose: "dispute.evidence", Filename: "b.pdf", ContentType: "application/pdf", Size: 3, SHA256: testDigest},
	} {
		if res := s.Apply(f); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	return s
}

func mustCheck(t *testing.T, s *testState) {
	t.Helper()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

// balances returns the GHS account's total and held amounts.
func balances(s *testState) (total, held Minor) {
	a, _ := s.AccountFor("org_a", "GHS")
	return a.Total, a.Held
}

// A dispute's whole life, both endings: the amount is held while open, a
// win releases it, a loss (or accepting) debits it to the collections
// source; the journal balances and the holds match the open disputes after
// every step, and each step records its event.
func TestDisputeLife(t *testing.T) {
	s := disputeFixture(t)
	mustCheck(t, s)
	total0, _ := balances(s) // 2 × (500.00 − 7.50)
	if total0 != 98_500 {
		t.Fatalf("total = %d", total0)
	}
	steps := []struct {
		name         string
		cmd          Command
		total, held  Minor
		status       DisputeStatus
		events       []string
		replay       bool
		messagesWant int
	}{
		{"open d1", &OpenDispute{At: 10, ID: "dsp_1", OrgID: "org_a", CollectionID: "col_1", Amount: 20_000, Category: "fraud", Reason: "Cardholder says unauthorised", MessageID: "dsm_0"},
			98_500, 20_000, DisputeOpen, []string{EventDisputeCreated}, false, 1},
		{"open d1 again is a replay", &OpenDispute{At: 11, ID: "dsp_x", OrgID: "org_a", CollectionID: "col_1", Amount: 20_000, Category: "fraud"},
			98_500, 20_000, DisputeOpen, nil, true, 1},
		{"contest d1 with evidence", &RespondToDispute{At: 12, ID: "dsp_1", OrgID: "org_a", Action: "contest", Reason: "Delivered", FileIDs: []string{"file_ev"}, MessageID: "dsm_1"},
			98_500, 20_000, DisputeUnderReview, []string{EventDisputeUpdated}, false, 2},
		{"message on d1", &AddDisputeMessage{At: 13, DisputeID: "dsp_1", OrgID: "org_a", MessageID: "dsm_2", AuthorType: AuthorMerchant, Body: "More proof", Attachments: []Attachment{{FileID: "file_ev", Name: "proof.pdf"}}},
			98_500, 20_000, DisputeUnderReview, []string{EventDisputeUpdated}, false, 3},
		{"d1 won", &ResolveDispute{At: 14, ID: "dsp_1", OrgID: "org_a", Won: true},
			98_500, 0, DisputeDeclined, []string{EventDisputeClosed}, false, 3},
		{"open d2", &OpenDispute{At: 15, ID: "dsp_2", OrgID: "org_a", CollectionID: "col_2", Amount: 50_000, Category: "chargeback"},
			98_500, 50_000, DisputeOpen, []string{EventDisputeCreated}, false, 0},
		{"d2 lost", &ResolveDispute{At: 16, ID: "dsp_2", OrgID: "org_a", Won: false, Message: "Issuer ruled for the payer"},
			48_500, 0, DisputeAccepted, []string{EventDisputeClosed}, false, 0},
	}
	for _, st := range steps {
		before := s.EventCount()
		res := s.Apply(st.cmd)
		if res.Err != nil {
			t.Fatalf("%s: %v", st.name, res.Err)
		}
		if res.Replayed != st.replay || res.Dispute == nil {
			t.Fatalf("%s: replayed %v, dispute %v", st.name, res.Replayed, res.Dispute)
		}
		mustCheck(t, s)
		if total, held := balances(s); total != st.total || held != st.held {
			t.Fatalf("%s: total %d held %d, want %d %d", st.name, total, held, st.total, st.held)
		}
		d, _ := s.Dispute("org_a", res.Dispute.ID)
		if d.Status != st.status || len(d.Messages) != st.messagesWant {
			t.Fatalf("%s: status %s, %d messages", st.name, d.Status, len(d.Messages))
		}
		var got []string
		for seq := before + 1; seq <= s.EventCount(); seq++ {
			ev, _ := s.EventAt(seq)
			got = append(got, ev.Type)
			if sub, ok := ev.Subject.(Dispute); !ok || sub.Status != d.Status {
				t.Fatalf("%s: event subject %+v", st.name, ev.Subject)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(st.events) {
			t.Fatalf("%s: events %v, want %v", st.name, got, st.events)
		}
	}
	d1, _ := s.Dispute("org_a", "dsp_1")
	if d1.Evidence.Action != "contest" || d1.Messages[1].Attachments[0].Name != "receipt.pdf" || d1.Messages[2].Attachments[0].Name != "proof.pdf" || d1.ResolvedAt != 14 {
		t.Fatalf("d1 = %+v", d1)
	}
	// The loss is two journal entries against the collections source.
	st := s.Statement(d1.AccountNumber, EntryFilter{RefID: "dsp_2"}, CursorStart, 10)
	if len(st.Items) != 1 || st.Items[0].Entry.Type != EntryDisputeDebit || st.Items[0].Entry.Amount != -50_000 {
		t.Fatalf("statement = %+v", st.Items)
	}
	if EntryDisputeDebit.String() != "dispute_debit" || EntryDisputeDebit.ReferenceType() != "dispute" {
		t.Fatal("entry type not registered")
	}
	if et, ok := ParseEntryType("dispute_reversal"); !ok || et != EntryDisputeReversal {
		t.Fatal("ParseEntryType(dispute_reversal)")
	}
	if p := s.Disputes("org_a", DisputeAccepted, CursorStart, 10); len(p.Items) != 1 || p.Items[0].ID != "dsp_2" {
		t.Fatalf("accepted disputes = %+v", p.Items)
	}
	if p := s.Disputes("org_a", 0, CursorStart, 10); len(p.Items) != 2 || p.Items[0].ID != "dsp_2" {
		t.Fatalf("disputes, newest first = %+v", p.Items)
	}

	// Everything survives a snapshot byte for byte, indexes included.
	r := restoreSame(t, s)
	if res := r.Apply(&OpenDispute{At: 20, ID: "dsp_y", OrgID: "org_a", CollectionID: "col_1", Amount: 20_000, Category: "fraud"}); !res.Replayed {
		t.Fatalf("the restored collection index lost dispute dsp_1: %+v", res)
	}
}

// Accepting concedes at once: the amount is debited and the dispute closed.
func TestDisputeAccept(t *testing.T) {
	s := disputeFixture(t)
	s.Apply(&OpenDispute{At: 10, ID: "dsp_1", OrgID: "org_a", CollectionID: "col_1", Amount: 10_000, Category: "fraud"})
	res := s.Apply(&RespondToDispute{At: 11, ID: "dsp_1", OrgID: "org_a", Action: "accept"})
	if res.Err != nil || res.Dispute.Status != DisputeAccepted || len(res.Dispute.Messages) != 0 {
		t.Fatalf("accept: %+v", res)
	}
	mustCheck(t, s)
	if total, held := balances(s); total != 88_500 || held != 0 {
		t.Fatalf("total %d held %d", total, held)
	}
	ev, _ := s.EventAt(s.EventCount())
	if ev.Type != EventDisputeClosed {
		t.Fatalf("last event %s", ev.Type)
	}
}

// A hold takes from what payouts can draw on, and a dispute cannot hold
// more than is available.
func TestDisputeHoldLimitsPayouts(t *testing.T) {
	s := disputeFixture(t)
	s.Apply(&OpenDispute{At: 10, ID: "dsp_1", OrgID: "org_a", CollectionID: "col_1", Amount: 50_000, Category: "fraud"})
	res := s.Apply(&CreatePayout{At: 11, ID: "pay_ghs_1", OrgID: "org_a", ExternalReference: "p1",
		Spec: PayoutSpec{Currency: "GHS", Amount: 48_500, AmountSide: SideTo, Method: "gh_mtn"}, MethodType: MethodMobileMoney, Fee: 1})
	if res.Err == nil || res.Err.Code != CodeInsufficientFunds || res.Err.Available != 48_500 {
		t.Fatalf("payout over the hold: %+v", res.Err)
	}
	res = s.Apply(&CreatePayout{At: 11, ID: "pay_ghs_2", OrgID: "org_a", ExternalReference: "p2",
		Spec: PayoutSpec{Currency: "GHS", Amount: 48_000, AmountSide: SideTo, Method: "gh_mtn"}, MethodType: MethodMobileMoney, Fee: 0})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	mustCheck(t, s)
	// 500 left available; a second dispute of 500.00 cannot be held.
	before := encodeSnapshot(t, s)
	res = s.Apply(&OpenDispute{At: 12, ID: "dsp_2", OrgID: "org_a", CollectionID: "col_2", Amount: 50_000, Category: "fraud"})
	if res.Err == nil || res.Err.Code != CodeInsufficientFunds || res.Err.Available != 500 {
		t.Fatalf("second hold: %+v", res.Err)
	}
	if !bytes.Equal(encodeSnapshot(t, s), before) {
		t.Fatal("a refused hold changed the state")
	}
}

// Every rejected command leaves the state byte for byte as it was.
func TestDisputeAndFileRejectionsChangeNothing(t *testing.T) {
	s := disputeFixture(t)
	s.Apply(&OpenDispute{At: 10, ID: "dsp_open", OrgID: "org_a", CollectionID: "col_1", Amount: 10_000, Category: "fraud"})
	s.Apply(&OpenDispute{At: 10, ID: "dsp_done", OrgID: "org_a", CollectionID: "col_2", Amount: 10_000, Category: "fraud"})
	s.Apply(&ResolveDispute{At: 11, ID: "dsp_done", OrgID: "org_a", Won: true})
	mustCheck(t, s)
	cases := []struct {
		name string
		cmd  Command
		code Code
	}{
		{"file: bad id", &CreateFile{At: 20, ID: "x_1", OrgID: "org_a", Purpose: "dispute.evidence", Filename: "a.pdf", ContentType: "application/pdf", Size: 1, SHA256: testDigest}, CodeValidation},
		{"file: unknown org", &CreateFile{At: 20, ID: "file_n", OrgID: "org_z", Purpose: "dispute.evidence", Filename: "a.pdf", ContentType: "application/pdf", Size: 1, SHA256: testDigest}, CodeNotFound},
		{"file: unknown purpose", &CreateFile{At: 20, ID: "file_n", OrgID: "org_a", Purpose: "selfie", Filename: "a.pdf", ContentType: "application/pdf", Size: 1, SHA256: testDigest}, CodeValidation},
		{"file: too large", &CreateFile{At: 20, ID: "file_n", OrgID: "org_a", Purpose: "business.logo", Filename: "a.png", ContentType: "image/png", Size: 2<<20 + 1, SHA256: testDigest}, CodeBadRequest},
		{"file: empty", &CreateFile{At: 20, ID: "file_n", OrgID: "org_a", Purpose: "business.logo", Filename: "a.png", ContentType: "image/png", Size: 0, SHA256: testDigest}, CodeBadRequest},
		{"file: type", &CreateFile{At: 20, ID: "file_n", OrgID: "org_a", Purpose: "identity.selfie", Filename: "a.pdf", ContentType: "application/pdf", Size: 1, SHA256: testDigest}, CodeBadRequest},
		{"file: digest", &CreateFile{At: 20, ID: "file_n", OrgID: "org_a", Purpose: "dispute.evidence", Filename: "a.pdf", ContentType: "application/pdf", Size: 1, SHA256: "ABC"}, CodeValidation},
		{"file: no name", &CreateFile{At: 20, ID: "file_n", OrgID: "org_a", Purpose: "dispute.evidence", ContentType: "application/pdf", Size: 1, SHA256: testDigest}, CodeValidation},
		{"file: id taken", &CreateFile{At: 20, ID: "file_ev", OrgID: "org_a", Purpose: "dispute.evidence", Filename: "a.pdf", ContentType: "application/pdf", Size: 1, SHA256: testDigest}, CodeConflict},
		{"key: short", &SetFileSigningKey{At: 20, Key: "short"}, CodeValidation},
		{"open: other org's collection", &OpenDispute{At: 20, ID: "dsp_n", OrgID: "org_b", CollectionID: "col_1", Amount: 1, Category: "fraud"}, CodeNotFound},
		{"open: pending collection", &OpenDispute{At: 20, ID: "dsp_n", OrgID: "org_a", CollectionID: "col_3", Amount: 1, Category: "fraud"}, CodeBadRequest},
		{"open: different replay", &OpenDispute{At: 20, ID: "dsp_n", OrgID: "org_a", CollectionID: "col_1", Amount: 1, Category: "fraud"}, CodeConflict},
		{"open: bad category", &OpenDispute{At: 20, ID: "dsp_n", OrgID: "org_a", CollectionID: "col_1", Amount: 10_000, Category: "angry"}, CodeValidation},
		{"open: bad id", &OpenDispute{At: 20, ID: "d_n", OrgID: "org_a", CollectionID: "col_1", Amount: 1, Category: "fraud"}, CodeValidation},
		{"respond: unknown", &RespondToDispute{At: 20, ID: "dsp_z", OrgID: "org_a", Action: "accept"}, CodeNotFound},
		{"respond: other org", &RespondToDispute{At: 20, ID: "dsp_open", OrgID: "org_b", Action: "accept"}, CodeNotFound},
		{"respond: bad action", &RespondToDispute{At: 20, ID: "dsp_open", OrgID: "org_a", Action: "shrug"}, CodeValidation},
		{"respond: not an evidence file", &RespondToDispute{At: 20, ID: "dsp_open", OrgID: "org_a", Action: "contest", FileIDs: []string{"file_logo"}, MessageID: "dsm_n"}, CodeValidation},
		{"respond: other org's file", &RespondToDispute{At: 20, ID: "dsp_open", OrgID: "org_a", Action: "contest", FileIDs: []string{"file_b"}, MessageID: "dsm_n"}, CodeValidation},
		{"respond: file twice", &RespondToDispute{At: 20, ID: "dsp_open", OrgID: "org_a", Action: "contest", FileIDs: []string{"file_ev", "file_ev"}, MessageID: "dsm_n"}, CodeValidation},
		{"respond: resolved", &RespondToDispute{At: 20, ID: "dsp_done", OrgID: "org_a", Action: "accept"}, CodeBadRequest},
		{"message: resolved", &AddDisputeMessage{At: 20, DisputeID: "dsp_done", OrgID: "org_a", MessageID: "dsm_n", AuthorType: AuthorMerchant, Body: "hi"}, CodeBadRequest},
		{"message: empty", &AddDisputeMessage{At: 20, DisputeID: "dsp_open", OrgID: "org_a", MessageID: "dsm_n", AuthorType: AuthorMerchant}, CodeValidation},
		{"message: unknown file", &AddDisputeMessage{At: 20, DisputeID: "dsp_open", OrgID: "org_a", MessageID: "dsm_n", AuthorType: AuthorMerchant, Body: "x", Attachments: []Attachment{{FileID: "file_zz"}}}, CodeValidation},
		{"message: unknown dispute", &AddDisputeMessage{At: 20, DisputeID: "dsp_zz", OrgID: "org_a", MessageID: "dsm_n", AuthorType: AuthorMerchant, Body: "x"}, CodeNotFound},
		{"resolve: resolved", &ResolveDispute{At: 20, ID: "dsp_done", OrgID: "org_a", Won: false}, CodeBadRequest},
		{"resolve: other org", &ResolveDispute{At: 20, ID: "dsp_open", OrgID: "org_b", Won: false}, CodeNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := encodeSnapshot(t, s)
			events := s.EventCount()
			res := s.Apply(c.cmd)
			if res.Err == nil || res.Err.Code != c.code {
				t.Fatalf("got %+v, want %s", res.Err, c.code)
			}
			if !bytes.Equal(encodeSnapshot(t, s), before) || s.EventCount() != events {
				t.Fatal("a rejected command changed the state")
			}
		})
	}
	mustCheck(t, s)
}

// The first signing key committed wins; later ones are replays.
func TestFileSigningKeyFirstWins(t *testing.T) {
	s := newTestState(t)
	if _, ok := s.FileSigningKey(); ok {
		t.Fatal("a new ledger has a key")
	}
	k1, k2 := string(bytes.Repeat([]byte{1}, 32)), string(bytes.Repeat([]byte{2}, 32))
	if res := s.Apply(&SetFileSigningKey{At: 1, Key: k1}); res.Err != nil || res.Replayed {
		t.Fatalf("first key: %+v", res)
	}
	if res := s.Apply(&SetFileSigningKey{At: 2, Key: k2}); res.Err != nil || !res.Replayed {
		t.Fatalf("second key: %+v", res)
	}
	if k, _ := s.FileSigningKey(); string(k) != k1 {
		t.Fatal("the second key replaced the first")
	}
	r, err := Restore(bytes.NewReader(encodeSnapshot(t, s)))
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := r.FileSigningKey(); string(k) != k1 {
		t.Fatal("the key did not survive a snapshot")
	}
}

// Files list newest first, filtered by purpose, and only the owner's.
func TestFilesList(t *testing.T) {
	s := disputeFixture(t)
	if p := s.Files("org_a", "", CursorStart, 10); len(p.Items) != 2 || p.Items[0].ID != "file_logo" {
		t.Fatalf("files = %+v", p.Items)
	}
	if p := s.Files("org_a", "dispute.evidence", CursorStart, 10); len(p.Items) != 1 || p.Items[0].ID != "file_ev" {
		t.Fatalf("evidence files = %+v", p.Items)
	}
	if _, ok := s.File("org_b", "file_ev"); ok {
		t.Fatal("another organization sees the file")
	}
	if p := s.Files("org_a", "", CursorStart, 1); !p.HasMore || len(p.Items) != 1 {
		t.Fatalf("page of one = %+v", p)
	}
}

// Every file and dispute command survives the log codec.
func TestFileDisputeCommandsRoundTrip(t *testing.T) {
	cmds := []Command{
		&CreateFile{At: 1, ID: "file_a", OrgID: "org_a", Purpose: "dispute.evidence", Filename: "ä.pdf", ContentType: "application/pdf", Size: 9, SHA256: testDigest},
		&SetFileSigningKey{At: 2, Key: string(bytes.Repeat([]byte{7}, 32))},
		&OpenDispute{At: 3, ID: "dsp_a", OrgID: "org_a", CollectionID: "col_a", Amount: 5, Category: "fraud", Reason: "r", MessageID: "dsm_a"},
		&RespondToDispute{At: 4, ID: "dsp_a", OrgID: "org_a", Action: "contest", Reason: "why", FileIDs: []string{"file_a", "file_b"}, MessageID: "dsm_b"},
		&RespondToDispute{At: 4, ID: "dsp_a", OrgID: "org_a", Action: "accept"},
		&AddDisputeMessage{At: 5, DisputeID: "dsp_a", OrgID: "org_a", MessageID: "dsm_c", AuthorType: "merchant", Body: "b", Attachments: []Attachment{{"file_a", "n"}}},
		&ResolveDispute{At: 6, ID: "dsp_a", OrgID: "org_a", Won: true, Message: "m"},
	}
	checkCommandsRoundTrip(t, cmds)
}
