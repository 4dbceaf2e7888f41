package core

import (
	"errors"
	"strconv"

	"github.com/valyala/fasthttp"

	"payments/actors"
	"payments/ledger"
)

// statusOf is the one table from error codes to HTTP statuses.
var statusOf = map[ledger.Code]int{
	ledger.CodeValidation:        fasthttp.StatusBadRequest,
	ledger.CodeBadRequest:        fasthttp.StatusBadRequest,
	ledger.CodeUnauthorized:      fasthttp.StatusUnauthorized,
	ledger.CodeForbidden:         fasthttp.StatusForbidden,
	ledger.CodeNotFound:          fasthttp.StatusNotFound,
	ledger.CodeMethodNotAllowed:  fasthttp.StatusMethodNotAllowed,
	ledger.CodeDuplicate:         fasthttp.StatusConflict,
	ledger.CodeConflict:          fasthttp.StatusConflict,
	ledger.CodeInsufficientFunds: fasthttp.StatusUnprocessableEntity,
	ledger.CodeRateLimited:       fasthttp.StatusTooManyRequests,
	ledger.CodeOutcomeUnknown:    fasthttp.StatusServiceUnavailable,
	ledger.CodeUnavailable:       fasthttp.StatusServiceUnavailable,
	ledger.CodeInternal:          fasthttp.StatusInternalServerError,
	ledger.CodeRateUnavailable:   fasthttp.StatusServiceUnavailable,
	ledger.CodeSpendCapExceeded:  fasthttp.StatusForbidden,
}

// retryAfterOf is the Retry-After, in seconds, of every code answered 503
// (a test holds each such code to an entry): what a client waits before it
// retries, when the error does not say (ledger.Error.RetryAfterSeconds).
var retryAfterOf = map[ledger.Code]int{
	// A leader being elected, a node catching up or draining, a full
	// queue or body bound: gone within about a second.
	ledger.CodeUnavailable: 1,
	// A new leader within about a second; the retry with the same
	// reference then finds the outcome.
	ledger.CodeOutcomeUnknown: 1,
	// The rate feed is behind: a few seconds for its next quote.
	ledger.CodeRateUnavailable: 5,
}

// setRetryAfter gives a 503 answer of code its Retry-After, unless the
// path that answered set one.
func setRetryAfter(ctx *fasthttp.RequestCtx, code ledger.Code) {
	if len(ctx.Response.Header.Peek(fasthttp.HeaderRetryAfter)) == 0 {
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, strconv.Itoa(max(retryAfterOf[code], 1)))
	}
}

// retryAfterOn503 wraps the router: a 503 a page rendered (the dashboard's,
// the hosted checkout's), not writeError, gets its Retry-After too.
func retryAfterOn503(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		next(ctx)
		if ctx.Response.StatusCode() == fasthttp.StatusServiceUnavailable {
			code, _ := ctx.UserValue(errorCodeKey).(ledger.Code)
			setRetryAfter(ctx, code)
		}
	}
}

// HTTPStatus returns the HTTP status of an error code.
func HTTPStatus(code ledger.Code) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return fasthttp.StatusInternalServerError
}

// errorFromActors turns a transport failure of the write path into the
// error the client sees.
func errorFromActors(err error) *ledger.Error {
	switch {
	case errors.Is(err, actors.ErrOutcomeUnknown):
		return errOutcomeUnknown
	case errors.Is(err, actors.ErrNotLeader):
		return errNotLeaderNothingDone
	case errors.Is(err, actors.ErrOverloaded):
		return &ledger.Error{Code: ledger.CodeUnavailable,
			Message: "The service is overloaded; nothing was done, retry shortly"}
	default:
		return &ledger.Error{Code: ledger.CodeInternal, Message: "Internal error"}
	}
}

// The write path's failures when leadership moves: writeError marks a
// response carrying one, so that route can send the request on to the next
// leader instead (see leaderLost). Never modified.
var (
	errOutcomeUnknown = &ledger.Error{Code: ledger.CodeOutcomeUnknown,
		Message: "The outcome of this request is unknown (the cluster changed leader while committing it); retrying with the same externalReference is safe"}
	errNotLeaderNothingDone = &ledger.Error{Code: ledger.CodeUnavailable,
		Message: "This node is not the leader and could not reach one; nothing was done, retry shortly"}
)

// leaderLostKey is the request's user value naming which of those errors
// its response carries.
const leaderLostKey = "payments.leaderLost"

// errorBody is the error envelope: {error, message, details, requestId}.
type errorBody struct {
	Error     ledger.Code   `json:"error"`
	Message   string        `json:"message"`
	Details   *ErrorDetails `json:"details,omitempty"`
	RequestID string        `json:"requestId"`
}

// errorDetails holds what some codes carry; empty members are left out.
type ErrorDetails struct {
	Fields     []FieldJSON `json:"fields,omitempty"`
	ExistingID string      `json:"existingId,omitempty"`
	Available  string      `json:"available,omitempty"`
	Required   string      `json:"required,omitempty"`
	Currency   string      `json:"currency,omitempty"`
	RetryAfter int         `json:"retryAfter,omitzero"`
	// spend_cap_exceeded: the cap, its limit, what is used and what was
	// attempted, in USD.
	Cap       string `json:"cap,omitempty"`
	Limit     string `json:"limit,omitempty"`
	Used      string `json:"used,omitempty"`
	Attempted string `json:"attempted,omitempty"`
}

type FieldJSON struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// writeError renders e with its status. The request id is the one set on
// the response header by the request pipeline.
func WriteError(ctx *fasthttp.RequestCtx, e *ledger.Error) {
	if e == errOutcomeUnknown || e == errNotLeaderNothingDone {
		ctx.SetUserValue(leaderLostKey, e)
	}
	ctx.SetUserValue(errorCodeKey, e.Code)
	body := errorBody{Error: e.Code, Message: e.Message, RequestID: RequestIDOf(ctx)}
	if body.Message == "" {
		body.Message = string(e.Code)
	}
	var d ErrorDetails
	for _, f := range e.Fields {
		d.Fields = append(d.Fields, FieldJSON(f))
	}
	d.ExistingID = e.ExistingID
	if e.Code == ledger.CodeInsufficientFunds {
		cur, _ := ledger.LookupCurrency(e.Currency)
		d.Available = ledger.FormatMinor(e.Available, cur)
		d.Required = ledger.FormatMinor(e.Required, cur)
		d.Currency = e.Currency
	}
	if sc := e.SpendCap; sc != nil {
		usd, _ := ledger.LookupCurrency("USD")
		d.Cap, d.Limit, d.Used, d.Attempted = sc.Cap, ledger.FormatMinor(sc.Limit, usd), ledger.FormatMinor(sc.Used, usd), ledger.FormatMinor(sc.Attempted, usd)
	}
	if e.RetryAfterSeconds > 0 {
		d.RetryAfter = e.RetryAfterSeconds
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(e.RetryAfterSeconds))
	} else if HTTPStatus(e.Code) == fasthttp.StatusServiceUnavailable {
		setRetryAfter(ctx, e.Code)
	}
	if d.Fields != nil || d.ExistingID != "" || d.Currency != "" || d.RetryAfter != 0 || d.Cap != "" {
		body.Details = &d
	}
	WriteJSON(ctx, HTTPStatus(e.Code), &body)
}

// bodyTooLarge is the error for a body past a limit.
func BodyTooLarge(limitBytes int) *ledger.Error {
	return &ledger.Error{
		Code:    ledger.CodeValidation,
		Message: "Request body is larger than the limit of " + strconv.Itoa(limitBytes) + " bytes",
		Fields:  []ledger.FieldError{{Field: "body", Message: "is larger than " + strconv.Itoa(limitBytes) + " bytes"}},
	}
}

// errorOf is the error a client sees for an operation's: the ledger's
// refusal as it is, a failure of the write path as errorFromActors says.
func ErrorOf(err error) *ledger.Error {
	var e *ledger.Error
	if errors.As(err, &e) {
		return e
	}
	return errorFromActors(err)
}

func Itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return Itoa(i/10) + digits[i%10:i%10+1]
}
