package ledger

import "testing"

// feedDeposit is a transfer to railFixture's address.
func feedDeposit(identity string, amount Minor, confirmations uint32, dropped bool, n int) FeedDeposit {
	return FeedDeposit{
		Identity: identity, Chain: "ethereum", Currency: "USDC", Amount: amount, To: "0xAbC1",
		SourceReference: "0xhash", Confirmations: confirmations, Required: 3, Confirmed: !dropped && confirmations >= 3,
		Dropped: dropped, DepositID: "cdp_" + string(rune('a'+n)), CollectionID: "col_d" + string(rune('a'+n)),
	}
}

func TestDepositFeed(t *testing.T) {
	s := railFixture(t)
	poll := func(from, to string, deps ...FeedDeposit) Result {
		t.Helper()
		return s.Apply(&RecordDepositFeed{At: 50, Provider: "evm_1", From: from, Cursor: to, Deposits: deps})
	}
	collectionOf := func(identity string) Collection {
		t.Helper()
		d, ok := s.DepositByReference("org_a", identity)
		if !ok {
			t.Fatalf("no deposit for %s", identity)
		}
		c, _ := s.Collection(d.CollectionID)
		return c
	}
	usdc := func() Minor {
		a, _ := s.Views.Account(merchantNumber(s, "org_a", "USDC"))
		return a.Total
	}

	// First sight: pending, nothing credited; a transfer to an address not
	// ours, and a dropped one never seen, change nothing.
	if r := poll("", "c1",
		feedDeposit("ethereum:0x1:0", 5_000_000, 1, false, 0),
		FeedDeposit{Identity: "ethereum:0x2:0", Chain: "ethereum", Currency: "USDC", Amount: 7, To: "0xNotOurs", DepositID: "cdp_x", CollectionID: "col_x"},
		feedDeposit("ethereum:0x3:0", 9, 1, true, 2),
	); r.Err != nil || r.Provider.DepositCursor != "c1" {
		t.Fatalf("first poll: %+v", r)
	}
	c := collectionOf("ethereum:0x1:0")
	if c.Status != CollectionPending || c.Type != CollectionTypeCrypto || c.Deposit == nil || c.Deposit.SourceReference != "0xhash" || c.StatusMessage == "" {
		t.Fatalf("first sight: %+v", c)
	}
	if _, ok := s.DepositByReference("org_a", "ethereum:0x3:0"); ok {
		t.Fatal("a dropped transfer never seen was recorded")
	}
	if usdc() != 0 {
		t.Fatal("a pending deposit credited the balance")
	}

	// A poll from a cursor the feed moved past is refused whole.
	applyRejected(t, s, &RecordDepositFeed{At: 51, Provider: "evm_1", From: "", Cursor: "c9",
		Deposits: []FeedDeposit{feedDeposit("ethereum:0x1:0", 5_000_000, 3, false, 3)}}, ErrConflict)

	// Confirmed: credited once, from the float; reported again, nothing.
	if r := poll("c1", "c2", feedDeposit("ethereum:0x1:0", 5_000_000, 3, false, 4)); r.Err != nil {
		t.Fatal(r.Err)
	}
	c = collectionOf("ethereum:0x1:0")
	if c.Status != CollectionCompleted || !c.Deposit.Completed || c.StatusMessage != "" || usdc() != 5_000_000 {
		t.Fatalf("confirmed: %+v, balance %d", c, usdc())
	}
	poll("c2", "c3", feedDeposit("ethereum:0x1:0", 5_000_000, 3, false, 5), feedDeposit("ethereum:0x1:0", 5_000_000, 3, true, 6))
	if usdc() != 5_000_000 || collectionOf("ethereum:0x1:0").Status != CollectionCompleted {
		t.Fatal("a completed deposit changed when reported again")
	}
	if f, _ := s.ProviderFloat("evm_1", "USDC"); f.Total != -5_000_000 {
		t.Fatalf("float: %+v", f)
	}

	// Seen, then dropped by a reorganisation: failed, never credited, and
	// the identity is spent.
	poll("c3", "c4", feedDeposit("ethereum:0x4:1", 1_000_000, 1, false, 7))
	poll("c4", "c5", feedDeposit("ethereum:0x4:1", 1_000_000, 0, true, 8))
	c = collectionOf("ethereum:0x4:1")
	if c.Status != CollectionFailed || c.StatusMessage == "" || usdc() != 5_000_000 {
		t.Fatalf("dropped: %+v", c)
	}
	poll("c5", "c6", feedDeposit("ethereum:0x4:1", 1_000_000, 5, false, 9))
	if collectionOf("ethereum:0x4:1").Status != CollectionFailed || usdc() != 5_000_000 {
		t.Fatal("a failed identity was credited when seen again")
	}

	// Confirmed at first sight: pending and completed in one poll.
	poll("c6", "c7", feedDeposit("ethereum:0x5:0", 2_000_000, 4, false, 10))
	if collectionOf("ethereum:0x5:0").Status != CollectionCompleted || usdc() != 7_000_000 {
		t.Fatal("a deposit confirmed at first sight is not credited")
	}
	ev := s.Events("org_a", EventFilter{}, CursorStart, 100).Items
	counts := map[string]int{}
	for _, e := range ev {
		counts[e.Type]++
	}
	if counts[EventCollectionPending] != 4 || // the fixture's collection too
		counts[EventCollectionCompleted] != 2 || counts[EventCollectionFailed] != 1 {
		t.Fatalf("events: %v", counts)
	}

	// Indexes: allocated one after another, kept with the cursor.
	for want := uint32(1); want <= 3; want++ {
		if r := s.Apply(&AllocateDepositIndex{At: 60, Provider: "evm_1"}); r.Err != nil || r.Provider.DepositIndexes != want {
			t.Fatalf("allocate: %+v", r)
		}
	}
	if p, _ := s.ProviderState("evm_1"); p.DepositCursor != "c7" || p.DepositIndexes != 3 || p.Polls != 7 {
		t.Fatalf("provider: %+v", p)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	restoreSame(t, s)
}

// merchantNumber is org's balance account number in currency.
func merchantNumber(s *testState, org, currency string) string {
	for _, a := range s.Views.Accounts(org) {
		if a.Currency == currency {
			return a.Number
		}
	}
	return ""
}
