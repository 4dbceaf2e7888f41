package keycontrols

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"payments/ledger"
	"payments/ledger/fxpayouts"
	"payments/ledger/ledgertest"
	"payments/ledger/ledgertest/ordertest"
	"payments/ledger/orders"
)

func usdCents(v ledger.Minor) *ledger.Minor { return &v }

func TestSpendCapsCheck(t *testing.T) {
	day := ledger.SpendPeriod{Day: 100, Month: 10}
	nextDay := ledger.SpendPeriod{Day: 101, Month: 10}
	nextMonth := ledger.SpendPeriod{Day: 130, Month: 11}
	caps := ledger.SpendCaps{PerTransaction: usdCents(50_00), Daily: usdCents(100_00), Monthly: usdCents(250_00)}
	used := ledger.SpendUsage{Period: day, Day: 80_00, Month: 200_00}
	for _, tc := range []struct {
		name    string
		caps    ledger.SpendCaps
		usage   ledger.SpendUsage
		usd     ledger.Minor
		period  ledger.SpendPeriod
		wantCap string       // "" admitted
		wantUse ledger.Minor // used in the refusal
	}{
		{"no caps", ledger.SpendCaps{}, used, 1_000_000_00, day, "", 0},
		{"exactly the daily cap", caps, used, 20_00, day, "", 0},
		{"a cent past the daily cap", caps, used, 20_01, day, CapDaily, 80_00},
		{"per transaction first", caps, used, 50_01, day, CapPerTransaction, 0},
		{"exactly per transaction", caps, ledger.SpendUsage{}, 50_00, day, "", 0},
		{"the day rolled over", caps, used, 50_00, nextDay, "", 0},
		{"the month's cap still holds the next day", caps, used, 50_01 - 1, nextDay, "", 0},
		{"monthly cap on a new day", caps, ledger.SpendUsage{Period: day, Day: 0, Month: 240_00}, 10_01, nextDay, CapMonthly, 240_00},
		{"the month rolled over", caps, ledger.SpendUsage{Period: day, Day: 100_00, Month: 250_00}, 50_00, nextMonth, "", 0},
		{"a late charge counts in the current day", caps, ledger.SpendUsage{Period: nextDay, Day: 90_00, Month: 90_00}, 10_01, day, CapDaily, 90_00},
		{"a zero cap admits nothing", ledger.SpendCaps{Daily: usdCents(0)}, ledger.SpendUsage{}, 1, day, CapDaily, 0},
		{"a zero cap admits zero", ledger.SpendCaps{Daily: usdCents(0)}, ledger.SpendUsage{}, 0, day, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := check(tc.caps, tc.usage, tc.usd, tc.period)
			if tc.wantCap == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || err.Code != ledger.CodeSpendCapExceeded || err.SpendCap == nil {
				t.Fatalf("got %v, want %s", err, ledger.CodeSpendCapExceeded)
			}
			if d := err.SpendCap; d.Cap != tc.wantCap || d.Used != tc.wantUse || d.Attempted != tc.usd {
				t.Fatalf("details %+v, want cap %s used %d attempted %d", d, tc.wantCap, tc.wantUse, tc.usd)
			}
		})
	}
}

func TestSpendUsageRelease(t *testing.T) {
	day := ledger.SpendPeriod{Day: 100, Month: 10}
	u := add(add(ledger.SpendUsage{}, 30_00, day), 20_00, day)
	if u.Day != 50_00 || u.Month != 50_00 {
		t.Fatalf("after two charges: %+v", u)
	}
	if r := release(u, 20_00, day); r.Day != 30_00 || r.Month != 30_00 {
		t.Fatalf("release in the same day: %+v", r)
	}
	// The day is over: only the month, still current, gets it back.
	later := add(u, 5_00, ledger.SpendPeriod{Day: 101, Month: 10})
	if r := release(later, 20_00, day); r.Day != 5_00 || r.Month != 35_00 {
		t.Fatalf("release of an earlier day: %+v", r)
	}
	if r := release(u, 90_00, day); r.Day != 0 || r.Month != 0 {
		t.Fatalf("release never goes below zero: %+v", r)
	}
}

// Days and months are the organization's: the boundaries are local
// midnights, not UTC's.
func TestSpendPeriodBoundaries(t *testing.T) {
	nairobi := time.FixedZone("EAT", 3*3600)
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skip("no timezone database:", err)
	}
	for _, tc := range []struct {
		name       string
		a, b       time.Time
		sameDay    bool
		sameMonth  bool
		wantMonthB time.Month
	}{
		{"Nairobi: 20:59 and 21:00 UTC are different days",
			time.Date(2026, 3, 10, 20, 59, 59, 0, time.UTC), time.Date(2026, 3, 10, 21, 0, 0, 0, time.UTC), false, true, time.March},
		{"Nairobi: the month turns at 21:00 UTC on the last day",
			time.Date(2026, 3, 31, 20, 59, 59, 0, time.UTC), time.Date(2026, 3, 31, 21, 0, 0, 0, time.UTC), false, false, time.April},
		{"Nairobi: within one local day across UTC midnight",
			time.Date(2026, 3, 10, 21, 30, 0, 0, time.UTC), time.Date(2026, 3, 11, 20, 0, 0, 0, time.UTC), true, true, time.March},
		{"Nairobi: the year turns",
			time.Date(2026, 12, 31, 20, 59, 0, 0, time.UTC), time.Date(2026, 12, 31, 21, 0, 0, 0, time.UTC), false, false, time.January},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pa, pb := PeriodOf(tc.a.In(nairobi)), PeriodOf(tc.b.In(nairobi))
			if (pa.Day == pb.Day) != tc.sameDay || (pa.Month == pb.Month) != tc.sameMonth {
				t.Fatalf("%v → %+v, %v → %+v", tc.a, pa, tc.b, pb)
			}
			if pb.Day < pa.Day || pb.Month < pa.Month {
				t.Fatalf("periods go backwards: %+v then %+v", pa, pb)
			}
			if got := time.Month(pb.Month%12 + 1); got != tc.wantMonthB {
				t.Fatalf("month of %v is %v, want %v", tc.b, got, tc.wantMonthB)
			}
		})
	}
	// Los Angeles, across the spring-forward night: 23 hours make a day.
	before := PeriodOf(time.Date(2026, 3, 8, 7, 59, 0, 0, time.UTC).In(la)) // 23:59 on the 7th
	after := PeriodOf(time.Date(2026, 3, 8, 8, 0, 0, 0, time.UTC).In(la))   // 00:00 on the 8th
	end := PeriodOf(time.Date(2026, 3, 9, 6, 59, 0, 0, time.UTC).In(la))    // 23:59 on the 8th (PDT)
	if after.Day != before.Day+1 || end.Day != after.Day {
		t.Fatalf("Los Angeles days around DST: %+v %+v %+v", before, after, end)
	}
}

func TestUSDValue(t *testing.T) {
	for _, tc := range []struct {
		amount   ledger.Minor
		currency string
		rate     string
		want     ledger.Minor
		bad      bool
	}{
		{123_45, "USD", "", 123_45, false},
		{123_45, "USD", "2", 123_45, false},
		{100_00, "GHS", "0.0641", 6_41, false},
		{1, "GHS", "0.0641", 1, false}, // a fraction of a cent rounds up
		{1_000, "XOF", "0.00165", 1_65, false},
		{1_000_001, "USDT", "1", 1_01, false}, // six decimals, up to the cent
		{100, "GHS", "0", 0, true},
		{100, "GHS", "x", 0, true},
		{100, "XXX", "1", 0, true},
	} {
		got, err := USDValue(tc.amount, tc.currency, tc.rate)
		if tc.bad {
			if err == nil {
				t.Errorf("USDValue(%d %s at %s) = %d, want an error", tc.amount, tc.currency, tc.rate, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("USDValue(%d %s at %s) = %d, %v; want %d", tc.amount, tc.currency, tc.rate, got, err, tc.want)
		}
	}
}

func TestParseAllowlist(t *testing.T) {
	got, err := ParseAllowlist("ipAllowlist", []string{"203.0.113.7", "10.0.0.0/8", "2001:db8::1", " 2001:db8:1::/48 "})
	if err != nil {
		t.Fatal(err)
	}
	if want := "203.0.113.7/32,10.0.0.0/8,2001:db8::1/128,2001:db8:1::/48"; got != want {
		t.Fatalf("canonical %q, want %q", got, want)
	}
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"203.0.113.7", true}, {"203.0.113.8", false}, {"10.200.1.1", true}, {"::ffff:10.1.2.3", true},
		{"2001:db8::1", true}, {"2001:db8::2", false}, {"2001:db8:1:ffff::9", true}, {"192.0.2.1", false},
	} {
		if AllowlistPermits(got, netip.MustParseAddr(tc.addr)) != tc.ok {
			t.Errorf("%s permitted = %v, want %v", tc.addr, !tc.ok, tc.ok)
		}
	}
	if !AllowlistPermits("", netip.MustParseAddr("198.51.100.1")) {
		t.Error("an empty allowlist must permit every address")
	}
	for _, bad := range []string{"", "example.com", "10.0.0.1/24", "10.0.0.0/33", "fe80::1%eth0", "::ffff:10.0.0.1", "1.2.3"} {
		if _, err := ParseAllowlist("ipAllowlist", []string{"10.0.0.0/8", bad}); err == nil || err.Code != ledger.CodeValidation ||
			len(err.Fields) != 1 || err.Fields[0].Field != "ipAllowlist.1" {
			t.Errorf("%q: got %+v, want one validation error on ipAllowlist.1", bad, err)
		}
	}
	many := make([]string, AllowlistEntriesMax+1)
	for i := range many {
		many[i] = "10.0.0.1"
	}
	if _, err := ParseAllowlist("ipAllowlist", many); err == nil {
		t.Error("an allowlist past the limit was accepted")
	}
}

// capsState is an organization with a funded GHS balance and one key whose
// daily cap is 100 USD.
func capsState(t *testing.T) *ledgertest.State {
	s := ledgertest.New(t)
	hash := sha256.Sum256([]byte("k"))
	if r := s.Apply(&ledger.CreateOrganization{At: 1, ID: "org_a", Name: "A", Key: ledger.CreateAPIKey{At: 1, ID: "key_a", OrgID: "org_a", Hash: string(hash[:]), Scopes: ledger.ScopesMerchant}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := s.Apply(&ledger.FundBalance{At: 2, OrgID: "org_a", Currency: "GHS", Amount: 1_000_000_00, ExternalReference: "f1"}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := s.Apply(&Set{At: 3, OrgID: "org_a", KeyID: "key_a", SetDaily: true, Controls: Controls{Caps: ledger.SpendCaps{Daily: usdCents(100_00)}}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	return s
}

func chargedPayout(at int64, id, ref string, usd ledger.Minor, p ledger.SpendPeriod) *Charged {
	return &Charged{
		Charge: Charge{KeyID: "key_a", USD: usd, Period: p},
		Op: &ledger.CreatePayout{At: at, ID: id, OrgID: "org_a", ExternalReference: ref,
			Spec:       ledger.PayoutSpec{Currency: "GHS", Amount: 100_00, AmountSide: ledger.SideTo, Method: "gh_mtn", AccountNumber: "233200000000"},
			MethodType: ledger.MethodMobileMoney, Fee: 1_00},
	}
}

func TestSpendChargedApply(t *testing.T) {
	s := capsState(t)
	day := ledger.SpendPeriod{Day: 20000, Month: 657}
	if r := s.Apply(chargedPayout(10, "pay_ghs_1", "p1", 60_00, day)); r.Err != nil {
		t.Fatal(r.Err)
	}
	before := s.Dump()
	r := s.Apply(chargedPayout(11, "pay_ghs_2", "p2", 40_01, day))
	if r.Err == nil || r.Err.Code != ledger.CodeSpendCapExceeded {
		t.Fatalf("got %v, want spend_cap_exceeded", r.Err)
	}
	if d := r.Err.SpendCap; d.Cap != CapDaily || d.Limit != 100_00 || d.Used != 60_00 || d.Attempted != 40_01 {
		t.Fatalf("details %+v", d)
	}
	if !bytes.Equal(s.Dump(), before) {
		t.Fatal("a refused payout changed the state")
	}
	// A replay of an admitted payout is answered as a replay and counts
	// nothing, whatever its charge says.
	if r := s.Apply(chargedPayout(12, "pay_ghs_1b", "p1", 60_00, day)); r.Err != nil || !r.Replayed {
		t.Fatalf("replay: %+v", r)
	}
	if k := keyNamed(t, s, "key_a"); k.Spent.Day != 60_00 {
		t.Fatalf("after a replay the key has spent %d", k.Spent.Day)
	}
	if r := s.Apply(chargedPayout(13, "pay_ghs_3", "p3", 40_00, day)); r.Err != nil {
		t.Fatal(r.Err)
	}
	// A payout that fails gives its charge back to the day.
	if r := s.Apply(&ledger.SettlePayout{At: 14, ID: "pay_ghs_3", Completed: false, Message: "rejected"}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if k := keyNamed(t, s, "key_a"); k.Spent.Day != 60_00 || k.Spent.Month != 60_00 {
		t.Fatalf("after a failed payout the key has spent %+v", k.Spent)
	}
	// One that completes keeps it; settling it again changes nothing.
	if r := s.Apply(&ledger.SettlePayout{At: 15, ID: "pay_ghs_1", Completed: true}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if k := keyNamed(t, s, "key_a"); k.Spent.Day != 60_00 {
		t.Fatalf("after a completed payout the key has spent %+v", k.Spent)
	}
	// The next day starts from nothing.
	if r := s.Apply(chargedPayout(16, "pay_ghs_4", "p4", 100_00, ledger.SpendPeriod{Day: day.Day + 1, Month: day.Month})); r.Err != nil {
		t.Fatal(r.Err)
	}
	// A revoked key's debits are refused.
	if r := s.Apply(&ledger.RevokeAPIKey{At: 17, ID: "key_a", OrgID: "org_a"}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := s.Apply(chargedPayout(18, "pay_ghs_5", "p5", 1, ledger.SpendPeriod{Day: day.Day + 2, Month: day.Month})); !errors.Is(r.Err, &ledger.Error{Code: ledger.CodeUnauthorized}) {
		t.Fatalf("a revoked key's payout: %v", r.Err)
	}
	// The counters and open charges survive a restart.
	want := keyNamed(t, s, "key_a").Spent
	re := s.Restored()
	if got := keyNamed(t, re, "key_a").Spent; got != want {
		t.Fatalf("after load: %+v, want %+v", got, want)
	}
	if _, ok := feature.Of(re.Ledger()).open.Resident("pay_ghs_4"); !ok {
		t.Fatal("the open charge of pay_ghs_4 was not loaded")
	}
}

func keyNamed(t *testing.T, s *ledgertest.State, id string) ledger.APIKey {
	t.Helper()
	k, ok := s.APIKey("org_a", id)
	if !ok {
		t.Fatalf("no key %s", id)
	}
	return k
}

func TestRevokedKeysLeaveTheLimit(t *testing.T) {
	s := ledgertest.New(t)
	hash := func(i int) string { h := sha256.Sum256([]byte{byte(i), byte(i >> 8), 'k'}); return string(h[:]) }
	if r := s.Apply(&ledger.CreateOrganization{At: 1, ID: "org_a", Name: "A", Key: ledger.CreateAPIKey{At: 1, ID: "key_0", OrgID: "org_a", Hash: hash(0)}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	for i := 1; i < ledger.KeysPerOrganizationMax; i++ {
		if r := s.Apply(&ledger.CreateAPIKey{At: 2, ID: "key_" + itoaTest(i), OrgID: "org_a", Hash: hash(i)}); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if r := s.Apply(&ledger.CreateAPIKey{At: 3, ID: "key_x", OrgID: "org_a", Hash: hash(5000)}); r.Err == nil {
		t.Fatal("a key past the limit was created")
	}
	if r := s.Apply(&ledger.RevokeAPIKey{At: 4, ID: "key_7", OrgID: "org_a"}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := s.Apply(&CreateKey{Key: ledger.CreateAPIKey{At: 5, ID: "key_x", OrgID: "org_a", Hash: hash(5000)},
		Controls: Controls{Allowlist: "10.0.0.0/8"}}); r.Err != nil {
		t.Fatalf("a revoked key still counts: %v", r.Err)
	}
	if k := keyNamed(t, s, "key_x"); k.Allowlist != "10.0.0.0/8" {
		t.Fatalf("controls not set on create: %+v", k)
	}
}

func itoaTest(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// newOrderFixture drives orders through a ledger with one organization,
// org_a with key_a, checking the ledger's invariants after every command.
func newOrderFixture(t *testing.T) *ledgertest.Fixture {
	return &ledgertest.Fixture{T: t, S: ledgertest.OrgA(t)}
}

// An order counts its payout leg when it is created: an order that expires
// without funds gives it back; one whose payout completes keeps it.
func TestSpendChargedOrders(t *testing.T) {
	f := newOrderFixture(t)
	const hour = 3600 * 1000
	day := ledger.SpendPeriod{Day: 20000, Month: 657}
	if r := f.S.Apply(&Set{At: 2, OrgID: "org_a", KeyID: "key_a", SetDaily: true,
		Controls: Controls{Caps: ledger.SpendCaps{Daily: usdCents(100_00)}}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	charged := func(o ledger.Command, usd ledger.Minor) *Charged {
		return &Charged{Charge: Charge{KeyID: "key_a", USD: usd, Period: day}, Op: o}
	}
	f.Must(charged(ordertest.Bank("ord_1", "o1", 10), 60_00), ledger.EventOrderAwaitingFunds)
	f.Refuse(charged(ordertest.Bank("ord_2", "o2", 11), 40_01), &ledger.Error{Code: ledger.CodeSpendCapExceeded})
	f.Must(charged(ordertest.Bank("ord_3", "o3", 12), 40_00), ledger.EventOrderAwaitingFunds)
	if k := keyNamed(t, f.S, "key_a"); k.Spent.Day != 100_00 {
		t.Fatalf("after two orders the key has spent %+v", k.Spent)
	}
	// ord_3's funds land and its payout starts; ord_1 expires.
	f.Must(&orders.DepositCommand{At: 13, OrgID: "org_a", OrderID: "ord_3", CollectionID: "col_3", Amount: 505_00, Outcome: orders.DepositConfirmed},
		ledger.EventCollectionCompleted, ledger.EventAccountCredited, ledger.EventOrderFundsReceived, ledger.EventOrderProcessing)
	f.Must(&ledger.Tick{At: 10 + 4*hour}, ledger.EventOrderExpired)
	if k := keyNamed(t, f.S, "key_a"); k.Spent.Day != 40_00 {
		t.Fatalf("after an expired order the key has spent %+v", k.Spent)
	}
	o, _ := orders.Get(f.S.Reader, "org_a", "ord_3")
	p := o.PayoutID
	f.Must(&ledger.SettlePayout{At: 10 + 5*hour, ID: p, Completed: true}, ledger.EventPayoutCompleted, ledger.EventOrderCompleted)
	if k := keyNamed(t, f.S, "key_a"); k.Spent.Day != 40_00 {
		t.Fatalf("after a completed order the key has spent %+v", k.Spent)
	}
	if c, open := feature.Of(f.S.Ledger()).open.Resident("ord_3"); open && c.Open {
		t.Fatal("the completed order's charge is still open")
	}
}

// The key-control commands survive the log: a batch of them decodes to the
// same commands and re-encodes to the same bytes.
func TestKeyControlCommandsRoundTrip(t *testing.T) {
	cmds := []ledger.Command{
		&Set{At: 5, OrgID: "org_a", KeyID: "key_a", SetDaily: true, SetAllowlist: true,
			Controls: Controls{Caps: ledger.SpendCaps{Daily: usdCents(0), Monthly: usdCents(12_34)}, Allowlist: "10.0.0.0/8,2001:db8::/32"}},
		&CreateKey{Key: ledger.CreateAPIKey{At: 6, ID: "key_b", OrgID: "org_a", Name: "b", Hash: "h", Hint: "x", Scopes: ledger.ScopePayoutsWrite},
			Controls: Controls{Caps: ledger.SpendCaps{PerTransaction: usdCents(1)}}},
		chargedPayout(7, "pay_ghs_1", "p1", 6_41, ledger.SpendPeriod{Day: 20415, Month: 24322}),
		&Charged{Charge: Charge{KeyID: "key_a", USD: 9_82, Period: ledger.SpendPeriod{Day: 1, Month: 2}},
			Op: &fxpayouts.Create{At: 8, ID: "pay_ghs_2", OrgID: "org_a", ExternalReference: "fx", FromCurrency: "USD", FromAmount: 9_72, ToAmount: 150_00, Rate: "15.444",
				Spec: ledger.PayoutSpec{Currency: "GHS", Amount: 150_00, AmountSide: ledger.SideTo, Method: "gh_mtn"}, MethodType: ledger.MethodMobileMoney, Fee: 10}},
	}
	enc := ledger.EncodeBatch(nil, cmds)
	dec, err := ledger.DecodeBatch(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ledger.EncodeBatch(nil, dec), enc) {
		t.Fatal("re-encoding changed the batch")
	}
	for i := range cmds {
		if a, b := ledger.EncodeBatch(nil, cmds[i:i+1]), ledger.EncodeBatch(nil, dec[i:i+1]); !bytes.Equal(a, b) {
			t.Fatalf("command %d: %+v decoded as %+v", i, cmds[i], dec[i])
		}
	}
	// A charge wraps only a debit.
	bad := ledger.EncodeBatch(nil, []ledger.Command{&Charged{Charge: Charge{KeyID: "k"}, Op: &ledger.Tick{At: 1}}})
	if _, err := ledger.DecodeBatch(bad); err == nil {
		t.Fatal("a charge around a tick decoded")
	}
}

// Random charged payouts, replays and settlements over several days and
// months: after every step the key's counters are exactly the charges of
// its current day and month that have not failed, never past a cap, and a
// refusal happens only when the charge would pass one. The same commands
// applied in other groupings leave the same state store.
func TestSpendCapsProperty(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(itoaTest(int(seed)), func(t *testing.T) { runSpendProperty(t, seed) })
	}
}

func runSpendProperty(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 9))
	const dailyCap, monthlyCap = 500_00, 1_500_00
	s := capsState(t) // daily cap 100 USD
	if r := s.Apply(&Set{At: 4, OrgID: "org_a", KeyID: "key_a", SetDaily: true, SetMonthly: true,
		Controls: Controls{Caps: ledger.SpendCaps{Daily: usdCents(dailyCap), Monthly: usdCents(monthlyCap)}}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	type charge struct {
		usd    ledger.Minor
		period ledger.SpendPeriod
		failed bool
		done   bool
	}
	charges := map[string]*charge{} // by payout id
	var ids []string
	refs := map[string]ledger.Minor{} // reference → the USD of the charge admitted under it
	var cmds []ledger.Command
	var admitted, refused, replays, failed int
	period := ledger.SpendPeriod{Day: 20000, Month: 657}
	at := int64(100)
	for step := 0; step < 600; step++ {
		at++
		switch r := rng.IntN(100); {
		case r < 3:
			period.Day++
		case r < 4:
			period.Day++
			period.Month++
		}
		var cmd ledger.Command
		var usd ledger.Minor
		var ref, id string
		if r := rng.IntN(10); r < 6 || len(ids) == 0 {
			usd = ledger.Minor(1 + rng.IntN(150_00))
			ref = "r" + itoaTest(rng.IntN(400))
			id = "pay_ghs_" + itoaTest(step)
			cmd = chargedPayout(at, id, ref, usd, period)
		} else {
			pid := ids[rng.IntN(len(ids))]
			cmd = &ledger.SettlePayout{At: at, ID: pid, Completed: rng.IntN(2) == 0, Message: "x"}
		}
		before := UsageAt(keyNamed(t, s, "key_a").Spent, period)
		res := s.Apply(cmd)
		cmds = append(cmds, cmd)
		switch c := cmd.(type) {
		case *Charged:
			_, replay := refs[ref]
			switch {
			case replay:
				if res.Err != nil || !res.Replayed {
					t.Fatalf("step %d: a reused reference: %+v", step, res)
				}
				replays++
			case res.Err != nil:
				if res.Err.Code != ledger.CodeSpendCapExceeded {
					t.Fatalf("step %d: %v", step, res.Err)
				}
				if before.Day+usd <= dailyCap && before.Month+usd <= monthlyCap {
					t.Fatalf("step %d: refused %d with %+v used", step, usd, before)
				}
				refused++
			default:
				refs[ref] = usd
				admitted++
				charges[id] = &charge{usd: usd, period: c.Charge.Period}
				ids = append(ids, id)
			}
		case *ledger.SettlePayout:
			if ch := charges[c.ID]; res.Err == nil && !ch.done {
				ch.done, ch.failed = true, !c.Completed
				if ch.failed {
					failed++
				}
			}
		}
		k := keyNamed(t, s, "key_a").Spent
		var day, month ledger.Minor
		for _, ch := range charges {
			if ch.failed {
				continue
			}
			if ch.period.Day == k.Period.Day {
				day += ch.usd
			}
			if ch.period.Month == k.Period.Month {
				month += ch.usd
			}
		}
		if k.Day != day || k.Month != month {
			t.Fatalf("step %d: the key counts %+v; its live charges are %d today, %d this month", step, k, day, month)
		}
		if k.Day > dailyCap || k.Month > monthlyCap {
			t.Fatalf("step %d: past a cap: %+v", step, k)
		}
	}
	if admitted == 0 || refused == 0 || replays == 0 || failed == 0 {
		t.Fatalf("the run did not exercise every case: %d admitted, %d refused, %d replays, %d failed", admitted, refused, replays, failed)
	}
	// The same log (one command an entry) applied in larger FSM batches
	// leaves the same store.
	other := capsStateLike(t)
	for len(cmds) > 0 {
		n := min(len(cmds), 1+rng.IntN(30))
		entries := make([][]ledger.Command, n)
		for i := range entries {
			entries[i] = cmds[i : i+1]
		}
		other.ApplyEntries(entries...)
		cmds = cmds[n:]
	}
	if !bytes.Equal(s.Dump(), other.Dump()) {
		t.Fatal("the store depends on how the log was batched")
	}
}

// capsStateLike is capsState with the property test's caps, built by the
// same commands.
func capsStateLike(t *testing.T) *ledgertest.State {
	s := capsState(t)
	if r := s.Apply(&Set{At: 4, OrgID: "org_a", KeyID: "key_a", SetDaily: true, SetMonthly: true,
		Controls: Controls{Caps: ledger.SpendCaps{Daily: usdCents(500_00), Monthly: usdCents(1_500_00)}}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	return s
}
