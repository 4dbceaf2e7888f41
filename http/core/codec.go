package core

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-json/jsontext"
	json "github.com/goccy/go-json/v2"
	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/ledger"
)

// The JSON codec of the API, in one place: goccy/go-json's v2 API, which
// matches field names exactly, rejects duplicate names and invalid UTF-8,
// and here also rejects unknown members. A fuzz test holds it to
// encoding/json's reading of the same bytes.

var DecodeOptions = json.JoinOptions(
	json.RejectUnknownMembers(true),
)

// decodeBody decodes a JSON request body into v. Errors are validation
// errors naming the field in dotted form ("to.amount").
func DecodeBody(body []byte, v any) *ledger.Error {
	if len(body) == 0 {
		return &ledger.Error{Code: ledger.CodeValidation, Message: "Request body is required: send a JSON object"}
	}
	if err := json.Unmarshal(body, v, DecodeOptions); err != nil {
		return DecodeError(err)
	}
	return nil
}

func DecodeError(err error) *ledger.Error {
	var se *json.SemanticError
	if errors.As(err, &se) {
		field := dotted(se.JSONPointer)
		var msg string
		switch {
		case errors.Is(se.Err, json.ErrUnknownName):
			msg = "is not a known field"
		case se.Err != nil && isFieldMessage(se.Err):
			msg = se.Err.Error()
		default:
			msg = "must be " + DescribeGoType(se.GoType.String())
		}
		if field == "" {
			return &ledger.Error{Code: ledger.CodeValidation, Message: "Request body must be a JSON object"}
		}
		return ledger.FieldInvalid(field, msg)
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		if errors.Is(syn.Err, jsontext.ErrDuplicateName) {
			return ledger.FieldInvalid(dotted(syn.JSONPointer), "appears more than once")
		}
		return &ledger.Error{Code: ledger.CodeValidation,
			Message: fmt.Sprintf("Request body is not valid JSON (at byte %d)", syn.ByteOffset)}
	}
	return &ledger.Error{Code: ledger.CodeValidation, Message: "Request body is not valid JSON"}
}

// fieldMessage is an error whose text is written for the API caller.
type FieldMessage string

func (m FieldMessage) Error() string { return string(m) }

func isFieldMessage(err error) bool {
	var m FieldMessage
	return errors.As(err, &m)
}

// dotted turns a JSON pointer ("/to/amount") into a field path ("to.amount").
func dotted(p jsontext.Pointer) string {
	s := strings.TrimPrefix(string(p), "/")
	s = strings.ReplaceAll(s, "/", ".")
	s = strings.ReplaceAll(s, "~1", "/")
	return strings.ReplaceAll(s, "~0", "~")
}

func DescribeGoType(t string) string {
	switch {
	case strings.Contains(t, "string"):
		return "a string"
	case strings.Contains(t, "bool"):
		return "a boolean"
	case strings.HasPrefix(t, "[]") || strings.HasPrefix(t, "*[]"):
		return "an array"
	case strings.Contains(t, "int"):
		return "an integer"
	case strings.Contains(t, "amount"):
		return "a positive decimal amount"
	default:
		return "an object"
	}
}

// writeJSON renders v as the response body with the given status, encoding
// straight into fasthttp's pooled body buffer.
func WriteJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	ctx.Response.ResetBody()
	ctx.SetContentType("application/json")
	if err := json.MarshalWrite(ctx, v); err != nil {
		ctx.Response.ResetBody()
		ctx.SetStatusCode(fasthttp.StatusInternalServerError)
		ctx.SetBodyString(`{"error":"internal_error","message":"Internal error","requestId":"` + RequestIDOf(ctx) + `"}`)
		return
	}
	ctx.SetStatusCode(status)
}

// amount is a request amount: the literal text of a JSON number, or the
// contents of a JSON string, kept as text until the currency is known.
type Amount struct {
	Text string
	str  bool // it came as a string: a plain decimal, no exponent
	Set  bool
}

// MoneyBody is an amount of money as a request gives it: the amount, kept
// as text until the currency is known, and the currency's code. A request
// whose amount and currency are one money value embeds it (MoneyJSON is
// the response's).
type MoneyBody struct {
	Amount   Amount  `json:"amount"`
	Currency *string `json:"currency"`
}

// app is the amount as the operations read it.
func (a Amount) App() app.Amount { return app.Amount{Text: a.Text, String: a.str, Set: a.Set} }

// UnmarshalJSON keeps the literal; ParseAmount judges it.
func (a *Amount) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) == 0:
		return FieldMessage("must be a positive decimal amount")
	case b[0] == 'n': // null: as if absent
		*a = Amount{}
		return nil
	case b[0] == '"':
		s, err := jsontext.AppendUnquote(nil, b)
		if err != nil {
			return FieldMessage("must be a positive decimal amount")
		}
		*a = Amount{Text: string(s), str: true, Set: true}
		return nil
	case b[0] == '-' || (b[0] >= '0' && b[0] <= '9'):
		*a = Amount{Text: string(b), Set: true}
		return nil
	default:
		return FieldMessage("must be a positive decimal amount, as a number or a string")
	}
}

// jsonObject is an optional free-form JSON object (metadata, kyc), kept as
// canonical text: members sorted, no insignificant space. Two requests that
// differ only in key order or spacing are the same request.
type JSONObject struct {
	Raw string
	Set bool
}

// UnmarshalJSON accepts an object or null.
func (o *JSONObject) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == 'n' {
		*o = JSONObject{}
		return nil
	}
	if len(b) == 0 || b[0] != '{' {
		return FieldMessage("must be a JSON object")
	}
	canonical, err := jsontext.AppendFormat(nil, b, jsontext.ReorderRawObjects(true))
	if err != nil {
		return FieldMessage("must be a JSON object")
	}
	*o = JSONObject{Raw: string(canonical), Set: true}
	return nil
}

// Limits of free-form objects.
const (
	metadataKeysMax   = 50
	metadataBytesMax  = 8 << 10
	kycBytesMax       = 4 << 10
	metadataKeyLenMax = 40
)

// checkMetadata validates a metadata object: at most 50 keys of at most 40
// characters, 8 KiB in all.
func CheckMetadata(field string, o JSONObject) *ledger.Error {
	if !o.Set {
		return nil
	}
	if len(o.Raw) > metadataBytesMax {
		return ledger.FieldInvalid(field, fmt.Sprintf("must be at most %d bytes", metadataBytesMax))
	}
	var members map[string]jsontext.Value
	if err := json.Unmarshal([]byte(o.Raw), &members); err != nil {
		return ledger.FieldInvalid(field, "must be a JSON object")
	}
	if len(members) > metadataKeysMax {
		return ledger.FieldInvalid(field, fmt.Sprintf("must have at most %d keys", metadataKeysMax))
	}
	for k := range members {
		if k == "" || utf8.RuneCountInString(k) > metadataKeyLenMax {
			return ledger.FieldInvalid(field, fmt.Sprintf("keys must be 1 to %d characters", metadataKeyLenMax))
		}
	}
	return nil
}

func CheckKYC(field string, o JSONObject) *ledger.Error {
	if o.Set && len(o.Raw) > kycBytesMax {
		return ledger.FieldInvalid(field, fmt.Sprintf("must be at most %d bytes", kycBytesMax))
	}
	return nil
}

// objectOrEmpty renders a stored object, or {} when there is none.
func ObjectOrEmpty(raw string) jsontext.Value {
	if raw == "" {
		return jsontext.Value("{}")
	}
	return jsontext.Value(raw)
}
