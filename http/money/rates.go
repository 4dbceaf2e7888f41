package money

import (
	"strings"

	"github.com/valyala/fasthttp"

	"payments/http/core"
	"payments/ledger"
	"payments/rails"
)

func init() {
	core.RegisterRoutes(core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/rates/{origin}/{destination}", H: getRate})
}

type rateJSON struct {
	From string `json:"from"`
	To   string `json:"to"`
	Rate string `json:"rate"`
}

// getRate: GET /v1/rates/{origin}/{destination}. The rate is the all-in
// rate a conversion, cross-currency payout or order would apply now.
func getRate(c *core.Call) {
	from, ok := c.Param("origin")
	if !ok {
		return
	}
	to, ok := c.Param("destination")
	if !ok {
		return
	}
	r, e := rate(c, strings.ToUpper(from), strings.ToUpper(to))
	if e != nil {
		c.Fail(e)
		return
	}
	c.OK(fasthttp.StatusOK, struct {
		Rate rateJSON `json:"rate"`
	}{rateJSON{r.From, r.To, r.String()}})
}

// rate asks the application for the rate from one currency to another.
func rate(c *core.Call, from, to string) (rails.Rate, *ledger.Error) {
	return c.Server.Config.App.Rate(from, to)
}
