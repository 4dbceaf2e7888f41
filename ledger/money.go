package ledger

import (
	"math/bits"
	"strconv"

	"github.com/cockroachdb/apd/v3"
)

// Minor is an amount in a currency's minor units: pesewas for GHS, whole
// francs for XOF, millionths for USDT. Inside the ledger every amount is a
// Minor, so arithmetic is exact integer arithmetic; decimals exist only at the
// edge, where ParseAmount and FormatMinor convert through apd.
type Minor int64

// AmountMax is the largest amount a single request may carry, in minor units.
// It leaves room for balances to sum many such amounts inside an int64.
const AmountMax Minor = 1_000_000_000_000_000 // 10^15

// Currency describes one currency the service holds balances in.
type Currency struct {
	Code     string
	Name     string
	Decimals int  // digits after the decimal point in the minor unit
	Crypto   bool // a stablecoin held on a chain rather than a bank rail
}

// currencies is the catalogue of currencies, by ISO 4217 code (or ticker for
// stablecoins). Decimal places follow ISO 4217 for fiat and the token's
// on-chain precision for stablecoins.
var currencies = map[string]Currency{
	"AOA":  {"AOA", "Angolan kwanza", 2, false},
	"BIF":  {"BIF", "Burundian franc", 0, false},
	"BWP":  {"BWP", "Botswana pula", 2, false},
	"CDF":  {"CDF", "Congolese franc", 2, false},
	"EGP":  {"EGP", "Egyptian pound", 2, false},
	"ETB":  {"ETB", "Ethiopian birr", 2, false},
	"EUR":  {"EUR", "Euro", 2, false},
	"GBP":  {"GBP", "Pound sterling", 2, false},
	"GHS":  {"GHS", "Ghanaian cedi", 2, false},
	"GMD":  {"GMD", "Gambian dalasi", 2, false},
	"GNF":  {"GNF", "Guinean franc", 0, false},
	"KES":  {"KES", "Kenyan shilling", 2, false},
	"LRD":  {"LRD", "Liberian dollar", 2, false},
	"MAD":  {"MAD", "Moroccan dirham", 2, false},
	"MWK":  {"MWK", "Malawian kwacha", 2, false},
	"MZN":  {"MZN", "Mozambican metical", 2, false},
	"NAD":  {"NAD", "Namibian dollar", 2, false},
	"NGN":  {"NGN", "Nigerian naira", 2, false},
	"RWF":  {"RWF", "Rwandan franc", 0, false},
	"SLE":  {"SLE", "Sierra Leonean leone", 2, false},
	"TZS":  {"TZS", "Tanzanian shilling", 2, false},
	"UGX":  {"UGX", "Ugandan shilling", 0, false},
	"USD":  {"USD", "United States dollar", 2, false},
	"XAF":  {"XAF", "Central African CFA franc", 0, false},
	"XOF":  {"XOF", "West African CFA franc", 0, false},
	"ZAR":  {"ZAR", "South African rand", 2, false},
	"ZMW":  {"ZMW", "Zambian kwacha", 2, false},
	"USDC": {"USDC", "USD Coin", 6, true},
	"USDT": {"USDT", "Tether USD", 6, true},
	"EURC": {"EURC", "Euro Coin", 6, true},
}

// LookupCurrency returns the currency with the given code. Codes are upper
// case; the lookup does not fold case, so "ghs" is unknown.
func LookupCurrency(code string) (Currency, bool) {
	c, ok := currencies[code]
	return c, ok
}

// lookupCurrencyPair looks up both sides of a conversion (a quote, a
// cross-currency payout or order), reporting the first unsupported one
// against its request field, from.currency before to.currency.
func lookupCurrencyPair(fromCode, toCode string) (from, to Currency, err *Error) {
	from, ok := LookupCurrency(fromCode)
	if !ok {
		return from, to, FieldInvalid("from.currency", "is not a supported currency")
	}
	if to, ok = LookupCurrency(toCode); !ok {
		return from, to, FieldInvalid("to.currency", "is not a supported currency")
	}
	return from, to, nil
}

// amountContext converts request amounts to minor units. It traps Inexact, so
// a value with more significant decimals than the currency allows is an error
// instead of being rounded; trailing zeros ("10.500" for GHS) are exact and
// accepted.
var amountContext = apd.Context{
	Precision:   40,
	MaxExponent: apd.MaxExponent,
	MinExponent: apd.MinExponent,
	Traps:       apd.DefaultTraps | apd.Inexact,
	Rounding:    apd.RoundHalfEven,
}

// amountTextLenMax bounds the literal an amount is parsed from, so a hostile
// number ("1e999999999", a thousand digits) cannot make parsing expensive.
const amountTextLenMax = 40

// ParseAmount converts the literal text of a positive decimal amount into the
// currency's minor units. The text is a JSON number literal or the contents of
// a decimal string; it never passes through float64. Zero, negative, NaN,
// infinite, too precise and too large amounts are errors whose message is
// written for the API caller.
func ParseAmount(text string, cur Currency) (Minor, error) {
	if text == "" {
		return 0, Errorf(CodeValidation, "must be a positive decimal amount")
	}
	if len(text) > amountTextLenMax {
		return 0, Errorf(CodeValidation, "must be at most %d characters", amountTextLenMax)
	}
	if text[0] == '-' && isNumberLiteral(text[1:]) {
		return 0, Errorf(CodeValidation, "must be greater than zero")
	}
	if !isNumberLiteral(text) {
		return 0, Errorf(CodeValidation, "must be a positive decimal amount such as \"150.00\"")
	}
	var d apd.Decimal
	if _, _, err := d.SetString(text); err != nil {
		return 0, Errorf(CodeValidation, "must be a positive decimal amount such as \"150.00\"")
	}
	if d.Form != apd.Finite || d.Negative || d.IsZero() {
		return 0, Errorf(CodeValidation, "must be greater than zero")
	}
	// Bound the magnitude before quantizing: a huge exponent would make
	// Quantize build a huge coefficient, a tiny one shift by a huge power.
	if d.Exponent < -2*amountTextLenMax {
		return 0, Errorf(CodeValidation, "has more than %d decimal places, the precision of %s", cur.Decimals, cur.Code)
	}
	if digits := int64(d.NumDigits()) + int64(d.Exponent); digits > 19 {
		return 0, Errorf(CodeValidation, "must be at most %s", FormatMinor(AmountMax, cur))
	}
	var q apd.Decimal
	if _, err := amountContext.Quantize(&q, &d, -int32(cur.Decimals)); err != nil {
		return 0, Errorf(CodeValidation, "has more than %d decimal places, the precision of %s", cur.Decimals, cur.Code)
	}
	if !q.Coeff.IsInt64() {
		return 0, Errorf(CodeValidation, "must be at most %s", FormatMinor(AmountMax, cur))
	}
	minor := Minor(q.Coeff.Int64())
	if minor <= 0 {
		return 0, Errorf(CodeValidation, "must be greater than zero")
	}
	if minor > AmountMax {
		return 0, Errorf(CodeValidation, "must be at most %s", FormatMinor(AmountMax, cur))
	}
	return minor, nil
}

// isNumberLiteral reports whether s is an unsigned JSON number literal:
// digits, an optional fraction and an optional exponent. It rejects what apd
// would otherwise accept: "NaN", "Infinity", signs, spaces, ".5".
func isNumberLiteral(s string) bool {
	i := 0
	digits := func() bool {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > start
	}
	if !digits() {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}

// FormatMinor renders an amount as a decimal string with exactly the
// currency's decimal places: 15000 GHS → "150.00", -5 GHS → "-0.05",
// 1500 XOF → "1500".
func FormatMinor(m Minor, cur Currency) string {
	return string(AppendMinor(nil, m, cur))
}

// AppendMinor appends FormatMinor(m, cur) to dst.
func AppendMinor(dst []byte, m Minor, cur Currency) []byte {
	neg := m < 0
	u := uint64(m)
	if neg {
		u = uint64(-m)
		dst = append(dst, '-')
	}
	var buf [24]byte
	digits := strconv.AppendUint(buf[:0], u, 10)
	d := cur.Decimals
	if d == 0 {
		return append(dst, digits...)
	}
	for len(digits) <= d {
		digits = append([]byte{'0'}, digits...)
	}
	whole := len(digits) - d
	dst = append(dst, digits[:whole]...)
	dst = append(dst, '.')
	return append(dst, digits[whole:]...)
}

// addMinor adds two amounts and reports whether the sum overflowed.
func addMinor(a, b Minor) (Minor, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

// basisPointsHalfUp returns amount × bps / 10 000, rounded half up to a whole
// minor unit. It is the one rounding rule for percentage fees. amount and bps
// are non-negative; the product is computed in 128 bits.
func basisPointsHalfUp(amount Minor, bps int64) Minor {
	hi, lo := bits.Mul64(uint64(amount), uint64(bps))
	lo, carry := bits.Add64(lo, 5_000, 0)
	hi += carry
	q, _ := bits.Div64(hi, lo, 10_000)
	return Minor(q)
}
