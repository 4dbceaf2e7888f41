package ledger

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"testing"
)

func newConversionState(t *testing.T) *testState {
	t.Helper()
	s := newTestState(t)
	for _, org := range []string{"org_a", "org_b"} {
		hash := sha256.Sum256([]byte(org))
		if r := s.Apply(&CreateOrganization{At: 1, ID: org, Name: org, Key: CreateAPIKey{At: 1, ID: "key_" + org[4:], OrgID: org, Hash: string(hash[:])}}); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if r := s.Apply(&FundBalance{At: 2, OrgID: "org_a", Currency: "GHS", Amount: 100_000, ExternalReference: "f1"}); r.Err != nil {
		t.Fatal(r.Err)
	}
	return s
}

func quoteCmd(id string, at int64, from Minor, to Minor) *CreateQuote {
	return &CreateQuote{At: at, ID: id, OrgID: "org_a", FromCurrency: "GHS", FromAmount: from,
		ToCurrency: "USD", ToAmount: to, Side: SideFrom, Rate: "0.0634615384"}
}

// Bad quotes are refused and change nothing.
func TestCreateQuoteRules(t *testing.T) {
	s := newConversionState(t)
	good := quoteCmd("qte_1", 10, 10_000, 634)
	cases := []struct {
		name string
		edit func(c *CreateQuote)
		want error
	}{
		{"bad id", func(c *CreateQuote) { c.ID = "conv_1" }, ErrValidation},
		{"unknown org", func(c *CreateQuote) { c.OrgID = "org_x" }, ErrNotFound},
		{"unknown from currency", func(c *CreateQuote) { c.FromCurrency = "XYZ" }, ErrValidation},
		{"unknown to currency", func(c *CreateQuote) { c.ToCurrency = "usd" }, ErrValidation},
		{"same currency", func(c *CreateQuote) { c.ToCurrency = "GHS" }, ErrValidation},
		{"zero from", func(c *CreateQuote) { c.FromAmount = 0 }, ErrValidation},
		{"negative to", func(c *CreateQuote) { c.ToAmount = -1 }, ErrValidation},
		{"too large", func(c *CreateQuote) { c.FromAmount = AmountMax + 1 }, ErrValidation},
		{"no side", func(c *CreateQuote) { c.Side = 0 }, ErrValidation},
		{"empty rate", func(c *CreateQuote) { c.Rate = "" }, ErrValidation},
		{"zero rate", func(c *CreateQuote) { c.Rate = "0.000" }, ErrValidation},
		{"negative rate", func(c *CreateQuote) { c.Rate = "-1" }, ErrValidation},
		{"exponent rate", func(c *CreateQuote) { c.Rate = "1e3" }, ErrValidation},
		{"two points", func(c *CreateQuote) { c.Rate = "1.2.3" }, ErrValidation},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := *good
			tc.edit(&c)
			before := encodeSnapshot(t, s)
			if r := s.Apply(&c); !errors.Is(r.Err, tc.want) {
				t.Fatalf("got %v, want %v", r.Err, tc.want)
			}
			if !bytes.Equal(encodeSnapshot(t, s), before) {
				t.Fatal("a refused quote changed the state")
			}
		})
	}
	r := s.Apply(good)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	q := r.Quote
	if q.Status != QuotePending || q.CreatedAt != 10 || q.ExpiresAt != 10+QuoteLifetimeMillis || q.FromAccount == "" || q.ToAccount != "" {
		t.Fatalf("quote %+v", q)
	}
	if r := s.Apply(good); !errors.Is(r.Err, ErrConflict) {
		t.Fatalf("same id twice: %v", r.Err)
	}
}

// Executing a quote moves exactly from.amount out and to.amount in, against
// the FX clearing accounts, once; every refusal moves nothing.
func TestExecuteQuote(t *testing.T) {
	s := newConversionState(t)
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
		{"unknown quote", exec("qte_none", "conv_1", 20), ErrNotFound, "Conversion quote not found"},
		{"another organization's quote", &ExecuteQuote{At: 20, OrgID: "org_b", QuoteID: "qte_ok", ConversionID: "conv_1"}, ErrNotFound, "Conversion quote not found"},
		{"insufficient funds", exec("qte_big", "conv_1", 20), ErrInsufficientFunds, ""},
		{"expired at its deadline", exec("qte_late", "conv_1", 10+QuoteLifetimeMillis), &Error{Code: CodeBadRequest}, "Quote has expired; request a new quote"},
		{"bad conversion id", exec("qte_ok", "pay_1", 20), ErrValidation, ""},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			before := encodeSnapshot(t, s)
			r := s.Apply(tc.cmd)
			if !errors.Is(r.Err, tc.want) || (tc.msg != "" && r.Err.Message != tc.msg) {
				t.Fatalf("got %v, want %v %q", r.Err, tc.want, tc.msg)
			}
			if !bytes.Equal(encodeSnapshot(t, s), before) {
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
	c := r.Conversion
	if c.FromAmount != 10_000 || c.ToAmount != 634 || c.Rate != "0.0634615384" || c.Status != ConversionCompleted || c.QuoteID != "qte_ok" {
		t.Fatalf("conversion %+v", c)
	}
	ghs, _ := s.AccountFor("org_a", "GHS")
	usd, ok := s.AccountFor("org_a", "USD")
	if ghs.Total != 90_000 || !ok || usd.Total != 634 || c.FromAccount != ghs.Number || c.ToAccount != usd.Number {
		t.Fatalf("balances GHS %d, USD %d (%v)", ghs.Total, usd.Total, ok)
	}
	if q, _ := s.Quote("org_a", "qte_ok", 20); q.Status != QuoteExecuted || q.ConversionID != "conv_1" || q.ToAccount != usd.Number {
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
	if ev.Type != EventConversionCompleted || ev.ResourceID != "conv_1" || ev.Subject.(Conversion).ToAmount != 634 {
		t.Fatalf("event %+v", ev)
	}
	ev, _ = s.EventAt(events + 2)
	if ev.Type != EventAccountCredited || ev.ResourceID != usd.Number {
		t.Fatalf("event %+v", ev)
	}
	// The four postings: the merchant legs carry the conversion's types.
	page := s.Journal("org_a", JournalFilter{RefID: "conv_1"}, CursorStart, 10)
	if len(page.Items) != 2 || page.Items[0].Entry.Type != EntryConversionCredit || page.Items[1].Entry.Type != EntryConversionDebit {
		t.Fatalf("conversion entries %+v", page.Items)
	}

	// Executed once: a second execution is refused and names the conversion.
	before := encodeSnapshot(t, s)
	r = s.Apply(exec("qte_ok", "conv_2", 21))
	if r.Err == nil || r.Err.Code != CodeBadRequest || r.Err.ExistingID != "conv_1" {
		t.Fatalf("second execution: %v", r.Err)
	}
	if !bytes.Equal(encodeSnapshot(t, s), before) {
		t.Fatal("a refused execution changed the state")
	}
	if got := s.Conversions("org_a", CursorStart, 10); len(got.Items) != 1 {
		t.Fatalf("%d conversions", len(got.Items))
	}
	if _, ok := s.Conversion("org_b", "conv_1"); ok {
		t.Fatal("another organization sees the conversion")
	}

	// Everything survives a snapshot and restores byte for byte.
	rs := restoreSame(t, s)
	if rs.PendingQuotes() != s.PendingQuotes() || rs.PendingQuotes() != 2 {
		t.Fatalf("pending quotes %d restored, %d live", rs.PendingQuotes(), s.PendingQuotes())
	}
	if a, _ := rs.AccountFor("org_a", "USD"); a.Total != 634 {
		t.Fatalf("restored USD balance %d", a.Total)
	}
}

// Quotes expire on the organization's clock: advancing the sandbox clock
// past expiresAt expires them in the same Apply; a Tick does it on the
// leader's clock. Only the advanced organization's quotes are touched.
func TestQuoteExpiry(t *testing.T) {
	s := newConversionState(t)
	s.Apply(quoteCmd("qte_a", 1_000, 1_000, 63))
	qb := quoteCmd("qte_b", 1_000, 1_000, 63)
	qb.OrgID = "org_b"
	s.Apply(qb)
	if s.ExpiryDue(1_000 + QuoteLifetimeMillis - 1) {
		t.Fatal("due before the deadline")
	}
	if q, _ := s.Quote("org_a", "qte_a", 1_000+QuoteLifetimeMillis-1); q.Status != QuotePending {
		t.Fatalf("status %s a millisecond before expiry", q.Status)
	}
	// Ten minutes of org_a's clock in one jump, at leader time 2_000.
	if r := s.Apply(&AdvanceClock{At: 2_000, OrgID: "org_a", Millis: QuoteLifetimeMillis}); r.Err != nil {
		t.Fatal(r.Err)
	}
	qa, _ := s.Quote("org_a", "qte_a", 2_000)
	qbb, _ := s.Quote("org_b", "qte_b", 2_000)
	if qa.Status != QuoteExpired || qbb.Status != QuotePending || s.PendingQuotes() != 1 {
		t.Fatalf("after advance: a %s, b %s, %d pending", qa.Status, qbb.Status, s.PendingQuotes())
	}
	r := s.Apply(&ExecuteQuote{At: 2_001, OrgID: "org_a", QuoteID: "qte_a", ConversionID: "conv_x"})
	if r.Err == nil || r.Err.Code != CodeBadRequest || r.Err.Message != "Quote has expired; request a new quote" {
		t.Fatalf("executing an expired quote: %v", r.Err)
	}
	// Reads report a lapsed quote as expired before the Tick records it.
	at := 1_000 + int64(QuoteLifetimeMillis)
	if q, _ := s.Quote("org_b", "qte_b", at); q.Status != QuoteExpired || q.UpdatedAt != q.ExpiresAt {
		t.Fatalf("lapsed quote reads %s", q.Status)
	}
	if !s.ExpiryDue(at) {
		t.Fatal("not due at the deadline")
	}
	s.Apply(&Tick{At: at})
	if s.PendingQuotes() != 0 || s.ExpiryDue(at) {
		t.Fatal("tick left quotes pending")
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestConversionCommandsRoundTrip(t *testing.T) {
	cmds := []Command{
		quoteCmd("qte_1", 5, 7, 9),
		&ExecuteQuote{At: 6, OrgID: "org_a", QuoteID: "qte_1", ConversionID: "conv_1"},
	}
	checkCommandsRoundTrip(t, cmds)
	for _, name := range []string{"conversion_debit", "conversion_credit", "conversion_clearing"} {
		if et, ok := ParseEntryType(name); !ok || et.String() != name || et.ReferenceType() != "conversion" {
			t.Errorf("entry type %s: %v %v", name, et, ok)
		}
	}
	if PurposeFXClearing.String() != "fx_clearing" {
		t.Errorf("purpose %s", PurposeFXClearing)
	}
}

// Paging back through an organization's journal, one account or all of
// them, reproduces each balance exactly, and each entry's balanceAfter is
// the running total.
func TestJournalPagingReproducesBalances(t *testing.T) {
	s := newConversionState(t)
	at := int64(10)
	for i := 0; i < 12; i++ {
		at++
		s.Apply(&FundBalance{At: at, OrgID: "org_a", Currency: "KES", Amount: Minor(1_000 + i), ExternalReference: fmt.Sprint("k", i)})
		at++
		id := fmt.Sprintf("qte_%d", i)
		s.Apply(quoteCmd(id, at, Minor(500+i), Minor(30+i)))
		if r := s.Apply(&ExecuteQuote{At: at, OrgID: "org_a", QuoteID: id, ConversionID: fmt.Sprintf("conv_%d", i)}); r.Err != nil {
			t.Fatal(r.Err)
		}
		at++
		s.Apply(&CreatePayout{At: at, ID: fmt.Sprintf("pay_ghs_%d", i), OrgID: "org_a", ExternalReference: fmt.Sprint("p", i),
			Spec: PayoutSpec{Currency: "GHS", Amount: Minor(100 + i), AmountSide: SideTo, Method: "gh_mtn"}, MethodType: MethodMobileMoney, Fee: 1})
	}
	s.Apply(&FundBalance{At: at, OrgID: "org_b", Currency: "GHS", Amount: 5, ExternalReference: "b"})
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{1, 3, 7, 100} {
		sums := map[string]Minor{}
		latest := map[string]Minor{}
		var last uint64
		before := CursorStart
		n := 0
		for {
			p := s.Journal("org_a", JournalFilter{}, before, limit)
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
	p := s.Journal("org_a", JournalFilter{Currency: "USD"}, CursorStart, 100)
	var sum Minor
	for i := len(p.Items) - 1; i >= 0; i-- {
		sum += p.Items[i].Entry.Amount
		if p.Items[i].Entry.BalanceAfter != sum {
			t.Fatalf("USD entry %d: balanceAfter %d, running %d", p.Items[i].Seq, p.Items[i].Entry.BalanceAfter, sum)
		}
	}
	if sum != usd.Total || len(p.Items) != 12 {
		t.Fatalf("USD journal sums to %d over %d entries, total %d", sum, len(p.Items), usd.Total)
	}
	if got := s.Journal("org_a", JournalFilter{Account: usd.Number, Type: EntryConversionDebit}, CursorStart, 100); len(got.Items) != 0 {
		t.Fatalf("USD has %d conversion debits", len(got.Items))
	}
	if got := s.Journal("org_a", JournalFilter{Type: EntryConversionDebit}, CursorStart, 100); len(got.Items) != 12 {
		t.Fatalf("%d conversion debits", len(got.Items))
	}
	if got := s.Journal("org_a", JournalFilter{Account: "GHS00000000"}, CursorStart, 100); len(got.Items) != 0 {
		t.Fatal("an unknown account has entries")
	}
	if got := s.Journal("org_b", JournalFilter{Account: usd.Number}, CursorStart, 100); len(got.Items) != 0 {
		t.Fatal("another organization's account is visible")
	}
	if _, _, ok := s.OrgEntry("org_b", p.Items[0].Seq); ok {
		t.Fatal("another organization reads the entry")
	}
	if e, a, ok := s.OrgEntry("org_a", p.Items[0].Seq); !ok || a.Number != usd.Number || e.Entry.Type != EntryConversionCredit {
		t.Fatalf("OrgEntry: %+v %+v %v", e, a, ok)
	}
}

// A journal walk bounded by time reads only around its range, however long
// the history before and after it: an export of one day of an account with
// years of entries is answered whole, not refused as too large.
func TestJournalTimeRangeSkipsTheRest(t *testing.T) {
	s := newConversionState(t)
	const n = 3 * PageScanMax
	const minute = int64(60_000)
	var cmds []Command
	for i := 0; i < n; i++ {
		// Two currencies: the walk merges two accounts' statements.
		cur := []string{"GHS", "KES"}[i%2]
		cmds = append(cmds, &FundBalance{At: int64(i+1) * minute, OrgID: "org_a", Currency: cur, Amount: 1, ExternalReference: fmt.Sprint("range-", i)})
		if len(cmds) == 500 {
			for _, r := range s.applyBatch(cmds...) {
				if r.Err != nil {
					t.Fatal(r.Err)
				}
			}
			cmds = cmds[:0]
		}
	}
	for _, tc := range []struct {
		name     string
		from, to int64 // minutes, inclusive; 0 for no bound
	}{
		{"the middle", 12_000, 12_099},
		{"the start", 1, 40},
		{"the end", n - 30, 0},
		{"up to a time", 0, 7},
		{"up to after the end", n - 20, n + 1000},
		{"a range past the end", n + 5, n + 1000},
	} {
		f := JournalFilter{From: tc.from * minute, To: tc.to * minute}
		p := s.Journal("org_a", f, CursorStart, 1000)
		if p.HasMore {
			t.Fatalf("%s: a range of %d entries has more than a page", tc.name, len(p.Items))
		}
		// What a walk of the whole journal, filtered, finds.
		var want []NumberedEntry
		for before := CursorStart; ; {
			all := s.Journal("org_a", JournalFilter{}, before, 1000)
			for _, it := range all.Items {
				if (f.From == 0 || it.Entry.At >= f.From) && (f.To == 0 || it.Entry.At <= f.To) {
					want = append(want, it)
				}
			}
			if !all.HasMore {
				break
			}
			before = all.Next
		}
		if (len(want) == 0) != (tc.from > n) || len(p.Items) != len(want) {
			t.Fatalf("%s: %d entries, want %d", tc.name, len(p.Items), len(want))
		}
		for i := range want {
			if p.Items[i] != want[i] {
				t.Fatalf("%s: entry %d is %+v, want %+v", tc.name, i, p.Items[i], want[i])
			}
		}
	}
}

// A command stamped earlier than the account's last entry (a new leader
// whose clock is behind) is booked at the account's last time: times never
// go back along a statement, which time-bounded walks rely on. Records keep
// the command's own time.
func TestEntryTimesNeverGoBack(t *testing.T) {
	s := newConversionState(t)
	for i, at := range []int64{100_000, 40_000, 120_000} {
		if r := s.Apply(&FundBalance{At: at, OrgID: "org_a", Currency: "GHS", Amount: 1, ExternalReference: fmt.Sprint("skew-", i)}); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	p := s.Journal("org_a", JournalFilter{Currency: "GHS"}, CursorStart, 3)
	var got []int64
	for _, it := range p.Items {
		got = append(got, it.Entry.At)
	}
	if want := []int64{120_000, 100_000, 100_000}; !slices.Equal(got, want) {
		t.Fatalf("entry times %v, want %v", got, want)
	}
}
