package ledger

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"testing"
)

func TestAdvanceClock(t *testing.T) {
	s := newOrgTestState(t)
	for _, tc := range []struct {
		cmd  *AdvanceClock
		want error
	}{
		{&AdvanceClock{At: 10, OrgID: "org_b", Millis: 1000}, ErrNotFound},
		{&AdvanceClock{At: 10, OrgID: "org_a", Millis: 0}, ErrValidation},
		{&AdvanceClock{At: 10, OrgID: "org_a", Millis: ClockAdvanceMax + 1}, ErrValidation},
	} {
		before := encodeSnapshot(t, s)
		if res := s.Apply(tc.cmd); !errors.Is(res.Err, tc.want) {
			t.Fatalf("%+v: got %v, want %v", tc.cmd, res.Err, tc.want)
		}
		if !bytes.Equal(encodeSnapshot(t, s), before) {
			t.Fatalf("%+v: a rejected advance changed the state", tc.cmd)
		}
	}
	s.Apply(&AdvanceClock{At: 10, OrgID: "org_a", Millis: 600_000})
	res := s.Apply(&AdvanceClock{At: 20, OrgID: "org_a", Millis: 1000})
	if res.Err != nil || res.Clock.OffsetMillis != 601_000 {
		t.Fatalf("advance: %+v", res)
	}
	if got := s.OrgNow("org_a", 100); got != 601_100 {
		t.Fatalf("OrgNow = %d", got)
	}
	if got := s.OrgNow("org_other", 100); got != 100 {
		t.Fatalf("an untouched organization's clock moved: %d", got)
	}
	// The clock survives a snapshot and a replay.
	r, err := Restore(bytes.NewReader(encodeSnapshot(t, s)))
	if err != nil || r.Clock("org_a").OffsetMillis != 601_000 {
		t.Fatalf("restored clock: %+v %v", r.Clock("org_a"), err)
	}
	if got := r.st.OrgNow("org_a", 100); got != 601_100 {
		t.Fatalf("restored OrgNow = %d", got)
	}
	cmds, err := DecodeBatch(EncodeBatch(nil, []Command{&AdvanceClock{At: 5, OrgID: "o", Millis: 7}, &Tick{At: 9}}))
	if err != nil || *cmds[0].(*AdvanceClock) != (AdvanceClock{At: 5, OrgID: "o", Millis: 7}) || cmds[1].(*Tick).At != 9 {
		t.Fatalf("round trip: %v %v", cmds, err)
	}
}

// clockScenario creates one of every kind of resource for org_a, all at
// leader time at, after advancing its clock by offset (none for 0).
func clockScenario(t *testing.T, offset, at int64) *testState {
	t.Helper()
	s := newTestState(t)
	must := func(cmd Command) Result {
		t.Helper()
		return applyChecked(t, s, cmd)
	}
	must(createOrgA())
	if offset > 0 {
		must(&AdvanceClock{At: 2, OrgID: "org_a", Millis: offset})
	}
	hash2 := sha256.Sum256([]byte("k2"))
	for _, cmd := range []Command{
		&CreateAPIKey{At: at, ID: "key_b", OrgID: "org_a", Hash: string(hash2[:])},
		&FundBalance{At: at, OrgID: "org_a", Currency: "GHS", Amount: 1_000_000, ExternalReference: "f1"},
		&CreatePayout{At: at, ID: "pay_1", OrgID: "org_a", ExternalReference: "p1",
			Spec:       PayoutSpec{Currency: "GHS", Amount: 1000, AmountSide: SideTo, Method: "gh_mtn", AccountNumber: "233241234567"},
			MethodType: MethodMobileMoney, Fee: 10},
		&MarkPayoutProcessing{At: at, ID: "pay_1", ProviderReference: "sbx"},
		&SettlePayout{At: at, ID: "pay_1", Completed: true},
		&CreateCollection{At: at, ID: "col_1", OrgID: "org_a", ExternalReference: "c1",
			Spec: CollectionSpec{Currency: "GHS", Amount: 50_000, Method: "gh_mtn", PayerNumber: "233241234567"}, MethodType: MethodMobileMoney, Fee: 750},
		&SettleCollection{At: at, ID: "col_1", Completed: true},
		quoteCmd("qte_1", at, 10_000, 634),
		executeQuote(at, "org_a", "qte_1", "conv_1", ""),
		cryptoOrder("ord_1", "o1", at),
		Deposits.CreateVirtualAccount(at, "va_1", "org_a", "GHS", "Sandbox Bank"),
		Deposits.CreateCryptoAddress(at, "addr_1", "org_a", "USDC", "solana", "So1a"),
		Deposits.Receive(at, "vad_1", "col_d1", "org_a", "va_1", 12_345, true, "d1", "session-d1"),
	} {
		must(cmd)
	}
	return s
}

// After an advance of N, every kind of resource an organization sees is
// created N later than the same commands make it without one, its events
// and ledger entries too, and lists bounded by time find them at the
// shifted times. Deliveries stay on real time.
func TestAdvanceShiftsEveryResourceTime(t *testing.T) {
	const at = 100 * hour
	kinds := []struct {
		name  string
		times func(s *testState) ([]int64, bool) // false: not found
	}{
		{"payout", func(s *testState) ([]int64, bool) {
			p, ok := s.Payout("pay_1")
			return []int64{p.CreatedAt, p.ProcessingAt, p.CompletedAt, p.UpdatedAt}, ok
		}},
		{"collection", func(s *testState) ([]int64, bool) {
			c, ok := s.Collection("col_1")
			return []int64{c.CreatedAt, c.CompletedAt, c.UpdatedAt}, ok
		}},
		{"deposit collection", func(s *testState) ([]int64, bool) {
			c, colOK := s.Collection("col_d1")
			dAt, depOK := Deposits.DepositAt(s.Reader, "org_a", "d1")
			return []int64{c.CreatedAt, c.CompletedAt, dAt}, colOK && depOK
		}},
		{"quote", func(s *testState) ([]int64, bool) {
			return Conversions.QuoteTimes(s.Reader, "org_a", "qte_1", at)
		}},
		{"conversion", func(s *testState) ([]int64, bool) {
			return Conversions.ConversionTimes(s.Reader, "org_a", "conv_1")
		}},
		{"order", func(s *testState) ([]int64, bool) {
			o, ok := Orders.Get(s.Reader, "org_a", "ord_1")
			return []int64{o.CreatedAt, o.UpdatedAt}, ok
		}},
		{"virtual account", func(s *testState) ([]int64, bool) {
			return Deposits.VirtualAccountTimes(s.Reader, "org_a", "va_1")
		}},
		{"crypto address", func(s *testState) ([]int64, bool) {
			return Deposits.CryptoAddressTimes(s.Reader, "org_a", "addr_1")
		}},
		{"API key", func(s *testState) ([]int64, bool) {
			k, ok := s.APIKey("org_a", "key_b")
			return []int64{k.CreatedAt}, ok
		}},
		{"balance account", func(s *testState) ([]int64, bool) {
			a, ok := s.AccountFor("org_a", "GHS")
			return []int64{a.CreatedAt, a.LastEntryAt}, ok
		}},
		{"ledger entries", func(s *testState) ([]int64, bool) {
			var out []int64
			for _, n := range s.Journal("org_a", JournalFilter{}, CursorStart, 100).Items {
				out = append(out, n.Entry.At)
			}
			return out, true
		}},
		{"events", func(s *testState) ([]int64, bool) {
			var out []int64
			for _, ev := range s.Events("org_a", EventFilter{}, CursorStart, 100).Items {
				out = append(out, ev.At)
			}
			return out, true
		}},
	}
	for _, offset := range []int64{0, 5 * hour, 30 * 24 * hour} {
		s := clockScenario(t, offset, at)
		for _, k := range kinds {
			times, ok := k.times(s)
			if !ok {
				t.Fatalf("offset %d: %s not found", offset, k.name)
			}
			if len(times) == 0 {
				t.Fatalf("offset %d: %s: no times", offset, k.name)
			}
			for i, got := range times {
				if got != at+offset {
					t.Errorf("offset %dh: %s time %d is %d, want the leader's %d plus the offset", offset/hour, k.name, i, got, at+offset)
				}
			}
		}
		// Lists bounded by time follow the clock the resources show.
		shifted, realAt := at+offset, int64(at)
		cols := func(from, to int64) int {
			return len(s.Collections("org_a", CollectionFilter{CreatedFrom: from, CreatedTo: to}, CursorStart, 100).Items)
		}
		orders := func(from int64) int {
			return Orders.CreatedFrom(s.Reader, "org_a", from)
		}
		entries := func(from, to int64) int {
			return len(s.Journal("org_a", JournalFilter{From: from, To: to}, CursorStart, 100).Items)
		}
		allEntries := entries(0, 0)
		if n := cols(shifted, shifted); n != 2 {
			t.Errorf("offset %dh: collections from/to the shifted time: %d, want 2", offset/hour, n)
		}
		if n := orders(shifted); n != 1 {
			t.Errorf("offset %dh: orders from the shifted time: %d, want 1", offset/hour, n)
		}
		if n := entries(shifted, shifted); n != allEntries || n == 0 {
			t.Errorf("offset %dh: entries from/to the shifted time: %d of %d", offset/hour, n, allEntries)
		}
		if offset > 0 {
			if n := cols(realAt, shifted-1); n != 0 {
				t.Errorf("offset %dh: %d collections listed before the shifted time", offset/hour, n)
			}
			if n := orders(shifted + 1); n != 0 {
				t.Errorf("offset %dh: %d orders listed after the shifted time", offset/hour, n)
			}
			if n := entries(realAt, shifted-1); n != 0 {
				t.Errorf("offset %dh: %d entries listed before the shifted time", offset/hour, n)
			}
		}
	}
}
