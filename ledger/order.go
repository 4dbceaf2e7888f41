package ledger

import (
	"slices"
	"strings"
	"unicode/utf8"
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

// OrderStatus is where an order is in its life. Values are frozen.
type OrderStatus uint8

// Order statuses.
const (
	OrderCreated               OrderStatus = 1
	OrderAwaitingFunds         OrderStatus = 2
	OrderAwaitingConfirmations OrderStatus = 3
	OrderFundsReceived         OrderStatus = 4
	OrderOverpaid              OrderStatus = 5
	OrderUnderpaid             OrderStatus = 6
	OrderProcessingPayout      OrderStatus = 7
	OrderCompleted             OrderStatus = 8
	OrderFailed                OrderStatus = 9
	OrderExpired               OrderStatus = 10
)

var orderStatusNames = EnumNames[OrderStatus]{"", "created", "awaiting_funds", "awaiting_confirmations",
	"funds_received", "overpaid", "underpaid", "processing_payout", "completed", "failed", "expired"}

func (s OrderStatus) String() string { return orderStatusNames.String(s) }

// Terminal reports whether the order can no longer change.
func (s OrderStatus) Terminal() bool {
	return s == OrderCompleted || s == OrderFailed || s == OrderExpired
}

// Ended reports whether nothing more happens to an order: it is terminal,
// or underpaid (the funds rest on the balance and no payout is made).
func (s OrderStatus) Ended() bool { return s.Terminal() || s == OrderUnderpaid }

// ParseOrderStatus returns the status with the given API name.
func ParseOrderStatus(name string) (OrderStatus, bool) { return orderStatusNames.Parse(name) }

// OrderStatusNames lists the API names of the statuses, in order.
func OrderStatusNames() []string { return slices.Clone(orderStatusNames[1:]) }

// OrderExpiryMillis is how long a bank or crypto order waits for its
// deposit, on the organization's clock.
const OrderExpiryMillis = 4 * 3600 * 1000

// Instruction types: where the customer sends the funds.
const (
	InstructionsCrypto         = "crypto"
	InstructionsVirtualAccount = "virtual_account"
	InstructionsMobileMoney    = "mobile_money"
)

// instructionsFor is the instruction type of an origin method type.
var instructionsFor = map[MethodType]string{
	MethodCrypto:       InstructionsCrypto,
	MethodBankTransfer: InstructionsVirtualAccount,
	MethodMobileMoney:  InstructionsMobileMoney,
}

// OrderSpec is everything the caller asked for; two requests with the same
// reference are the same order exactly when their specs are equal.
type OrderSpec struct {
	FromMethod        string
	FromCurrency      string
	FromAccountNumber string // mobile money: the payer's phone number
	FromKYC           string // canonical JSON object, or ""
	ToMethod          string
	ToCurrency        string
	ToAccountNumber   string // phone, bank account, or crypto address
	ToTag             string
	ToKYC             string
	Amount            Minor
	AmountSide        Side
	Narration         string
	Metadata          string
}

// OrderInstructions tell the customer where to send the funds. The leader
// provisions them (a deposit address, a virtual account, or the payer's
// phone for a mobile money prompt) and carries them in the command.
type OrderInstructions struct {
	Type          string // InstructionsCrypto, …
	Chain         string // crypto: the chain's display name
	Address       string // crypto
	Tag           string // crypto on chains that need a memo
	Bank          string // virtual_account
	AccountNumber string // virtual_account: the account; mobile_money: the payer's phone
	AccountName   string // virtual_account
}

// OrderLeg names the part of an order a timeline step is about.
type OrderLeg uint8

// Order legs. Values are frozen.
const (
	LegOrder      OrderLeg = 1
	LegCollection OrderLeg = 2
	LegPayout     OrderLeg = 3
)

// OrderStep is one state change of an order or of one of its legs, for the
// order's timeline. Status is an OrderStatus, CollectionStatus or
// PayoutStatus according to Leg.
type OrderStep struct {
	At      int64 // on the organization's clock
	Leg     OrderLeg
	Status  uint8
	Message string
}

// orderStepsMax bounds an order's timeline; an order takes at most ten
// steps, so this is a guard, not a limit anyone reaches.
const orderStepsMax = 32

// Order is one order. Timestamps are on the organization's clock.
type Order struct {
	ID                string
	OrgID             string
	ExternalReference string
	Spec              OrderSpec
	FromMethodType    MethodType
	ToMethodType      MethodType
	FromAmount        Minor  // the principal, in the origin currency
	ToAmount          Minor  // delivered, in the destination currency
	Fee               Minor  // in the origin currency, on top of FromAmount
	Rate              string // locked at creation; "" for a same-currency order
	Instructions      OrderInstructions

	Status         OrderStatus
	StatusMessage  string
	ReceivedAmount Minor
	ReceivedAt     int64 // 0 until a deposit is seen
	CollectionID   string
	PayoutID       string

	ExpiresAt   int64 // 0: never (mobile money)
	CreatedAt   int64
	UpdatedAt   int64
	CompletedAt int64

	Steps []OrderStep

	// Attempt is the request attempt that created it (decided.go); never
	// shown to clients.
	Attempt string
}

// Expected is what the customer must send: the principal and the fee.
func (o Order) Expected() Minor { return o.FromAmount + o.Fee }

// OrderPayoutID is the id of an order's payout leg: the order's random part
// under the payout prefix and the destination currency, so the leg's id is
// known without another draw when the funds land in a later command.
func OrderPayoutID(orderID, toCurrency string) string {
	return "pay_" + strings.ToLower(toCurrency) + "_" + strings.TrimPrefix(orderID, "ord_")
}

// isOrderPayoutID reports whether id == OrderPayoutID(orderID, toCurrency),
// without building it: every payout that moves asks.
func isOrderPayoutID(id, orderID, toCurrency string) bool {
	rest, ok := strings.CutPrefix(id, "pay_")
	if !ok || len(rest) < len(toCurrency)+1 {
		return false
	}
	for i := 0; i < len(toCurrency); i++ {
		c := toCurrency[i]
		if c >= utf8.RuneSelf {
			return id == OrderPayoutID(orderID, toCurrency)
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
	EntryOrderFXDebit    EntryType = 32 // the origin-currency balance pays the conversion
	EntryOrderFXCredit   EntryType = 33 // the destination-currency balance receives it
	EntryOrderFXClearing EntryType = 34 // the FX clearing account's side of either
)

// Command kinds of orders. KindDepositOrderRef is KindDepositOrder with the
// caller's reference appended: a deposit without one is still written as
// KindDepositOrder, so its entry reads the same to every build.
const (
	KindCreateOrder     Kind = 32
	KindDepositOrder    Kind = 33
	KindDepositOrderRef Kind = 34
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

var depositOutcomeNames = EnumNames[DepositOutcome]{"", "confirmed", "unconfirmed", "rejected"}

func (o DepositOutcome) String() string { return depositOutcomeNames.String(o) }

// ParseDepositOutcome returns the outcome with the given API name.
func ParseDepositOutcome(name string) (DepositOutcome, bool) {
	return depositOutcomeNames.Parse(name)
}

// CreateOrder records an order awaiting funds, with its instructions. A
// mobile money order creates its collection leg (the prompt) in the same
// Apply.
type CreateOrder struct {
	At                int64
	ID                string
	OrgID             string
	ExternalReference string
	Spec              OrderSpec
	FromMethodType    MethodType
	ToMethodType      MethodType
	FromAmount        Minor
	ToAmount          Minor
	Fee               Minor
	Rate              string
	Instructions      OrderInstructions
	CollectionID      string // mobile money only
}

// DepositOrder is money arriving at a bank or crypto order's instructions:
// the sandbox's simulated deposit, or a provider's notification. With an
// ExternalReference it is idempotent (orderdeposit.go): the reference is
// checked before the order's state, so a retry finds its deposit after the
// funds landed, and long after.
type DepositOrder struct {
	At           int64
	OrgID        string
	OrderID      string
	CollectionID string // the collection leg to create if the funds land
	Amount       Minor  // 0 when confirming: the amount seen
	Outcome      DepositOutcome
	// ExternalReference is the caller's unique string for the deposit,
	// or "": unique per organization, forever (orderDepositKind's lookup).
	ExternalReference string
}

func (*CreateOrder) Kind() Kind { return KindCreateOrder }

// Kind is KindDepositOrderRef when the command carries a reference: its
// encoding is KindDepositOrder's with the reference appended.
func (c *DepositOrder) Kind() Kind {
	if c.ExternalReference != "" {
		return KindDepositOrderRef
	}
	return KindDepositOrder
}

func init() {
	registerFields[CreateOrder](KindCreateOrder)
	registerFields[DepositOrder](KindDepositOrder)
	RegisterCommand(KindDepositOrderRef, func(d *Decoder) Command {
		c := decodeFields[DepositOrder](d)
		c.ExternalReference = d.AppendedRef()
		return c
	})
	registerFieldsSubject[Order](SubjectOrder)
	registerEntryType(EntryOrderFXDebit, "order_fx_debit", "order")
	registerEntryType(EntryOrderFXCredit, "order_fx_credit", "order")
	registerEntryType(EntryOrderFXClearing, "order_fx_clearing", "order")
}

// SubjectOrder tags an order as an event subject.
const SubjectOrder SubjectKind = 7

func (Order) SubjectKind() SubjectKind { return SubjectOrder }

// encodeStoredOrder is an order as the state store holds it: the subject's
// layout, then the attempt that created it, when it has one (appended,
// doc.go).
func encodeStoredOrder(e *Encoder, o *Order) {
	o.fields(e.Codec())
	if o.Attempt != "" {
		e.Str(o.Attempt)
	}
}

func decodeStoredOrder(d *Decoder) Order {
	o := decodeByFields[Order](d)
	if d.More() {
		o.Attempt = d.Str()
	}
	return o
}

// orderKind: an order stays open until it ends (orderOpen). It is found by
// its reference and by each of its legs.
var orderKind = &kind[Order]{
	tag: tagOrder, name: "order",
	id:  func(o *Order) (string, string) { return o.ID, o.OrgID },
	enc: encodeStoredOrder, dec: decodeStoredOrder,
	open: func(o *Order) bool { return !o.Status.Ended() },
	lookups: []lookup[Order]{
		{name: indexReference, ref: func(o *Order) (string, string) { return o.OrgID, o.ExternalReference }},
		{name: indexLeg, key: func(o *Order) string { return o.CollectionID }},
		{name: indexLeg2, key: func(o *Order) string { return o.PayoutID }},
	},
	filters: []filter[Order]{
		{indexStatus, func(o *Order) string { return terminalName(o.Status.Ended(), o.Status.String()) }},
	},
}

// orderBook is the orders, their Expirer, and the deposits made under a
// reference (orderdeposit.go).
type orderBook struct {
	rows     *store[Order]
	deposits *store[OrderDeposit]
	expiry   uint8
}

// registerOrders adds the orders' store and Expirer to a new state.
func (s *State) registerOrders() {
	b := &orderBook{rows: addStore(s, orderKind), deposits: addStore(s, orderDepositKind)}
	b.expiry = s.registerExpirer(Expirer{
		Each: func(s *State, add func(string, int64, string)) {
			for id, r := range s.orders.rows.rows {
				if r.v.Status == OrderAwaitingFunds && r.v.ExpiresAt != 0 {
					add(r.v.OrgID, r.v.ExpiresAt, id)
				}
			}
		},
		Deadline: func(s *State, id string) (string, int64, bool) {
			o, ok := s.orders.rows.get(id)
			return o.OrgID, o.ExpiresAt, ok && o.Status == OrderAwaitingFunds && o.ExpiresAt != 0
		},
		Expire: func(s *State, id string, at int64) {
			o, _ := s.orders.rows.get(id)
			s.moveOrder(&o, s.OrgNow(o.OrgID, at), OrderExpired, "No deposit arrived before the order expired; nothing was charged")
		},
	})
	s.orders = b
}

// save replaces an order.
func (s *State) saveOrder(o Order) { s.orders.rows.put(o) }

// step records a state change of the order or a leg, stamping the order.
// The steps are copied, never appended in place: the stored record (and a
// frozen snapshot's copy of it) shares the old array.
func (o *Order) step(at int64, leg OrderLeg, status uint8, message string) {
	o.UpdatedAt = at
	if len(o.Steps) >= orderStepsMax {
		return
	}
	steps := make([]OrderStep, len(o.Steps), len(o.Steps)+1)
	copy(steps, o.Steps)
	o.Steps = append(steps, OrderStep{At: at, Leg: leg, Status: status, Message: message})
}

// moveOrder changes an order's status, records the step and emits the
// status's event. The caller saves the order afterwards.
func (s *State) moveOrder(o *Order, at int64, to OrderStatus, message string) {
	o.Status = to
	o.StatusMessage = message
	o.step(at, LegOrder, uint8(to), message)
	if to == OrderCompleted {
		o.CompletedAt = at
	}
	s.saveOrder(*o)
	if typ := orderEventType[to]; typ != "" {
		// at is on the organization's clock; emit takes leader time.
		s.emit(s.RealTime(o.OrgID, at), o.OrgID, typ, o.ID, *o)
	}
}

var orderEventType = map[OrderStatus]string{
	OrderAwaitingFunds:         EventOrderAwaitingFunds,
	OrderAwaitingConfirmations: EventOrderAwaitingConfirm,
	OrderFundsReceived:         EventOrderFundsReceived,
	OrderOverpaid:              EventOrderOverpaid,
	OrderUnderpaid:             EventOrderUnderpaid,
	OrderProcessingPayout:      EventOrderProcessing,
	OrderCompleted:             EventOrderCompleted,
	OrderFailed:                EventOrderFailed,
	OrderExpired:               EventOrderExpired,
}

func (c *CreateOrder) Apply(s *State) Result {
	if err := s.checkNew(c.ID, "ord_", c.OrgID); err != nil {
		return Result{Err: err}
	}
	if _, _, err := lookupCurrencyPair(c.Spec.FromCurrency, c.Spec.ToCurrency); err != nil {
		return Result{Err: err}
	}
	if c.FromAmount <= 0 || c.ToAmount <= 0 || c.ToAmount > AmountMax || c.Fee < 0 ||
		c.FromAmount > AmountMax-c.Fee {
		return Result{Err: FieldInvalid("amount", "is out of range")}
	}
	if c.Spec.AmountSide != SideFrom && c.Spec.AmountSide != SideTo {
		return Result{Err: FieldInvalid("amount", "must be given on exactly one side")}
	}
	if (c.Rate == "") != (c.Spec.FromCurrency == c.Spec.ToCurrency) {
		return Result{Err: FieldInvalid("rate", "is required exactly for a cross-currency order")}
	}
	if c.Spec.FromCurrency == c.Spec.ToCurrency && c.FromAmount != c.ToAmount {
		return Result{Err: FieldInvalid("amount", "must be the same on both sides of a same-currency order")}
	}
	if c.ExternalReference == "" {
		return Result{Err: FieldInvalid("externalReference", "is required")}
	}
	if t, ok := instructionsFor[c.FromMethodType]; !ok || t != c.Instructions.Type {
		return Result{Err: FieldInvalid("from.code", "has no deposit instructions of type "+c.Instructions.Type)}
	}
	if t := c.ToMethodType; t != MethodMobileMoney && t != MethodBankTransfer && t != MethodCrypto {
		return Result{Err: FieldInvalid("to.code", "is not a payout method")}
	}
	if o, ok := s.orders.rows.byReference(c.OrgID, c.ExternalReference); ok {
		if o.Spec == c.Spec {
			return Result{Replayed: true, Order: &o}
		}
		return Result{Err: Duplicate("Order", o.ID)}
	}
	if _, ok := s.orders.rows.get(c.ID); ok {
		return Result{Err: Errorf(CodeConflict, "order %s already exists", c.ID)}
	}
	payoutID := OrderPayoutID(c.ID, c.Spec.ToCurrency)
	if _, ok := s.payouts.get(payoutID); ok {
		return Result{Err: Errorf(CodeConflict, "payout %s already exists", payoutID)}
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
		Status:            OrderCreated,
		CreatedAt:         now,
		UpdatedAt:         now,
	}
	o.step(now, LegOrder, uint8(OrderCreated), "")
	var res Result
	if c.FromMethodType == MethodMobileMoney {
		// The prompt is the collection leg: the payer approves the
		// expected amount, the fee is taken from it when it lands.
		if err := CheckID(c.CollectionID, "col_"); err != nil {
			return Result{Err: err}
		}
		r := s.createCollection(&CreateCollection{
			At: c.At, ID: c.CollectionID, OrgID: c.OrgID, ExternalReference: c.ID,
			Spec: CollectionSpec{
				Currency: c.Spec.FromCurrency, Amount: o.Expected(), Method: c.Spec.FromMethod,
				PayerNumber: c.Spec.FromAccountNumber, Narration: c.Spec.Narration, KYC: c.Spec.FromKYC,
			},
			MethodType: MethodMobileMoney, Fee: c.Fee,
		})
		if r.Err != nil {
			return r
		}
		res.Collection = r.Collection
		o.CollectionID = c.CollectionID
		o.step(now, LegCollection, uint8(CollectionPending), "")
	} else {
		o.ExpiresAt = now + OrderExpiryMillis
	}
	s.orders.rows.insert(o)
	if o.ExpiresAt != 0 {
		s.addDeadline(s.orders.expiry, o.OrgID, o.ExpiresAt, o.ID)
	}
	s.moveOrder(&o, now, OrderAwaitingFunds, "")
	res.Order = &o
	return res
}

func (c *DepositOrder) Apply(s *State) Result {
	o, ok := s.orders.rows.owned(c.OrgID, c.OrderID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Order not found")}
	}
	if c.ExternalReference != "" {
		return c.applyWithReference(s, o)
	}
	return c.deposit(s, o)
}

// deposit moves order o by the deposit, whatever its reference.
func (c *DepositOrder) deposit(s *State, o Order) Result {
	if o.FromMethodType == MethodMobileMoney {
		return Result{Err: Errorf(CodeBadRequest,
			"Order %s is paid by a mobile money prompt, not a deposit: the prompt's outcome follows the amount's last two decimal digits", o.ID)}
	}
	if c.Amount < 0 || c.Amount > AmountMax {
		return Result{Err: FieldInvalid("amount", "is out of range")}
	}
	now := s.OrgNow(o.OrgID, c.At)
	switch o.Status {
	case OrderAwaitingFunds:
		if o.ExpiresAt != 0 && now >= o.ExpiresAt {
			return Result{Err: Errorf(CodeBadRequest, "Order %s has expired: its deposit instructions are no longer valid", o.ID)}
		}
		amount := c.Amount
		if amount == 0 {
			amount = o.Expected()
		}
		switch c.Outcome {
		case DepositUnconfirmed:
			if o.FromMethodType != MethodCrypto {
				return Result{Err: FieldInvalid("outcome", "unconfirmed is only for crypto orders: a bank transfer is final when it arrives")}
			}
			o.ReceivedAmount, o.ReceivedAt = amount, now
			s.moveOrder(&o, now, OrderAwaitingConfirmations,
				"Deposit of "+orderMoney(amount, o.Spec.FromCurrency)+" seen on chain; waiting for confirmations")
			return Result{Order: &o}
		case DepositConfirmed:
			return s.landDeposit(&o, c, now, amount)
		case DepositRejected:
			s.moveOrder(&o, now, OrderFailed, "The deposit was rejected; nothing was credited")
			return Result{Order: &o}
		}
	case OrderAwaitingConfirmations:
		switch c.Outcome {
		case DepositConfirmed:
			if c.Amount != 0 && c.Amount != o.ReceivedAmount {
				return Result{Err: FieldInvalid("amount", "must be "+orderMoney(o.ReceivedAmount, o.Spec.FromCurrency)+
					", the deposit awaiting confirmations, or absent")}
			}
			return s.landDeposit(&o, c, now, o.ReceivedAmount)
		case DepositRejected:
			o.ReceivedAmount, o.ReceivedAt = 0, 0
			s.moveOrder(&o, now, OrderFailed, "The deposit was not confirmed on chain; nothing was credited")
			return Result{Order: &o}
		case DepositUnconfirmed:
			return Result{Err: Errorf(CodeBadRequest, "Order %s already has a deposit awaiting confirmations", o.ID)}
		}
	default:
		return Result{Err: Errorf(CodeBadRequest, "Order %s is %s; it takes a deposit only while awaiting funds", o.ID, o.Status)}
	}
	return Result{Err: FieldInvalid("outcome", "must be one of confirmed, unconfirmed, rejected")}
}

func orderMoney(m Minor, currency string) string {
	cur, _ := LookupCurrency(currency)
	return FormatMinor(m, cur) + " " + currency
}

// landDeposit books a bank or crypto deposit as the order's completed
// collection leg and moves the order on.
func (s *State) landDeposit(o *Order, c *DepositOrder, now int64, amount Minor) Result {
	if err := CheckID(c.CollectionID, "col_"); err != nil {
		return Result{Err: err}
	}
	if _, ok := s.collections.get(c.CollectionID); ok {
		return Result{Err: Errorf(CodeConflict, "collection %s already exists", c.CollectionID)}
	}
	if amount <= 0 {
		return Result{Err: FieldInvalid("amount", "must be greater than zero")}
	}
	cur := o.Spec.FromCurrency
	fee := o.Fee
	if amount < o.Expected() {
		fee = 0 // underpaid: no fee for an order that pays nothing out
	}
	account, _ := s.merchantAccount(o.OrgID, cur, c.At, true)
	source := s.systemAccount(PurposeCollectionsSource, cur, c.At)
	if err := s.bookCollection(c.At, c.CollectionID, o.ID, source, account, amount, fee); err != nil {
		return Result{Err: err}
	}
	typ := InstructionsVirtualAccount
	if o.FromMethodType == MethodCrypto {
		typ = "crypto"
	}
	col := Collection{
		ID:    c.CollectionID,
		OrgID: o.OrgID,
		Type:  typ,
		Spec: CollectionSpec{
			Currency: cur, Amount: amount, Method: o.Spec.FromMethod, Narration: o.Spec.Narration, KYC: o.Spec.FromKYC,
		},
		MethodType:        o.FromMethodType,
		Fee:               fee,
		ExternalReference: o.ID,
		AccountNumber:     account.Number,
		Status:            CollectionCompleted,
		CreatedAt:         now,
		UpdatedAt:         now,
		CompletedAt:       now,
	}
	s.insertCollection(col)
	s.emit(c.At, col.OrgID, EventCollectionCompleted, col.ID, col)
	s.emitCredited(c.At, col.AccountNumber)

	o.CollectionID = col.ID
	o.ReceivedAmount, o.ReceivedAt = amount, now
	o.step(now, LegCollection, uint8(CollectionCompleted), "")
	res := Result{Collection: &col}
	res.Payout = s.fundsLanded(o, c.At, now)
	res.Order = o
	return res
}

// fundsLanded moves an order whose collection leg completed: underpaid
// rests; otherwise the order converts (cross-currency) and pays out. at is
// the leader's time (for the legs' records and bookings), now the
// organization's. It returns the payout leg, if one started.
func (s *State) fundsLanded(o *Order, at, now int64) *Payout {
	cur := o.Spec.FromCurrency
	expected := o.Expected()
	switch {
	case o.ReceivedAmount < expected:
		s.moveOrder(o, now, OrderUnderpaid, "Received "+orderMoney(o.ReceivedAmount, cur)+" of "+orderMoney(expected, cur)+
			": the funds are on your "+cur+" balance and no payout was made")
		return nil
	case o.ReceivedAmount > expected:
		s.moveOrder(o, now, OrderOverpaid, "Received "+orderMoney(o.ReceivedAmount, cur)+", "+
			orderMoney(o.ReceivedAmount-expected, cur)+" more than expected: the excess stays on your "+cur+" balance")
	default:
		s.moveOrder(o, now, OrderFundsReceived, "")
	}
	message := o.StatusMessage
	p, err := s.startOrderPayout(o, at)
	if err != nil {
		s.moveOrder(o, now, OrderFailed, "The payout could not start: "+err.Message+"; the funds are on your "+cur+" balance")
		return nil
	}
	o.PayoutID = p.ID
	o.step(now, LegPayout, uint8(PayoutPending), "")
	s.moveOrder(o, now, OrderProcessingPayout, message)
	return p
}

// startOrderPayout converts the principal at the locked rate (for a
// cross-currency order) and creates the payout leg, in one booking. The
// payout charges no fee: the order's fee paid for it.
func (s *State) startOrderPayout(o *Order, at int64) (*Payout, *Error) {
	from, to := o.Spec.FromCurrency, o.Spec.ToCurrency
	fromAccount, _ := s.merchantAccount(o.OrgID, from, at, true)
	if fromAccount.Available() < o.FromAmount {
		return nil, InsufficientFunds(fromAccount.Available(), o.FromAmount, from)
	}
	toAccount, _ := s.merchantAccount(o.OrgID, to, at, true)
	var postings []Posting
	if from != to {
		postings = append(postings,
			Posting{fromAccount.Number, EntryOrderFXDebit, -o.FromAmount},
			Posting{s.systemAccount(PurposeFXClearing, from, at), EntryOrderFXClearing, o.FromAmount},
			Posting{s.systemAccount(PurposeFXClearing, to, at), EntryOrderFXClearing, -o.ToAmount},
			Posting{toAccount.Number, EntryOrderFXCredit, o.ToAmount})
	}
	if len(postings) > 0 {
		if _, err := s.book(at, o.ID, o.ExternalReference, postings); err != nil {
			return nil, err
		}
	}
	spec := PayoutSpec{
		Currency: to, Amount: o.ToAmount, AmountSide: SideTo, Method: o.Spec.ToMethod,
		Narration: o.Spec.Narration, Metadata: o.Spec.Metadata, FromKYC: o.Spec.FromKYC, ToKYC: o.Spec.ToKYC,
	}
	if o.ToMethodType == MethodCrypto {
		spec.Address, spec.Tag = o.Spec.ToAccountNumber, o.Spec.ToTag
	} else {
		spec.AccountNumber = o.Spec.ToAccountNumber
	}
	p := Payout{
		ID:                OrderPayoutID(o.ID, to),
		OrgID:             o.OrgID,
		AccountNumber:     toAccount.Number,
		Spec:              spec,
		MethodType:        o.ToMethodType,
		ExternalReference: o.ID,
		Status:            PayoutPending,
		CreatedAt:         s.OrgNow(o.OrgID, at),
		UpdatedAt:         s.OrgNow(o.OrgID, at),
	}
	postings = []Posting{
		{toAccount.Number, EntryPayoutDebit, -o.ToAmount},
		{s.systemAccount(PurposePayoutsClearing, to, at), EntryPayoutCredit, o.ToAmount},
	}
	if _, err := s.book(at, p.ID, o.ID, postings); err != nil {
		// Cannot happen once the conversion booked (the credit covers the
		// debit); a failure here would leave the conversion without its
		// payout, so the ledger stops rather than go on.
		panic("ledger: order payout booking failed after its conversion: " + err.Message)
	}
	s.insertPayout(p)
	return &p, nil
}

// orderCollectionSettled follows a mobile money order's collection leg when
// it settles. It is called by settleCollection in the same Apply.
func (s *State) orderCollectionSettled(col Collection, at int64) {
	if !strings.HasPrefix(col.ExternalReference, "ord_") {
		return // an order's collection carries the order's id as its reference
	}
	o, ok := s.orders.rows.find(indexLeg, col.ID)
	if !ok || o.Status != OrderAwaitingFunds {
		return
	}
	now := s.OrgNow(o.OrgID, at)
	if col.Status != CollectionCompleted {
		o.step(now, LegCollection, uint8(col.Status), col.StatusMessage)
		s.moveOrder(&o, now, OrderFailed, "The payer's mobile money prompt failed: "+orderFirstOf(col.StatusMessage, "no reason given"))
		return
	}
	o.ReceivedAmount, o.ReceivedAt = col.Spec.Amount, now
	o.step(now, LegCollection, uint8(col.Status), col.StatusMessage)
	s.fundsLanded(&o, at, now)
}

// orderPayoutMoved follows an order's payout leg: the order records the
// leg's step and, when the payout settles, completes or fails with it. It
// is called by markPayoutProcessing and settlePayout in the same Apply.
func (s *State) orderPayoutMoved(p Payout, at int64) {
	if !isOrderPayoutID(p.ID, p.ExternalReference, p.Spec.Currency) {
		return // an order's payout is named after the order, its reference
	}
	o, ok := s.orders.rows.find(indexLeg2, p.ID)
	if !ok || o.Status != OrderProcessingPayout {
		return
	}
	now := s.OrgNow(o.OrgID, at)
	o.step(now, LegPayout, uint8(p.Status), p.StatusMessage)
	switch p.Status {
	case PayoutCompleted:
		s.moveOrder(&o, now, OrderCompleted, "")
	case PayoutFailed:
		s.moveOrder(&o, now, OrderFailed, "The payout failed: "+orderFirstOf(p.StatusMessage, "no reason given")+
			"; its amount was refunded to your "+p.Spec.Currency+" balance")
	default:
		s.saveOrder(o)
	}
}

func orderFirstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Order returns an organization's order by id.
func (r *Reader) Order(orgID, id string) (Order, bool) { return readOwned(r, orderKind, orgID, id) }

// OrderByReference returns an organization's order by its externalReference.
func (r *Reader) OrderByReference(orgID, ref string) (Order, bool) {
	return readByReference(r, orderKind, orgID, ref)
}

// OrderOfLeg returns the order whose collection or payout leg has id.
func (r *Reader) OrderOfLeg(id string) (Order, bool) {
	if o, ok := readFind(r, orderKind, indexLeg, id); ok {
		return o, true
	}
	return readFind(r, orderKind, indexLeg2, id)
}

// OrderFilter selects orders in a list; zero fields match everything.
type OrderFilter struct {
	Status            OrderStatus
	Currency          string   // origin or destination
	Origins           []string // any of these origin currencies
	Destinations      []string // any of these destination currencies
	CreatedFrom       int64    // unix ms, inclusive; 0 for no bound
	CreatedBefore     int64    // unix ms, exclusive; 0 for no bound
	ExternalReference string
}

// Orders lists an organization's orders newest first.
func (r *Reader) Orders(orgID string, f OrderFilter, before Cursor, limit int) Page[Order] {
	k := orderKind
	if f.ExternalReference != "" {
		var p Page[Order]
		if o, ok := r.OrderByReference(orgID, f.ExternalReference); ok && before == CursorStart {
			f.ExternalReference = ""
			if f.keep(&o) {
				p.Items = append(p.Items, o)
			}
		}
		return p
	}
	prefix := k.listPrefix(orgID)
	switch {
	case f.Status.Ended():
		prefix = k.filterPrefix(indexStatus, orgID, f.Status.String())
	case f.Status != 0:
		prefix = k.openPrefix(orgID)
	}
	return readPage(r, k, prefix, before, limit, f.keep)
}

func (f *OrderFilter) keep(o *Order) bool {
	return (f.Status == 0 || o.Status == f.Status) &&
		(f.Currency == "" || o.Spec.FromCurrency == f.Currency || o.Spec.ToCurrency == f.Currency) &&
		(len(f.Origins) == 0 || slices.Contains(f.Origins, o.Spec.FromCurrency)) &&
		(len(f.Destinations) == 0 || slices.Contains(f.Destinations, o.Spec.ToCurrency)) &&
		(f.CreatedFrom == 0 || o.CreatedAt >= f.CreatedFrom) &&
		(f.CreatedBefore == 0 || o.CreatedAt < f.CreatedBefore) &&
		(f.ExternalReference == "" || o.ExternalReference == f.ExternalReference)
}

// Codec: commands and the stored record.

func (s *OrderSpec) fields(f *Codec) {
	f.Str(&s.FromMethod)
	f.Str(&s.FromCurrency)
	f.Str(&s.FromAccountNumber)
	f.Str(&s.FromKYC)
	f.Str(&s.ToMethod)
	f.Str(&s.ToCurrency)
	f.Str(&s.ToAccountNumber)
	f.Str(&s.ToTag)
	f.Str(&s.ToKYC)
	FieldMinor(f, &s.Amount)
	FieldU8(f, &s.AmountSide)
	f.Str(&s.Narration)
	f.Str(&s.Metadata)
}

func (i *OrderInstructions) fields(f *Codec) {
	f.Str(&i.Type)
	f.Str(&i.Chain)
	f.Str(&i.Address)
	f.Str(&i.Tag)
	f.Str(&i.Bank)
	f.Str(&i.AccountNumber)
	f.Str(&i.AccountName)
}

func (c *CreateOrder) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.ExternalReference)
	c.Spec.fields(f)
	FieldMethodType(f, &c.FromMethodType)
	FieldMethodType(f, &c.ToMethodType)
	FieldMinor(f, &c.FromAmount)
	FieldMinor(f, &c.ToAmount)
	FieldMinor(f, &c.Fee)
	f.Str(&c.Rate)
	c.Instructions.fields(f)
	f.Str(&c.CollectionID)
}

func (c *CreateOrder) Encode(e *Encoder) { c.fields(e.Codec()) }

// fields are DepositOrder's without its reference, which KindDepositOrderRef
// appends.
func (c *DepositOrder) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID)
	f.Str(&c.OrderID)
	f.Str(&c.CollectionID)
	FieldMinor(f, &c.Amount)
	FieldU8(f, &c.Outcome)
}

func (c *DepositOrder) Encode(e *Encoder) {
	c.fields(e.Codec())
	if c.ExternalReference != "" {
		e.Str(c.ExternalReference)
	}
}

// fields are an order as an event's subject holds it; the store appends
// its attempt (encodeStoredOrder).
func (o *Order) fields(f *Codec) {
	f.Str(&o.ID)
	f.Str(&o.OrgID)
	f.Str(&o.ExternalReference)
	o.Spec.fields(f)
	FieldMethodType(f, &o.FromMethodType)
	FieldMethodType(f, &o.ToMethodType)
	FieldMinor(f, &o.FromAmount)
	FieldMinor(f, &o.ToAmount)
	FieldMinor(f, &o.Fee)
	f.Str(&o.Rate)
	o.Instructions.fields(f)
	FieldU8(f, &o.Status)
	f.Str(&o.StatusMessage)
	FieldMinor(f, &o.ReceivedAmount)
	f.Varint(&o.ReceivedAt)
	f.Str(&o.CollectionID)
	f.Str(&o.PayoutID)
	f.Varint(&o.ExpiresAt)
	f.Varint(&o.CreatedAt)
	f.Varint(&o.UpdatedAt)
	f.Varint(&o.CompletedAt)
	FieldSlice(f, &o.Steps, orderStepsMax, "order timeline steps", func(f *Codec, st *OrderStep) {
		f.Varint(&st.At)
		FieldU8(f, &st.Leg)
		FieldU8(f, &st.Status)
		f.Str(&st.Message)
	})
}
