package ledger

import (
	"errors"
	"fmt"
)

// Code is a stable, machine-readable error code. Clients branch on it, so a
// code is never renamed or reused for another meaning. The HTTP status of
// each code is decided in one table in package http.
type Code string

// The error catalogue. Codes are the spec's where the spec names one.
const (
	CodeValidation        Code = "validation_error"       // the request is malformed or a field is invalid
	CodeBadRequest        Code = "bad_request"            // well-formed, but not acceptable in the resource's state
	CodeUnauthorized      Code = "unauthorized"           // missing or invalid key, or key and stack mismatch
	CodeForbidden         Code = "forbidden"              // the key lacks the scope the endpoint needs
	CodeNotFound          Code = "not_found"              // no such resource in the caller's organization
	CodeMethodNotAllowed  Code = "method_not_allowed"     // the path exists, the method does not
	CodeDuplicate         Code = "duplicate"              // a reference reused with different details
	CodeConflict          Code = "conflict"               // a simulation reference reused for different funding
	CodeInsufficientFunds Code = "insufficient_funds"     // the balance does not cover amount plus fee
	CodeRateLimited       Code = "rate_limited"           // the key exceeded its request rate
	CodeOutcomeUnknown    Code = "outcome_unknown"        // leadership was lost mid-commit; retry with the same reference
	CodeUnavailable       Code = "service_unavailable"    // no leader, or the node is not ready; nothing was done
	CodeInternal          Code = "internal_error"         // a bug; nothing is assumed to have happened
	CodeRateUnavailable   Code = "rate_unavailable"       // no exchange rate can be had right now; nothing was done
	CodeBalanceLimit      Code = "balance_limit_exceeded" // the balance would pass the most an account holds; nothing was done
	CodeSpendCapExceeded  Code = "spend_cap_exceeded"     // the debit would pass one of the key's spend caps; nothing was done
)

// Error is the typed error of the service: a code, a message written for the
// API caller, and the details some codes carry. It is a value every layer can
// pass along; package http renders it as {error, message, details, requestId}.
type Error struct {
	Code    Code
	Message string

	Fields     []FieldError // validation_error: which fields are wrong
	ExistingID string       // duplicate: the resource that owns the reference

	// insufficient_funds: what the balance has and what the request needs.
	Available Minor
	Required  Minor
	Currency  string

	RetryAfterSeconds int // rate_limited

	SpendCap *SpendCapDetails // spend_cap_exceeded (package keycontrols)
}

// FieldError names one invalid request field by its dotted path.
type FieldError struct {
	Field   string
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return string(e.Code)
	}
	return string(e.Code) + ": " + e.Message
}

// Is matches any *Error with the same code, so callers can write
// errors.Is(err, ledger.ErrNotFound).
func (e *Error) Is(target error) bool {
	var t *Error
	if !errors.As(target, &t) {
		return false
	}
	return t.Code == e.Code
}

// Sentinels for errors.Is.
var (
	ErrValidation        = &Error{Code: CodeValidation}
	ErrNotFound          = &Error{Code: CodeNotFound}
	ErrDuplicate         = &Error{Code: CodeDuplicate}
	ErrConflict          = &Error{Code: CodeConflict}
	ErrInsufficientFunds = &Error{Code: CodeInsufficientFunds}
)

func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldInvalid is a validation_error about one field.
func FieldInvalid(field, message string) *Error {
	return &Error{
		Code:    CodeValidation,
		Message: "Request validation failed: " + field + " " + message,
		Fields:  []FieldError{{Field: field, Message: message}},
	}
}

// AsError returns err as an *Error, or an internal_error wrapping its text.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternal, Message: "internal error"}
}

// Duplicate is the error for a reference reused with different details;
// resource is "Payout", "Collection", ….
func Duplicate(resource, existingID string) *Error {
	return &Error{
		Code:       CodeDuplicate,
		Message:    resource + " with this externalReference already exists",
		ExistingID: existingID,
	}
}

// InsufficientFunds is the error for a debit the balance does not cover.
func InsufficientFunds(available, required Minor, currency string) *Error {
	return &Error{
		Code:      CodeInsufficientFunds,
		Message:   "Insufficient funds: the available balance does not cover the amount plus fee",
		Available: available,
		Required:  required,
		Currency:  currency,
	}
}

// BalanceLimit is the error for a booking that would take a balance past
// the most an account can hold (or, for the other side of a top-up, below
// the least).
func BalanceLimit(currency string) *Error {
	return &Error{
		Code:     CodeBalanceLimit,
		Message:  "The " + currency + " balance cannot hold this amount: it would pass the most an account can hold",
		Currency: currency,
	}
}

// FundingConflict is the error for a sandbox funding reference reused for a
// different credit.
func FundingConflict() *Error {
	return &Error{
		Code:    CodeConflict,
		Message: "externalReference was already used for different balance funding",
	}
}
