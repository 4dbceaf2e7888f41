package deposits_test

import (
	"testing"

	"payments/ledger"
	"payments/ledger/deposits"
	"payments/ledger/instructions"
	"payments/ledger/ledgertest"
)

// railFixture is ledgertest's rail fixture (org_a holding 1,000.00 GHS,
// pending pay_1 and col_1) with a USDC address on ethereum.
func railFixture(t *testing.T) *ledgertest.State {
	t.Helper()
	return ledgertest.RailFixture(t).With(&deposits.CreateCryptoAddress{At: 3, ID: "addr_1", OrgID: "org_a", Currency: "USDC", Chain: "ethereum", Address: "0xAbC1"})
}

// feedDeposit is a transfer to railFixture's address.
func feedDeposit(identity string, amount ledger.Minor, confirmations uint32, dropped bool, n int) deposits.FeedDeposit {
	return deposits.FeedDeposit{
		Identity: identity, Chain: "ethereum", Currency: "USDC", Amount: amount, To: "0xAbC1",
		SourceReference: "0xhash", Confirmations: confirmations, Required: 3, Confirmed: !dropped && confirmations >= 3,
		Dropped: dropped, DepositID: "cdp_" + string(rune('a'+n)), CollectionID: "col_d" + string(rune('a'+n)),
	}
}

func TestDepositFeed(t *testing.T) {
	s := railFixture(t)
	poll := func(from, to string, deps ...deposits.FeedDeposit) ledger.Result {
		t.Helper()
		return s.Apply(&deposits.RecordFeed{At: 50, Provider: "evm_1", From: from, Cursor: to, Deposits: deps})
	}
	collectionOf := func(identity string) ledger.Collection {
		t.Helper()
		d, ok := deposits.ByReference(s.Reader, "org_a", identity)
		if !ok {
			t.Fatalf("no deposit for %s", identity)
		}
		c, _ := s.Collection(d.CollectionID)
		return c
	}
	usdc := func() ledger.Minor {
		a, _ := s.AccountFor("org_a", "USDC")
		return a.Total
	}

	// First sight: pending, nothing credited; a transfer to an address not
	// ours, and a dropped one never seen, change nothing.
	if r := poll("", "c1",
		feedDeposit("ethereum:0x1:0", 5_000_000, 1, false, 0),
		deposits.FeedDeposit{Identity: "ethereum:0x2:0", Chain: "ethereum", Currency: "USDC", Amount: 7, To: "0xNotOurs", DepositID: "cdp_x", CollectionID: "col_x"},
		feedDeposit("ethereum:0x3:0", 9, 1, true, 2),
	); r.Err != nil || deposits.ProviderOf(r).DepositCursor != "c1" {
		t.Fatalf("first poll: %+v", r)
	}
	c := collectionOf("ethereum:0x1:0")
	if c.Status != ledger.CollectionPending || c.Type != ledger.CollectionTypeCrypto || c.Deposit == nil || c.Deposit.SourceReference != "0xhash" || c.StatusMessage == "" {
		t.Fatalf("first sight: %+v", c)
	}
	if _, ok := deposits.ByReference(s.Reader, "org_a", "ethereum:0x3:0"); ok {
		t.Fatal("a dropped transfer never seen was recorded")
	}
	if usdc() != 0 {
		t.Fatal("a pending deposit credited the balance")
	}

	// A poll from a cursor the feed moved past is refused whole.
	applyRejected(t, s, &deposits.RecordFeed{At: 51, Provider: "evm_1", From: "", Cursor: "c9",
		Deposits: []deposits.FeedDeposit{feedDeposit("ethereum:0x1:0", 5_000_000, 3, false, 3)}}, ledger.ErrConflict)

	// Confirmed: credited once, from the float; reported again, nothing.
	if r := poll("c1", "c2", feedDeposit("ethereum:0x1:0", 5_000_000, 3, false, 4)); r.Err != nil {
		t.Fatal(r.Err)
	}
	c = collectionOf("ethereum:0x1:0")
	if c.Status != ledger.CollectionCompleted || !c.Deposit.Completed || c.StatusMessage != "" || usdc() != 5_000_000 {
		t.Fatalf("confirmed: %+v, balance %d", c, usdc())
	}
	poll("c2", "c3", feedDeposit("ethereum:0x1:0", 5_000_000, 3, false, 5), feedDeposit("ethereum:0x1:0", 5_000_000, 3, true, 6))
	if usdc() != 5_000_000 || collectionOf("ethereum:0x1:0").Status != ledger.CollectionCompleted {
		t.Fatal("a completed deposit changed when reported again")
	}
	if f, _ := instructions.Float(s.Reader, "evm_1", "USDC"); f.Total != -5_000_000 {
		t.Fatalf("float: %+v", f)
	}

	// Seen, then dropped by a reorganisation: failed, never credited, and
	// the identity is spent.
	poll("c3", "c4", feedDeposit("ethereum:0x4:1", 1_000_000, 1, false, 7))
	poll("c4", "c5", feedDeposit("ethereum:0x4:1", 1_000_000, 0, true, 8))
	c = collectionOf("ethereum:0x4:1")
	if c.Status != ledger.CollectionFailed || c.StatusMessage == "" || usdc() != 5_000_000 {
		t.Fatalf("dropped: %+v", c)
	}
	poll("c5", "c6", feedDeposit("ethereum:0x4:1", 1_000_000, 5, false, 9))
	if collectionOf("ethereum:0x4:1").Status != ledger.CollectionFailed || usdc() != 5_000_000 {
		t.Fatal("a failed identity was credited when seen again")
	}

	// Confirmed at first sight: pending and completed in one poll.
	poll("c6", "c7", feedDeposit("ethereum:0x5:0", 2_000_000, 4, false, 10))
	if collectionOf("ethereum:0x5:0").Status != ledger.CollectionCompleted || usdc() != 7_000_000 {
		t.Fatal("a deposit confirmed at first sight is not credited")
	}
	ev := s.Events("org_a", ledger.EventFilter{}, ledger.CursorStart, 100).Items
	counts := map[string]int{}
	for _, e := range ev {
		counts[e.Type]++
	}
	if counts[ledger.EventCollectionPending] != 4 || // the fixture's collection too
		counts[ledger.EventCollectionCompleted] != 2 || counts[ledger.EventCollectionFailed] != 1 {
		t.Fatalf("events: %v", counts)
	}

	// Indexes: allocated one after another, kept with the cursor.
	for want := uint32(1); want <= 3; want++ {
		if r := s.Apply(&deposits.AllocateIndex{At: 60, Provider: "evm_1"}); r.Err != nil || deposits.ProviderOf(r).DepositIndexes != want {
			t.Fatalf("allocate: %+v", r)
		}
	}
	if p, _ := deposits.ProviderState(s.Reader, "evm_1"); p.DepositCursor != "c7" || p.DepositIndexes != 3 || p.Polls != 7 {
		t.Fatalf("provider: %+v", p)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	s.Restored()
}

// A feed entry reporting more deposits than one poll may is refused when
// it is read, with the validation error a request gets, whatever wrote it.
func TestFeedOverMaxRefusedOnDecode(t *testing.T) {
	c := &deposits.RecordFeed{At: 1, Provider: "p", Deposits: make([]deposits.FeedDeposit, deposits.FeedMax+1)}
	_, err := ledger.DecodeBatch(ledger.EncodeBatch(nil, []ledger.Command{c}))
	le, ok := err.(*ledger.Error)
	if !ok || le.Code != ledger.CodeValidation {
		t.Fatalf("decoding %d deposits: %v, want a validation error", deposits.FeedMax+1, err)
	}
	c.Deposits = c.Deposits[:deposits.FeedMax]
	if _, err := ledger.DecodeBatch(ledger.EncodeBatch(nil, []ledger.Command{c})); err != nil {
		t.Fatalf("decoding %d deposits: %v", deposits.FeedMax, err)
	}
}
