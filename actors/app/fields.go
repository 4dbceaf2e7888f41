package app

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"payments/ledger"
)

// Fields gathers every field error of a request, so that the caller fixes
// them all at once. The front end checks the shape of a request with it,
// and the operations check with it what depends on the catalogue or on
// state (a destination by its method's type): one wording for both.
type Fields []ledger.FieldError

// Add records that field is wrong, in message's words.
func (p *Fields) Add(field, message string) {
	*p = append(*p, ledger.FieldError{Field: field, Message: message})
}

// Err is the validation error of the fields gathered, nil when there are
// none: the first one's message, with the count of the others.
func (p Fields) Err() *ledger.Error {
	if len(p) == 0 {
		return nil
	}
	msg := "Request validation failed: " + p[0].Field + " " + p[0].Message
	if len(p) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(p)-1)
	}
	return &ledger.Error{Code: ledger.CodeValidation, Message: msg, Fields: p}
}

// Text checks an optional string: at most maxLen characters of printable
// text. required makes absence (nil or "") an error too.
func (p *Fields) Text(field string, v *string, required bool, maxLen int) string {
	if v == nil || *v == "" {
		if required {
			p.Add(field, "is required")
		}
		return ""
	}
	s := *v
	if !utf8.ValidString(s) {
		p.Add(field, "must be valid UTF-8")
		return ""
	}
	if n := utf8.RuneCountInString(s); n > maxLen {
		p.Add(field, fmt.Sprintf("must be at most %d characters", maxLen))
		return ""
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			p.Add(field, "must not contain control characters")
			return ""
		}
	}
	return s
}

// Phone numbers, in digits with the country code.
const (
	phoneDigitsMin = 8
	phoneDigitsMax = 15
)

// Phone checks a phone number: the country code and the subscriber number,
// digits only, with or without a leading +. It returns the number as it is
// stored, digits only.
func (p *Fields) Phone(field, s string) string {
	s = strings.TrimPrefix(s, "+")
	if len(s) < phoneDigitsMin || len(s) > phoneDigitsMax {
		p.Add(field, fmt.Sprintf("must be %d to %d digits", phoneDigitsMin, phoneDigitsMax))
		return s
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			p.Add(field, "must contain digits only, with the country code and an optional leading +")
			return s
		}
	}
	return s
}

// Alnum checks a bank account number: letters and digits, minLen to
// maxLen of them.
func (p *Fields) Alnum(field, s string, minLen, maxLen int) {
	if len(s) < minLen || len(s) > maxLen {
		p.Add(field, fmt.Sprintf("must be %d to %d characters", minLen, maxLen))
		return
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			p.Add(field, "must contain letters and digits only")
			return
		}
	}
}

// Amount reads an amount's text in cur's minor units.
func (p *Fields) Amount(field string, a Amount, cur ledger.Currency) ledger.Minor {
	m, err := a.In(cur)
	if err != nil {
		p.Add(field, err.Message)
		return 0
	}
	return m
}

// Amount is an amount as the request wrote it: the literal text of a JSON
// number, or the contents of a JSON string. Read in a currency, it is a
// positive number of minor units with no more decimal places than the
// currency has; a string is a plain decimal ("150.00"), without an
// exponent.
type Amount struct {
	Text   string
	String bool // it came as a JSON string
	Set    bool // given (null is as if absent)
}

// In reads the amount in cur's minor units.
func (a Amount) In(cur ledger.Currency) (ledger.Minor, *ledger.Error) {
	if a.String && strings.ContainsAny(a.Text, "eE") {
		return 0, &ledger.Error{Code: ledger.CodeValidation, Message: "must be a positive decimal amount such as \"150.00\""}
	}
	m, err := ledger.ParseAmount(a.Text, cur)
	if err != nil {
		return 0, ledger.AsError(err)
	}
	return m, nil
}
