package ledger

import (
	"errors"
	"math/bits"
)

// MethodType is a payment method's family: how money reaches the other
// side. Its values are frozen. Commands and records store a method type
// as the string String returns, the names stored before the type existed
// ("bank" for a bank transfer), so every encoding is what it was; the API
// names it as the reference does (APIName: "bank_transfer").
type MethodType uint8

// Method types.
const (
	MethodTypeNone     MethodType = iota // none: stored ""
	MethodMobileMoney                    // "mobile_money"
	MethodBankTransfer                   // "bank"
	MethodCrypto                         // "crypto"
	MethodWallet                         // "wallet"
	// methodVirtualAccount is the method type a collection booked from a
	// deposit into a virtual account stores: its collection type. It is a
	// bank transfer, kept apart for the encoding.
	methodVirtualAccount // "virtual_account"
)

var methodTypeStored = [...]string{"", "mobile_money", "bank", "crypto", "wallet", "virtual_account"}

var methodTypeAPI = [...]string{"", "mobile_money", "bank_transfer", "crypto", "wallet", "bank_transfer"}

// String is the method type as commands and records store it.
func (t MethodType) String() string {
	if int(t) < len(methodTypeStored) {
		return methodTypeStored[t]
	}
	return "unknown"
}

// APIName is the method type as the API shows it: mobile_money,
// bank_transfer, crypto or wallet.
func (t MethodType) APIName() string {
	if int(t) < len(methodTypeAPI) {
		return methodTypeAPI[t]
	}
	return "unknown"
}

// Valid reports whether t is the type of a payment method (not none).
func (t MethodType) Valid() bool { return t >= MethodMobileMoney && t <= MethodWallet }

// MethodTypeOf reads a stored method type ("bank"); ok is false for a
// string no method type is stored as.
func MethodTypeOf(stored string) (MethodType, bool) {
	for i, s := range methodTypeStored {
		if s == stored {
			return MethodType(i), true
		}
	}
	return MethodTypeNone, false
}

// ParseMethodType reads a method type by its API name ("bank_transfer").
func ParseMethodType(name string) (MethodType, bool) {
	for t := MethodMobileMoney; t <= MethodWallet; t++ {
		if methodTypeAPI[t] == name {
			return t, true
		}
	}
	return MethodTypeNone, false
}

var errMethodType = errors.New("ledger: unknown method type")

func encodeMethodType(e *Encoder, t MethodType) { e.Str(t.String()) }

// FieldMethodType reads or writes a method type: its stored name.
func FieldMethodType(f *Codec, p *MethodType) {
	if d := f.Decoder(); d != nil {
		*p = decodeMethodType(d)
		return
	}
	encodeMethodType(f.Encoder(), *p)
}

func decodeMethodType(d *Decoder) MethodType {
	b := d.RawBytes()
	if d.Err() != nil {
		return MethodTypeNone
	}
	switch string(b) {
	case "":
		return MethodTypeNone
	case "mobile_money":
		return MethodMobileMoney
	case "bank":
		return MethodBankTransfer
	case "crypto":
		return MethodCrypto
	case "wallet":
		return MethodWallet
	case "virtual_account":
		return methodVirtualAccount
	}
	d.Fail(errMethodType)
	return MethodTypeNone
}

// FeeSchedule is a fee as data: basis points of the principal, rounded
// half up to a whole minor unit (basisPointsHalfUp, the one rounding rule
// for percentage fees). The catalogue of methods holds each method's
// schedule per direction (rails/catalogue.json); the operation that prices
// a movement reads it and stamps the fee in its command, so that a
// schedule changed later never alters a replay, and Apply books the fee it
// is given.
type FeeSchedule struct {
	BasisPoints int64 // 0 to 10 000
}

// Fee is the fee on a principal of amount.
func (s FeeSchedule) Fee(amount Minor) Minor { return basisPointsHalfUp(amount, s.BasisPoints) }

// Split divides an amount the caller fixed as everything that moves (a
// payout's from.amount, debited; an order's from.amount, sent by the
// customer) into the principal and the fee: the largest principal whose
// fee fits beside it, the rest the fee, so that principal + fee is exactly
// total. Where the fee's rounding skips a value, the fee takes the odd
// minor unit. total must be positive.
func (s FeeSchedule) Split(total Minor) (principal, fee Minor) {
	// principal ≈ total × 10000 / (10000 + bps), in 128 bits (total may be
	// up to AmountMax), then corrected by a step or two for rounding.
	hi, lo := bits.Mul64(uint64(total), 10_000)
	q, _ := bits.Div64(hi, lo, uint64(10_000+s.BasisPoints))
	principal = Minor(q)
	for principal < total && principal+1+s.Fee(principal+1) <= total {
		principal++
	}
	for principal > 0 && principal+s.Fee(principal) > total {
		principal--
	}
	return principal, total - principal
}
