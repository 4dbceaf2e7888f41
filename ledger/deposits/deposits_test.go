package deposits_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"payments/ledger"
	"payments/ledger/deposits"
	"payments/ledger/ledgertest"
)

// depositFixture is a ledger with two organizations, each with a GHS virtual
// account and a USDC address.
func depositFixture(t *testing.T) *ledgertest.State {
	t.Helper()
	s := ledgertest.New(t)
	for _, org := range []string{"org_a", "org_b"} {
		hash := sha256.Sum256([]byte(org))
		s.With(&ledger.CreateOrganization{At: 1, ID: org, Name: "Org " + org, Key: ledger.CreateAPIKey{At: 1, ID: "key_" + org, OrgID: org, Hash: string(hash[:])}},
			&deposits.CreateVirtualAccount{At: 2, ID: "va_" + org, OrgID: org, Currency: "GHS", Bank: "Sandbox Bank"},
			&deposits.CreateCryptoAddress{At: 2, ID: "addr_" + org, OrgID: org, Currency: "USDC", Chain: "solana", Address: "So1" + org})
	}
	return s
}

var applyRejected = ledgertest.ApplyRejected

func TestVirtualAccountRules(t *testing.T) {
	s := depositFixture(t)
	va, _ := deposits.GetVirtualAccount(s.Reader, "org_a", "va_org_a")
	if va.Status != deposits.VirtualAccountActive || len(va.AccountNumber) != 10 || va.AccountName != "Org org_a" || va.Currency != "GHS" {
		t.Fatalf("created virtual account = %+v", va)
	}
	if other, _ := deposits.GetVirtualAccount(s.Reader, "org_b", "va_org_b"); other.AccountNumber == va.AccountNumber {
		t.Fatal("two virtual accounts share a number")
	}
	for _, tc := range []struct {
		name string
		cmd  ledger.Command
		want error
	}{
		{"bad id", &deposits.CreateVirtualAccount{At: 3, ID: "acc_1", OrgID: "org_a", Currency: "GHS", Bank: "B"}, ledger.ErrValidation},
		{"unknown org", &deposits.CreateVirtualAccount{At: 3, ID: "va_1", OrgID: "org_x", Currency: "GHS", Bank: "B"}, ledger.ErrNotFound},
		{"crypto currency", &deposits.CreateVirtualAccount{At: 3, ID: "va_1", OrgID: "org_a", Currency: "USDC", Bank: "B"}, ledger.ErrValidation},
		{"no bank", &deposits.CreateVirtualAccount{At: 3, ID: "va_1", OrgID: "org_a", Currency: "GHS"}, ledger.ErrValidation},
		{"id taken", &deposits.CreateVirtualAccount{At: 3, ID: "va_org_b", OrgID: "org_a", Currency: "GHS", Bank: "B"}, ledger.ErrConflict},
		{"update unknown", &deposits.UpdateVirtualAccount{At: 3, ID: "va_1", OrgID: "org_a", Status: deposits.VirtualAccountPaused}, ledger.ErrNotFound},
		{"update another org's", &deposits.UpdateVirtualAccount{At: 3, ID: "va_org_b", OrgID: "org_a", Status: deposits.VirtualAccountPaused}, ledger.ErrNotFound},
		{"update bad status", &deposits.UpdateVirtualAccount{At: 3, ID: "va_org_a", OrgID: "org_a", Status: 9}, ledger.ErrValidation},
	} {
		t.Run(tc.name, func(t *testing.T) { applyRejected(t, s, tc.cmd, tc.want) })
	}

	// A reference is idempotent per currency.
	create := &deposits.CreateVirtualAccount{At: 5, ID: "va_c1", OrgID: "org_a", Currency: "GHS", Bank: "B", ExternalReference: "cust-1", Metadata: `{"a":1}`}
	if r := s.Apply(create); r.Err != nil || r.Replayed {
		t.Fatalf("create: %+v", r)
	}
	again := *create
	again.ID = "va_c2"
	if r := s.Apply(&again); r.Err != nil || !r.Replayed || deposits.VirtualAccountOf(r).ID != "va_c1" {
		t.Fatalf("replay: %+v", r)
	}
	changed := again
	changed.Metadata = `{"a":2}`
	applyRejected(t, s, &changed, ledger.ErrDuplicate)
	otherCurrency := again
	otherCurrency.Currency = "NGN"
	if r := s.Apply(&otherCurrency); r.Err != nil || r.Replayed || deposits.VirtualAccountOf(r).ID != "va_c2" {
		t.Fatalf("same reference, other currency: %+v", r)
	}

	// Pause, pause again (no change), reactivate.
	r := s.Apply(&deposits.UpdateVirtualAccount{At: 6, ID: "va_org_a", OrgID: "org_a", Status: deposits.VirtualAccountPaused})
	if r.Err != nil || deposits.VirtualAccountOf(r).Status != deposits.VirtualAccountPaused || deposits.VirtualAccountOf(r).UpdatedAt != 6 {
		t.Fatalf("pause: %+v", r)
	}
	before := s.Dump()
	if r := s.Apply(&deposits.UpdateVirtualAccount{At: 7, ID: "va_org_a", OrgID: "org_a", Status: deposits.VirtualAccountPaused}); r.Err != nil || deposits.VirtualAccountOf(r).UpdatedAt != 6 {
		t.Fatalf("pause again: %+v", r)
	}
	if !bytes.Equal(before, s.Dump()) {
		t.Fatal("pausing a paused account changed the state")
	}
	if r := s.Apply(&deposits.UpdateVirtualAccount{At: 8, ID: "va_org_a", OrgID: "org_a", Status: deposits.VirtualAccountActive}); r.Err != nil || deposits.VirtualAccountOf(r).Status != deposits.VirtualAccountActive {
		t.Fatalf("reactivate: %+v", r)
	}

	// Lists and filters.
	all := deposits.ListVirtualAccounts(s.Reader, "org_a", deposits.VirtualAccountFilter{}, ledger.CursorStart, 10)
	if len(all.Items) != 3 || all.Items[0].ID != "va_c2" {
		t.Fatalf("list = %+v", all.Items)
	}
	if p := deposits.ListVirtualAccounts(s.Reader, "org_a", deposits.VirtualAccountFilter{Currency: "NGN"}, ledger.CursorStart, 10); len(p.Items) != 1 || p.Items[0].ID != "va_c2" {
		t.Fatalf("currency filter = %+v", p.Items)
	}
	if p := deposits.ListVirtualAccounts(s.Reader, "org_a", deposits.VirtualAccountFilter{ExternalReference: "cust-1"}, ledger.CursorStart, 1); len(p.Items) != 1 || !p.HasMore {
		t.Fatalf("reference filter = %+v", p)
	}
	s.Apply(&deposits.UpdateVirtualAccount{At: 9, ID: "va_c1", OrgID: "org_a", Status: deposits.VirtualAccountPaused})
	if p := deposits.ListVirtualAccounts(s.Reader, "org_a", deposits.VirtualAccountFilter{Status: deposits.VirtualAccountPaused}, ledger.CursorStart, 10); len(p.Items) != 1 || p.Items[0].ID != "va_c1" {
		t.Fatalf("status filter = %+v", p.Items)
	}
}

func TestCryptoAddressRules(t *testing.T) {
	s := depositFixture(t)
	for _, tc := range []struct {
		name string
		cmd  ledger.Command
		want error
	}{
		{"bad id", &deposits.CreateCryptoAddress{At: 3, ID: "x_1", OrgID: "org_a", Currency: "USDT", Chain: "tron", Address: "T1"}, ledger.ErrValidation},
		{"unknown org", &deposits.CreateCryptoAddress{At: 3, ID: "addr_1", OrgID: "org_x", Currency: "USDT", Chain: "tron", Address: "T1"}, ledger.ErrNotFound},
		{"fiat currency", &deposits.CreateCryptoAddress{At: 3, ID: "addr_1", OrgID: "org_a", Currency: "GHS", Chain: "tron", Address: "T1"}, ledger.ErrValidation},
		{"no chain", &deposits.CreateCryptoAddress{At: 3, ID: "addr_1", OrgID: "org_a", Currency: "USDT", Address: "T1"}, ledger.ErrValidation},
		{"no address", &deposits.CreateCryptoAddress{At: 3, ID: "addr_1", OrgID: "org_a", Currency: "USDT", Chain: "tron"}, ledger.ErrValidation},
		{"address in use", &deposits.CreateCryptoAddress{At: 3, ID: "addr_1", OrgID: "org_a", Currency: "USDC", Chain: "ethereum", Address: "x"}, nil},
		{"location taken", &deposits.CreateCryptoAddress{At: 3, ID: "addr_2", OrgID: "org_b", Currency: "USDC", Chain: "ethereum", Address: "x"}, ledger.ErrConflict},
		{"update unknown", &deposits.UpdateCryptoAddress{At: 3, ID: "addr_9", OrgID: "org_a"}, ledger.ErrNotFound},
		{"update another org's", &deposits.UpdateCryptoAddress{At: 3, ID: "addr_org_b", OrgID: "org_a", Metadata: "{}"}, ledger.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == nil {
				if r := s.Apply(tc.cmd); r.Err != nil {
					t.Fatal(r.Err)
				}
				return
			}
			applyRejected(t, s, tc.cmd, tc.want)
		})
	}
	// The same currency and chain returns the existing address, unchanged.
	before := s.Dump()
	r := s.Apply(&deposits.CreateCryptoAddress{At: 4, ID: "addr_new", OrgID: "org_a", Currency: "USDC", Chain: "solana", Address: "other", ExternalReference: "r", Metadata: `{"k":1}`})
	if r.Err != nil || !r.Replayed || deposits.CryptoAddressOf(r).ID != "addr_org_a" || deposits.CryptoAddressOf(r).Address != "So1org_a" || deposits.CryptoAddressOf(r).Metadata != "" {
		t.Fatalf("same pair: %+v", r)
	}
	if !bytes.Equal(before, s.Dump()) {
		t.Fatal("asking for an existing pair changed the state")
	}
	r = s.Apply(&deposits.UpdateCryptoAddress{At: 5, ID: "addr_org_a", OrgID: "org_a", Metadata: `{"k":2}`})
	if r.Err != nil || deposits.CryptoAddressOf(r).Metadata != `{"k":2}` || deposits.CryptoAddressOf(r).UpdatedAt != 5 || deposits.CryptoAddressOf(r).CreatedAt != 2 {
		t.Fatalf("update: %+v", r)
	}
	if p := deposits.ListCryptoAddresses(s.Reader, "org_a", deposits.CryptoAddressFilter{Chain: "ethereum"}, ledger.CursorStart, 10); len(p.Items) != 1 || p.Items[0].ID != "addr_1" {
		t.Fatalf("chain filter = %+v", p.Items)
	}
	if p := deposits.ListCryptoAddresses(s.Reader, "org_a", deposits.CryptoAddressFilter{Currency: "USDC"}, ledger.CursorStart, 10); len(p.Items) != 2 {
		t.Fatalf("currency filter = %+v", p.Items)
	}
}

func balance(s *ledgertest.State, org, currency string) ledger.Minor {
	a, _ := s.AccountFor(org, currency)
	return a.Total
}

func TestDeposits(t *testing.T) {
	s := depositFixture(t)
	vaDeposit := func(id, col, ref string, amount ledger.Minor, completed bool) *deposits.Receive {
		return &deposits.Receive{At: 10, ID: id, CollectionID: col, OrgID: "org_a", VirtualAccountID: "va_org_a",
			Amount: amount, Completed: completed, ExternalReference: ref, SourceReference: "session-" + ref}
	}

	// A completed deposit creates a completed collection and credits exactly
	// the amount, with collection.pending, collection.completed and
	// account.credited.
	events := s.EventCount()
	r := s.Apply(vaDeposit("vad_1", "col_1", "d1", 12_345, true))
	if r.Err != nil || r.Replayed {
		t.Fatalf("deposit: %+v", r)
	}
	if got := balance(s, "org_a", "GHS"); got != 12_345 {
		t.Fatalf("balance after deposit = %d", got)
	}
	col, _ := s.Collection("col_1")
	va, _ := deposits.GetVirtualAccount(s.Reader, "org_a", "va_org_a")
	if col.Status != ledger.CollectionCompleted || col.Type != ledger.CollectionTypeVirtualAccount || col.Spec.Amount != 12_345 ||
		col.Spec.PayerNumber != va.AccountNumber || col.AccountNumber == "" || col.Deposit == nil ||
		col.Deposit.VirtualAccountID != "va_org_a" || col.Deposit.Bank != "Sandbox Bank" || col.ExternalReference != "" {
		t.Fatalf("collection = %+v", col)
	}
	if types := s.EventTypesSince(events); !reflect.DeepEqual(types, []string{ledger.EventCollectionPending, ledger.EventCollectionCompleted, ledger.EventAccountCredited}) {
		t.Fatalf("events = %v", types)
	}
	if ev, _ := s.EventAt(events + 1); ev.Subject.(ledger.Collection).Status != ledger.CollectionPending || ev.Subject.(ledger.Collection).Deposit == nil {
		t.Fatalf("pending subject = %+v", ev.Subject)
	}

	// Rejections change nothing: the replay, the conflicts, the unknown.
	before := s.Dump()
	r = s.Apply(vaDeposit("vad_2", "col_2", "d1", 12_345, true))
	if r.Err != nil || !r.Replayed || deposits.DepositOf(r).ID != "vad_1" || r.Collection.ID != "col_1" || r.Collection.Status != ledger.CollectionCompleted {
		t.Fatalf("replay: %+v", r)
	}
	if !bytes.Equal(before, s.Dump()) {
		t.Fatal("a replay changed the state")
	}
	for _, tc := range []struct {
		name string
		cmd  *deposits.Receive
		want error
	}{
		{"other amount", vaDeposit("vad_2", "col_2", "d1", 12_346, true), ledger.ErrConflict},
		{"other outcome", vaDeposit("vad_2", "col_2", "d1", 12_345, false), ledger.ErrConflict},
		{"other source", &deposits.Receive{At: 10, ID: "cdp_2", CollectionID: "col_2", OrgID: "org_a", CryptoAddressID: "addr_org_a", Amount: 12_345, Completed: true, ExternalReference: "d1"}, ledger.ErrConflict},
		{"unknown account", &deposits.Receive{At: 10, ID: "vad_2", CollectionID: "col_2", OrgID: "org_a", VirtualAccountID: "va_x", Amount: 1, Completed: true, ExternalReference: "d2"}, ledger.ErrNotFound},
		{"another org's account", &deposits.Receive{At: 10, ID: "vad_2", CollectionID: "col_2", OrgID: "org_a", VirtualAccountID: "va_org_b", Amount: 1, Completed: true, ExternalReference: "d2"}, ledger.ErrNotFound},
		{"another org's address", &deposits.Receive{At: 10, ID: "cdp_2", CollectionID: "col_2", OrgID: "org_a", CryptoAddressID: "addr_org_b", Amount: 1, Completed: true, ExternalReference: "d2"}, ledger.ErrNotFound},
		{"no source", &deposits.Receive{At: 10, ID: "vad_2", CollectionID: "col_2", OrgID: "org_a", Amount: 1, ExternalReference: "d2"}, ledger.ErrValidation},
		{"two sources", &deposits.Receive{At: 10, ID: "vad_2", CollectionID: "col_2", OrgID: "org_a", VirtualAccountID: "va_org_a", CryptoAddressID: "addr_org_a", Amount: 1, ExternalReference: "d2"}, ledger.ErrValidation},
		{"crypto id on a virtual account", vaDeposit("cdp_2", "col_2", "d2", 1, true), ledger.ErrValidation},
		{"no reference", vaDeposit("vad_2", "col_2", "", 1, true), ledger.ErrValidation},
		{"zero amount", vaDeposit("vad_2", "col_2", "d2", 0, true), ledger.ErrValidation},
		{"too much", vaDeposit("vad_2", "col_2", "d2", ledger.AmountMax+1, true), ledger.ErrValidation},
		{"collection id taken", vaDeposit("vad_2", "col_1", "d2", 1, true), ledger.ErrConflict},
		{"deposit id taken", vaDeposit("vad_1", "col_2", "d2", 1, true), ledger.ErrConflict},
	} {
		t.Run(tc.name, func(t *testing.T) { applyRejected(t, s, tc.cmd, tc.want) })
	}

	// A paused account refuses deposits, but a replay still answers.
	s.Apply(&deposits.UpdateVirtualAccount{At: 11, ID: "va_org_a", OrgID: "org_a", Status: deposits.VirtualAccountPaused})
	applyRejected(t, s, vaDeposit("vad_3", "col_3", "d3", 100, true), &ledger.Error{Code: ledger.CodeBadRequest})
	if r := s.Apply(vaDeposit("vad_3", "col_3", "d1", 12_345, true)); r.Err != nil || !r.Replayed {
		t.Fatalf("replay into a paused account: %+v", r)
	}
	s.Apply(&deposits.UpdateVirtualAccount{At: 12, ID: "va_org_a", OrgID: "org_a", Status: deposits.VirtualAccountActive})

	// A failed deposit records a failed collection and credits nothing.
	events = s.EventCount()
	r = s.Apply(&deposits.Receive{At: 13, ID: "vad_4", CollectionID: "col_4", OrgID: "org_a", VirtualAccountID: "va_org_a",
		Amount: 500, Completed: false, Message: "rejected by the sending bank", ExternalReference: "d4"})
	if r.Err != nil || r.Collection.Status != ledger.CollectionFailed || r.Collection.StatusMessage != "rejected by the sending bank" || r.Collection.FailedAt != 13 {
		t.Fatalf("failed deposit: %+v", r)
	}
	if got := balance(s, "org_a", "GHS"); got != 12_345 {
		t.Fatalf("a failed deposit moved the balance to %d", got)
	}
	if ev, _ := s.EventAt(s.EventCount()); s.EventCount() != events+2 || ev.Type != ledger.EventCollectionFailed {
		t.Fatalf("failed deposit events: %d, last %+v", s.EventCount()-events, ev)
	}

	// A crypto deposit with a fee: the balance gets amount less fee, fee
	// revenue the fee, and the journal balances.
	r = s.Apply(&deposits.Receive{At: 14, ID: "cdp_5", CollectionID: "col_5", OrgID: "org_a", CryptoAddressID: "addr_org_a",
		Amount: 2_000_000, Fee: 15_000, Completed: true, ExternalReference: "d5", SourceReference: "hash5"})
	if r.Err != nil || r.Collection.Type != ledger.CollectionTypeCrypto || r.Collection.Spec.Currency != "USDC" ||
		r.Collection.Spec.PayerNumber != "So1org_a" || deposits.DepositOf(r).Chain != "solana" || deposits.DepositOf(r).SourceReference != "hash5" {
		t.Fatalf("crypto deposit: %+v", r)
	}
	if got := balance(s, "org_a", "USDC"); got != 2_000_000-15_000 {
		t.Fatalf("USDC balance = %d", got)
	}
	// The fee revenue account exists by now: asking for its number opens
	// nothing.
	st := s.Ledger()
	if fees, _ := st.Account(st.SystemAccount(ledger.PurposeFeeRevenue, "USDC", 14)); fees.Total != 15_000 {
		t.Fatalf("fee revenue = %d", fees.Total)
	}
	applyRejected(t, s, &deposits.Receive{At: 14, ID: "cdp_6", CollectionID: "col_6", OrgID: "org_a", CryptoAddressID: "addr_org_a",
		Amount: 10, Fee: 11, Completed: true, ExternalReference: "d6"}, ledger.ErrValidation)
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}

	// Collections filter by their virtual account and address, within the
	// organization only.
	ids := func(p ledger.Page[ledger.Collection]) (out []string) {
		for _, c := range p.Items {
			out = append(out, c.ID)
		}
		return out
	}
	if got := ids(s.Collections("org_a", ledger.CollectionFilter{VirtualAccountID: "va_org_a"}, ledger.CursorStart, 10)); !reflect.DeepEqual(got, []string{"col_4", "col_1"}) {
		t.Fatalf("by virtual account = %v", got)
	}
	if got := ids(s.Collections("org_a", ledger.CollectionFilter{VirtualAccountID: "va_org_a", Status: ledger.CollectionCompleted}, ledger.CursorStart, 10)); !reflect.DeepEqual(got, []string{"col_1"}) {
		t.Fatalf("by virtual account and status = %v", got)
	}
	if got := ids(s.Collections("org_a", ledger.CollectionFilter{CryptoAddressID: "addr_org_a"}, ledger.CursorStart, 10)); !reflect.DeepEqual(got, []string{"col_5"}) {
		t.Fatalf("by address = %v", got)
	}
	if got := ids(s.Collections("org_a", ledger.CollectionFilter{VirtualAccountID: "va_org_a", CryptoAddressID: "addr_org_a"}, ledger.CursorStart, 10)); got != nil {
		t.Fatalf("by both = %v", got)
	}
	s.Apply(&deposits.Receive{At: 15, ID: "vad_b", CollectionID: "col_b", OrgID: "org_b", VirtualAccountID: "va_org_b", Amount: 1, Completed: true, ExternalReference: "d1"})
	if got := ids(s.Collections("org_a", ledger.CollectionFilter{VirtualAccountID: "va_org_b"}, ledger.CursorStart, 10)); got != nil {
		t.Fatalf("another organization's deposits = %v", got)
	}
	p := s.Collections("org_a", ledger.CollectionFilter{VirtualAccountID: "va_org_a"}, ledger.CursorStart, 1)
	if !p.HasMore || ids(s.Collections("org_a", ledger.CollectionFilter{VirtualAccountID: "va_org_a"}, p.Next, 1))[0] != "col_1" {
		t.Fatalf("paging by virtual account: %+v", p)
	}
	if _, ok := s.CollectionByReference("org_a", ""); ok {
		t.Fatal("a deposit's collection is found by an empty reference")
	}

	// Everything survives a snapshot: records, the join, event subjects.
	restored := s.Restored()
	for _, id := range []string{"col_1", "col_4", "col_5"} {
		a, _ := s.Collection(id)
		b, _ := restored.Collection(id)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("restored %s = %+v, want %+v", id, b, a)
		}
	}
	for seq := uint64(1); seq <= s.EventCount(); seq++ {
		a, _ := s.EventAt(seq)
		b, _ := restored.EventAt(seq)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("restored event %d = %+v, want %+v", seq, b, a)
		}
	}
	if got := ids(restored.Collections("org_a", ledger.CollectionFilter{CryptoAddressID: "addr_org_a"}, ledger.CursorStart, 10)); !reflect.DeepEqual(got, []string{"col_5"}) {
		t.Fatalf("restored filter = %v", got)
	}
	if r := restored.Apply(vaDeposit("vad_9", "col_9", "d1", 12_345, true)); !r.Replayed {
		t.Fatalf("restored replay: %+v", r)
	}
	if r := restored.Apply(&deposits.CreateVirtualAccount{At: 20, ID: "va_new", OrgID: "org_a", Currency: "GHS", Bank: "B"}); r.Err != nil || deposits.VirtualAccountOf(r).AccountNumber == va.AccountNumber {
		t.Fatalf("restored number index: %+v", r)
	}
}

// Every command of this feature survives the log codec.
func TestDepositCommandsRoundTrip(t *testing.T) {
	cmds := []ledger.Command{
		&deposits.CreateVirtualAccount{At: 1, ID: "va_1", OrgID: "o", Currency: "NGN", Bank: "B", ExternalReference: "r", Metadata: `{"a":1}`},
		&deposits.UpdateVirtualAccount{At: 2, ID: "va_1", OrgID: "o", Status: deposits.VirtualAccountPaused},
		&deposits.CreateCryptoAddress{At: 3, ID: "addr_1", OrgID: "o", Currency: "USDC", Chain: "stellar", Address: "G", Tag: "12", ExternalReference: "r", Metadata: "{}"},
		&deposits.UpdateCryptoAddress{At: 4, ID: "addr_1", OrgID: "o", Metadata: `{"b":2}`},
		&deposits.Receive{At: 5, ID: "vad_1", CollectionID: "col_1", OrgID: "o", VirtualAccountID: "va_1", Amount: 7, Fee: 1, Completed: true, Message: "m", ExternalReference: "r", SourceReference: "s"},
		&deposits.RecordFeed{At: 5, Provider: "evm", From: "", Cursor: `{"v":1}`, Deposits: []deposits.FeedDeposit{{
			Identity: "ethereum:0x1:0", Chain: "ethereum", Currency: "USDC", Amount: 5, To: "0xA", SourceReference: "0x1",
			Confirmations: 1, Required: 3, Confirmed: false, Dropped: true, Fee: 1, DepositID: "cdp_1", CollectionID: "col_2"}}},
		&deposits.RecordFeed{At: 5, Provider: "evm", From: "a", Cursor: "b"},
		&deposits.AllocateIndex{At: 6, Provider: "evm"},
	}
	ledgertest.RoundTrip(t, cmds...)
	got, err := ledger.DecodeBatch(ledger.EncodeBatch(nil, cmds))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, cmds) {
		t.Fatalf("round trip:\n%+v\nwant\n%+v", got, cmds)
	}
}

// A random mix of deposits, replays, conflicts and pauses keeps the
// journal balanced, and each balance is the sum of the completed deposits
// less their fees, whatever was refused or replayed along the way.
func TestDepositsAgainstModel(t *testing.T) {
	s := depositFixture(t)
	rng := rand.New(rand.NewPCG(7, 7))
	type dep struct {
		source    string
		amount    ledger.Minor
		completed bool
	}
	byRef := map[string]dep{}
	want := map[string]ledger.Minor{} // org/currency → balance
	paused := map[string]bool{}
	for i := 0; i < 2000; i++ {
		org := []string{"org_a", "org_b"}[rng.IntN(2)]
		if rng.IntN(10) == 0 {
			status := deposits.VirtualAccountPaused
			if paused[org] {
				status = deposits.VirtualAccountActive
			}
			if r := s.Apply(&deposits.UpdateVirtualAccount{At: int64(i), ID: "va_" + org, OrgID: org, Status: status}); r.Err != nil {
				t.Fatal(r.Err)
			}
			paused[org] = !paused[org]
			continue
		}
		d := dep{source: "va_", amount: ledger.Minor(1 + rng.IntN(1_000_000)), completed: rng.IntN(4) > 0}
		cmd := &deposits.Receive{At: int64(i), ID: fmt.Sprintf("vad_%d", i), CollectionID: fmt.Sprintf("col_%d", i), OrgID: org,
			Amount: d.amount, Completed: d.completed, ExternalReference: fmt.Sprintf("r%d", rng.IntN(300))}
		currency := "GHS"
		if rng.IntN(2) == 0 {
			d.source, currency = "addr_", "USDC"
			cmd.ID = fmt.Sprintf("cdp_%d", i)
			cmd.CryptoAddressID = "addr_" + org
			cmd.Fee = ledger.Minor(rng.IntN(int(d.amount)/100 + 1))
		} else {
			cmd.VirtualAccountID = "va_" + org
		}
		key := org + "/" + cmd.ExternalReference
		prev, seen := byRef[key]
		if seen && rng.IntN(2) == 0 { // replay it exactly
			d = prev
			cmd.Amount, cmd.Completed = prev.amount, prev.completed
			cmd.VirtualAccountID, cmd.CryptoAddressID, cmd.ID = "", "", "vad_"+cmd.ID[4:]
			if prev.source == "va_" {
				cmd.VirtualAccountID = "va_" + org
			} else {
				cmd.CryptoAddressID, cmd.ID = "addr_"+org, "cdp_"+cmd.ID[4:]
			}
		}
		r := s.Apply(cmd)
		switch {
		case seen && prev == d:
			if r.Err != nil || !r.Replayed {
				t.Fatalf("step %d: replay answered %+v", i, r)
			}
		case seen:
			if !errors.Is(r.Err, ledger.ErrConflict) {
				t.Fatalf("step %d: conflict answered %+v", i, r)
			}
		case d.source == "va_" && paused[org]:
			if r.Err == nil || r.Err.Code != ledger.CodeBadRequest {
				t.Fatalf("step %d: paused account answered %+v", i, r)
			}
		default:
			if r.Err != nil {
				t.Fatalf("step %d: %v", i, r.Err)
			}
			byRef[key] = d
			if d.completed {
				want[org+"/"+currency] += d.amount - cmd.Fee
			}
		}
	}
	for _, org := range []string{"org_a", "org_b"} {
		for _, cur := range []string{"GHS", "USDC"} {
			if got := balance(s, org, cur); got != want[org+"/"+cur] {
				t.Fatalf("%s %s: balance %d, model %d", org, cur, got, want[org+"/"+cur])
			}
		}
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

// Decoding any bytes either fails or gives commands that encode back to
// the same bytes; seeded with this feature's commands.
func FuzzDepositCommands(f *testing.F) {
	for _, c := range []ledger.Command{
		&deposits.CreateVirtualAccount{At: 1, ID: "va_1", OrgID: "o", Currency: "NGN", Bank: "B", ExternalReference: "r", Metadata: `{"a":1}`},
		&deposits.UpdateVirtualAccount{At: 2, ID: "va_1", OrgID: "o", Status: deposits.VirtualAccountPaused},
		&deposits.CreateCryptoAddress{At: 3, ID: "addr_1", OrgID: "o", Currency: "USDC", Chain: "stellar", Address: "G", Tag: "12"},
		&deposits.UpdateCryptoAddress{At: 4, ID: "addr_1", OrgID: "o", Metadata: `{}`},
		&deposits.Receive{At: 5, ID: "vad_1", CollectionID: "col_1", OrgID: "o", VirtualAccountID: "va_1", Amount: 7, Completed: true, ExternalReference: "r"},
	} {
		f.Add(ledger.EncodeBatch(nil, []ledger.Command{c}))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cmds, err := ledger.DecodeBatch(b)
		if err != nil {
			return
		}
		if !bytes.Equal(ledger.EncodeBatch(nil, cmds), b) {
			t.Fatal("decoded batch re-encodes differently")
		}
		// Applying whatever decoded never breaks the ledger.
		s := ledgertest.New(t)
		for _, c := range cmds {
			s.Apply(c)
		}
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
	})
}
