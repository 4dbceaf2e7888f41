package orders

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"payments/ledger"
	"payments/ledger/ledgertest"
)

const hour = 3600 * 1000

// orderFixture is a ledger with one organization, and helpers to drive
// orders through it, checking the ledger's invariants after every command.
type orderFixture struct{ ledgertest.Fixture }

func newOrderFixture(t *testing.T) *orderFixture {
	t.Helper()
	s := ledgertest.New(t)
	s.Org("org_a")
	return &orderFixture{ledgertest.Fixture{T: t, S: s}}
}

func (f *orderFixture) order(id string) Order {
	f.T.Helper()
	o, ok := Get(f.S.Reader, "org_a", id)
	if !ok {
		f.T.Fatalf("order %s not found", id)
	}
	return o
}

func (f *orderFixture) balance(currency string) ledger.Minor {
	a, _ := f.S.AccountFor("org_a", currency)
	return a.Total
}

// system is the total of the service's account for p in currency (its
// number is the kernel's systemAccountNumber).
func (f *orderFixture) system(p ledger.AccountPurpose, currency string) ledger.Minor {
	a, _ := f.S.Ledger().Account("SYS:" + p.String() + ":" + currency)
	return a.Total
}

// entryCount is how many journal entries the ledger holds.
func (f *orderFixture) entryCount() uint64 {
	var n uint64
	for {
		if _, ok := f.S.Entry(n + 1); !ok {
			return n
		}
		n++
	}
}

// openPayouts are the payouts not yet settled.
func (f *orderFixture) openPayouts() []ledger.Payout {
	ps, _, _ := f.S.OpenPayouts("", 1000)
	return ps
}

// USDT on Tron to a GHS mobile money wallet: 100 USDT at 15.444, a 1% fee.
func cryptoOrder(id, ref string, at int64) *Create {
	return &Create{
		At: at, ID: id, OrgID: "org_a", ExternalReference: ref,
		Spec: Spec{FromMethod: "usdt_tron", FromCurrency: "USDT", ToMethod: "gh_mtn", ToCurrency: "GHS",
			ToAccountNumber: "233241234567", Amount: 100_000000, AmountSide: ledger.SideFrom},
		FromMethodType: ledger.MethodCrypto, ToMethodType: ledger.MethodMobileMoney,
		FromAmount: 100_000000, ToAmount: 1544_40, Fee: 1_000000, Rate: "15.444",
		Instructions: Instructions{Type: InstructionsCrypto, Chain: "Tron", Address: "TXYZ"},
	}
}

// A GHS bank transfer into a virtual account, delivered to a GHS wallet.
func bankOrder(id, ref string, at int64) *Create {
	return &Create{
		At: at, ID: id, OrgID: "org_a", ExternalReference: ref,
		Spec: Spec{FromMethod: "gh_ghipss", FromCurrency: "GHS", ToMethod: "gh_mtn", ToCurrency: "GHS",
			ToAccountNumber: "233241234567", Amount: 500_00, AmountSide: ledger.SideTo},
		FromMethodType: ledger.MethodBankTransfer, ToMethodType: ledger.MethodMobileMoney,
		FromAmount: 500_00, ToAmount: 500_00, Fee: 5_00,
		Instructions: Instructions{Type: InstructionsVirtualAccount, Bank: "Sandbox Bank GH", AccountNumber: "1234567890", AccountName: "A"},
	}
}

// A GHS mobile money prompt, delivered as USDC on Solana at 0.0634.
func mobileOrder(id, ref, col string, at int64) *Create {
	return &Create{
		At: at, ID: id, OrgID: "org_a", ExternalReference: ref,
		Spec: Spec{FromMethod: "gh_mtn", FromCurrency: "GHS", FromAccountNumber: "233241234567",
			ToMethod: "usdc_solana", ToCurrency: "USDC", ToAccountNumber: "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
			Amount: 200_00, AmountSide: ledger.SideFrom},
		FromMethodType: ledger.MethodMobileMoney, ToMethodType: ledger.MethodCrypto,
		FromAmount: 200_00, ToAmount: 12_680000, Fee: 40, Rate: "0.0634",
		Instructions: Instructions{Type: InstructionsMobileMoney, AccountNumber: "233241234567"},
		CollectionID: col,
	}
}

func (f *orderFixture) wantStatus(id string, want Status) Order {
	f.T.Helper()
	o := f.order(id)
	if o.Status != want {
		f.T.Fatalf("order %s is %s (%s), want %s", id, o.Status, o.StatusMessage, want)
	}
	return o
}

func TestOrderCryptoFullLife(t *testing.T) {
	f := newOrderFixture(t)
	r := f.Must(cryptoOrder("ord_1", "inv-1", 10), ledger.EventOrderAwaitingFunds)
	o := *Of(r)
	if o.Status != AwaitingFunds || o.ExpiresAt != 10+4*hour || o.Expected() != 101_000000 || o.CollectionID != "" {
		t.Fatalf("created order %+v", o)
	}
	// Seen on chain, then confirmed.
	f.Must(&DepositCommand{At: 20, OrgID: "org_a", OrderID: "ord_1", Amount: 101_000000, Outcome: DepositUnconfirmed},
		ledger.EventOrderAwaitingConfirm)
	if o := f.wantStatus("ord_1", AwaitingConfirmations); o.ReceivedAmount != 101_000000 || f.balance("USDT") != 0 {
		t.Fatalf("awaiting confirmations: %+v, balance %d", o, f.balance("USDT"))
	}
	// A second unconfirmed deposit, or a confirmation of another amount, is refused.
	f.Refuse(&DepositCommand{At: 25, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Outcome: DepositUnconfirmed}, &ledger.Error{Code: ledger.CodeBadRequest})
	f.Refuse(&DepositCommand{At: 25, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Amount: 5, Outcome: DepositConfirmed}, ledger.ErrValidation)
	r = f.Must(&DepositCommand{At: 30, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Outcome: DepositConfirmed},
		ledger.EventCollectionCompleted, ledger.EventAccountCredited, ledger.EventOrderFundsReceived, ledger.EventOrderProcessing)
	o = f.wantStatus("ord_1", ProcessingPayout)
	if o.CollectionID != "col_1" || o.PayoutID != "pay_ghs_1" || r.Payout == nil || r.Payout.ID != "pay_ghs_1" {
		t.Fatalf("legs: %+v, result payout %+v", o, r.Payout)
	}
	col, _ := f.S.Collection("col_1")
	if col.Status != ledger.CollectionCompleted || col.Type != "crypto" || col.Spec.Amount != 101_000000 || col.Fee != 1_000000 {
		t.Fatalf("collection leg %+v", col)
	}
	p, _ := f.S.Payout("pay_ghs_1")
	if p.Status != ledger.PayoutPending || p.Spec.Amount != 1544_40 || p.Fee != 0 || p.Spec.AccountNumber != "233241234567" || p.Spec.Method != "gh_mtn" {
		t.Fatalf("payout leg %+v", p)
	}
	// The funds went through: USDT in, converted, GHS on its way out.
	if f.balance("USDT") != 0 || f.balance("GHS") != 0 ||
		f.system(ledger.PurposeFeeRevenue, "USDT") != 1_000000 ||
		f.system(ledger.PurposeFXClearing, "USDT") != 100_000000 || f.system(ledger.PurposeFXClearing, "GHS") != -1544_40 ||
		f.system(ledger.PurposePayoutsClearing, "GHS") != 1544_40 {
		t.Fatalf("balances after the funds landed: USDT %d GHS %d", f.balance("USDT"), f.balance("GHS"))
	}
	// The rail moves the payout; the order follows it.
	f.Must(&ledger.MarkPayoutProcessing{At: 40, ID: "pay_ghs_1", ProviderReference: "sbx"})
	f.wantStatus("ord_1", ProcessingPayout)
	f.Must(&ledger.SettlePayout{At: 50, ID: "pay_ghs_1", Completed: true}, ledger.EventPayoutCompleted, ledger.EventOrderCompleted)
	o = f.wantStatus("ord_1", Completed)
	if o.CompletedAt != 50 || f.system(ledger.PurposeRailSettlement, "GHS") != 1544_40 || f.system(ledger.PurposePayoutsClearing, "GHS") != 0 {
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
	f.Refuse(&DepositCommand{At: 60, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_2", Outcome: DepositConfirmed}, &ledger.Error{Code: ledger.CodeBadRequest})
	f.Must(&ledger.Tick{At: 10 + 5*hour})
	f.wantStatus("ord_1", Completed)
	checkRoundTrip(t, f.S)
}

func stepStatus(st Step) string {
	switch st.Leg {
	case LegCollection:
		return ledger.CollectionStatus(st.Status).String()
	case LegPayout:
		return ledger.PayoutStatus(st.Status).String()
	}
	return Status(st.Status).String()
}

func TestOrderBankFullLife(t *testing.T) {
	f := newOrderFixture(t)
	f.Must(bankOrder("ord_1", "inv-1", 10), ledger.EventOrderAwaitingFunds)
	// A bank transfer is final when it arrives: there is no unconfirmed stage.
	f.Refuse(&DepositCommand{At: 20, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Outcome: DepositUnconfirmed}, ledger.ErrValidation)
	f.Must(&DepositCommand{At: 20, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Amount: 505_00, Outcome: DepositConfirmed},
		ledger.EventCollectionCompleted, ledger.EventAccountCredited, ledger.EventOrderFundsReceived, ledger.EventOrderProcessing)
	o := f.wantStatus("ord_1", ProcessingPayout)
	col, _ := f.S.Collection(o.CollectionID)
	if col.Type != "virtual_account" || col.Fee != 5_00 {
		t.Fatalf("collection leg %+v", col)
	}
	// Same currency: no conversion was booked.
	if f.system(ledger.PurposeFXClearing, "GHS") != 0 || f.balance("GHS") != 0 || f.system(ledger.PurposePayoutsClearing, "GHS") != 500_00 {
		t.Fatalf("balances: GHS %d", f.balance("GHS"))
	}
	f.Must(&ledger.SettlePayout{At: 30, ID: o.PayoutID, Completed: true}, ledger.EventPayoutCompleted, ledger.EventOrderCompleted)
	f.wantStatus("ord_1", Completed)
	if f.system(ledger.PurposeFeeRevenue, "GHS") != 5_00 || f.system(ledger.PurposeRailSettlement, "GHS") != 500_00 {
		t.Fatal("fee or settlement missing")
	}
	checkRoundTrip(t, f.S)
}

func TestOrderMobileMoneyFullLife(t *testing.T) {
	f := newOrderFixture(t)
	r := f.Must(mobileOrder("ord_1", "inv-1", "col_1", 10), ledger.EventCollectionPending, ledger.EventOrderAwaitingFunds)
	if r.Collection == nil || r.Collection.ID != "col_1" || Of(r).ExpiresAt != 0 {
		t.Fatalf("create: %+v", r)
	}
	col, _ := f.S.Collection("col_1")
	if col.Status != ledger.CollectionPending || col.Spec.Amount != 200_40 || col.Fee != 40 || col.Spec.PayerNumber != "233241234567" || col.ExternalReference != "ord_1" {
		t.Fatalf("collection leg %+v", col)
	}
	// Mobile money orders are paid by the prompt, never by a deposit, and do not expire.
	f.Refuse(&DepositCommand{At: 20, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_2", Outcome: DepositConfirmed}, &ledger.Error{Code: ledger.CodeBadRequest})
	f.Must(&ledger.Tick{At: 10 + 48*hour})
	f.wantStatus("ord_1", AwaitingFunds)
	// The payer approves: the funds land, convert, and the USDC payout starts.
	f.Must(&ledger.SettleCollection{At: 30, ID: "col_1", Completed: true},
		ledger.EventCollectionCompleted, ledger.EventAccountCredited, ledger.EventOrderFundsReceived, ledger.EventOrderProcessing)
	o := f.wantStatus("ord_1", ProcessingPayout)
	p, _ := f.S.Payout(o.PayoutID)
	if o.PayoutID != "pay_usdc_1" || p.Spec.Address != "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU" || p.Spec.Amount != 12_680000 || p.MethodType != ledger.MethodCrypto {
		t.Fatalf("payout leg %+v", p)
	}
	if o.ReceivedAmount != 200_40 || f.balance("GHS") != 0 || f.balance("USDC") != 0 || f.system(ledger.PurposeFeeRevenue, "GHS") != 40 {
		t.Fatalf("after landing: %+v GHS %d USDC %d", o, f.balance("GHS"), f.balance("USDC"))
	}
	f.Must(&ledger.SettlePayout{At: 40, ID: o.PayoutID, Completed: true}, ledger.EventPayoutCompleted, ledger.EventOrderCompleted)
	f.wantStatus("ord_1", Completed)
	checkRoundTrip(t, f.S)
}

func TestOrderMobileMoneyPromptFails(t *testing.T) {
	f := newOrderFixture(t)
	f.Must(mobileOrder("ord_1", "inv-1", "col_1", 10), ledger.EventCollectionPending, ledger.EventOrderAwaitingFunds)
	f.Must(&ledger.SettleCollection{At: 30, ID: "col_1", Message: "declined"}, ledger.EventCollectionFailed, ledger.EventOrderFailed)
	o := f.wantStatus("ord_1", Failed)
	if o.PayoutID != "" || o.ReceivedAt != 0 || f.balance("GHS") != 0 || f.entryCount() != 0 {
		t.Fatalf("a failed prompt moved money: %+v", o)
	}
}

func TestOrderOverpaid(t *testing.T) {
	f := newOrderFixture(t)
	f.Must(cryptoOrder("ord_1", "inv-1", 10), ledger.EventOrderAwaitingFunds)
	f.Must(&DepositCommand{At: 20, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Amount: 150_000000, Outcome: DepositConfirmed},
		ledger.EventCollectionCompleted, ledger.EventAccountCredited, ledger.EventOrderOverpaid, ledger.EventOrderProcessing)
	o := f.wantStatus("ord_1", ProcessingPayout)
	if o.ReceivedAmount != 150_000000 || o.StatusMessage == "" {
		t.Fatalf("overpaid order %+v", o)
	}
	// The expected amount paid out; the 49 USDT excess is on the balance.
	if f.balance("USDT") != 49_000000 || f.system(ledger.PurposeFeeRevenue, "USDT") != 1_000000 || f.system(ledger.PurposePayoutsClearing, "GHS") != 1544_40 {
		t.Fatalf("USDT balance %d", f.balance("USDT"))
	}
	f.Must(&ledger.SettlePayout{At: 30, ID: o.PayoutID, Completed: true}, ledger.EventPayoutCompleted, ledger.EventOrderCompleted)
	f.wantStatus("ord_1", Completed)
	if f.balance("USDT") != 49_000000 {
		t.Fatal("excess moved")
	}
}

func TestOrderUnderpaid(t *testing.T) {
	f := newOrderFixture(t)
	f.Must(cryptoOrder("ord_1", "inv-1", 10), ledger.EventOrderAwaitingFunds)
	f.Must(&DepositCommand{At: 20, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Amount: 60_000000, Outcome: DepositConfirmed},
		ledger.EventCollectionCompleted, ledger.EventAccountCredited, ledger.EventOrderUnderpaid)
	o := f.wantStatus("ord_1", Underpaid)
	col, _ := f.S.Collection("col_1")
	// All of it is on the balance: no fee, no conversion, no payout.
	if o.PayoutID != "" || col.Fee != 0 || f.balance("USDT") != 60_000000 || f.balance("GHS") != 0 ||
		f.system(ledger.PurposeFeeRevenue, "USDT") != 0 || len(f.openPayouts()) != 0 {
		t.Fatalf("underpaid: %+v, USDT %d", o, f.balance("USDT"))
	}
	// It rests: no second deposit, no expiry.
	f.Refuse(&DepositCommand{At: 30, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_2", Amount: 41_000000, Outcome: DepositConfirmed}, &ledger.Error{Code: ledger.CodeBadRequest})
	f.Must(&ledger.Tick{At: 10 + 5*hour})
	f.wantStatus("ord_1", Underpaid)
}

func TestOrderExpiry(t *testing.T) {
	f := newOrderFixture(t)
	f.Must(cryptoOrder("ord_1", "inv-1", 10), ledger.EventOrderAwaitingFunds)
	f.Must(bankOrder("ord_2", "inv-2", 20), ledger.EventOrderAwaitingFunds)
	f.Must(cryptoOrder("ord_3", "inv-3", 30), ledger.EventOrderAwaitingFunds)
	f.Must(&DepositCommand{At: 40, OrgID: "org_a", OrderID: "ord_3", Amount: 101_000000, Outcome: DepositUnconfirmed}, ledger.EventOrderAwaitingConfirm)
	if f.S.ExpiryDue(10 + 4*hour - 1) {
		t.Fatal("due before the deadline")
	}
	f.Must(&ledger.Tick{At: 10 + 4*hour - 1})
	f.wantStatus("ord_1", AwaitingFunds)
	if !f.S.ExpiryDue(10 + 4*hour) {
		t.Fatal("not due at the deadline")
	}
	f.Must(&ledger.Tick{At: 10 + 4*hour}, ledger.EventOrderExpired)
	f.wantStatus("ord_1", Expired)
	f.wantStatus("ord_2", AwaitingFunds)
	// A deposit past the deadline, before a ledger.Tick has expired the order, is
	// refused and changes nothing.
	f.Refuse(&DepositCommand{At: 20 + 4*hour, OrgID: "org_a", OrderID: "ord_2", CollectionID: "col_1", Outcome: DepositConfirmed}, &ledger.Error{Code: ledger.CodeBadRequest})
	// The sandbox clock expires orders on the organization's clock.
	f.Must(&ledger.AdvanceClock{At: 20 + 4*hour, OrgID: "org_a", Millis: 1000}, ledger.EventOrderExpired)
	o := f.wantStatus("ord_2", Expired)
	if o.UpdatedAt != 20+4*hour+1000 {
		t.Fatalf("expired at %d on the organization's clock", o.UpdatedAt)
	}
	// A deposit awaiting confirmations does not expire.
	f.wantStatus("ord_3", AwaitingConfirmations)
	f.Refuse(&DepositCommand{At: 20 + 5*hour, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Outcome: DepositConfirmed}, &ledger.Error{Code: ledger.CodeBadRequest})
	if f.entryCount() != 0 || f.S.ExpiryDue(30+100*hour) {
		t.Fatal("expiry moved money or left work due")
	}
	checkRoundTrip(t, f.S)
}

func TestOrderFailures(t *testing.T) {
	f := newOrderFixture(t)
	// The payout leg fails: its amount is refunded to the destination balance.
	f.Must(cryptoOrder("ord_1", "inv-1", 10), ledger.EventOrderAwaitingFunds)
	f.Must(&DepositCommand{At: 20, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Outcome: DepositConfirmed},
		ledger.EventCollectionCompleted, ledger.EventAccountCredited, ledger.EventOrderFundsReceived, ledger.EventOrderProcessing)
	f.Must(&ledger.SettlePayout{At: 30, ID: "pay_ghs_1", Message: "rejected"}, ledger.EventPayoutFailed, ledger.EventOrderFailed)
	o := f.wantStatus("ord_1", Failed)
	if f.balance("GHS") != 1544_40 || f.balance("USDT") != 0 || o.CompletedAt != 0 {
		t.Fatalf("after a failed payout: GHS %d USDT %d", f.balance("GHS"), f.balance("USDT"))
	}
	// A rejected deposit fails the order and books nothing.
	entries := f.entryCount()
	f.Must(bankOrder("ord_2", "inv-2", 40), ledger.EventOrderAwaitingFunds)
	f.Must(&DepositCommand{At: 50, OrgID: "org_a", OrderID: "ord_2", Outcome: DepositRejected}, ledger.EventOrderFailed)
	// A crypto deposit that never confirms, likewise.
	f.Must(cryptoOrder("ord_3", "inv-3", 60), ledger.EventOrderAwaitingFunds)
	f.Must(&DepositCommand{At: 70, OrgID: "org_a", OrderID: "ord_3", Amount: 101_000000, Outcome: DepositUnconfirmed}, ledger.EventOrderAwaitingConfirm)
	f.Must(&DepositCommand{At: 80, OrgID: "org_a", OrderID: "ord_3", Outcome: DepositRejected}, ledger.EventOrderFailed)
	if o := f.wantStatus("ord_3", Failed); o.ReceivedAt != 0 || f.entryCount() != entries {
		t.Fatalf("a rejected deposit booked: %+v", o)
	}
	f.wantStatus("ord_2", Failed)
	checkRoundTrip(t, f.S)
}

// Bad input is refused with the right code and changes nothing; a replay
// returns the order; a changed replay is a duplicate.
func TestOrderRefusalsAndIdempotency(t *testing.T) {
	f := newOrderFixture(t)
	mod := func(c *Create, fn func(*Create)) *Create { fn(c); return c }
	f.Refuse(mod(cryptoOrder("pay_1", "r", 10), func(*Create) {}), ledger.ErrValidation)
	f.Refuse(mod(cryptoOrder("ord_1", "r", 10), func(c *Create) { c.OrgID = "org_b" }), ledger.ErrNotFound)
	f.Refuse(mod(cryptoOrder("ord_1", "r", 10), func(c *Create) { c.Spec.FromCurrency = "XXX" }), ledger.ErrValidation)
	f.Refuse(mod(cryptoOrder("ord_1", "r", 10), func(c *Create) { c.FromAmount = 0 }), ledger.ErrValidation)
	f.Refuse(mod(cryptoOrder("ord_1", "r", 10), func(c *Create) { c.Fee = -1 }), ledger.ErrValidation)
	f.Refuse(mod(cryptoOrder("ord_1", "r", 10), func(c *Create) { c.Rate = "" }), ledger.ErrValidation)
	f.Refuse(mod(cryptoOrder("ord_1", "", 10), func(*Create) {}), ledger.ErrValidation)
	f.Refuse(mod(cryptoOrder("ord_1", "r", 10), func(c *Create) { c.Instructions.Type = InstructionsVirtualAccount }), ledger.ErrValidation)
	f.Refuse(mod(cryptoOrder("ord_1", "r", 10), func(c *Create) { c.Spec.AmountSide = 0 }), ledger.ErrValidation)
	f.Refuse(mod(bankOrder("ord_1", "r", 10), func(c *Create) { c.ToAmount = 1 }), ledger.ErrValidation)
	f.Refuse(mod(mobileOrder("ord_1", "r", "", 10), func(*Create) {}), ledger.ErrValidation)
	f.Refuse(&DepositCommand{At: 20, OrgID: "org_a", OrderID: "ord_missing", CollectionID: "col_1", Outcome: DepositConfirmed}, ledger.ErrNotFound)

	f.Must(cryptoOrder("ord_1", "r", 10), ledger.EventOrderAwaitingFunds)
	// Another organization cannot see or fund it.
	f.Refuse(&DepositCommand{At: 20, OrgID: "org_b", OrderID: "ord_1", CollectionID: "col_1", Outcome: DepositConfirmed}, ledger.ErrNotFound)
	if _, ok := Get(f.S.Reader, "org_b", "ord_1"); ok {
		t.Fatal("another organization sees the order")
	}
	f.Refuse(&DepositCommand{At: 20, OrgID: "org_a", OrderID: "ord_1", CollectionID: "pay_1", Outcome: DepositConfirmed}, ledger.ErrValidation)
	f.Refuse(&DepositCommand{At: 20, OrgID: "org_a", OrderID: "ord_1", CollectionID: "col_1", Outcome: 9}, ledger.ErrValidation)
	// The same reference and spec is a replay with a new id proposed: the
	// original comes back and nothing changes.
	before := f.S.Dump()
	r, events := f.Apply(cryptoOrder("ord_2", "r", 20))
	if r.Err != nil || !r.Replayed || Of(r).ID != "ord_1" || len(events) != 0 || !bytes.Equal(f.S.Dump(), before) {
		t.Fatalf("replay: %+v %v", r, events)
	}
	var dup *ledger.Error
	f.Refuse(mod(cryptoOrder("ord_2", "r", 20), func(c *Create) { c.Spec.ToAccountNumber = "233200000000" }), ledger.ErrDuplicate)
	r, _ = f.Apply(mod(cryptoOrder("ord_2", "r", 20), func(c *Create) { c.Spec.Amount = 5 }))
	if !errors.As(r.Err, &dup) || dup.ExistingID != "ord_1" {
		t.Fatalf("duplicate: %v", r.Err)
	}
	// The same id under another reference is a conflict.
	f.Refuse(cryptoOrder("ord_1", "r2", 20), ledger.ErrConflict)
	if o, ok := ByReference(f.S.Reader, "org_a", "r"); !ok || o.ID != "ord_1" {
		t.Fatal("by reference")
	}
}

func TestOrderList(t *testing.T) {
	f := newOrderFixture(t)
	f.Must(cryptoOrder("ord_1", "a", 1000), ledger.EventOrderAwaitingFunds)
	f.Must(bankOrder("ord_2", "b", 2000), ledger.EventOrderAwaitingFunds)
	f.Must(mobileOrder("ord_3", "c", "col_3", 3000), ledger.EventCollectionPending, ledger.EventOrderAwaitingFunds)
	f.Must(&DepositCommand{At: 3500, OrgID: "org_a", OrderID: "ord_2", Outcome: DepositRejected}, ledger.EventOrderFailed)
	ids := func(fl Filter) []string {
		var out []string
		for _, o := range List(f.S.Reader, "org_a", fl, ledger.CursorStart, 100).Items {
			out = append(out, o.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    Filter
		want []string
	}{
		{"all, newest first", Filter{}, []string{"ord_3", "ord_2", "ord_1"}},
		{"status", Filter{Status: Failed}, []string{"ord_2"}},
		{"currency either side", Filter{Currency: "GHS"}, []string{"ord_3", "ord_2", "ord_1"}},
		{"currency destination only", Filter{Currency: "USDC"}, []string{"ord_3"}},
		{"origins", Filter{Origins: []string{"USDT", "USDC"}}, []string{"ord_1"}},
		{"destinations", Filter{Destinations: []string{"GHS"}}, []string{"ord_2", "ord_1"}},
		{"created from, inclusive", Filter{CreatedFrom: 2000}, []string{"ord_3", "ord_2"}},
		{"created before, exclusive", Filter{CreatedBefore: 2000}, []string{"ord_1"}},
		{"reference", Filter{ExternalReference: "b"}, []string{"ord_2"}},
		{"nothing", Filter{Status: Completed}, nil},
	} {
		if got := ids(tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	p := List(f.S.Reader, "org_a", Filter{}, ledger.CursorStart, 2)
	if len(p.Items) != 2 || !p.HasMore {
		t.Fatalf("first page %+v", p)
	}
	p = List(f.S.Reader, "org_a", Filter{}, p.Next, 2)
	if len(p.Items) != 1 || p.HasMore || p.Items[0].ID != "ord_1" {
		t.Fatalf("second page %+v", p)
	}
	if len(List(f.S.Reader, "org_b", Filter{}, ledger.CursorStart, 10).Items) != 0 {
		t.Fatal("another organization lists the orders")
	}
}

// Orders, their legs, indexes and events survive a snapshot byte for byte,
// and commands survive the log's codec.
func checkRoundTrip(t *testing.T, s *ledgertest.State) {
	t.Helper()
	r := s.Restored()
	if feature.Of(r.Ledger()).rows.InMemory() != feature.Of(s.Ledger()).rows.InMemory() ||
		r.Ledger().Views().NextDeadline() != s.Ledger().Views().NextDeadline() {
		t.Fatal("open orders or deadlines differ after restore")
	}
}

func TestOrderCommandsRoundTrip(t *testing.T) {
	ledgertest.RoundTrip(t, mobileOrder("ord_1", "r", "col_1", 10),
		&DepositCommand{At: 5, OrgID: "o", OrderID: "ord_1", CollectionID: "col_1", Amount: 7, Outcome: DepositUnconfirmed})
}
