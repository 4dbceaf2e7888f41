package conversions

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"payments/ledger"
	"payments/ledger/ledgertest"
)

// newLedger is a ledger with two organizations, org_a holding 1,000.00
// GHS.
func newLedger(t *testing.T) *ledgertest.State {
	t.Helper()
	return ledgertest.TwoOrgs(t).With(&ledger.FundBalance{At: 2, OrgID: "org_a", Currency: "GHS", Amount: 100_000, ExternalReference: "f1"})
}

func quoteCmd(id string, at int64, from ledger.Minor, to ledger.Minor) *CreateQuote {
	return &CreateQuote{At: at, ID: id, OrgID: "org_a", FromCurrency: "GHS", FromAmount: from,
		ToCurrency: "USD", ToAmount: to, Side: ledger.SideFrom, Rate: "0.0634615384"}
}

// Bad quotes are refused and change nothing.
func TestCreateQuoteRules(t *testing.T) {
	s := newLedger(t)
	good := quoteCmd("qte_1", 10, 10_000, 634)
	ledgertest.RefuseEdits(t, s, good, []ledgertest.Edit[CreateQuote]{
		{Name: "bad id", Edit: func(c *CreateQuote) { c.ID = "conv_1" }, Want: ledger.ErrValidation},
		{Name: "unknown org", Edit: func(c *CreateQuote) { c.OrgID = "org_x" }, Want: ledger.ErrNotFound},
		{Name: "unknown from currency", Edit: func(c *CreateQuote) { c.FromCurrency = "XYZ" }, Want: ledger.ErrValidation},
		{Name: "unknown to currency", Edit: func(c *CreateQuote) { c.ToCurrency = "usd" }, Want: ledger.ErrValidation},
		{Name: "same currency", Edit: func(c *CreateQuote) { c.ToCurrency = "GHS" }, Want: ledger.ErrValidation},
		{Name: "zero from", Edit: func(c *CreateQuote) { c.FromAmount = 0 }, Want: ledger.ErrValidation},
		{Name: "negative to", Edit: func(c *CreateQuote) { c.ToAmount = -1 }, Want: ledger.ErrValidation},
		{Name: "too large", Edit: func(c *CreateQuote) { c.FromAmount = ledger.AmountMax + 1 }, Want: ledger.ErrValidation},
		{Name: "no side", Edit: func(c *CreateQuote) { c.Side = 0 }, Want: ledger.ErrValidation},
		{Name: "empty rate", Edit: func(c *CreateQuote) { c.Rate = "" }, Want: ledger.ErrValidation},
		{Name: "zero rate", Edit: func(c *CreateQuote) { c.Rate = "0.000" }, Want: ledger.ErrValidation},
		{Name: "negative rate", Edit: func(c *CreateQuote) { c.Rate = "-1" }, Want: ledger.ErrValidation},
		{Name: "exponent rate", Edit: func(c *CreateQuote) { c.Rate = "1e3" }, Want: ledger.ErrValidation},
		{Name: "two points", Edit: func(c *CreateQuote) { c.Rate = "1.2.3" }, Want: ledger.ErrValidation},
	})
	r := s.Apply(good)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	q := QuoteOf(r)
	if q.Status != QuotePending || q.CreatedAt != 10 || q.ExpiresAt != 10+QuoteLifetimeMillis || q.FromAccount == "" || q.ToAccount != "" {
		t.Fatalf("quote %+v", q)
	}
	if r := s.Apply(good); !errors.Is(r.Err, ledger.ErrConflict) {
		t.Fatalf("same id twice: %v", r.Err)
	}
}

// Executing a quote moves exactly from.amount out and to.amount in, against
// the FX clearing accounts, once; every refusal moves nothing.
func TestExecuteQuote(t *testing.T) {
	s := newLedger(t)
	s.Apply(quoteCmd("qte_ok", 10, 10_000, 634))
	s.Apply(quoteCmd("qte_big", 10, 100_001, 6_346))
	s.Apply(quoteCmd("qte_late", 10, 1_000, 63))
	exec := func(id, conv string, at int64) *ExecuteQuote {
		return &ExecuteQuote{At: at, OrgID: "org_a", QuoteID: id, ConversionID: conv}
	}
	refusals := []struct {
		name string
		cmd  *ExecuteQuote
		want error
		msg  string
	}{
		{"unknown quote", exec("qte_none", "conv_1", 20), ledger.ErrNotFound, "Conversion quote not found"},
		{"another organization's quote", &ExecuteQuote{At: 20, OrgID: "org_b", QuoteID: "qte_ok", ConversionID: "conv_1"}, ledger.ErrNotFound, "Conversion quote not found"},
		{"insufficient funds", exec("qte_big", "conv_1", 20), ledger.ErrInsufficientFunds, ""},
		{"expired at its deadline", exec("qte_late", "conv_1", 10+QuoteLifetimeMillis), &ledger.Error{Code: ledger.CodeBadRequest}, "Quote has expired; request a new quote"},
		{"bad conversion id", exec("qte_ok", "pay_1", 20), ledger.ErrValidation, ""},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			before := s.Dump()
			r := s.Apply(tc.cmd)
			if !errors.Is(r.Err, tc.want) || (tc.msg != "" && r.Err.Message != tc.msg) {
				t.Fatalf("got %v, want %v %q", r.Err, tc.want, tc.msg)
			}
			if !bytes.Equal(s.Dump(), before) {
				t.Fatal("a refused execution changed the state")
			}
		})
	}
	if r := s.Apply(exec("qte_big", "conv_1", 20)); r.Err.Available != 100_000 || r.Err.Required != 100_001 || r.Err.Currency != "GHS" {
		t.Fatalf("insufficient funds details %+v", r.Err)
	}

	events := s.EventCount()
	r := s.Apply(exec("qte_ok", "conv_1", 20))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	c := Of(r)
	if c.FromAmount != 10_000 || c.ToAmount != 634 || c.Rate != "0.0634615384" || c.Status != Completed || c.QuoteID != "qte_ok" {
		t.Fatalf("conversion %+v", c)
	}
	ghs, _ := s.AccountFor("org_a", "GHS")
	usd, ok := s.AccountFor("org_a", "USD")
	if ghs.Total != 90_000 || !ok || usd.Total != 634 || c.FromAccount != ghs.Number || c.ToAccount != usd.Number {
		t.Fatalf("balances GHS %d, USD %d (%v)", ghs.Total, usd.Total, ok)
	}
	if q, _ := GetQuote(s.Reader, "org_a", "qte_ok", 20); q.Status != QuoteExecuted || q.ConversionID != "conv_1" || q.ToAccount != usd.Number {
		t.Fatalf("quote after execution %+v", q)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	// conversion.completed, then account.credited for the credited balance.
	if s.EventCount() != events+2 {
		t.Fatalf("%d events, want 2", s.EventCount()-events)
	}
	ev, _ := s.EventAt(events + 1)
	if ev.Type != ledger.EventConversionCompleted || ev.ResourceID != "conv_1" || ev.Subject.(Conversion).ToAmount != 634 {
		t.Fatalf("event %+v", ev)
	}
	ev, _ = s.EventAt(events + 2)
	if ev.Type != ledger.EventAccountCredited || ev.ResourceID != usd.Number {
		t.Fatalf("event %+v", ev)
	}
	// The four postings: the merchant legs carry the conversion's types.
	page := s.Journal("org_a", ledger.JournalFilter{RefID: "conv_1"}, ledger.CursorStart, 10)
	if len(page.Items) != 2 || page.Items[0].Entry.Type != EntryCredit || page.Items[1].Entry.Type != EntryDebit {
		t.Fatalf("conversion entries %+v", page.Items)
	}

	// Executed once: a second execution is refused and names the conversion.
	before := s.Dump()
	r = s.Apply(exec("qte_ok", "conv_2", 21))
	if r.Err == nil || r.Err.Code != ledger.CodeBadRequest || r.Err.ExistingID != "conv_1" {
		t.Fatalf("second execution: %v", r.Err)
	}
	if !bytes.Equal(s.Dump(), before) {
		t.Fatal("a refused execution changed the state")
	}
	if got := List(s.Reader, "org_a", ledger.CursorStart, 10); len(got.Items) != 1 {
		t.Fatalf("%d conversions", len(got.Items))
	}
	if _, ok := Get(s.Reader, "org_b", "conv_1"); ok {
		t.Fatal("another organization sees the conversion")
	}

	// Everything survives a snapshot and restores byte for byte.
	rs := s.Restored()
	if PendingQuotes(rs.Ledger()) != PendingQuotes(s.Ledger()) || PendingQuotes(rs.Ledger()) != 2 {
		t.Fatalf("pending quotes %d restored, %d live", PendingQuotes(rs.Ledger()), PendingQuotes(s.Ledger()))
	}
	if a, _ := rs.AccountFor("org_a", "USD"); a.Total != 634 {
		t.Fatalf("restored USD balance %d", a.Total)
	}
}

// Quotes expire on the organization's clock: advancing the sandbox clock
// past expiresAt expires them in the same Apply; a ledger.Tick does it on the
// leader's clock. Only the advanced organization's quotes are touched.
func TestQuoteExpiry(t *testing.T) {
	s := newLedger(t)
	s.Apply(quoteCmd("qte_a", 1_000, 1_000, 63))
	qb := quoteCmd("qte_b", 1_000, 1_000, 63)
	qb.OrgID = "org_b"
	s.Apply(qb)
	if s.Ledger().ExpiryDue(1_000 + QuoteLifetimeMillis - 1) {
		t.Fatal("due before the deadline")
	}
	if q, _ := GetQuote(s.Reader, "org_a", "qte_a", 1_000+QuoteLifetimeMillis-1); q.Status != QuotePending {
		t.Fatalf("status %s a millisecond before expiry", q.Status)
	}
	// Ten minutes of org_a's clock in one jump, at leader time 2_000.
	if r := s.Apply(&ledger.AdvanceClock{At: 2_000, OrgID: "org_a", Millis: QuoteLifetimeMillis}); r.Err != nil {
		t.Fatal(r.Err)
	}
	qa, _ := GetQuote(s.Reader, "org_a", "qte_a", 2_000)
	qbb, _ := GetQuote(s.Reader, "org_b", "qte_b", 2_000)
	if qa.Status != QuoteExpired || qbb.Status != QuotePending || PendingQuotes(s.Ledger()) != 1 {
		t.Fatalf("after advance: a %s, b %s, %d pending", qa.Status, qbb.Status, PendingQuotes(s.Ledger()))
	}
	r := s.Apply(&ExecuteQuote{At: 2_001, OrgID: "org_a", QuoteID: "qte_a", ConversionID: "conv_x"})
	if r.Err == nil || r.Err.Code != ledger.CodeBadRequest || r.Err.Message != "Quote has expired; request a new quote" {
		t.Fatalf("executing an expired quote: %v", r.Err)
	}
	// Reads report a lapsed quote as expired before the ledger.Tick records it.
	at := 1_000 + int64(QuoteLifetimeMillis)
	if q, _ := GetQuote(s.Reader, "org_b", "qte_b", at); q.Status != QuoteExpired || q.UpdatedAt != q.ExpiresAt {
		t.Fatalf("lapsed quote reads %s", q.Status)
	}
	if !s.Ledger().ExpiryDue(at) {
		t.Fatal("not due at the deadline")
	}
	s.Apply(&ledger.Tick{At: at})
	if PendingQuotes(s.Ledger()) != 0 || s.Ledger().ExpiryDue(at) {
		t.Fatal("tick left quotes pending")
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestConversionCommandsRoundTrip(t *testing.T) {
	cmds := []ledger.Command{
		quoteCmd("qte_1", 5, 7, 9),
		&ExecuteQuote{At: 6, OrgID: "org_a", QuoteID: "qte_1", ConversionID: "conv_1"},
	}
	ledgertest.RoundTrip(t, cmds...)
	for _, name := range []string{"conversion_debit", "conversion_credit", "conversion_clearing"} {
		if et, ok := ledger.ParseEntryType(name); !ok || et.String() != name || et.ReferenceType() != "conversion" {
			t.Errorf("entry type %s: %v %v", name, et, ok)
		}
	}
	if ledger.PurposeFXClearing.String() != "fx_clearing" {
		t.Errorf("purpose %s", ledger.PurposeFXClearing)
	}
}

// Paging back through an organization's journal, one account or all of
// them, reproduces each balance exactly, and each entry's balanceAfter is
// the running total.
func TestJournalPagingReproducesBalances(t *testing.T) {
	s := newLedger(t)
	at := int64(10)
	for i := 0; i < 12; i++ {
		at++
		s.Apply(&ledger.FundBalance{At: at, OrgID: "org_a", Currency: "KES", Amount: ledger.Minor(1_000 + i), ExternalReference: fmt.Sprint("k", i)})
		at++
		id := fmt.Sprintf("qte_%d", i)
		s.Apply(quoteCmd(id, at, ledger.Minor(500+i), ledger.Minor(30+i)))
		if r := s.Apply(&ExecuteQuote{At: at, OrgID: "org_a", QuoteID: id, ConversionID: fmt.Sprintf("conv_%d", i)}); r.Err != nil {
			t.Fatal(r.Err)
		}
		at++
		s.Apply(&ledger.CreatePayout{At: at, ID: fmt.Sprintf("pay_ghs_%d", i), OrgID: "org_a", ExternalReference: fmt.Sprint("p", i),
			Spec: ledger.PayoutSpec{Currency: "GHS", Amount: ledger.Minor(100 + i), AmountSide: ledger.SideTo, Method: "gh_mtn"}, MethodType: ledger.MethodMobileMoney, Fee: 1})
	}
	s.Apply(&ledger.FundBalance{At: at, OrgID: "org_b", Currency: "GHS", Amount: 5, ExternalReference: "b"})
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{1, 3, 7, 100} {
		sums := map[string]ledger.Minor{}
		latest := map[string]ledger.Minor{}
		var last uint64
		before := ledger.CursorStart
		n := 0
		for {
			p := s.Journal("org_a", ledger.JournalFilter{}, before, limit)
			for _, it := range p.Items {
				if last != 0 && it.Seq >= last {
					t.Fatalf("limit %d: sequence %d after %d", limit, it.Seq, last)
				}
				last = it.Seq
				if _, ok := latest[it.Entry.Account]; !ok {
					latest[it.Entry.Account] = it.Entry.BalanceAfter
				}
				sums[it.Entry.Account] += it.Entry.Amount
				n++
			}
			if !p.HasMore {
				break
			}
			before = p.Next
		}
		accounts := s.Accounts("org_a")
		if len(sums) != len(accounts) {
			t.Fatalf("limit %d: entries on %d accounts, org has %d", limit, len(sums), len(accounts))
		}
		for _, a := range accounts {
			if sums[a.Number] != a.Total || latest[a.Number] != a.Total {
				t.Fatalf("limit %d: %s sums to %d, newest balanceAfter %d, total %d", limit, a.Number, sums[a.Number], latest[a.Number], a.Total)
			}
		}
		// 1 initial funding + 12 × (funding, debit, credit, payout, fee).
		if n != 1+12*5 {
			t.Fatalf("limit %d: %d entries", limit, n)
		}
	}
	// Per-account and filtered views.
	usd, _ := s.AccountFor("org_a", "USD")
	p := s.Journal("org_a", ledger.JournalFilter{Currency: "USD"}, ledger.CursorStart, 100)
	var sum ledger.Minor
	for i := len(p.Items) - 1; i >= 0; i-- {
		sum += p.Items[i].Entry.Amount
		if p.Items[i].Entry.BalanceAfter != sum {
			t.Fatalf("USD entry %d: balanceAfter %d, running %d", p.Items[i].Seq, p.Items[i].Entry.BalanceAfter, sum)
		}
	}
	if sum != usd.Total || len(p.Items) != 12 {
		t.Fatalf("USD journal sums to %d over %d entries, total %d", sum, len(p.Items), usd.Total)
	}
	if got := s.Journal("org_a", ledger.JournalFilter{Account: usd.Number, Type: EntryDebit}, ledger.CursorStart, 100); len(got.Items) != 0 {
		t.Fatalf("USD has %d conversion debits", len(got.Items))
	}
	if got := s.Journal("org_a", ledger.JournalFilter{Type: EntryDebit}, ledger.CursorStart, 100); len(got.Items) != 12 {
		t.Fatalf("%d conversion debits", len(got.Items))
	}
	if got := s.Journal("org_a", ledger.JournalFilter{Account: "GHS00000000"}, ledger.CursorStart, 100); len(got.Items) != 0 {
		t.Fatal("an unknown account has entries")
	}
	if got := s.Journal("org_b", ledger.JournalFilter{Account: usd.Number}, ledger.CursorStart, 100); len(got.Items) != 0 {
		t.Fatal("another organization's account is visible")
	}
	if _, _, ok := s.OrgEntry("org_b", p.Items[0].Seq); ok {
		t.Fatal("another organization reads the entry")
	}
	if e, a, ok := s.OrgEntry("org_a", p.Items[0].Seq); !ok || a.Number != usd.Number || e.Entry.Type != EntryCredit {
		t.Fatalf("OrgEntry: %+v %+v %v", e, a, ok)
	}
}
