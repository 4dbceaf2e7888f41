package core

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/ledger"
)

// problems gathers every field error of a request, so the caller fixes them
// all at once: app.Fields, whose wording the operations share, with the
// front end's own checks beside it.
type Problems app.Fields

func (p *Problems) Add(field, message string) { (*app.Fields)(p).Add(field, message) }

func (p Problems) Err() *ledger.Error { return app.Fields(p).Err() }

// text checks an optional string: at most max characters of printable text.
// required makes absence an error too.
func (p *Problems) Text(field string, v *string, required bool, maxLen int) string {
	return (*app.Fields)(p).Text(field, v, required, maxLen)
}

// currency checks a currency code.
func (p *Problems) Currency(field string, v *string, required bool) (ledger.Currency, bool) {
	if v == nil || *v == "" {
		if required {
			p.Add(field, "is required")
		}
		return ledger.Currency{}, false
	}
	cur, ok := ledger.LookupCurrency(*v)
	if !ok {
		p.Add(field, fmt.Sprintf("%q is not a supported currency (codes are upper case, e.g. GHS)", *v))
		return ledger.Currency{}, false
	}
	return cur, true
}

// amount parses an amount in cur.
func (p *Problems) Amount(field string, a Amount, cur ledger.Currency) ledger.Minor {
	return (*app.Fields)(p).Amount(field, a.App(), cur)
}

// RequiredAmount is Amount for an amount the request must give: absent,
// it is a problem; given, it is checked only when its currency cur is
// known (curOK), since a bad currency is already reported.
func (p *Problems) RequiredAmount(field string, a Amount, cur ledger.Currency, curOK bool) ledger.Minor {
	if !a.Set {
		p.Add(field, "is required")
		return 0
	}
	if !curOK {
		return 0
	}
	return p.Amount(field, a, cur)
}

// phone checks a phone number: the country code and the subscriber number,
// digits only, with or without a leading +. It returns the number as it is
// stored, digits only.
func (p *Problems) Phone(field, s string) string { return (*app.Fields)(p).Phone(field, s) }

// Metadata checks the metadata object o (CheckMetadata) and returns it as
// the operation keeps it: its canonical text, "" when absent.
func (p *Problems) Metadata(field string, o JSONObject) string {
	p.merge(CheckMetadata(field, o))
	return o.Raw
}

// KYC checks the KYC object o (CheckKYC) and returns it as the operation
// keeps it: its canonical text, "" when absent.
func (p *Problems) KYC(field string, o JSONObject) string {
	p.merge(CheckKYC(field, o))
	return o.Raw
}

// QueryTime reads the optional timestamp query parameter name (QueryTime),
// 0 when absent or malformed, the latter a problem.
func (p *Problems) QueryTime(ctx *fasthttp.RequestCtx, name string) int64 {
	t, e := QueryTime(ctx, name)
	p.merge(e)
	return t
}

// merge adds a check's field errors, if it found any.
func (p *Problems) merge(e *ledger.Error) {
	if e != nil {
		*p = append(*p, e.Fields...)
	}
}

// alnum checks a bank account number: letters and digits.
func (p *Problems) Alnum(field, s string, minLen, maxLen int) {
	(*app.Fields)(p).Alnum(field, s, minLen, maxLen)
}

// Field length limits, in characters.
const (
	ReferenceLenMax       = 255
	PayoutReferenceLenMax = 100
	NarrationLenMax       = 500
	NameLenMax            = 200
)

// pathParam returns a path parameter, percent-decoded (the router leaves it
// encoded), as a string of its own.
func PathParam(ctx *fasthttp.RequestCtx, name string) (string, *ledger.Error) {
	raw, _ := ctx.UserValue(name).(string)
	v, err := url.PathUnescape(raw)
	if err != nil || v == "" {
		return "", ledger.FieldInvalid(name, "is not a valid path segment")
	}
	return v, nil
}

// lookup is the first half of every get-by-id: the path parameter param,
// then what find reads under it from the node's reader. find holds the
// resource to the caller's organization. Otherwise the call fails: 400 for
// a parameter that is not a path segment, 404 "<what> not found".
func Lookup[T any](c *Call, param, what string, find func(st *ledger.Reader, id string) (T, bool)) (T, bool) {
	var v T
	id, e := PathParam(c.Ctx, param)
	if e != nil {
		c.Fail(e)
		return v, false
	}
	v, ok := find(c.Server.Config.Actors.Reader(), id)
	if !ok {
		c.Fail(NotFound(what))
	}
	return v, ok
}

// BulkItems is the list field of a bulk request: required, and holding 1
// to most items. A list missing or outside those bounds is answered, and ok
// is false.
func BulkItems[T any](c *Call, field string, items *[]T, most int) (list []T, ok bool) {
	if items == nil {
		c.Fail(ledger.FieldInvalid(field, "is required"))
		return nil, false
	}
	if len(*items) == 0 || len(*items) > most {
		c.Fail(ledger.FieldInvalid(field, fmt.Sprintf("must hold 1 to %d items", most)))
		return nil, false
	}
	return *items, true
}

// query returns a query parameter and whether it was given.
func Query(ctx *fasthttp.RequestCtx, name string) (string, bool) {
	v := ctx.QueryArgs().Peek(name)
	if v == nil {
		return "", false
	}
	return string(v), true
}

// queryTime parses an ISO 8601 timestamp query parameter into unix ms.
func QueryTime(ctx *fasthttp.RequestCtx, name string) (int64, *ledger.Error) {
	v, ok := Query(ctx, name)
	if !ok {
		return 0, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return 0, ledger.FieldInvalid(name, "must be an ISO 8601 timestamp such as 2026-08-01T00:00:00Z")
	}
	return t.UnixMilli(), nil
}

// jsonBody returns the request body, refusing a wrong content type or a body
// past the JSON limit.
func JSONBody(ctx *fasthttp.RequestCtx) ([]byte, *ledger.Error) {
	body := ctx.PostBody()
	if len(body) > JSONBodyBytesMax {
		return nil, BodyTooLarge(JSONBodyBytesMax)
	}
	if ct := ctx.Request.Header.ContentType(); len(body) > 0 && !isJSONContentType(ct) {
		return nil, &ledger.Error{Code: ledger.CodeValidation,
			Message: "Content-Type must be application/json", Fields: []ledger.FieldError{{Field: "Content-Type", Message: "must be application/json"}}}
	}
	return body, nil
}

func isJSONContentType(ct []byte) bool {
	const want = "application/json"
	if len(ct) < len(want) {
		return false
	}
	for i := 0; i < len(want); i++ {
		c := ct[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != want[i] {
			return false
		}
	}
	rest := ct[len(want):]
	return len(rest) == 0 || rest[0] == ';' || rest[0] == ' '
}

// truncate bounds a caller's value echoed in a message to n runes of valid
// UTF-8.
func Truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	for i := range s {
		if n == 0 {
			return s[:i] + "…"
		}
		n--
	}
	return s
}
