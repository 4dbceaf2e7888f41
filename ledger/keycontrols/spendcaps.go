package keycontrols

import (
	"math/big"
	"time"

	"github.com/cockroachdb/apd/v3"

	"payments/ledger"
)

// Spend caps. A key may carry caps in US dollars on what it sends out of
// the organization's balances: per transaction, per calendar day and per
// calendar month, days and months in the organization's timezone.
//
// What counts: every debit a key asks for that sends money out of a
// merchant balance — payouts of every kind (same-currency and
// cross-currency) and orders, whose payout leg leaves the merchant's
// balance. The amount counted is the whole debit (principal and fee) at its
// USD value at the rate the operation uses (a cross-currency payout's own
// rate where one side is USD, else the current rate of the debited currency
// to USD), rounded up to the cent. What does not count: conversions between
// the organization's own balances, collections and deposits (money in),
// simulations, and movements nobody's key asked for (a dispute's outcome).
//
// The check lives with the debit, in Apply: the command carries the key,
// the USD value and the calendar period, all chosen by the leader, and
// Apply adds the charge to the key's counters in the same step as the
// debit, so no interleaving of requests on any node can pass a cap. A
// refused request moves nothing and counts nothing. A charge that ends
// without money leaving (the payout fails or is returned, the order
// expires, fails or rests underpaid) is given back to the period it was
// counted in, as a card issuer releases a declined authorization; once that
// period is over there is nothing to give back. Only a key with a cap keeps
// what it must give back: a key without caps has its usage counted gross
// (nothing is enforced against it), and a cap set later binds from the
// gross figure, which errs on the side of the cap.

// The caps' names, as the API spells them.
const (
	CapPerTransaction = "perTransaction"
	CapDaily          = "daily"
	CapMonthly        = "monthly"
)

// PeriodOf is the period of a time, in the location local carries. The
// leader computes it (loading the timezone is I/O) and carries it in the
// command.
func PeriodOf(local time.Time) ledger.SpendPeriod {
	y, m, d := local.Date()
	days := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
	return ledger.SpendPeriod{Day: int32(days), Month: int32(y*12 + int(m) - 1)}
}

// UsageAt is usage u as seen in period p: a day or month that is over
// counts as nothing spent. A p earlier than the usage's own (a leader's
// clock behind the previous one's) reads the current counters, so a late
// charge counts in the period it finds rather than escaping.
func UsageAt(u ledger.SpendUsage, p ledger.SpendPeriod) ledger.SpendUsage {
	if p.Day > u.Period.Day {
		u.Period.Day, u.Day = p.Day, 0
	}
	if p.Month > u.Period.Month {
		u.Period.Month, u.Month = p.Month, 0
	}
	return u
}

// CapExceeded is the error for a debit past a cap.
func CapExceeded(d ledger.SpendCapDetails) *ledger.Error {
	usd, _ := ledger.LookupCurrency("USD")
	var msg string
	switch d.Cap {
	case CapPerTransaction:
		msg = "Spend cap exceeded: this operation is worth " + ledger.FormatMinor(d.Attempted, usd) +
			" USD, more than the key's per-transaction cap of " + ledger.FormatMinor(d.Limit, usd) + " USD; nothing was done"
	default:
		period := "today"
		if d.Cap == CapMonthly {
			period = "this month"
		}
		msg = "Spend cap exceeded: this operation (" + ledger.FormatMinor(d.Attempted, usd) + " USD) would take the key's spend " +
			period + " past its " + d.Cap + " cap of " + ledger.FormatMinor(d.Limit, usd) + " USD (" +
			ledger.FormatMinor(d.Used, usd) + " USD used); nothing was done"
	}
	return &ledger.Error{Code: ledger.CodeSpendCapExceeded, Message: msg, SpendCap: &d}
}

// check returns the error of the cap that charging usd in period p would
// pass, or nil.
func check(c ledger.SpendCaps, u ledger.SpendUsage, usd ledger.Minor, p ledger.SpendPeriod) *ledger.Error {
	u = UsageAt(u, p)
	switch {
	case c.PerTransaction != nil && usd > *c.PerTransaction:
		return CapExceeded(ledger.SpendCapDetails{Cap: CapPerTransaction, Limit: *c.PerTransaction, Attempted: usd})
	case c.Daily != nil && u.Day+usd > *c.Daily:
		return CapExceeded(ledger.SpendCapDetails{Cap: CapDaily, Limit: *c.Daily, Used: u.Day, Attempted: usd})
	case c.Monthly != nil && u.Month+usd > *c.Monthly:
		return CapExceeded(ledger.SpendCapDetails{Cap: CapMonthly, Limit: *c.Monthly, Used: u.Month, Attempted: usd})
	}
	return nil
}

// add counts usd in period p.
func add(u ledger.SpendUsage, usd ledger.Minor, p ledger.SpendPeriod) ledger.SpendUsage {
	u = UsageAt(u, p)
	u.Day += usd
	u.Month += usd
	return u
}

// release gives back usd counted in period p, from whichever of the
// current day and month is still p's.
func release(u ledger.SpendUsage, usd ledger.Minor, p ledger.SpendPeriod) ledger.SpendUsage {
	if p.Day == u.Period.Day {
		u.Day = max(0, u.Day-usd)
	}
	if p.Month == u.Period.Month {
		u.Month = max(0, u.Month-usd)
	}
	return u
}

// USDValue is amount of currency in US cents at rate (units of USD per unit
// of currency, as a decimal string), rounded up to the cent so that a cap
// cannot be passed by splitting a debit into pieces that round to nothing.
// A USD amount is its own value, whatever rate says.
func USDValue(amount ledger.Minor, currency, rate string) (ledger.Minor, *ledger.Error) {
	cur, ok := ledger.LookupCurrency(currency)
	if !ok {
		return 0, ledger.Errorf(ledger.CodeValidation, "unknown currency %s", currency)
	}
	if currency == "USD" {
		return amount, nil
	}
	var r apd.Decimal
	if _, _, err := r.SetString(rate); err != nil || r.Sign() <= 0 || r.Form != apd.Finite || r.Exponent < -40 || r.Exponent > 40 {
		return 0, ledger.Errorf(ledger.CodeValidation, "rate %q is not a positive decimal", rate)
	}
	if amount < 0 {
		return 0, ledger.Errorf(ledger.CodeValidation, "amount is negative")
	}
	// cents = amount × 10^-decimals × coefficient × 10^exponent × 100, in
	// integers (apd's rounding of values below one unit of the target
	// exponent is not to be relied on).
	v := new(big.Int).Mul(big.NewInt(int64(amount)), r.Coeff.MathBigInt())
	if shift := int64(r.Exponent) + 2 - int64(cur.Decimals); shift >= 0 {
		v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(shift), nil))
	} else {
		div := new(big.Int).Exp(big.NewInt(10), big.NewInt(-shift), nil)
		var rem big.Int
		v.QuoRem(v, div, &rem)
		if rem.Sign() != 0 {
			v.Add(v, big.NewInt(1))
		}
	}
	if !v.IsInt64() || ledger.Minor(v.Int64()) > ledger.AmountMax {
		return 0, ledger.Errorf(ledger.CodeValidation, "USD value is out of range")
	}
	return ledger.Minor(v.Int64()), nil
}

// Charge is what a debit counts against a key, chosen by the leader.
type Charge struct {
	KeyID  string
	USD    ledger.Minor // cents
	Period ledger.SpendPeriod
}

func (c *Charge) encode(e *ledger.Encoder) {
	e.Str(c.KeyID)
	e.Varint(int64(c.USD))
	c.Period.Encode(e)
}

func decodeCharge(d *ledger.Decoder) Charge {
	return Charge{KeyID: d.Str(), USD: ledger.Minor(d.Varint()), Period: ledger.DecodeSpendPeriod(d)}
}

// Charged is a debit (a payout of any kind or an order: a ledger.ChargedOp)
// made by a key, with what it counts against the key's caps. Apply checks
// the caps, applies the debit and counts it, in one step.
type Charged struct {
	Charge Charge
	Op     ledger.Command
}

func (*Charged) Kind() ledger.Kind { return KindCharged }

// Wrapped is the debit, which Decided answers for (ledger.Wrapper).
func (c *Charged) Wrapped() ledger.Command { return c.Op }

func (c *Charged) Encode(e *ledger.Encoder) {
	c.Charge.encode(e)
	e.U8(uint8(c.Op.Kind()))
	c.Op.Encode(e)
}

// chargeable reports whether kind is a debit a charge may wrap.
func chargeable(k ledger.Kind) bool {
	switch k {
	case ledger.KindCreatePayout, ledger.KindCreateFXPayout, ledger.KindCreatePayoutRouted, ledger.KindCreateFXPayoutRouted, ledger.KindCreateOrder:
		return true
	}
	return false
}

func decodeCharged(d *ledger.Decoder) ledger.Command {
	c := &Charged{Charge: decodeCharge(d)}
	if len(d.Rest()) == 0 || !chargeable(ledger.Kind(d.Rest()[0])) {
		d.Fail(ledger.Errorf(ledger.CodeValidation, "a spend charge wraps a payout or an order"))
		return c
	}
	op, err := ledger.DecodeCommand(d)
	if err != nil {
		d.Fail(err)
		return c
	}
	c.Op = op
	return c
}

// openCharge is a charge still open: the debit it counted may yet give it
// back (a payout not settled, an order not completed). It is kept by the
// id of the payout or order, and closes when that ends.
type openCharge struct {
	ID     string // the payout's or the order's
	OrgID  string
	Charge Charge
	Open   bool
}

var chargeKind = ledger.NewUnlistedRecordKind(ledger.RecordSpec[openCharge]{
	Tag: ledger.TagSpendCharge, Name: "spend charge",
	ID: func(c *openCharge) (string, string) { return c.ID, c.OrgID },
	Fields: func(c *openCharge, f *ledger.Codec) {
		f.Str(&c.ID, &c.OrgID)
		if d := f.Decoder(); d != nil {
			c.Charge = decodeCharge(d)
		} else {
			c.Charge.encode(f.Encoder())
		}
		f.Bool(&c.Open)
	},
	Open: func(c *openCharge) bool { return c.Open },
})

// charges are the open charges of a State.
type charges struct {
	open ledger.Store[openCharge]
}

var feature = ledger.AddFeature(func(s *ledger.State) *charges {
	c := &charges{open: ledger.AddStore(s, chargeKind)}
	s.AddEventHook(c.settle)
	return c
})

func init() {
	ledger.RegisterCommand(KindCharged, decodeCharged)
}

// settle follows the debits that carry charges: a payout or order that
// ends without money leaving gives its charge back; one that completes
// keeps it.
func (cs *charges) settle(s *ledger.State, ev ledger.Event) {
	var giveBack bool
	switch ev.Type {
	case ledger.EventPayoutFailed, ledger.EventOrderFailed, ledger.EventOrderExpired, ledger.EventOrderUnderpaid:
		giveBack = true
	case ledger.EventPayoutCompleted, ledger.EventOrderCompleted:
	default:
		return
	}
	c, ok := cs.open.Resident(ev.ResourceID)
	if !ok || !c.Open {
		return
	}
	c.Open = false
	cs.open.Put(c)
	if !giveBack {
		return
	}
	if key, ok := s.APIKey(c.OrgID, c.Charge.KeyID); ok {
		key.Spent = release(key.Spent, c.Charge.USD, c.Charge.Period)
		s.PutAPIKey(key)
	}
}

func (c *Charged) Apply(s *ledger.State) ledger.Result {
	op, ok := c.Op.(ledger.ChargedOp)
	if !ok {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "a spend charge wraps a payout or an order")}
	}
	org, _, replay := op.Charged(s)
	if replay {
		// The reference is taken: the debit answers for itself (a replay
		// or a duplicate), and nothing new is counted.
		return s.Apply(c.Op)
	}
	key, ok := s.APIKey(org, c.Charge.KeyID)
	if !ok || key.Revoked {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeUnauthorized, "Invalid API key: the key was revoked")}
	}
	if c.Charge.USD < 0 || c.Charge.USD > ledger.AmountMax {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "USD value is out of range")}
	}
	if err := check(key.Caps, key.Spent, c.Charge.USD, c.Charge.Period); err != nil {
		return ledger.Result{Err: err}
	}
	res := s.Apply(c.Op)
	if res.Err != nil || res.Replayed {
		return res
	}
	id := op.ChargedID(&res)
	if id == "" {
		return res
	}
	key.Spent = add(key.Spent, c.Charge.USD, c.Charge.Period)
	s.PutAPIKey(key)
	if key.Caps != (ledger.SpendCaps{}) {
		// Only a capped key keeps its open charges, to give them back:
		// an uncapped key's usage is counted gross, and the debits of a
		// busy uncapped key cost no record each.
		feature.Of(s).open.Insert(openCharge{ID: id, OrgID: org, Charge: c.Charge, Open: true})
	}
	return res
}
