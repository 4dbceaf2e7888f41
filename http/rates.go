package http

import (
	"errors"
	"strings"

	"github.com/valyala/fasthttp"

	"payments/ledger"
	"payments/rails"
)

// SandboxSpreadBasisPoints is the spread the sandbox takes on every
// cross-currency rate.
const SandboxSpreadBasisPoints = 100

func init() {
	registerRoutes(endpoint{fasthttp.MethodGet, "/v1/rates/{origin}/{destination}", 0, (*call).getRate, nil})
}

type rateJSON struct {
	From string `json:"from"`
	To   string `json:"to"`
	Rate string `json:"rate"`
}

// getRate: GET /v1/rates/{origin}/{destination}. The rate is the all-in
// rate a conversion, cross-currency payout or order would apply now.
func (c *call) getRate() {
	from, e := pathParam(c.ctx, "origin")
	if e != nil {
		c.fail(e)
		return
	}
	to, e := pathParam(c.ctx, "destination")
	if e != nil {
		c.fail(e)
		return
	}
	r, e := c.rate(strings.ToUpper(from), strings.ToUpper(to))
	if e != nil {
		c.fail(e)
		return
	}
	c.ok(fasthttp.StatusOK, struct {
		Rate rateJSON `json:"rate"`
	}{rateJSON{r.From, r.To, r.String()}})
}

// rate asks the rate source, mapping its failures to the API's errors:
// an unsupported currency is the caller's mistake (400), an unavailable
// source is ours (503).
func (c *call) rate(from, to string) (rails.Rate, *ledger.Error) {
	r, err := c.s.cfg.Rates.Rate(from, to)
	switch {
	case err == nil:
		return r, nil
	case errors.Is(err, rails.ErrUnsupportedCurrency):
		return r, &ledger.Error{Code: ledger.CodeBadRequest, Message: "Unsupported currency: " + strings.TrimPrefix(err.Error(), rails.ErrUnsupportedCurrency.Error()+": ")}
	default:
		return r, &ledger.Error{Code: ledger.CodeRateUnavailable, Message: "Exchange rate is temporarily unavailable; nothing was done, retry shortly"}
	}
}
