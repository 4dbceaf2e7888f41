package momo

import (
	"fmt"
	"strconv"
	"strings"

	"payments/rails/internal/outbound"
)

// formatAmount writes minor units of a currency with exp decimal places as
// MoMo's decimal string, exactly: 1250 with exp 2 is "12.5", 1200 is "12".
func formatAmount(minor int64, exp int) (string, error) {
	if minor <= 0 {
		return "", fmt.Errorf("amount must be positive, got %d minor units", minor)
	}
	if exp < 0 || exp > 18 {
		return "", fmt.Errorf("unsupported number of decimal places %d", exp)
	}
	digits := strconv.FormatInt(minor, 10)
	if exp == 0 {
		return digits, nil
	}
	if len(digits) <= exp {
		digits = strings.Repeat("0", exp-len(digits)+1) + digits
	}
	whole, frac := digits[:len(digits)-exp], strings.TrimRight(digits[len(digits)-exp:], "0")
	if frac == "" {
		return whole, nil
	}
	return whole + "." + frac, nil
}

// parseAmount reads a MoMo decimal string into minor units with exp
// decimal places; more significant decimals than exp is an error, never a
// rounding.
func parseAmount(s string, exp int) (int64, error) {
	s = strings.TrimSpace(s)
	whole, frac, _ := strings.Cut(s, ".")
	if !outbound.Digits(whole) || (frac != "" && !outbound.Digits(frac)) {
		return 0, fmt.Errorf("amount %q is not a decimal number", s)
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > exp {
		return 0, fmt.Errorf("amount %q has more than %d decimal places", s, exp)
	}
	frac += strings.Repeat("0", exp-len(frac))
	n := strings.TrimLeft(whole+frac, "0")
	if n == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("amount %q is out of range", s)
	}
	return v, nil
}
