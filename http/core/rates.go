package core

import (
	"strings"

	"github.com/valyala/fasthttp"

	"payments/ledger"
	"payments/rails"
)

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

// rate asks the application for the rate from one currency to another.
func (c *call) rate(from, to string) (rails.Rate, *ledger.Error) { return c.s.cfg.App.Rate(from, to) }
