package money

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/http/core"
	"payments/ledger"
	"payments/rails"
)

// Validation of destinations: account holder names resolved through the
// rails for bank and mobile money, address formats and checksums for crypto
// (rails.ValidateAddress), routing numbers where a bank method needs one.
// Reference data: any valid key may validate. Nothing is written.

func init() {
	core.RegisterRoutes(
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/validate", H: validate},
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/validate/bulk", H: validateBulk},
	)
}

// Limits of validation.
const (
	validateBulkItemsMax = 100
	resolveTimeout       = 5 * time.Second // one name lookup on a rail
)

// Reasons a destination is not valid, beyond the rail's own outcomes
// (rails.OutcomeAccountNotFound, …).
const (
	reasonInvalidAddress       = "invalid_address"
	reasonInvalidAccountNumber = "invalid_account_number"
	reasonInvalidRoutingNumber = "invalid_routing_number"
)

type validateRequestBody struct {
	Code          *string `json:"code"`
	AccountNumber *string `json:"accountNumber"`
	Address       *string `json:"address"`
	RoutingNumber *string `json:"routingNumber"`
}

type validateBulkRequestBody struct {
	Items *[]validateRequestBody `json:"items"`
}

// validationJSON is the contract's validation result, with a message that
// says in words what reason says as a code.
type validationJSON struct {
	Valid       bool   `json:"valid"`
	AccountName string `json:"accountName,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Message     string `json:"message,omitempty"`
}

type validationBody struct {
	Validation validationJSON `json:"validation"`
}

type validateBulkBody struct {
	Results []validateBulkItemJSON `json:"results"`
}

// validateBulkItemJSON is one item's answer: its result and, for an item
// that could not be judged, the error that the same item alone would have
// got (its result then says valid false with the error's code as reason:
// the reference requires a result on every item).
type validateBulkItemJSON struct {
	Code   string         `json:"code"`
	Result validationJSON `json:"result"`
	Error  *ItemErrorJSON `json:"error,omitempty"`
}

// ItemErrorJSON is the error envelope of one item of a bulk request.
type ItemErrorJSON struct {
	Error   ledger.Code        `json:"error"`
	Message string             `json:"message"`
	Details *core.ErrorDetails `json:"details,omitempty"`
}

func RenderItemError(e *ledger.Error) *ItemErrorJSON {
	out := &ItemErrorJSON{Error: e.Code, Message: e.Message}
	if len(e.Fields) > 0 {
		d := &core.ErrorDetails{}
		for _, f := range e.Fields {
			d.Fields = append(d.Fields, core.FieldJSON(f))
		}
		out.Details = d
	}
	return out
}

// validate: POST /v1/validate.
func validate(c *core.Call) {
	v, ok := core.Input(c, func(req *validateRequestBody) (validationJSON, *ledger.Error) {
		return validateDestination(c.Server, req, "")
	})
	if ok {
		c.OK(fasthttp.StatusOK, &validationBody{v})
	}
}

// validateBulk: POST /v1/validate/bulk. Each item is validated on its own;
// a bad item gets its error in its place and the others their results.
func validateBulk(c *core.Call) {
	var req validateBulkRequestBody
	if !c.Decode(&req) {
		return
	}
	items, ok := core.BulkItems(c, "items", req.Items, validateBulkItemsMax)
	if !ok {
		return
	}
	out := validateBulkBody{Results: make([]validateBulkItemJSON, len(items))}
	for i := range items {
		r := &out.Results[i]
		if items[i].Code != nil {
			r.Code = *items[i].Code
		}
		v, e := validateDestination(c.Server, &items[i], fmt.Sprintf("items.%d.", i))
		if e != nil {
			r.Error = RenderItemError(e)
			r.Result = validationJSON{Valid: false, Reason: string(e.Code), Message: e.Message}
			continue
		}
		r.Result = v
	}
	c.OK(fasthttp.StatusOK, &out)
}

// validateDestination validates one destination. A request it cannot judge
// (no code, a field the method does not use, no provider) is an error; a
// destination that is wrong is a result with valid false and its reason.
// prefix goes before field names ("items.3.").
func validateDestination(s *core.Server, req *validateRequestBody, prefix string) (validationJSON, *ledger.Error) {
	var p core.Problems
	code := p.Text(prefix+"code", req.Code, true, 64)
	if e := p.Err(); e != nil {
		return validationJSON{}, e
	}
	m, e := s.Config.Catalogue.Lookup(prefix+"code", code)
	if e != nil {
		return validationJSON{}, e
	}
	if m.Type == ledger.MethodCrypto {
		address := p.Text(prefix+"address", req.Address, true, 256)
		if req.AccountNumber != nil {
			p.Add(prefix+"accountNumber", "is not used by a crypto method; send address")
		}
		if req.RoutingNumber != nil {
			p.Add(prefix+"routingNumber", "is not used by a crypto method")
		}
		if e := p.Err(); e != nil {
			return validationJSON{}, e
		}
		if err := rails.ValidateAddress(m.Chain, address); err != nil {
			return invalid(reasonInvalidAddress, "The address "+app.AddressReason(err)), nil
		}
		return validationJSON{Valid: true}, nil
	}

	number := p.Text(prefix+"accountNumber", req.AccountNumber, true, 64)
	if req.Address != nil {
		p.Add(prefix+"address", "is not used by a "+m.Type.String()+" method; send accountNumber")
	}
	_, routed := m.Field("routingNumber")
	routing := p.Text(prefix+"routingNumber", req.RoutingNumber, false, 64)
	switch {
	case routed && routing == "" && (req.RoutingNumber == nil || *req.RoutingNumber == ""):
		p.Add(prefix+"routingNumber", "is required for "+m.Code+": one of the bank codes listed in GET /v1/capabilities/"+m.Country+"/"+m.Code)
	case !routed && req.RoutingNumber != nil:
		p.Add(prefix+"routingNumber", "is not used by "+m.Code)
	}
	if e := p.Err(); e != nil {
		return validationJSON{}, e
	}
	number, msg := CheckAccountNumber(s, &m, number)
	if msg != "" {
		return invalid(reasonInvalidAccountNumber, "The account number "+msg), nil
	}
	if msg := routingNumberProblem(&m, routing); msg != "" {
		return invalid(reasonInvalidRoutingNumber, msg), nil
	}
	res, e := ResolveName(s, &m, number)
	if e != nil {
		return validationJSON{}, e
	}
	if res.Outcome != rails.OutcomeValid {
		return invalid(string(res.Outcome), res.Message), nil
	}
	return validationJSON{Valid: true, AccountName: res.AccountName}, nil
}

func invalid(reason, message string) validationJSON {
	return validationJSON{Valid: false, Reason: reason, Message: message}
}

// resolveName asks the rail who holds the account. A deployment without a
// provider, or a rail that fails outright, is service_unavailable.
func ResolveName(s *core.Server, m *rails.Method, number string) (rails.Resolution, *ledger.Error) {
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	res, err := s.Config.Names.ResolveName(ctx, *m, number)
	switch {
	case errors.Is(err, rails.ErrNoProvider):
		return res, &ledger.Error{Code: ledger.CodeUnavailable,
			Message: "No payment provider is configured on this deployment, so account holder names cannot be resolved; nothing was checked"}
	case err != nil:
		return res, &ledger.Error{Code: ledger.CodeUnavailable,
			Message: m.Name + " could not be reached to resolve the account holder; retry shortly"}
	}
	return res, nil
}

// checkAccountNumber checks an account number's format on m: a wallet's
// phone number in international form with the country's calling code (a
// leading + allowed), or a bank account number of letters and digits. It
// returns the number as it is stored (a phone number's digits only) and
// what is wrong, or "".
func CheckAccountNumber(s *core.Server, m *rails.Method, number string) (string, string) {
	var p core.Problems
	if m.Type == ledger.MethodMobileMoney {
		number = p.Phone("", number)
		if len(p) == 0 {
			if country, ok := s.Config.Catalogue.Country(m.Country); ok && !hasPrefix(number, country.DialCode) {
				return number, "must start with " + country.Name + "'s calling code " + country.DialCode
			}
		}
	} else {
		p.Alnum("", number, 5, 34)
	}
	if len(p) > 0 {
		return number, p[0].Message
	}
	return number, ""
}

// routingNumberProblem checks a routing number against the bank codes the
// method lists as options of its routingNumber field.
func routingNumberProblem(m *rails.Method, routing string) string {
	if _, ok := m.Field("routingNumber"); !ok || routing == "" || m.Routes(routing) {
		return ""
	}
	return fmt.Sprintf("The routing number %q is not a bank code %s knows; see the options of its routingNumber field in GET /v1/capabilities/%s/%s",
		core.Truncate(routing, 64), m.Code, m.Country, m.Code)
}

func hasPrefix(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }
