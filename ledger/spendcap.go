package ledger

import (
	"math/big"
	"time"

	"github.com/cockroachdb/apd/v3"
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

// Command kinds of key controls.
const (
	KindSetKeyControls      Kind = 90
	KindCreateControlledKey Kind = 91
	KindSpendCharged        Kind = 92
)

// CodeSpendCapExceeded: the debit would pass one of the key's spend caps;
// nothing was done.
const CodeSpendCapExceeded Code = "spend_cap_exceeded"

// The caps' names, as the API spells them.
const (
	SpendCapPerTransaction = "perTransaction"
	SpendCapDaily          = "daily"
	SpendCapMonthly        = "monthly"
)

// SpendCaps are a key's caps in USD cents; nil is no cap.
type SpendCaps struct {
	PerTransaction *Minor
	Daily          *Minor
	Monthly        *Minor
}

// SpendPeriod is a calendar day and month in an organization's timezone:
// Day counts days from 1970-01-01, Month months from January of year 0.
type SpendPeriod struct {
	Day   int32
	Month int32
}

// SpendPeriodOf is the period of a time, in the location local carries. The
// leader computes it (loading the timezone is I/O) and carries it in the
// command.
func SpendPeriodOf(local time.Time) SpendPeriod {
	y, m, d := local.Date()
	days := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
	return SpendPeriod{Day: int32(days), Month: int32(y*12 + int(m) - 1)}
}

// SpendUsage is what a key has spent, in USD cents, in the day and month
// of Period.
type SpendUsage struct {
	Period SpendPeriod
	Day    Minor
	Month  Minor
}

// At is the usage as seen in period p: a day or month that is over counts
// as nothing spent. A p earlier than the usage's own (a leader's clock
// behind the previous one's) reads the current counters, so a late charge
// counts in the period it finds rather than escaping.
func (u SpendUsage) At(p SpendPeriod) SpendUsage {
	if p.Day > u.Period.Day {
		u.Period.Day, u.Day = p.Day, 0
	}
	if p.Month > u.Period.Month {
		u.Period.Month, u.Month = p.Month, 0
	}
	return u
}

// SpendCapDetails say which cap a debit would pass: the cap's name, its
// limit, what the key has used of it and what the debit asked, in USD cents.
type SpendCapDetails struct {
	Cap       string
	Limit     Minor
	Used      Minor
	Attempted Minor
}

// SpendCapExceeded is the error for a debit past a cap.
func SpendCapExceeded(d SpendCapDetails) *Error {
	usd, _ := LookupCurrency("USD")
	var msg string
	switch d.Cap {
	case SpendCapPerTransaction:
		msg = "Spend cap exceeded: this operation is worth " + FormatMinor(d.Attempted, usd) +
			" USD, more than the key's per-transaction cap of " + FormatMinor(d.Limit, usd) + " USD; nothing was done"
	default:
		period := "today"
		if d.Cap == SpendCapMonthly {
			period = "this month"
		}
		msg = "Spend cap exceeded: this operation (" + FormatMinor(d.Attempted, usd) + " USD) would take the key's spend " +
			period + " past its " + d.Cap + " cap of " + FormatMinor(d.Limit, usd) + " USD (" +
			FormatMinor(d.Used, usd) + " USD used); nothing was done"
	}
	return &Error{Code: CodeSpendCapExceeded, Message: msg, SpendCap: &d}
}

// check returns the error of the cap that charging usd in period p would
// pass, or nil.
func (c SpendCaps) check(u SpendUsage, usd Minor, p SpendPeriod) *Error {
	u = u.At(p)
	switch {
	case c.PerTransaction != nil && usd > *c.PerTransaction:
		return SpendCapExceeded(SpendCapDetails{SpendCapPerTransaction, *c.PerTransaction, 0, usd})
	case c.Daily != nil && u.Day+usd > *c.Daily:
		return SpendCapExceeded(SpendCapDetails{SpendCapDaily, *c.Daily, u.Day, usd})
	case c.Monthly != nil && u.Month+usd > *c.Monthly:
		return SpendCapExceeded(SpendCapDetails{SpendCapMonthly, *c.Monthly, u.Month, usd})
	}
	return nil
}

// add counts usd in period p.
func (u SpendUsage) add(usd Minor, p SpendPeriod) SpendUsage {
	u = u.At(p)
	u.Day += usd
	u.Month += usd
	return u
}

// release gives back usd counted in period p, from whichever of the
// current day and month is still p's.
func (u SpendUsage) release(usd Minor, p SpendPeriod) SpendUsage {
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
func USDValue(amount Minor, currency, rate string) (Minor, *Error) {
	cur, ok := LookupCurrency(currency)
	if !ok {
		return 0, Errorf(CodeValidation, "unknown currency %s", currency)
	}
	if currency == "USD" {
		return amount, nil
	}
	var r apd.Decimal
	if _, _, err := r.SetString(rate); err != nil || r.Sign() <= 0 || r.Form != apd.Finite || r.Exponent < -40 || r.Exponent > 40 {
		return 0, Errorf(CodeValidation, "rate %q is not a positive decimal", rate)
	}
	if amount < 0 {
		return 0, Errorf(CodeValidation, "amount is negative")
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
	if !v.IsInt64() || Minor(v.Int64()) > AmountMax {
		return 0, Errorf(CodeValidation, "USD value is out of range")
	}
	return Minor(v.Int64()), nil
}

// SpendCharge is what a debit counts against a key, chosen by the leader.
type SpendCharge struct {
	KeyID  string
	USD    Minor // cents
	Period SpendPeriod
}

func (c *SpendCharge) encode(e *Encoder) {
	e.Str(c.KeyID)
	e.Varint(int64(c.USD))
	e.Varint(int64(c.Period.Day))
	e.Varint(int64(c.Period.Month))
}

func decodeSpendCharge(d *Decoder) SpendCharge {
	return SpendCharge{KeyID: d.Str(), USD: Minor(d.Varint()), Period: decodeSpendPeriod(d)}
}

func decodeSpendPeriod(d *Decoder) SpendPeriod {
	day, month := d.Varint(), d.Varint()
	if day != int64(int32(day)) || month != int64(int32(month)) {
		d.Fail(Errorf(CodeValidation, "spend period out of range"))
	}
	return SpendPeriod{int32(day), int32(month)}
}

// SpendCharged is a debit (CreatePayout, CreateFXPayout or CreateOrder)
// made by a key, with what it counts against the key's caps. Apply checks
// the caps, applies the debit and counts it, in one step.
type SpendCharged struct {
	Charge SpendCharge
	Op     Command
}

func (*SpendCharged) Kind() Kind { return KindSpendCharged }

// OpKind is the kind of the debit inside, for those who wait on its result.
func (c *SpendCharged) OpKind() Kind { return c.Op.Kind() }

func (c *SpendCharged) Encode(e *Encoder) {
	c.Charge.encode(e)
	e.U8(uint8(c.Op.Kind()))
	c.Op.Encode(e)
}

// chargeable reports whether kind is a debit a charge may wrap.
func chargeable(k Kind) bool {
	switch k {
	case KindCreatePayout, KindCreateFXPayout, KindCreatePayoutRouted, KindCreateFXPayoutRouted, KindCreateOrder:
		return true
	}
	return false
}

func decodeSpendCharged(d *Decoder) Command {
	c := &SpendCharged{Charge: decodeSpendCharge(d)}
	if len(d.Rest()) == 0 || !chargeable(Kind(d.Rest()[0])) {
		d.Fail(Errorf(CodeValidation, "a spend charge wraps a payout or an order"))
		return c
	}
	op, err := decodeCommand(d)
	if err != nil {
		d.Fail(err)
		return c
	}
	c.Op = op
	return c
}

// spendCharge is a charge still open: the debit it counted may yet give it
// back (a payout not settled, an order not completed). It is kept by the
// id of the payout or order, and closes when that ends.
type spendCharge struct {
	ID     string // the payout's or the order's
	OrgID  string
	Charge SpendCharge
	Open   bool
}

var spendChargeKind = &kind[spendCharge]{
	tag: tagSpendCharge, name: "spend charge",
	id: func(c *spendCharge) (string, string) { return c.ID, c.OrgID },
	enc: func(e *Encoder, c *spendCharge) {
		e.Str(c.ID)
		e.Str(c.OrgID)
		c.Charge.encode(e)
		e.Bool(c.Open)
	},
	dec: func(d *Decoder) spendCharge {
		return spendCharge{ID: d.Str(), OrgID: d.Str(), Charge: decodeSpendCharge(d), Open: d.Bool()}
	},
	open:     func(c *spendCharge) bool { return c.Open },
	unlisted: true,
}

func init() {
	RegisterCommand(KindSpendCharged, decodeSpendCharged)
}

// initSpendCaps registers the open charges and the hook that closes them.
func (s *State) initSpendCaps() {
	s.spendCharges = addStore(s, spendChargeKind)
	s.eventHooks = append(s.eventHooks, settleSpendCharges)
}

// settleSpendCharges follows the debits that carry charges: a payout or
// order that ends without money leaving gives its charge back; one that
// completes keeps it.
func settleSpendCharges(s *State, ev Event) {
	var giveBack bool
	switch ev.Type {
	case EventPayoutFailed, EventOrderFailed, EventOrderExpired, EventOrderUnderpaid:
		giveBack = true
	case EventPayoutCompleted, EventOrderCompleted:
	default:
		return
	}
	r, ok := s.spendCharges.rows[ev.ResourceID]
	if !ok || !r.v.Open {
		return
	}
	c := r.v
	c.Open = false
	s.spendCharges.put(c)
	if !giveBack {
		return
	}
	if key, ok := s.keys.get(c.Charge.KeyID); ok {
		key.Spent = key.Spent.release(c.Charge.USD, c.Charge.Period)
		s.keys.put(key)
	}
}

func (c *SpendCharged) Apply(s *State) Result {
	var org, ref string
	var replay bool
	switch op := c.Op.(type) {
	case *CreatePayout:
		org, ref = op.OrgID, op.ExternalReference
		_, replay = s.payouts.byReference(org, ref)
	case *CreateFXPayout:
		org, ref = op.OrgID, op.ExternalReference
		_, replay = s.payouts.byReference(org, ref)
	case ChargedOp:
		org, ref, replay = op.Charged(s)
	default:
		return Result{Err: Errorf(CodeValidation, "a spend charge wraps a payout or an order")}
	}
	if replay {
		// The reference is taken: the debit answers for itself (a replay
		// or a duplicate), and nothing new is counted.
		return s.Apply(c.Op)
	}
	key, ok := s.keys.owned(org, c.Charge.KeyID)
	if !ok || key.Revoked {
		return Result{Err: Errorf(CodeUnauthorized, "Invalid API key: the key was revoked")}
	}
	if c.Charge.USD < 0 || c.Charge.USD > AmountMax {
		return Result{Err: Errorf(CodeValidation, "USD value is out of range")}
	}
	if err := key.Caps.check(key.Spent, c.Charge.USD, c.Charge.Period); err != nil {
		return Result{Err: err}
	}
	res := s.Apply(c.Op)
	if res.Err != nil || res.Replayed {
		return res
	}
	var id string
	if op, ok := c.Op.(ChargedOp); ok {
		id = op.ChargedID(&res)
	} else if res.Payout != nil {
		id = res.Payout.ID
	}
	if id == "" {
		return res
	}
	key.Spent = key.Spent.add(c.Charge.USD, c.Charge.Period)
	s.keys.put(key)
	if key.Caps != (SpendCaps{}) {
		// Only a capped key keeps its open charges, to give them back:
		// an uncapped key's usage is counted gross, and the debits of a
		// busy uncapped key cost no record each.
		s.spendCharges.insert(spendCharge{ID: id, OrgID: org, Charge: c.Charge, Open: true})
	}
	return res
}
