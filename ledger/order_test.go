package ledger

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"slices"
	"testing"
)

const hour = 3600 * 1000

// orderFixture is a ledger with one organization, and helpers to drive
// orders through it, checking the ledger's invariants after every command.
type orderFixture struct {
	t *testing.T
	s *testState
}

func newOrderFixture(t *testing.T) *orderFixture {
	t.Helper()
	s := newTestState(t)
	hash := sha256.Sum256([]byte("k"))
	if r := s.Apply(&CreateOrganization{At: 1, ID: "org_a", Name: "A", Key: CreateAPIKey{At: 1, ID: "key_a", OrgID: "org_a", Hash: string(hash[:])}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	return &orderFixture{t: t, s: s}
}

// apply applies cmd and returns its result and the types of the events it
// emitted.
func (f *orderFixture) apply(cmd Command) (Result, []string) {
	f.t.Helper()
	before := f.s.EventCount()
	r := f.s.Apply(cmd)
	if err := f.s.Check(); err != nil {
		f.t.Fatalf("%T: invariant broken: %v", cmd, err)
	}
	var types []string
	for seq := before + 1; seq <= f.s.EventCount(); seq++ {
		ev, _ := f.s.EventAt(seq)
		types = append(types, ev.Type)
	}
	return r, types
}

// must applies cmd, which must succeed and emit exactly events.
func (f *orderFixture) must(cmd Command, events ...string) Result {
	f.t.Helper()
	r, got := f.apply(cmd)
	if r.Err != nil {
		f.t.Fatalf("%T: %v", cmd, r.Err)
	}
	if !slices.Equal(got, events) {
		f.t.Fatalf("%T: events %v, want %v", cmd, got, events)
	}
	return r
}

// refuse applies cmd, which must fail with want and change nothing at all.
func (f *orderFixture) refuse(cmd Command, want error) {
	f.t.Helper()
	before := encodeSnapshot(f.t, f.s)
	r, _ := f.apply(cmd)
	if !errors.Is(r.Err, want) {
		f.t.Fatalf("%T: got %v, want %v", cmd, r.Err, want)
	}
	if !bytes.Equal(encodeSnapshot(f.t, f.s), before) {
		f.t.Fatalf("%T: a refused command changed the state", cmd)
	}
}

func (f *orderFixture) order(id string) Order {
	f.t.Helper()
	o, ok := f.s.Order("org_a", id)
	if !ok {
		f.t.Fatalf("order %s not found", id)
	}
	return o
}

func (f *orderFixture) balance(currency string) Minor {
	a, _ := f.s.AccountFor("org_a", currency)
	return a.Total
}

func (f *orderFixture) system(p AccountPurpose, currency string) Minor {
	a, _ := f.s.st.accounts.get(systemAccountNumber(p, currency))
	return a.Total
}

// USDT on Tron to a GHS mobile money wallet: 100 USDT at 15.444, a 1% fee.
func cryptoOrder(id, ref string, at int64) *CreateOrder {
	return &CreateOrder{
		At: at, ID: id, OrgID: "org_a", ExternalReference: ref,
		Spec: OrderSpec{FromMethod: "usdt_tron", FromCurrency: "USDT", ToMethod: "gh_mtn", ToCurrency: "GHS",
			ToAccountNumber: "233241234567", Amount: 100_000000, AmountSide: SideFrom},
		FromMethodType: MethodCrypto, ToMethodType: MethodMobileMoney,
		FromAmount: 100_000000, ToAmount: 1544_40, Fee: 1_000000, Rate: "15.444",
		Instructions: OrderInstructions{Type: InstructionsCrypto, Chain: "Tron", Address: "TXYZ"},
	}
}

// A GHS bank transfer into a virtual account, delivered to a GHS wallet.
func bankOrder(id, ref string, at int64) *CreateOrder {
	return &CreateOrder{
		At: at, ID: id, OrgID: "org_a", ExternalReference: ref,
		Spec: OrderSpec{FromMethod: "gh_ghipss", FromCurrency: "GHS", ToMethod: "gh_mtn", ToCurrency: "GHS",
			ToAccountNumber: "233241234567", Amount: 500_00, AmountSide: SideTo},
		FromMethodType: MethodBankTransfer, ToMethodType: MethodMobileMoney,
		FromAmount: 500_00, ToAmount: 500_00, Fee: 5_00,
		Instructions: OrderInstructions{Type: InstructionsVirtualAccount, Bank: "Sandbox Bank GH", AccountNumber: "1234567890", AccountName: "A"},
	}
}

// A GHS mobile money prompt, delivered as USDC on Solana at 0.0634.
func mobileOrder(id, ref, col string, at int64) *CreateOrder {
	return &CreateOrder{
		At: at, ID: id, OrgID: "org_a", ExternalReference: ref,
		Spec: OrderSpec{FromMethod: "gh_mtn", FromCurrency: "GHS", FromAccountNumber: "233241234567",
			ToMethod: "usdc_solana", ToCurrency: "USDC", ToAccountNumber: "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
			Amount: 200_00, AmountSide: SideFrom},
		FromMethodType: MethodMobileMoney, ToMethodType: MethodCrypto,
		FromAmount: 200_00, ToAmount: 12_680000, Fee: 40, Rate: "0.0634",
		Instructions: OrderInstructions{Type: InstructionsMobileMoney, AccountNumber: "233241234567"},
		CollectionID: col,
	}
}

func (f *orderFixture) wantStatus(id string, want OrderStatus) Order {
	f.t.Helper()
	o := f.order(id)
	if o.Status != want {
		f.t.Fatalf("order %s is %s (%s), want %s", id, o.Status, o.StatusMessage, want)
	}
	return o
}

func TestOrderCryptoFullLife(t *testing.T) {
	f := newOrderFixture(t)
	r := f.must(cryptoOrder("ord_1", "inv-1", 10), EventOrderAwaitingFunds)
	o := *r.Order
	if o.Status != OrderAwaitingFunds || o.ExpiresAt != 10+4*hour || o.Expected() != 101_000000 || o.CollectionID != "" {
		t.Fatalf("created order %+v", o)
	}
	// Seen on chain, then confirmed.
	f.must(&DepositOrder{At: 20, OrgID: "org_a", OrderID: "ord_1", Amount: 101_000000, Outcome: DepositUnconfirmed},
		EventOrderAwaitingConfirm)
	if o := f.wantStatus("ord_1", OrderAwaitingConfirmations); o.ReceivedAmount != 101_000000 || f.balance("USDT") != 0 {
		t.Fatalf("awaiting confirmations: %+v, balance %d", o, f.balance("USDT"))
	}
	// A second unconfirmed deposit, or a confirmation of another amount, is refused.
	f.refuse(&DepositOrder{At: 25, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Outcome: DepositUnconfirmed}, &Error{Code: CodeBadRequest})
	f.refuse(&DepositOrder{At: 25, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Amount: 5, Outcome: DepositConfirmed}, ErrValidation)
	r = f.must(&DepositOrder{At: 30, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Outcome: DepositConfirmed},
		EventCollectionCompleted, EventAccountCredited, EventOrderFundsReceived, EventOrderProcessing)
	o = f.wantStatus("ord_1", OrderProcessingPayout)
	if o.CollectionID != "col_1" || o.PayoutID != "pay_ghs_1" || r.Payout == nil || r.Payout.ID != "pay_ghs_1" {
		t.Fatalf("legs: %+v, result payout %+v", o, r.Payout)
	}
	col, _ := f.s.Collection("col_1")
	if col.Status != CollectionCompleted || col.Type != "crypto" || col.Spec.Amount != 101_000000 || col.Fee != 1_000000 {
		t.Fatalf("collection leg %+v", col)
	}
	p, _ := f.s.Payout("pay_ghs_1")
	if p.Status != PayoutPending || p.Spec.Amount != 1544_40 || p.Fee != 0 || p.Spec.AccountNumber != "233241234567" || p.Spec.Method != "gh_mtn" {
		t.Fatalf("payout leg %+v", p)
	}
	// The funds went through: USDT in, converted, GHS on its way out.
	if f.balance("USDT") != 0 || f.balance("GHS") != 0 ||
		f.system(PurposeFeeRevenue, "USDT") != 1_000000 ||
		f.system(PurposeFXClearing, "USDT") != 100_000000 || f.system(PurposeFXClearing, "GHS") != -1544_40 ||
		f.system(PurposePayoutsClearing, "GHS") != 1544_40 {
		t.Fatalf("balances after the funds landed: USDT %d GHS %d", f.balance("USDT"), f.balance("GHS"))
	}
	// The rail moves the payout; the order follows it.
	f.must(&MarkPayoutProcessing{At: 40, ID: "pay_ghs_1", ProviderReference: "sbx"})
	f.wantStatus("ord_1", OrderProcessingPayout)
	f.must(&SettlePayout{At: 50, ID: "pay_ghs_1", Completed: true}, EventPayoutCompleted, EventOrderCompleted)
	o = f.wantStatus("ord_1", OrderCompleted)
	if o.CompletedAt != 50 || f.system(PurposeRailSettlement, "GHS") != 1544_40 || f.system(PurposePayoutsClearing, "GHS") != 0 {
		t.Fatalf("completed: %+v", o)
	}
	// Every change is in the timeline, in order.
	var steps []string
	for _, st := range o.Steps {
		steps = append(steps, [...]string{"", "order", "collection", "payout"}[st.Leg]+":"+stepStatus(st))
	}
	want := []string{"order:created", "order:awaiting_funds", "order:awaiting_confirmations", "collection:completed",
		"order:funds_received", "payout:pending", "order:processing_payout", "payout:processing", "payout:completed", "order:completed"}
	if !slices.Equal(steps, want) {
		t.Fatalf("steps %v\nwant  %v", steps, want)
	}
	// A completed order takes no more deposits, and expiry leaves it alone.
	f.refuse(&DepositOrder{At: 60, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_2", Outcome: DepositConfirmed}, &Error{Code: CodeBadRequest})
	f.must(&Tick{At: 10 + 5*hour})
	f.wantStatus("ord_1", OrderCompleted)
	checkRoundTrip(t, f.s)
}

func stepStatus(st OrderStep) string {
	switch st.Leg {
	case LegCollection:
		return CollectionStatus(st.Status).String()
	case LegPayout:
		return PayoutStatus(st.Status).String()
	}
	return OrderStatus(st.Status).String()
}

func TestOrderBankFullLife(t *testing.T) {
	f := newOrderFixture(t)
	f.must(bankOrder("ord_1", "inv-1", 10), EventOrderAwaitingFunds)
	// A bank transfer is final when it arrives: there is no unconfirmed stage.
	f.refuse(&DepositOrder{At: 20, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Outcome: DepositUnconfirmed}, ErrValidation)
	f.must(&DepositOrder{At: 20, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Amount: 505_00, Outcome: DepositConfirmed},
		EventCollectionCompleted, EventAccountCredited, EventOrderFundsReceived, EventOrderProcessing)
	o := f.wantStatus("ord_1", OrderProcessingPayout)
	col, _ := f.s.Collection(o.CollectionID)
	if col.Type != "virtual_account" || col.Fee != 5_00 {
		t.Fatalf("collection leg %+v", col)
	}
	// Same currency: no conversion was booked.
	if f.system(PurposeFXClearing, "GHS") != 0 || f.balance("GHS") != 0 || f.system(PurposePayoutsClearing, "GHS") != 500_00 {
		t.Fatalf("balances: GHS %d", f.balance("GHS"))
	}
	f.must(&SettlePayout{At: 30, ID: o.PayoutID, Completed: true}, EventPayoutCompleted, EventOrderCompleted)
	f.wantStatus("ord_1", OrderCompleted)
	if f.system(PurposeFeeRevenue, "GHS") != 5_00 || f.system(PurposeRailSettlement, "GHS") != 500_00 {
		t.Fatal("fee or settlement missing")
	}
	checkRoundTrip(t, f.s)
}

func TestOrderMobileMoneyFullLife(t *testing.T) {
	f := newOrderFixture(t)
	r := f.must(mobileOrder("ord_1", "inv-1", "col_1", 10), EventCollectionPending, EventOrderAwaitingFunds)
	if r.Collection == nil || r.Collection.ID != "col_1" || r.Order.ExpiresAt != 0 {
		t.Fatalf("create: %+v", r)
	}
	col, _ := f.s.Collection("col_1")
	if col.Status != CollectionPending || col.Spec.Amount != 200_40 || col.Fee != 40 || col.Spec.PayerNumber != "233241234567" || col.ExternalReference != "ord_1" {
		t.Fatalf("collection leg %+v", col)
	}
	// Mobile money orders are paid by the prompt, never by a deposit, and do not expire.
	f.refuse(&DepositOrder{At: 20, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_2", Outcome: DepositConfirmed}, &Error{Code: CodeBadRequest})
	f.must(&Tick{At: 10 + 48*hour})
	f.wantStatus("ord_1", OrderAwaitingFunds)
	// The payer approves: the funds land, convert, and the USDC payout starts.
	f.must(&SettleCollection{At: 30, ID: "col_1", Completed: true},
		EventCollectionCompleted, EventAccountCredited, EventOrderFundsReceived, EventOrderProcessing)
	o := f.wantStatus("ord_1", OrderProcessingPayout)
	p, _ := f.s.Payout(o.PayoutID)
	if o.PayoutID != "pay_usdc_1" || p.Spec.Address != "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU" || p.Spec.Amount != 12_680000 || p.MethodType != MethodCrypto {
		t.Fatalf("payout leg %+v", p)
	}
	if o.ReceivedAmount != 200_40 || f.balance("GHS") != 0 || f.balance("USDC") != 0 || f.system(PurposeFeeRevenue, "GHS") != 40 {
		t.Fatalf("after landing: %+v GHS %d USDC %d", o, f.balance("GHS"), f.balance("USDC"))
	}
	f.must(&SettlePayout{At: 40, ID: o.PayoutID, Completed: true}, EventPayoutCompleted, EventOrderCompleted)
	f.wantStatus("ord_1", OrderCompleted)
	checkRoundTrip(t, f.s)
}

func TestOrderMobileMoneyPromptFails(t *testing.T) {
	f := newOrderFixture(t)
	f.must(mobileOrder("ord_1", "inv-1", "col_1", 10), EventCollectionPending, EventOrderAwaitingFunds)
	f.must(&SettleCollection{At: 30, ID: "col_1", Message: "declined"}, EventCollectionFailed, EventOrderFailed)
	o := f.wantStatus("ord_1", OrderFailed)
	if o.PayoutID != "" || o.ReceivedAt != 0 || f.balance("GHS") != 0 || f.s.entryCount() != 0 {
		t.Fatalf("a failed prompt moved money: %+v", o)
	}
}

func TestOrderOverpaid(t *testing.T) {
	f := newOrderFixture(t)
	f.must(cryptoOrder("ord_1", "inv-1", 10), EventOrderAwaitingFunds)
	f.must(&DepositOrder{At: 20, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Amount: 150_000000, Outcome: DepositConfirmed},
		EventCollectionCompleted, EventAccountCredited, EventOrderOverpaid, EventOrderProcessing)
	o := f.wantStatus("ord_1", OrderProcessingPayout)
	if o.ReceivedAmount != 150_000000 || o.StatusMessage == "" {
		t.Fatalf("overpaid order %+v", o)
	}
	// The expected amount paid out; the 49 USDT excess is on the balance.
	if f.balance("USDT") != 49_000000 || f.system(PurposeFeeRevenue, "USDT") != 1_000000 || f.system(PurposePayoutsClearing, "GHS") != 1544_40 {
		t.Fatalf("USDT balance %d", f.balance("USDT"))
	}
	f.must(&SettlePayout{At: 30, ID: o.PayoutID, Completed: true}, EventPayoutCompleted, EventOrderCompleted)
	f.wantStatus("ord_1", OrderCompleted)
	if f.balance("USDT") != 49_000000 {
		t.Fatal("excess moved")
	}
}

func TestOrderUnderpaid(t *testing.T) {
	f := newOrderFixture(t)
	f.must(cryptoOrder("ord_1", "inv-1", 10), EventOrderAwaitingFunds)
	f.must(&DepositOrder{At: 20, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Amount: 60_000000, Outcome: DepositConfirmed},
		EventCollectionCompleted, EventAccountCredited, EventOrderUnderpaid)
	o := f.wantStatus("ord_1", OrderUnderpaid)
	col, _ := f.s.Collection("col_1")
	// All of it is on the balance: no fee, no conversion, no payout.
	if o.PayoutID != "" || col.Fee != 0 || f.balance("USDT") != 60_000000 || f.balance("GHS") != 0 ||
		f.system(PurposeFeeRevenue, "USDT") != 0 || len(f.s.openPayouts()) != 0 {
		t.Fatalf("underpaid: %+v, USDT %d", o, f.balance("USDT"))
	}
	// It rests: no second deposit, no expiry.
	f.refuse(&DepositOrder{At: 30, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_2", Amount: 41_000000, Outcome: DepositConfirmed}, &Error{Code: CodeBadRequest})
	f.must(&Tick{At: 10 + 5*hour})
	f.wantStatus("ord_1", OrderUnderpaid)
}

func TestOrderExpiry(t *testing.T) {
	f := newOrderFixture(t)
	f.must(cryptoOrder("ord_1", "inv-1", 10), EventOrderAwaitingFunds)
	f.must(bankOrder("ord_2", "inv-2", 20), EventOrderAwaitingFunds)
	f.must(cryptoOrder("ord_3", "inv-3", 30), EventOrderAwaitingFunds)
	f.must(&DepositOrder{At: 40, OrgID: "org_a", OrderID: "ord_3", Amount: 101_000000, Outcome: DepositUnconfirmed}, EventOrderAwaitingConfirm)
	if f.s.ExpiryDue(10 + 4*hour - 1) {
		t.Fatal("due before the deadline")
	}
	f.must(&Tick{At: 10 + 4*hour - 1})
	f.wantStatus("ord_1", OrderAwaitingFunds)
	if !f.s.ExpiryDue(10 + 4*hour) {
		t.Fatal("not due at the deadline")
	}
	f.must(&Tick{At: 10 + 4*hour}, EventOrderExpired)
	f.wantStatus("ord_1", OrderExpired)
	f.wantStatus("ord_2", OrderAwaitingFunds)
	// A deposit past the deadline, before a Tick has expired the order, is
	// refused and changes nothing.
	f.refuse(&DepositOrder{At: 20 + 4*hour, OrgID: "org_a", OrderID: "ord_2", CollectionID: "col_1", Outcome: DepositConfirmed}, &Error{Code: CodeBadRequest})
	// The sandbox clock expires orders on the organization's clock.
	f.must(&AdvanceClock{At: 20 + 4*hour, OrgID: "org_a", Millis: 1000}, EventOrderExpired)
	o := f.wantStatus("ord_2", OrderExpired)
	if o.UpdatedAt != 20+4*hour+1000 {
		t.Fatalf("expired at %d on the organization's clock", o.UpdatedAt)
	}
	// A deposit awaiting confirmations does not expire.
	f.wantStatus("ord_3", OrderAwaitingConfirmations)
	f.refuse(&DepositOrder{At: 20 + 5*hour, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Outcome: DepositConfirmed}, &Error{Code: CodeBadRequest})
	if f.s.entryCount() != 0 || f.s.ExpiryDue(30+100*hour) {
		t.Fatal("expiry moved money or left work due")
	}
	checkRoundTrip(t, f.s)
}

func TestOrderFailures(t *testing.T) {
	f := newOrderFixture(t)
	// The payout leg fails: its amount is refunded to the destination balance.
	f.must(cryptoOrder("ord_1", "inv-1", 10), EventOrderAwaitingFunds)
	f.must(&DepositOrder{At: 20, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Outcome: DepositConfirmed},
		EventCollectionCompleted, EventAccountCredited, EventOrderFundsReceived, EventOrderProcessing)
	f.must(&SettlePayout{At: 30, ID: "pay_ghs_1", Message: "rejected"}, EventPayoutFailed, EventOrderFailed)
	o := f.wantStatus("ord_1", OrderFailed)
	if f.balance("GHS") != 1544_40 || f.balance("USDT") != 0 || o.CompletedAt != 0 {
		t.Fatalf("after a failed payout: GHS %d USDT %d", f.balance("GHS"), f.balance("USDT"))
	}
	// A rejected deposit fails the order and books nothing.
	entries := f.s.entryCount()
	f.must(bankOrder("ord_2", "inv-2", 40), EventOrderAwaitingFunds)
	f.must(&DepositOrder{At: 50, OrgID: "org_a", OrderID: "ord_2", Outcome: DepositRejected}, EventOrderFailed)
	// A crypto deposit that never confirms, likewise.
	f.must(cryptoOrder("ord_3", "inv-3", 60), EventOrderAwaitingFunds)
	f.must(&DepositOrder{At: 70, OrgID: "org_a", OrderID: "ord_3", Amount: 101_000000, Outcome: DepositUnconfirmed}, EventOrderAwaitingConfirm)
	f.must(&DepositOrder{At: 80, OrgID: "org_a", OrderID: "ord_3", Outcome: DepositRejected}, EventOrderFailed)
	if o := f.wantStatus("ord_3", OrderFailed); o.ReceivedAt != 0 || f.s.entryCount() != entries {
		t.Fatalf("a rejected deposit booked: %+v", o)
	}
	f.wantStatus("ord_2", OrderFailed)
	checkRoundTrip(t, f.s)
}

// Bad input is refused with the right code and changes nothing; a replay
// returns the order; a changed replay is a duplicate.
func TestOrderRefusalsAndIdempotency(t *testing.T) {
	f := newOrderFixture(t)
	mod := func(c *CreateOrder, fn func(*CreateOrder)) *CreateOrder { fn(c); return c }
	f.refuse(mod(cryptoOrder("pay_1", "r", 10), func(*CreateOrder) {}), ErrValidation)
	f.refuse(mod(cryptoOrder("ord_1", "r", 10), func(c *CreateOrder) { c.OrgID = "org_b" }), ErrNotFound)
	f.refuse(mod(cryptoOrder("ord_1", "r", 10), func(c *CreateOrder) { c.Spec.FromCurrency = "XXX" }), ErrValidation)
	f.refuse(mod(cryptoOrder("ord_1", "r", 10), func(c *CreateOrder) { c.FromAmount = 0 }), ErrValidation)
	f.refuse(mod(cryptoOrder("ord_1", "r", 10), func(c *CreateOrder) { c.Fee = -1 }), ErrValidation)
	f.refuse(mod(cryptoOrder("ord_1", "r", 10), func(c *CreateOrder) { c.Rate = "" }), ErrValidation)
	f.refuse(mod(cryptoOrder("ord_1", "", 10), func(*CreateOrder) {}), ErrValidation)
	f.refuse(mod(cryptoOrder("ord_1", "r", 10), func(c *CreateOrder) { c.Instructions.Type = InstructionsVirtualAccount }), ErrValidation)
	f.refuse(mod(cryptoOrder("ord_1", "r", 10), func(c *CreateOrder) { c.Spec.AmountSide = 0 }), ErrValidation)
	f.refuse(mod(bankOrder("ord_1", "r", 10), func(c *CreateOrder) { c.ToAmount = 1 }), ErrValidation)
	f.refuse(mod(mobileOrder("ord_1", "r", "", 10), func(*CreateOrder) {}), ErrValidation)
	f.refuse(&DepositOrder{At: 20, OrgID: "org_a", OrderID: "ord_missing", CollectionID: "col_1", Outcome: DepositConfirmed}, ErrNotFound)

	f.must(cryptoOrder("ord_1", "r", 10), EventOrderAwaitingFunds)
	// Another organization cannot see or fund it.
	f.refuse(&DepositOrder{At: 20, OrgID: "org_b", OrderID: "ord_1", CollectionID: "col_1", Outcome: DepositConfirmed}, ErrNotFound)
	if _, ok := f.s.Order("org_b", "ord_1"); ok {
		t.Fatal("another organization sees the order")
	}
	f.refuse(&DepositOrder{At: 20, OrgID: "org_a", OrderID: "ord_1", CollectionID: "pay_1", Outcome: DepositConfirmed}, ErrValidation)
	f.refuse(&DepositOrder{At: 20, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Outcome: 9}, ErrValidation)
	// The same reference and spec is a replay with a new id proposed: the
	// original comes back and nothing changes.
	before := encodeSnapshot(t, f.s)
	r, events := f.apply(cryptoOrder("ord_2", "r", 20))
	if r.Err != nil || !r.Replayed || r.Order.ID != "ord_1" || len(events) != 0 || !bytes.Equal(encodeSnapshot(t, f.s), before) {
		t.Fatalf("replay: %+v %v", r, events)
	}
	var dup *Error
	f.refuse(mod(cryptoOrder("ord_2", "r", 20), func(c *CreateOrder) { c.Spec.ToAccountNumber = "233200000000" }), ErrDuplicate)
	r, _ = f.apply(mod(cryptoOrder("ord_2", "r", 20), func(c *CreateOrder) { c.Spec.Amount = 5 }))
	if !errors.As(r.Err, &dup) || dup.ExistingID != "ord_1" {
		t.Fatalf("duplicate: %v", r.Err)
	}
	// The same id under another reference is a conflict.
	f.refuse(cryptoOrder("ord_1", "r2", 20), ErrConflict)
	if o, ok := f.s.OrderByReference("org_a", "r"); !ok || o.ID != "ord_1" {
		t.Fatal("by reference")
	}
}

func TestOrderList(t *testing.T) {
	f := newOrderFixture(t)
	f.must(cryptoOrder("ord_1", "a", 1000), EventOrderAwaitingFunds)
	f.must(bankOrder("ord_2", "b", 2000), EventOrderAwaitingFunds)
	f.must(mobileOrder("ord_3", "c", "col_3", 3000), EventCollectionPending, EventOrderAwaitingFunds)
	f.must(&DepositOrder{At: 3500, OrgID: "org_a", OrderID: "ord_2", Outcome: DepositRejected}, EventOrderFailed)
	ids := func(fl OrderFilter) []string {
		var out []string
		for _, o := range f.s.Orders("org_a", fl, CursorStart, 100).Items {
			out = append(out, o.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    OrderFilter
		want []string
	}{
		{"all, newest first", OrderFilter{}, []string{"ord_3", "ord_2", "ord_1"}},
		{"status", OrderFilter{Status: OrderFailed}, []string{"ord_2"}},
		{"currency either side", OrderFilter{Currency: "GHS"}, []string{"ord_3", "ord_2", "ord_1"}},
		{"currency destination only", OrderFilter{Currency: "USDC"}, []string{"ord_3"}},
		{"origins", OrderFilter{Origins: []string{"USDT", "USDC"}}, []string{"ord_1"}},
		{"destinations", OrderFilter{Destinations: []string{"GHS"}}, []string{"ord_2", "ord_1"}},
		{"created from, inclusive", OrderFilter{CreatedFrom: 2000}, []string{"ord_3", "ord_2"}},
		{"created before, exclusive", OrderFilter{CreatedBefore: 2000}, []string{"ord_1"}},
		{"reference", OrderFilter{ExternalReference: "b"}, []string{"ord_2"}},
		{"nothing", OrderFilter{Status: OrderCompleted}, nil},
	} {
		if got := ids(tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	p := f.s.Orders("org_a", OrderFilter{}, CursorStart, 2)
	if len(p.Items) != 2 || !p.HasMore {
		t.Fatalf("first page %+v", p)
	}
	p = f.s.Orders("org_a", OrderFilter{}, p.Next, 2)
	if len(p.Items) != 1 || p.HasMore || p.Items[0].ID != "ord_1" {
		t.Fatalf("second page %+v", p)
	}
	if len(f.s.Orders("org_b", OrderFilter{}, CursorStart, 10).Items) != 0 {
		t.Fatal("another organization lists the orders")
	}
}

// Orders, their legs, indexes and events survive a snapshot byte for byte,
// and commands survive the log's codec.
func checkRoundTrip(t *testing.T, s *testState) {
	t.Helper()
	r := restoreSame(t, s)
	if len(r.st.orders.rows.rows) != len(s.st.orders.rows.rows) || r.st.nextDeadline() != s.st.nextDeadline() {
		t.Fatal("open orders or deadlines differ after restore")
	}
}

func TestOrderCommandsRoundTrip(t *testing.T) {
	cmds := []Command{mobileOrder("ord_1", "r", "col_1", 10),
		&DepositOrder{At: 5, OrgID: "o", OrderID: "ord_1", CollectionID: "col_1", Amount: 7, Outcome: DepositUnconfirmed}}
	got, err := DecodeBatch(EncodeBatch(nil, cmds))
	if err != nil {
		t.Fatal(err)
	}
	if *got[0].(*CreateOrder) != *cmds[0].(*CreateOrder) || *got[1].(*DepositOrder) != *cmds[1].(*DepositOrder) {
		t.Fatalf("round trip: %+v", got)
	}
}
