package disputes

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"payments/ledger"
	"payments/ledger/ledgertest"
	"payments/ledger/publicids"
)

var testDigest = func() string { h := sha256.Sum256([]byte("pdf")); return hex.EncodeToString(h[:]) }()

// disputeFixture is an organization with two completed collections of
// 500.00 GHS (fee 7.50 each) and a pending one, its dispute.evidence and
// business.logo files, and a second organization with a file of its own.
func disputeFixture(t *testing.T) *ledgertest.State {
	t.Helper()
	s := ledgertest.TwoOrgs(t)
	for i, id := range []string{"col_1", "col_2", "col_3"} {
		res := s.Apply(&ledger.CreateCollection{At: 2, ID: id, OrgID: "org_a", ExternalReference: id,
			Spec: ledger.CollectionSpec{Currency: "GHS", Amount: 50_000, Method: "gh_mtn", PayerNumber: "233241234567"}, MethodType: ledger.MethodMobileMoney, Fee: 750})
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		if i < 2 {
			if res := s.Apply(&ledger.SettleCollection{At: 3, ID: id, Completed: true}); res.Err != nil {
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

func mustCheck(t *testing.T, s *ledgertest.State) {
	t.Helper()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

// balances returns the GHS account's total and held amounts.
func balances(s *ledgertest.State) (total, held ledger.Minor) {
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
		cmd          ledger.Command
		total, held  ledger.Minor
		status       Status
		events       []string
		replay       bool
		messagesWant int
	}{
		{"open d1", &Open{At: 10, ID: "dsp_1", OrgID: "org_a", CollectionID: "col_1", Amount: 20_000, Category: "fraud", Reason: "Cardholder says unauthorised", MessageID: "dsm_0"},
			98_500, 20_000, StatusOpen, []string{ledger.EventDisputeCreated}, false, 1},
		{"open d1 again is a replay", &Open{At: 11, ID: "dsp_x", OrgID: "org_a", CollectionID: "col_1", Amount: 20_000, Category: "fraud"},
			98_500, 20_000, StatusOpen, nil, true, 1},
		{"contest d1 with evidence", &Respond{At: 12, ID: "dsp_1", OrgID: "org_a", Action: "contest", Reason: "Delivered", FileIDs: []string{"file_ev"}, MessageID: "dsm_1"},
			98_500, 20_000, StatusUnderReview, []string{ledger.EventDisputeUpdated}, false, 2},
		{"message on d1", &AddMessage{At: 13, DisputeID: "dsp_1", OrgID: "org_a", MessageID: "dsm_2", AuthorType: AuthorMerchant, Body: "More proof", Attachments: []Attachment{{FileID: "file_ev", Name: "proof.pdf"}}},
			98_500, 20_000, StatusUnderReview, []string{ledger.EventDisputeUpdated}, false, 3},
		{"d1 won", &Resolve{At: 14, ID: "dsp_1", OrgID: "org_a", Won: true},
			98_500, 0, StatusDeclined, []string{ledger.EventDisputeClosed}, false, 3},
		{"open d2", &Open{At: 15, ID: "dsp_2", OrgID: "org_a", CollectionID: "col_2", Amount: 50_000, Category: "chargeback"},
			98_500, 50_000, StatusOpen, []string{ledger.EventDisputeCreated}, false, 0},
		{"d2 lost", &Resolve{At: 16, ID: "dsp_2", OrgID: "org_a", Won: false, Message: "Issuer ruled for the payer"},
			48_500, 0, StatusAccepted, []string{ledger.EventDisputeClosed}, false, 0},
	}
	for _, st := range steps {
		before := s.EventCount()
		res := s.Apply(st.cmd)
		if res.Err != nil {
			t.Fatalf("%s: %v", st.name, res.Err)
		}
		if res.Replayed != st.replay || Of(res) == nil {
			t.Fatalf("%s: replayed %v, dispute %v", st.name, res.Replayed, Of(res))
		}
		mustCheck(t, s)
		if total, held := balances(s); total != st.total || held != st.held {
			t.Fatalf("%s: total %d held %d, want %d %d", st.name, total, held, st.total, st.held)
		}
		d, _ := Get(s.Reader, "org_a", Of(res).ID)
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
	d1, _ := Get(s.Reader, "org_a", "dsp_1")
	if d1.Evidence.Action != "contest" || d1.Messages[1].Attachments[0].Name != "receipt.pdf" || d1.Messages[2].Attachments[0].Name != "proof.pdf" || d1.ResolvedAt != 14 {
		t.Fatalf("d1 = %+v", d1)
	}
	// The loss is two journal entries against the collections source.
	st := s.Statement(d1.AccountNumber, ledger.EntryFilter{RefID: "dsp_2"}, ledger.CursorStart, 10)
	if len(st.Items) != 1 || st.Items[0].Entry.Type != EntryDebit || st.Items[0].Entry.Amount != -50_000 {
		t.Fatalf("statement = %+v", st.Items)
	}
	if EntryDebit.String() != "dispute_debit" || EntryDebit.ReferenceType() != "dispute" {
		t.Fatal("entry type not registered")
	}
	if et, ok := ledger.ParseEntryType("dispute_reversal"); !ok || et != EntryReversal {
		t.Fatal("ledger.ParseEntryType(dispute_reversal)")
	}
	if p := List(s.Reader, "org_a", StatusAccepted, ledger.CursorStart, 10); len(p.Items) != 1 || p.Items[0].ID != "dsp_2" {
		t.Fatalf("accepted disputes = %+v", p.Items)
	}
	if p := List(s.Reader, "org_a", 0, ledger.CursorStart, 10); len(p.Items) != 2 || p.Items[0].ID != "dsp_2" {
		t.Fatalf("disputes, newest first = %+v", p.Items)
	}

	// Everything survives a snapshot byte for byte, indexes included.
	r := s.Restored()
	if res := r.Apply(&Open{At: 20, ID: "dsp_y", OrgID: "org_a", CollectionID: "col_1", Amount: 20_000, Category: "fraud"}); !res.Replayed {
		t.Fatalf("the restored collection index lost dispute dsp_1: %+v", res)
	}
}

// Accepting concedes at once: the amount is debited and the dispute closed.
func TestDisputeAccept(t *testing.T) {
	s := disputeFixture(t)
	s.Apply(&Open{At: 10, ID: "dsp_1", OrgID: "org_a", CollectionID: "col_1", Amount: 10_000, Category: "fraud"})
	res := s.Apply(&Respond{At: 11, ID: "dsp_1", OrgID: "org_a", Action: "accept"})
	if res.Err != nil || Of(res).Status != StatusAccepted || len(Of(res).Messages) != 0 {
		t.Fatalf("accept: %+v", res)
	}
	mustCheck(t, s)
	if total, held := balances(s); total != 88_500 || held != 0 {
		t.Fatalf("total %d held %d", total, held)
	}
	ev, _ := s.EventAt(s.EventCount())
	if ev.Type != ledger.EventDisputeClosed {
		t.Fatalf("last event %s", ev.Type)
	}
}

// A hold takes from what payouts can draw on, and a dispute cannot hold
// more than is available.
func TestDisputeHoldLimitsPayouts(t *testing.T) {
	s := disputeFixture(t)
	s.Apply(&Open{At: 10, ID: "dsp_1", OrgID: "org_a", CollectionID: "col_1", Amount: 50_000, Category: "fraud"})
	res := s.Apply(&ledger.CreatePayout{At: 11, ID: "pay_ghs_1", OrgID: "org_a", ExternalReference: "p1",
		Spec: ledger.PayoutSpec{Currency: "GHS", Amount: 48_500, AmountSide: ledger.SideTo, Method: "gh_mtn"}, MethodType: ledger.MethodMobileMoney, Fee: 1})
	if res.Err == nil || res.Err.Code != ledger.CodeInsufficientFunds || res.Err.Available != 48_500 {
		t.Fatalf("payout over the hold: %+v", res.Err)
	}
	res = s.Apply(&ledger.CreatePayout{At: 11, ID: "pay_ghs_2", OrgID: "org_a", ExternalReference: "p2",
		Spec: ledger.PayoutSpec{Currency: "GHS", Amount: 48_000, AmountSide: ledger.SideTo, Method: "gh_mtn"}, MethodType: ledger.MethodMobileMoney, Fee: 0})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	mustCheck(t, s)
	// 500 left available; a second dispute of 500.00 cannot be held.
	before := s.Dump()
	res = s.Apply(&Open{At: 12, ID: "dsp_2", OrgID: "org_a", CollectionID: "col_2", Amount: 50_000, Category: "fraud"})
	if res.Err == nil || res.Err.Code != ledger.CodeInsufficientFunds || res.Err.Available != 500 {
		t.Fatalf("second hold: %+v", res.Err)
	}
	if !bytes.Equal(s.Dump(), before) {
		t.Fatal("a refused hold changed the state")
	}
}

// Every rejected command leaves the state byte for byte as it was.
func TestDisputeAndFileRejectionsChangeNothing(t *testing.T) {
	s := disputeFixture(t)
	s.Apply(&Open{At: 10, ID: "dsp_open", OrgID: "org_a", CollectionID: "col_1", Amount: 10_000, Category: "fraud"})
	s.Apply(&Open{At: 10, ID: "dsp_done", OrgID: "org_a", CollectionID: "col_2", Amount: 10_000, Category: "fraud"})
	s.Apply(&Resolve{At: 11, ID: "dsp_done", OrgID: "org_a", Won: true})
	mustCheck(t, s)
	cases := []struct {
		name string
		cmd  ledger.Command
		code ledger.Code
	}{
		{"file: bad id", &CreateFile{At: 20, ID: "x_1", OrgID: "org_a", Purpose: "dispute.evidence", Filename: "a.pdf", ContentType: "application/pdf", Size: 1, SHA256: testDigest}, ledger.CodeValidation},
		{"file: unknown org", &CreateFile{At: 20, ID: "file_n", OrgID: "org_z", Purpose: "dispute.evidence", Filename: "a.pdf", ContentType: "application/pdf", Size: 1, SHA256: testDigest}, ledger.CodeNotFound},
		{"file: unknown purpose", &CreateFile{At: 20, ID: "file_n", OrgID: "org_a", Purpose: "selfie", Filename: "a.pdf", ContentType: "application/pdf", Size: 1, SHA256: testDigest}, ledger.CodeValidation},
		{"file: too large", &CreateFile{At: 20, ID: "file_n", OrgID: "org_a", Purpose: "business.logo", Filename: "a.png", ContentType: "image/png", Size: 2<<20 + 1, SHA256: testDigest}, ledger.CodeBadRequest},
		{"file: empty", &CreateFile{At: 20, ID: "file_n", OrgID: "org_a", Purpose: "business.logo", Filename: "a.png", ContentType: "image/png", Size: 0, SHA256: testDigest}, ledger.CodeBadRequest},
		{"file: type", &CreateFile{At: 20, ID: "file_n", OrgID: "org_a", Purpose: "identity.selfie", Filename: "a.pdf", ContentType: "application/pdf", Size: 1, SHA256: testDigest}, ledger.CodeBadRequest},
		{"file: digest", &CreateFile{At: 20, ID: "file_n", OrgID: "org_a", Purpose: "dispute.evidence", Filename: "a.pdf", ContentType: "application/pdf", Size: 1, SHA256: "ABC"}, ledger.CodeValidation},
		{"file: no name", &CreateFile{At: 20, ID: "file_n", OrgID: "org_a", Purpose: "dispute.evidence", ContentType: "application/pdf", Size: 1, SHA256: testDigest}, ledger.CodeValidation},
		{"file: id taken", &CreateFile{At: 20, ID: "file_ev", OrgID: "org_a", Purpose: "dispute.evidence", Filename: "a.pdf", ContentType: "application/pdf", Size: 1, SHA256: testDigest}, ledger.CodeConflict},
		{"key: short", &SetFileSigningKey{At: 20, Key: "short"}, ledger.CodeValidation},
		{"open: other org's collection", &Open{At: 20, ID: "dsp_n", OrgID: "org_b", CollectionID: "col_1", Amount: 1, Category: "fraud"}, ledger.CodeNotFound},
		{"open: pending collection", &Open{At: 20, ID: "dsp_n", OrgID: "org_a", CollectionID: "col_3", Amount: 1, Category: "fraud"}, ledger.CodeBadRequest},
		{"open: different replay", &Open{At: 20, ID: "dsp_n", OrgID: "org_a", CollectionID: "col_1", Amount: 1, Category: "fraud"}, ledger.CodeConflict},
		{"open: bad category", &Open{At: 20, ID: "dsp_n", OrgID: "org_a", CollectionID: "col_1", Amount: 10_000, Category: "angry"}, ledger.CodeValidation},
		{"open: bad id", &Open{At: 20, ID: "d_n", OrgID: "org_a", CollectionID: "col_1", Amount: 1, Category: "fraud"}, ledger.CodeValidation},
		{"respond: unknown", &Respond{At: 20, ID: "dsp_z", OrgID: "org_a", Action: "accept"}, ledger.CodeNotFound},
		{"respond: other org", &Respond{At: 20, ID: "dsp_open", OrgID: "org_b", Action: "accept"}, ledger.CodeNotFound},
		{"respond: bad action", &Respond{At: 20, ID: "dsp_open", OrgID: "org_a", Action: "shrug"}, ledger.CodeValidation},
		{"respond: not an evidence file", &Respond{At: 20, ID: "dsp_open", OrgID: "org_a", Action: "contest", FileIDs: []string{"file_logo"}, MessageID: "dsm_n"}, ledger.CodeValidation},
		{"respond: other org's file", &Respond{At: 20, ID: "dsp_open", OrgID: "org_a", Action: "contest", FileIDs: []string{"file_b"}, MessageID: "dsm_n"}, ledger.CodeValidation},
		{"respond: file twice", &Respond{At: 20, ID: "dsp_open", OrgID: "org_a", Action: "contest", FileIDs: []string{"file_ev", "file_ev"}, MessageID: "dsm_n"}, ledger.CodeValidation},
		{"respond: resolved", &Respond{At: 20, ID: "dsp_done", OrgID: "org_a", Action: "accept"}, ledger.CodeBadRequest},
		{"message: resolved", &AddMessage{At: 20, DisputeID: "dsp_done", OrgID: "org_a", MessageID: "dsm_n", AuthorType: AuthorMerchant, Body: "hi"}, ledger.CodeBadRequest},
		{"message: empty", &AddMessage{At: 20, DisputeID: "dsp_open", OrgID: "org_a", MessageID: "dsm_n", AuthorType: AuthorMerchant}, ledger.CodeValidation},
		{"message: unknown file", &AddMessage{At: 20, DisputeID: "dsp_open", OrgID: "org_a", MessageID: "dsm_n", AuthorType: AuthorMerchant, Body: "x", Attachments: []Attachment{{FileID: "file_zz"}}}, ledger.CodeValidation},
		{"message: unknown dispute", &AddMessage{At: 20, DisputeID: "dsp_zz", OrgID: "org_a", MessageID: "dsm_n", AuthorType: AuthorMerchant, Body: "x"}, ledger.CodeNotFound},
		{"resolve: resolved", &Resolve{At: 20, ID: "dsp_done", OrgID: "org_a", Won: false}, ledger.CodeBadRequest},
		{"resolve: other org", &Resolve{At: 20, ID: "dsp_open", OrgID: "org_b", Won: false}, ledger.CodeNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := s.Dump()
			events := s.EventCount()
			res := s.Apply(c.cmd)
			if res.Err == nil || res.Err.Code != c.code {
				t.Fatalf("got %+v, want %s", res.Err, c.code)
			}
			if !bytes.Equal(s.Dump(), before) || s.EventCount() != events {
				t.Fatal("a rejected command changed the state")
			}
		})
	}
	mustCheck(t, s)
}

// The first signing key committed wins; later ones are replays.
func TestFileSigningKeyFirstWins(t *testing.T) {
	s := ledgertest.New(t)
	if _, ok := FileSigningKey(s.Reader); ok {
		t.Fatal("a new ledger has a key")
	}
	k1, k2 := string(bytes.Repeat([]byte{1}, 32)), string(bytes.Repeat([]byte{2}, 32))
	if res := s.Apply(&SetFileSigningKey{At: 1, Key: k1}); res.Err != nil || res.Replayed {
		t.Fatalf("first key: %+v", res)
	}
	if res := s.Apply(&SetFileSigningKey{At: 2, Key: k2}); res.Err != nil || !res.Replayed {
		t.Fatalf("second key: %+v", res)
	}
	if k, _ := FileSigningKey(s.Reader); string(k) != k1 {
		t.Fatal("the second key replaced the first")
	}
	r := s.Restored()
	if k, _ := FileSigningKey(r.Reader); string(k) != k1 {
		t.Fatal("the key did not survive a snapshot")
	}
}

// Files list newest first, filtered by purpose, and only the owner's.
func TestFilesList(t *testing.T) {
	s := disputeFixture(t)
	if p := Files(s.Reader, "org_a", "", ledger.CursorStart, 10); len(p.Items) != 2 || p.Items[0].ID != "file_logo" {
		t.Fatalf("files = %+v", p.Items)
	}
	if p := Files(s.Reader, "org_a", "dispute.evidence", ledger.CursorStart, 10); len(p.Items) != 1 || p.Items[0].ID != "file_ev" {
		t.Fatalf("evidence files = %+v", p.Items)
	}
	if _, ok := GetFile(s.Reader, "org_b", "file_ev"); ok {
		t.Fatal("another organization sees the file")
	}
	if p := Files(s.Reader, "org_a", "", ledger.CursorStart, 1); !p.HasMore || len(p.Items) != 1 {
		t.Fatalf("page of one = %+v", p)
	}
}

// Every file and dispute command survives the log codec.
func TestFileDisputeCommandsRoundTrip(t *testing.T) {
	cmds := []ledger.Command{
		&CreateFile{At: 1, ID: "file_a", OrgID: "org_a", Purpose: "dispute.evidence", Filename: "ä.pdf", ContentType: "application/pdf", Size: 9, SHA256: testDigest},
		&SetFileSigningKey{At: 2, Key: string(bytes.Repeat([]byte{7}, 32))},
		&Open{At: 3, ID: "dsp_a", OrgID: "org_a", CollectionID: "col_a", Amount: 5, Category: "fraud", Reason: "r", MessageID: "dsm_a"},
		&Respond{At: 4, ID: "dsp_a", OrgID: "org_a", Action: "contest", Reason: "why", FileIDs: []string{"file_a", "file_b"}, MessageID: "dsm_b"},
		&Respond{At: 4, ID: "dsp_a", OrgID: "org_a", Action: "accept"},
		&AddMessage{At: 5, DisputeID: "dsp_a", OrgID: "org_a", MessageID: "dsm_c", AuthorType: "merchant", Body: "b", Attachments: []Attachment{{"file_a", "n"}}},
		&Resolve{At: 6, ID: "dsp_a", OrgID: "org_a", Won: true, Message: "m"},
	}
	ledgertest.RoundTrip(t, cmds...)
}

// After an advance of N, a dispute, its first message and a file are made
// N later than the leader's time, as every resource an organization sees
// (the kernel's TestAdvanceShiftsEveryResourceTime).
func TestTimesFollowTheClock(t *testing.T) {
	const hour = 3_600_000
	const at = 100 * hour
	for _, offset := range []int64{0, 5 * hour, 30 * 24 * hour} {
		s := ledgertest.New(t)
		s.Org("org_a")
		cmds := []ledger.Command{
			&ledger.CreateCollection{At: at, ID: "col_1", OrgID: "org_a", ExternalReference: "c1",
				Spec: ledger.CollectionSpec{Currency: "GHS", Amount: 50_000, Method: "gh_mtn", PayerNumber: "233241234567"}, MethodType: ledger.MethodMobileMoney, Fee: 750},
			&ledger.SettleCollection{At: at, ID: "col_1", Completed: true},
			&Open{At: at, ID: "dsp_1", OrgID: "org_a", CollectionID: "col_1", Amount: 1000, Category: "chargeback", MessageID: "dsm_1", Reason: "not received"},
			&CreateFile{At: at, ID: "file_1", OrgID: "org_a", Purpose: "dispute.evidence", Filename: "r.pdf", ContentType: "application/pdf", Size: 3, SHA256: testDigest},
		}
		if offset > 0 {
			cmds = append([]ledger.Command{&ledger.AdvanceClock{At: 2, OrgID: "org_a", Millis: offset}}, cmds...)
		}
		for _, cmd := range cmds {
			if res := s.Apply(cmd); res.Err != nil {
				t.Fatalf("%T: %v", cmd, res.Err)
			}
		}
		d, ok := Get(s.Reader, "org_a", "dsp_1")
		if !ok {
			t.Fatal("dispute not found")
		}
		f, ok := GetFile(s.Reader, "org_a", "file_1")
		if !ok {
			t.Fatal("file not found")
		}
		for i, got := range []int64{d.CreatedAt, d.UpdatedAt, d.Messages[0].CreatedAt, f.CreatedAt} {
			if got != at+offset {
				t.Errorf("offset %dh: time %d is %d, want the leader's %d plus the offset", offset/hour, i, got, at+offset)
			}
		}
	}
}

// The deployment's id key (publicids.SetKey) is a record of its own, never
// taken for the URL signing key.
func TestIDKeyIsNotTheSigningKey(t *testing.T) {
	s := ledgertest.New(t)
	if res := s.Apply(&publicids.SetKey{At: 1, Key: string(bytes.Repeat([]byte{'a'}, publicids.KeyLen))}); res.Err != nil {
		t.Fatal(res.Err)
	}
	if k, _ := FileSigningKey(s.Reader); k != nil {
		t.Fatal("the id key took the URL signing key's place")
	}
}
