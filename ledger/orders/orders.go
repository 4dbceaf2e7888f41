// Package orders is the ledger's orders: money collected on one rail and
// paid out on another. It is a feature of the ledger's kernel
// (ledger/feature.go): its commands are applied by ledger.State.Apply in
// log order like every other, and its records are kept in the state store
// under tags ledger.TagOrder and ledger.TagOrderDeposit.
//
// An order's legs are the kernel's own resources, a collection and a
// payout; the package follows them through the kernel's hooks
// (ledger.AddCollectionSettled, ledger.AddPayoutMoved) in the Apply that
// moves them. A create under a reference is decided like a payout
// (ledger.Decided, through ledger.RegisterDecided) and may be charged to a
// key's spend caps (keycontrols.Charged, through ledger.ChargedOp).
package orders

import (
	"slices"
	"strings"
	"unicode/utf8"

	"payments/ledger"
)

// Orders collect on one rail and pay out on another. An order is a record
// of its own and two legs that are ordinary resources: the collection that
// brings the customer's money onto the organization's balance (collectionId)
// and the payout that delivers it (payoutId). Every step that moves money
// changes the order and its legs in one Apply, so they never disagree.
//
//	awaiting_funds ──deposit seen, crypto──▶ awaiting_confirmations ──confirmed──┐
//	   │  │  └──────deposit lands (bank, crypto) or prompt approved (mobile)────┤
//	   │  │                                                                      ▼
//	   │  │          received < expected: underpaid (rests; funds stay on the balance, no payout)
//	   │  │          received = expected: funds_received ─┐
//	   │  │          received > expected: overpaid ───────┴─▶ processing_payout ──▶ completed
//	   │  └──deposit rejected, prompt failed──▶ failed                  └──payout fails──▶ failed
//	   └──expiresAt passes (bank, crypto)──▶ expired
//
// The rules, decided here because the contract leaves them open:
//
//   - expectedAmount is from.amount plus the fee, in the origin currency:
//     the fee is charged on top, as the reference's Order schema says.
//   - A deposit that matches lands as a completed collection (credit less
//     the fee) and, in the same Apply, funds_received, the conversion at
//     the rate locked at creation (cross-currency orders) and a payout of
//     to.amount with no fee of its own: the order's fee paid for it.
//   - Overpaid: the same, and the excess stays on the origin-currency
//     balance. The order passes through overpaid to processing_payout; its
//     receivedAmount shows the excess and statusMessage says where it is.
//   - Underpaid: the deposit lands in full on the balance, no fee is charged
//     and no payout is made. The order rests in underpaid (it no longer
//     takes deposits and does not expire); the merchant settles with the
//     customer, e.g. by a refund payout from the balance.
//   - Expiry: bank and crypto orders expire four hours after creation, on
//     the organization's clock, if no deposit was seen. Mobile money orders
//     have no expiresAt: the prompt's own outcome ends them.
//   - A payout leg that fails refunds its debit to the destination-currency
//     balance (as every failed payout does) and the order fails.
//   - funds_received and overpaid never rest: the payout starts in the Apply
//     that receives the funds. Their events are emitted all the same.
//   - created is the status of an order whose instructions are not yet
//     provisioned; instructions are provisioned in the creating Apply, so
//     no order is ever seen in it.

// Status is where an order is in its life. Values are frozen.
type Status uint8

// Order statuses.
const (
	Created               Status = 1
	AwaitingFunds         Status = 2
	AwaitingConfirmations Status = 3
	FundsReceived         Status = 4
	Overpaid              Status = 5
	Underpaid             Status = 6
	ProcessingPayout      Status = 7
	Completed             Status = 8
	Failed                Status = 9
	Expired               Status = 10
)

var statusNames = ledger.EnumNames[Status]{"", "created", "awaiting_funds", "awaiting_confirmations",
	"funds_received", "overpaid", "underpaid", "processing_payout", "completed", "failed", "expired"}

func (s Status) String() string { return statusNames.String(s) }

// Terminal reports whether the order can no longer change.
func (s Status) Terminal() bool {
	return s == Completed || s == Failed || s == Expired
}

// Ended reports whether nothing more happens to an order: it is terminal,
// or underpaid (the funds rest on the balance and no payout is made).
func (s Status) Ended() bool { return s.Terminal() || s == Underpaid }

// ParseStatus returns the status with the given API name.
func ParseStatus(name string) (Status, bool) { return statusNames.Parse(name) }

// StatusNames lists the API names of the statuses, in order.
func StatusNames() []string { return slices.Clone(statusNames[1:]) }

// ExpiryMillis is how long a bank or crypto order waits for its
// deposit, on the organization's clock.
const ExpiryMillis = 4 * 3600 * 1000

// Instruction types: where the customer sends the funds.
const (
	InstructionsCrypto         = "crypto"
	InstructionsVirtualAccount = "virtual_account"
	InstructionsMobileMoney    = "mobile_money"
)

// instructionsFor is the instruction type of an origin method type.
var instructionsFor = map[ledger.MethodType]string{
	ledger.MethodCrypto:       InstructionsCrypto,
	ledger.MethodBankTransfer: InstructionsVirtualAccount,
	ledger.MethodMobileMoney:  InstructionsMobileMoney,
}

// Spec is everything the caller asked for; two requests with the same
// reference are the same order exactly when their specs are equal.
type Spec struct {
	FromMethod        string
	FromCurrency      string
	FromAccountNumber string // mobile money: the payer's phone number
	FromKYC           string // canonical JSON object, or ""
	ToMethod          string
	ToCurrency        string
	ToAccountNumber   string // phone, bank account, or crypto address
	ToTag             string
	ToKYC             string
	Amount            ledger.Minor
	AmountSide        ledger.Side
	Narration         string
	Metadata          string
}

// Instructions tell the customer where to send the funds. The leader
// provisions them (a deposit address, a virtual account, or the payer's
// phone for a mobile money prompt) and carries them in the command.
type Instructions struct {
	Type          string // InstructionsCrypto, …
	Chain         string // crypto: the chain's display name
	Address       string // crypto
	Tag           string // crypto on chains that need a memo
	Bank          string // virtual_account
	AccountNumber string // virtual_account: the account; mobile_money: the payer's phone
	AccountName   string // virtual_account
}

// Leg names the part of an order a timeline step is about.
type Leg uint8

// Order legs. Values are frozen.
const (
	LegOrder      Leg = 1
	LegCollection Leg = 2
	LegPayout     Leg = 3
)

// Step is one state change of an order or of one of its legs, for the
// order's timeline. Status is a Status, ledger.CollectionStatus or
// ledger.PayoutStatus according to Leg.
type Step struct {
	At      int64 // on the organization's clock
	Leg     Leg
	Status  uint8
	Message string
}

// stepsMax bounds an order's timeline; an order takes at most ten
// steps, so this is a guard, not a limit anyone reaches.
const stepsMax = 32

// Order is one order. Timestamps are on the organization's clock.
type Order struct {
	ID                string
	OrgID             string
	ExternalReference string
	Spec              Spec
	FromMethodType    ledger.MethodType
	ToMethodType      ledger.MethodType
	FromAmount        ledger.Minor // the principal, in the origin currency
	ToAmount          ledger.Minor // delivered, in the destination currency
	Fee               ledger.Minor // in the origin currency, on top of FromAmount
	Rate              string       // locked at creation; "" for a same-currency order
	Instructions      Instructions

	Status         Status
	StatusMessage  string
	ReceivedAmount ledger.Minor
	ReceivedAt     int64 // 0 until a deposit is seen
	CollectionID   string
	PayoutID       string

	ExpiresAt   int64 // 0: never (mobile money)
	CreatedAt   int64
	UpdatedAt   int64
	CompletedAt int64

	Steps []Step

	// Attempt is the request attempt that created it (ledger/decided.go); never
	// shown to clients.
	Attempt string
}

// Expected is what the customer must send: the principal and the fee.
func (o Order) Expected() ledger.Minor { return o.FromAmount + o.Fee }

// PayoutID is the id of an order's payout leg: the order's random part
// under the payout prefix and the destination currency, so the leg's id is
// known without another draw when the funds land in a later command.
func PayoutID(orderID, toCurrency string) string {
	return "pay_" + strings.ToLower(toCurrency) + "_" + strings.TrimPrefix(orderID, "ord_")
}

// isPayoutID reports whether id == PayoutID(orderID, toCurrency),
// without building it: every payout that moves asks.
func isPayoutID(id, orderID, toCurrency string) bool {
	rest, ok := strings.CutPrefix(id, "pay_")
	if !ok || len(rest) < len(toCurrency)+1 {
		return false
	}
	for i := 0; i < len(toCurrency); i++ {
		c := toCurrency[i]
		if c >= utf8.RuneSelf {
			return id == PayoutID(orderID, toCurrency)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if rest[i] != c {
			return false
		}
	}
	rest = rest[len(toCurrency):]
	return rest[0] == '_' && rest[1:] == strings.TrimPrefix(orderID, "ord_")
}

// Ledger bookings of orders: the conversion between the two currencies of a
// cross-currency order runs through the FX clearing accounts that
// conversions use, one per currency, so the house has one FX position.
const (
	EntryFXDebit    ledger.EntryType = 32 // the origin-currency balance pays the conversion
	EntryFXCredit   ledger.EntryType = 33 // the destination-currency balance receives it
	EntryFXClearing ledger.EntryType = 34 // the FX clearing account's side of either
)

// Command kinds of orders. KindCreate is the kernel's KindCreateOrder: spend
// caps charge it among the payouts. KindDepositRef is KindDeposit with the
// caller's reference appended: a deposit without one is still written as
// KindDeposit, so its entry reads the same to every build.
const (
	KindCreate     ledger.Kind = ledger.KindCreateOrder // 32
	KindDeposit    ledger.Kind = 33
	KindDepositRef ledger.Kind = 34
)

// DepositOutcome is what a deposit into an order's instructions does.
type DepositOutcome uint8

// Deposit outcomes. Values are frozen.
const (
	// DepositConfirmed: the funds are final; they land on the balance.
	// Sent while awaiting confirmations, it confirms the deposit seen.
	DepositConfirmed DepositOutcome = 1
	// DepositUnconfirmed: a crypto deposit is seen on chain and waits for
	// confirmations.
	DepositUnconfirmed DepositOutcome = 2
	// DepositRejected: the deposit bounced (or was never confirmed); the
	// order fails and nothing is booked.
	DepositRejected DepositOutcome = 3
)

var depositOutcomeNames = ledger.EnumNames[DepositOutcome]{"", "confirmed", "unconfirmed", "rejected"}

func (o DepositOutcome) String() string { return depositOutcomeNames.String(o) }

// ParseDepositOutcome returns the outcome with the given API name.
func ParseDepositOutcome(name string) (DepositOutcome, bool) {
	return depositOutcomeNames.Parse(name)
}

// Create records an order awaiting funds, with its instructions. A
// mobile money order creates its collection leg (the prompt) in the same
// Apply.
type Create struct {
	At                int64
	ID                string
	OrgID             string
	ExternalReference string
	Spec              Spec
	FromMethodType    ledger.MethodType
	ToMethodType      ledger.MethodType
	FromAmount        ledger.Minor
	ToAmount          ledger.Minor
	Fee               ledger.Minor
	Rate              string
	Instructions      Instructions
	CollectionID      string // mobile money only
}

// DepositCommand is money arriving at a bank or crypto order's instructions:
// the sandbox's simulated deposit, or a provider's notification. With an
// ExternalReference it is idempotent (deposit.go): the reference is
// checked before the order's state, so a retry finds its deposit after the
// funds landed, and long after.
type DepositCommand struct {
	At           int64
	OrgID        string
	OrderID      string
	CollectionID string       // the collection leg to create if the funds land
	Amount       ledger.Minor // 0 when confirming: the amount seen
	Outcome      DepositOutcome
	// ExternalReference is the caller's unique string for the deposit,
	// or "": unique per organization, forever (depositKind's lookup).
	ExternalReference string
}

func (*Create) Kind() ledger.Kind { return KindCreate }

// Kind is KindDepositRef when the command carries a reference: its
// encoding is KindDeposit's with the reference appended.
func (c *DepositCommand) Kind() ledger.Kind {
	if c.ExternalReference != "" {
		return KindDepositRef
	}
	return KindDeposit
}

func init() {
	ledger.RegisterFieldsCommand[Create](KindCreate)
	ledger.RegisterRefCommand(KindDeposit, KindDepositRef, (*DepositCommand).Fields,
		func(c *DepositCommand) *string { return &c.ExternalReference })
	ledger.RegisterSubject(Subject, (*Order).fields)
	ledger.RegisterEntryType(EntryFXDebit, "order_fx_debit", "order")
	ledger.RegisterEntryType(EntryFXCredit, "order_fx_credit", "order")
	ledger.RegisterEntryType(EntryFXClearing, "order_fx_clearing", "order")
	ledger.AddCollectionSettled(collectionSettled)
	ledger.AddPayoutMoved(payoutMoved)
	ledger.RegisterDecided(KindCreate, ledger.DecidedRecords(Refused,
		func(s *ledger.State) ledger.Store[Order] { return feature.Of(s).rows }, Of,
		func(o *Order) *string { return &o.Attempt },
		func(res *ledger.Result, o *Order) { res.Value = o }))
}

// Subject tags an order as an event subject.
const Subject ledger.SubjectKind = 7

func (Order) SubjectKind() ledger.SubjectKind { return Subject }

// Refused is the resource a refusal under an order's reference names
// (ledger.Refusal.Resource, ledger.Reader.Refusal). Frozen.
const Refused = "order"

// stored is an order as the state store holds it: the subject's layout,
// then the attempt that created it, when it has one (appended,
// ledger/doc.go). Read, it is there only where bytes remain.
func (o *Order) stored(f *ledger.Codec) {
	o.fields(f)
	if f.Decoding() {
		if f.More() {
			f.Str(&o.Attempt)
		}
		return
	}
	if o.Attempt != "" {
		f.Str(&o.Attempt)
	}
}

// orderKind: an order stays open until it ends (Status.Ended). It is found
// by its reference and by each of its legs.
var orderKind = ledger.NewRecordKind(ledger.RecordSpec[Order]{
	Tag: ledger.TagOrder, Name: "order",
	ID:     func(o *Order) (string, string) { return o.ID, o.OrgID },
	Fields: (*Order).stored,
	Open:   func(o *Order) bool { return !o.Status.Ended() },
	Lookups: []ledger.Lookup[Order]{
		{Name: ledger.IndexReference, Key: func(o *Order) string { return ledger.RefKey(o.OrgID, o.ExternalReference) }},
		{Name: ledger.IndexLeg, Key: func(o *Order) string { return o.CollectionID }},
		{Name: ledger.IndexLeg2, Key: func(o *Order) string { return o.PayoutID }},
	},
	Filters: []ledger.Filter[Order]{
		ledger.StatusFilter(func(o *Order) (bool, string) { return o.Status.Ended(), o.Status.String() }),
	},
})

// book is what the feature keeps in a State: the orders (the open ones in
// memory), their expirer, and the deposits made under a reference
// (deposit.go).
type book struct {
	rows     ledger.Store[Order]
	deposits ledger.Store[Deposit]
	expiry   uint8
}

var feature = ledger.AddFeature(func(s *ledger.State) *book {
	b := &book{rows: ledger.AddStore(s, orderKind), deposits: ledger.AddStore(s, depositKind)}
	b.expiry = s.AddExpirer(ledger.Expirer{
		Each: func(s *ledger.State, add func(string, int64, string)) {
			b.rows.EachInMemory(func(o *Order) {
				if o.Status == AwaitingFunds && o.ExpiresAt != 0 {
					add(o.OrgID, o.ExpiresAt, o.ID)
				}
			})
		},
		Deadline: func(s *ledger.State, id string) (string, int64, bool) {
			o, ok := b.rows.Get(id)
			return o.OrgID, o.ExpiresAt, ok && o.Status == AwaitingFunds && o.ExpiresAt != 0
		},
		Expire: func(s *ledger.State, id string, at int64) {
			o, _ := b.rows.Get(id)
			b.move(s, &o, s.OrgNow(o.OrgID, at), Expired, "No deposit arrived before the order expired; nothing was charged")
		},
	})
	return b
})

// byReference returns the order an organization's reference names, in
// memory or in the state store, however old.
func (b *book) byReference(org, ref string) (Order, bool) {
	return b.rows.Find(ledger.IndexReference, ledger.RefKey(org, ref))
}

// step records a state change of the order or a leg, stamping the order.
// The steps are copied, never appended in place: the stored record (and a
// frozen snapshot's copy of it) shares the old array.
func (o *Order) step(at int64, leg Leg, status uint8, message string) {
	o.UpdatedAt = at
	if len(o.Steps) >= stepsMax {
		return
	}
	steps := make([]Step, len(o.Steps), len(o.Steps)+1)
	copy(steps, o.Steps)
	o.Steps = append(steps, Step{At: at, Leg: leg, Status: status, Message: message})
}

// move changes an order's status, records the step, saves the order and
// emits the status's event.
func (b *book) move(s *ledger.State, o *Order, at int64, to Status, message string) {
	o.Status = to
	o.StatusMessage = message
	o.step(at, LegOrder, uint8(to), message)
	if to == Completed {
		o.CompletedAt = at
	}
	b.rows.Put(*o)
	if typ := orderEventType[to]; typ != "" {
		// at is on the organization's clock; Emit takes leader time.
		s.Emit(s.RealTime(o.OrgID, at), o.OrgID, typ, o.ID, *o)
	}
}

var orderEventType = map[Status]string{
	AwaitingFunds:         ledger.EventOrderAwaitingFunds,
	AwaitingConfirmations: ledger.EventOrderAwaitingConfirm,
	FundsReceived:         ledger.EventOrderFundsReceived,
	Overpaid:              ledger.EventOrderOverpaid,
	Underpaid:             ledger.EventOrderUnderpaid,
	ProcessingPayout:      ledger.EventOrderProcessing,
	Completed:             ledger.EventOrderCompleted,
	Failed:                ledger.EventOrderFailed,
	Expired:               ledger.EventOrderExpired,
}

func (c *Create) Apply(s *ledger.State) ledger.Result {
	if err := ledger.CheckID(c.ID, "ord_"); err != nil {
		return ledger.Result{Err: err}
	}
	if err := s.CheckOrg(c.OrgID); err != nil {
		return ledger.Result{Err: err}
	}
	if _, _, err := ledger.LookupCurrencyPair(c.Spec.FromCurrency, c.Spec.ToCurrency); err != nil {
		return ledger.Result{Err: err}
	}
	if c.FromAmount <= 0 || c.ToAmount <= 0 || c.ToAmount > ledger.AmountMax || c.Fee < 0 ||
		c.FromAmount > ledger.AmountMax-c.Fee {
		return ledger.Result{Err: ledger.FieldInvalid("amount", "is out of range")}
	}
	if c.Spec.AmountSide != ledger.SideFrom && c.Spec.AmountSide != ledger.SideTo {
		return ledger.Result{Err: ledger.FieldInvalid("amount", "must be given on exactly one side")}
	}
	if (c.Rate == "") != (c.Spec.FromCurrency == c.Spec.ToCurrency) {
		return ledger.Result{Err: ledger.FieldInvalid("rate", "is required exactly for a cross-currency order")}
	}
	if c.Spec.FromCurrency == c.Spec.ToCurrency && c.FromAmount != c.ToAmount {
		return ledger.Result{Err: ledger.FieldInvalid("amount", "must be the same on both sides of a same-currency order")}
	}
	if c.ExternalReference == "" {
		return ledger.Result{Err: ledger.FieldInvalid("externalReference", "is required")}
	}
	if t, ok := instructionsFor[c.FromMethodType]; !ok || t != c.Instructions.Type {
		return ledger.Result{Err: ledger.FieldInvalid("from.code", "has no deposit instructions of type "+c.Instructions.Type)}
	}
	if t := c.ToMethodType; t != ledger.MethodMobileMoney && t != ledger.MethodBankTransfer && t != ledger.MethodCrypto {
		return ledger.Result{Err: ledger.FieldInvalid("to.code", "is not a payout method")}
	}
	b := feature.Of(s)
	if o, ok := b.byReference(c.OrgID, c.ExternalReference); ok {
		if o.Spec == c.Spec {
			return ledger.Result{Replayed: true, Value: &o}
		}
		return ledger.Result{Err: ledger.Duplicate("Order", o.ID)}
	}
	if _, ok := b.rows.Get(c.ID); ok {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "order %s already exists", c.ID)}
	}
	payoutID := PayoutID(c.ID, c.Spec.ToCurrency)
	if _, ok := s.Payout(payoutID); ok {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "payout %s already exists", payoutID)}
	}
	now := s.OrgNow(c.OrgID, c.At)
	o := Order{
		ID:                c.ID,
		OrgID:             c.OrgID,
		ExternalReference: c.ExternalReference,
		Spec:              c.Spec,
		FromMethodType:    c.FromMethodType,
		ToMethodType:      c.ToMethodType,
		FromAmount:        c.FromAmount,
		ToAmount:          c.ToAmount,
		Fee:               c.Fee,
		Rate:              c.Rate,
		Instructions:      c.Instructions,
		Status:            Created,
		CreatedAt:         now,
		UpdatedAt:         now,
	}
	o.step(now, LegOrder, uint8(Created), "")
	var res ledger.Result
	if c.FromMethodType == ledger.MethodMobileMoney {
		// The prompt is the collection leg: the payer approves the
		// expected amount, the fee is taken from it when it lands.
		if err := ledger.CheckID(c.CollectionID, "col_"); err != nil {
			return ledger.Result{Err: err}
		}
		r := s.Apply(&ledger.CreateCollection{
			At: c.At, ID: c.CollectionID, OrgID: c.OrgID, ExternalReference: c.ID,
			Spec: ledger.CollectionSpec{
				Currency: c.Spec.FromCurrency, Amount: o.Expected(), Method: c.Spec.FromMethod,
				PayerNumber: c.Spec.FromAccountNumber, Narration: c.Spec.Narration, KYC: c.Spec.FromKYC,
			},
			MethodType: ledger.MethodMobileMoney, Fee: c.Fee,
		})
		if r.Err != nil {
			return r
		}
		res.Collection = r.Collection
		o.CollectionID = c.CollectionID
		o.step(now, LegCollection, uint8(ledger.CollectionPending), "")
	} else {
		o.ExpiresAt = now + ExpiryMillis
	}
	b.rows.Insert(o)
	if o.ExpiresAt != 0 {
		s.AddDeadline(b.expiry, o.OrgID, o.ExpiresAt, o.ID)
	}
	b.move(s, &o, now, AwaitingFunds, "")
	res.Value = &o
	return res
}

func (c *DepositCommand) Apply(s *ledger.State) ledger.Result {
	o, err := feature.Of(s).rows.Found(c.OrgID, c.OrderID, "Order")
	if err != nil {
		return ledger.Result{Err: err}
	}
	if c.ExternalReference != "" {
		return c.applyWithReference(s, o)
	}
	return c.deposit(s, o)
}

// deposit moves order o by the deposit, whatever its reference.
func (c *DepositCommand) deposit(s *ledger.State, o Order) ledger.Result {
	b := feature.Of(s)
	if o.FromMethodType == ledger.MethodMobileMoney {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest,
			"Order %s is paid by a mobile money prompt, not a deposit: the prompt's outcome follows the amount's last two decimal digits", o.ID)}
	}
	if c.Amount < 0 || c.Amount > ledger.AmountMax {
		return ledger.Result{Err: ledger.FieldInvalid("amount", "is out of range")}
	}
	now := s.OrgNow(o.OrgID, c.At)
	switch o.Status {
	case AwaitingFunds:
		if o.ExpiresAt != 0 && now >= o.ExpiresAt {
			return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "Order %s has expired: its deposit instructions are no longer valid", o.ID)}
		}
		amount := c.Amount
		if amount == 0 {
			amount = o.Expected()
		}
		switch c.Outcome {
		case DepositUnconfirmed:
			if o.FromMethodType != ledger.MethodCrypto {
				return ledger.Result{Err: ledger.FieldInvalid("outcome", "unconfirmed is only for crypto orders: a bank transfer is final when it arrives")}
			}
			o.ReceivedAmount, o.ReceivedAt = amount, now
			b.move(s, &o, now, AwaitingConfirmations,
				"Deposit of "+money(amount, o.Spec.FromCurrency)+" seen on chain; waiting for confirmations")
			return ledger.Result{Value: &o}
		case DepositConfirmed:
			return b.landDeposit(s, &o, c, now, amount)
		case DepositRejected:
			b.move(s, &o, now, Failed, "The deposit was rejected; nothing was credited")
			return ledger.Result{Value: &o}
		}
	case AwaitingConfirmations:
		switch c.Outcome {
		case DepositConfirmed:
			if c.Amount != 0 && c.Amount != o.ReceivedAmount {
				return ledger.Result{Err: ledger.FieldInvalid("amount", "must be "+money(o.ReceivedAmount, o.Spec.FromCurrency)+
					", the deposit awaiting confirmations, or absent")}
			}
			return b.landDeposit(s, &o, c, now, o.ReceivedAmount)
		case DepositRejected:
			o.ReceivedAmount, o.ReceivedAt = 0, 0
			b.move(s, &o, now, Failed, "The deposit was not confirmed on chain; nothing was credited")
			return ledger.Result{Value: &o}
		case DepositUnconfirmed:
			return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "Order %s already has a deposit awaiting confirmations", o.ID)}
		}
	default:
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "Order %s is %s; it takes a deposit only while awaiting funds", o.ID, o.Status)}
	}
	return ledger.Result{Err: ledger.FieldInvalid("outcome", "must be one of confirmed, unconfirmed, rejected")}
}

func money(m ledger.Minor, currency string) string {
	cur, _ := ledger.LookupCurrency(currency)
	return ledger.FormatMinor(m, cur) + " " + currency
}

// landDeposit books a bank or crypto deposit as the order's completed
// collection leg and moves the order on.
func (b *book) landDeposit(s *ledger.State, o *Order, c *DepositCommand, now int64, amount ledger.Minor) ledger.Result {
	if err := ledger.CheckID(c.CollectionID, "col_"); err != nil {
		return ledger.Result{Err: err}
	}
	if _, ok := s.Collection(c.CollectionID); ok {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "collection %s already exists", c.CollectionID)}
	}
	if amount <= 0 {
		return ledger.Result{Err: ledger.FieldInvalid("amount", "must be greater than zero")}
	}
	cur := o.Spec.FromCurrency
	fee := o.Fee
	if amount < o.Expected() {
		fee = 0 // underpaid: no fee for an order that pays nothing out
	}
	account, _ := s.MerchantAccount(o.OrgID, cur, c.At, true)
	source := s.SystemAccount(ledger.PurposeCollectionsSource, cur, c.At)
	if err := s.BookCollection(c.At, c.CollectionID, o.ID, source, account, amount, fee); err != nil {
		return ledger.Result{Err: err}
	}
	typ := InstructionsVirtualAccount
	if o.FromMethodType == ledger.MethodCrypto {
		typ = "crypto"
	}
	col := ledger.Collection{
		ID:    c.CollectionID,
		OrgID: o.OrgID,
		Type:  typ,
		Spec: ledger.CollectionSpec{
			Currency: cur, Amount: amount, Method: o.Spec.FromMethod, Narration: o.Spec.Narration, KYC: o.Spec.FromKYC,
		},
		MethodType:        o.FromMethodType,
		Fee:               fee,
		ExternalReference: o.ID,
		AccountNumber:     account.Number,
		Status:            ledger.CollectionCompleted,
		CreatedAt:         now,
		UpdatedAt:         now,
		CompletedAt:       now,
	}
	s.InsertCollection(col)
	s.Emit(c.At, col.OrgID, ledger.EventCollectionCompleted, col.ID, col)
	s.EmitCredited(c.At, col.AccountNumber)

	o.CollectionID = col.ID
	o.ReceivedAmount, o.ReceivedAt = amount, now
	o.step(now, LegCollection, uint8(ledger.CollectionCompleted), "")
	res := ledger.Result{Collection: &col}
	res.Payout = b.fundsLanded(s, o, c.At, now)
	res.Value = o
	return res
}

// fundsLanded moves an order whose collection leg completed: underpaid
// rests; otherwise the order converts (cross-currency) and pays out. at is
// the leader's time (for the legs' records and bookings), now the
// organization's. It returns the payout leg, if one started.
func (b *book) fundsLanded(s *ledger.State, o *Order, at, now int64) *ledger.Payout {
	cur := o.Spec.FromCurrency
	expected := o.Expected()
	switch {
	case o.ReceivedAmount < expected:
		b.move(s, o, now, Underpaid, "Received "+money(o.ReceivedAmount, cur)+" of "+money(expected, cur)+
			": the funds are on your "+cur+" balance and no payout was made")
		return nil
	case o.ReceivedAmount > expected:
		b.move(s, o, now, Overpaid, "Received "+money(o.ReceivedAmount, cur)+", "+
			money(o.ReceivedAmount-expected, cur)+" more than expected: the excess stays on your "+cur+" balance")
	default:
		b.move(s, o, now, FundsReceived, "")
	}
	message := o.StatusMessage
	p, err := startPayout(s, o, at)
	if err != nil {
		b.move(s, o, now, Failed, "The payout could not start: "+err.Message+"; the funds are on your "+cur+" balance")
		return nil
	}
	o.PayoutID = p.ID
	o.step(now, LegPayout, uint8(ledger.PayoutPending), "")
	b.move(s, o, now, ProcessingPayout, message)
	return p
}

// startPayout converts the principal at the locked rate (for a
// cross-currency order) and creates the payout leg, in one booking. The
// payout charges no fee: the order's fee paid for it.
func startPayout(s *ledger.State, o *Order, at int64) (*ledger.Payout, *ledger.Error) {
	from, to := o.Spec.FromCurrency, o.Spec.ToCurrency
	fromAccount, _ := s.MerchantAccount(o.OrgID, from, at, true)
	if fromAccount.Available() < o.FromAmount {
		return nil, ledger.InsufficientFunds(fromAccount.Available(), o.FromAmount, from)
	}
	toAccount, _ := s.MerchantAccount(o.OrgID, to, at, true)
	var postings []ledger.Posting
	if from != to {
		postings = append(postings,
			ledger.Posting{Account: fromAccount.Number, Type: EntryFXDebit, Amount: -o.FromAmount},
			ledger.Posting{Account: s.SystemAccount(ledger.PurposeFXClearing, from, at), Type: EntryFXClearing, Amount: o.FromAmount},
			ledger.Posting{Account: s.SystemAccount(ledger.PurposeFXClearing, to, at), Type: EntryFXClearing, Amount: -o.ToAmount},
			ledger.Posting{Account: toAccount.Number, Type: EntryFXCredit, Amount: o.ToAmount})
	}
	if len(postings) > 0 {
		if _, err := s.Book(at, o.ID, o.ExternalReference, postings); err != nil {
			return nil, err
		}
	}
	spec := ledger.PayoutSpec{
		Currency: to, Amount: o.ToAmount, AmountSide: ledger.SideTo, Method: o.Spec.ToMethod,
		Narration: o.Spec.Narration, Metadata: o.Spec.Metadata, FromKYC: o.Spec.FromKYC, ToKYC: o.Spec.ToKYC,
	}
	if o.ToMethodType == ledger.MethodCrypto {
		spec.Address, spec.Tag = o.Spec.ToAccountNumber, o.Spec.ToTag
	} else {
		spec.AccountNumber = o.Spec.ToAccountNumber
	}
	p := ledger.Payout{
		ID:                PayoutID(o.ID, to),
		OrgID:             o.OrgID,
		AccountNumber:     toAccount.Number,
		Spec:              spec,
		MethodType:        o.ToMethodType,
		ExternalReference: o.ID,
		Status:            ledger.PayoutPending,
		CreatedAt:         s.OrgNow(o.OrgID, at),
		UpdatedAt:         s.OrgNow(o.OrgID, at),
	}
	postings = []ledger.Posting{
		{Account: toAccount.Number, Type: ledger.EntryPayoutDebit, Amount: -o.ToAmount},
		{Account: s.SystemAccount(ledger.PurposePayoutsClearing, to, at), Type: ledger.EntryPayoutCredit, Amount: o.ToAmount},
	}
	if _, err := s.Book(at, p.ID, o.ID, postings); err != nil {
		// Cannot happen once the conversion booked (the credit covers the
		// debit); a failure here would leave the conversion without its
		// payout, so the ledger stops rather than go on.
		panic("ledger: order payout booking failed after its conversion: " + err.Message)
	}
	s.InsertPayout(p)
	return &p, nil
}

// collectionSettled follows a mobile money order's collection leg when
// it settles. The kernel calls it when a collection settles, in the same
// Apply (ledger.AddCollectionSettled).
func collectionSettled(s *ledger.State, col ledger.Collection, at int64) {
	if !strings.HasPrefix(col.ExternalReference, "ord_") {
		return // an order's collection carries the order's id as its reference
	}
	b := feature.Of(s)
	o, ok := b.rows.Find(ledger.IndexLeg, col.ID)
	if !ok || o.Status != AwaitingFunds {
		return
	}
	now := s.OrgNow(o.OrgID, at)
	if col.Status != ledger.CollectionCompleted {
		o.step(now, LegCollection, uint8(col.Status), col.StatusMessage)
		b.move(s, &o, now, Failed, "The payer's mobile money prompt failed: "+firstOf(col.StatusMessage, "no reason given"))
		return
	}
	o.ReceivedAmount, o.ReceivedAt = col.Spec.Amount, now
	o.step(now, LegCollection, uint8(col.Status), col.StatusMessage)
	b.fundsLanded(s, &o, at, now)
}

// payoutMoved follows an order's payout leg: the order records the
// leg's step and, when the payout settles, completes or fails with it. It
// is called by the kernel when a payout is marked processing and when it
// settles, in the same Apply (ledger.AddPayoutMoved).
func payoutMoved(s *ledger.State, p ledger.Payout, at int64) {
	if !isPayoutID(p.ID, p.ExternalReference, p.Spec.Currency) {
		return // an order's payout is named after the order, its reference
	}
	b := feature.Of(s)
	o, ok := b.rows.Find(ledger.IndexLeg2, p.ID)
	if !ok || o.Status != ProcessingPayout {
		return
	}
	now := s.OrgNow(o.OrgID, at)
	o.step(now, LegPayout, uint8(p.Status), p.StatusMessage)
	switch p.Status {
	case ledger.PayoutCompleted:
		b.move(s, &o, now, Completed, "")
	case ledger.PayoutFailed:
		b.move(s, &o, now, Failed, "The payout failed: "+firstOf(p.StatusMessage, "no reason given")+
			"; its amount was refunded to your "+p.Spec.Currency+" balance")
	default:
		b.rows.Put(o)
	}
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Get returns an organization's order by id.
func Get(r *ledger.Reader, orgID, id string) (Order, bool) {
	return ledger.ReadOwned(r, orderKind, orgID, id)
}

// ByReference returns an organization's order by its externalReference.
func ByReference(r *ledger.Reader, orgID, ref string) (Order, bool) {
	return ledger.ReadByReference(r, orderKind, orgID, ref)
}

// OfLeg returns the order whose collection or payout leg has id.
func OfLeg(r *ledger.Reader, id string) (Order, bool) {
	if o, ok := ledger.ReadFind(r, orderKind, ledger.IndexLeg, id); ok {
		return o, true
	}
	return ledger.ReadFind(r, orderKind, ledger.IndexLeg2, id)
}

// Filter selects orders in a list; zero fields match everything.
type Filter struct {
	Status            Status
	Currency          string   // origin or destination
	Origins           []string // any of these origin currencies
	Destinations      []string // any of these destination currencies
	CreatedFrom       int64    // unix ms, inclusive; 0 for no bound
	CreatedBefore     int64    // unix ms, exclusive; 0 for no bound
	ExternalReference string
}

// List lists an organization's orders newest first.
func List(r *ledger.Reader, orgID string, f Filter, before ledger.Cursor, limit int) ledger.Page[Order] {
	if f.ExternalReference != "" {
		o, ok := ByReference(r, orgID, f.ExternalReference)
		f.ExternalReference = ""
		return ledger.OnePage(o, ok && f.keep(&o), before)
	}
	return ledger.ReadByStatus(r, orderKind, orgID, f.Status, Status.Ended, before, limit, f.keep)
}

func (f *Filter) keep(o *Order) bool {
	return (f.Status == 0 || o.Status == f.Status) &&
		(f.Currency == "" || o.Spec.FromCurrency == f.Currency || o.Spec.ToCurrency == f.Currency) &&
		(len(f.Origins) == 0 || slices.Contains(f.Origins, o.Spec.FromCurrency)) &&
		(len(f.Destinations) == 0 || slices.Contains(f.Destinations, o.Spec.ToCurrency)) &&
		(f.CreatedFrom == 0 || o.CreatedAt >= f.CreatedFrom) &&
		(f.CreatedBefore == 0 || o.CreatedAt < f.CreatedBefore) &&
		(f.ExternalReference == "" || o.ExternalReference == f.ExternalReference)
}

// Codec: commands and the stored record.

func (s *Spec) fields(f *ledger.Codec) {
	f.Str(&s.FromMethod, &s.FromCurrency, &s.FromAccountNumber, &s.FromKYC, &s.ToMethod,
		&s.ToCurrency, &s.ToAccountNumber, &s.ToTag, &s.ToKYC)
	ledger.FieldMinor(f, &s.Amount)
	ledger.FieldU8(f, &s.AmountSide)
	f.Str(&s.Narration, &s.Metadata)
}

func (i *Instructions) fields(f *ledger.Codec) {
	f.Str(&i.Type, &i.Chain, &i.Address, &i.Tag, &i.Bank, &i.AccountNumber, &i.AccountName)
}

// termsFields are the terms an order is created on, as both Create and the
// order it makes carry them, in their frozen order.
func termsFields(f *ledger.Codec, spec *Spec, fromType, toType *ledger.MethodType,
	from, to, fee *ledger.Minor, rate *string, in *Instructions) {
	spec.fields(f)
	ledger.FieldMethodType(f, fromType)
	ledger.FieldMethodType(f, toType)
	ledger.FieldMinor(f, from, to, fee)
	f.Str(rate)
	in.fields(f)
}

// Fields are Create's codec.
func (c *Create) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.ExternalReference)
	termsFields(f, &c.Spec, &c.FromMethodType, &c.ToMethodType,
		&c.FromAmount, &c.ToAmount, &c.Fee, &c.Rate, &c.Instructions)
	f.Str(&c.CollectionID)
}

func (c *Create) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

// Decision is what ledger.Decided needs of a create under a reference: the
// request as a retry is compared with it is the order's spec.
func (c *Create) Decision(e *ledger.Encoder) (org, ref, id string, at int64) {
	c.Spec.fields(e.Codec())
	return c.OrgID, c.ExternalReference, c.ID, c.At
}

// Charged is what a spend charge needs of an order it wraps
// (ledger.ChargedOp): its organization and reference, and whether the
// reference already names an order, which then answers for itself.
func (c *Create) Charged(s *ledger.State) (org, ref string, taken bool) {
	_, taken = feature.Of(s).byReference(c.OrgID, c.ExternalReference)
	return c.OrgID, c.ExternalReference, taken
}

// ChargedID is the order a create made, which its spend charge is kept by.
func (c *Create) ChargedID(res *ledger.Result) string {
	if o := Of(*res); o != nil {
		return o.ID
	}
	return ""
}

// Fields are DepositCommand's without its reference, which KindDepositRef
// appends.
func (c *DepositCommand) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID, &c.OrderID, &c.CollectionID)
	ledger.FieldMinor(f, &c.Amount)
	ledger.FieldU8(f, &c.Outcome)
}

func (c *DepositCommand) Encode(e *ledger.Encoder) {
	f := e.Codec()
	c.Fields(f)
	f.AppendedRef(&c.ExternalReference)
}

// fields are an order as an event's subject holds it; the store appends
// its attempt (stored).
func (o *Order) fields(f *ledger.Codec) {
	f.Str(&o.ID, &o.OrgID, &o.ExternalReference)
	termsFields(f, &o.Spec, &o.FromMethodType, &o.ToMethodType,
		&o.FromAmount, &o.ToAmount, &o.Fee, &o.Rate, &o.Instructions)
	ledger.FieldU8(f, &o.Status)
	f.Str(&o.StatusMessage)
	ledger.FieldMinor(f, &o.ReceivedAmount)
	f.Varint(&o.ReceivedAt)
	f.Str(&o.CollectionID, &o.PayoutID)
	f.Varint(&o.ExpiresAt, &o.CreatedAt, &o.UpdatedAt, &o.CompletedAt)
	ledger.FieldSlice(f, &o.Steps, stepsMax, "order timeline steps", func(f *ledger.Codec, st *Step) {
		f.Varint(&st.At)
		ledger.FieldU8(f, &st.Leg)
		ledger.FieldU8(f, &st.Status)
		f.Str(&st.Message)
	})
}

// Deposited is the outcome of a deposit under a reference: the order and
// the deposit's record (made, or replayed).
type Deposited struct {
	Order   *Order
	Deposit *Deposit
}

// Of returns the order a command made, moved or replayed, or nil.
func Of(res ledger.Result) *Order {
	return ledger.ValueIn(res, func(d *Deposited) *Order { return d.Order })
}

// DepositOf returns the record of a deposit under a reference, or nil.
func DepositOf(res ledger.Result) *Deposit {
	return ledger.ValueIn(res, func(d *Deposited) *Deposit { return d.Deposit })
}
