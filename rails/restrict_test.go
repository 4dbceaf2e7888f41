package rails

import (
	"strings"
	"testing"
)

// A production deployment offers exactly what its providers serve: the
// methods and directions left out are absent from the catalogue, and a
// request naming one is told no provider serves it.
func TestRestrictOffersWhatProvidersServe(t *testing.T) {
	served := map[string]Direction{"gh_mtn": 0, "usdc_ethereum": Deposit}
	payoutsToo := map[string]bool{"gh_mtn": true, "usdc_ethereum": true}
	c := DefaultCatalogue().Restrict(func(code string, dir Direction) bool {
		d, ok := served[code]
		switch {
		case !ok:
			return false
		case dir == Payout:
			return payoutsToo[code]
		case dir == Collection:
			return code == "gh_mtn"
		}
		return d == dir
	})
	mtn, ok := c.Method("gh_mtn")
	if !ok || !mtn.Payouts || !mtn.Collections {
		t.Fatalf("gh_mtn: %+v %v", mtn, ok)
	}
	usdc, ok := c.Method("usdc_ethereum")
	if !ok || !usdc.Payouts || !usdc.Serves(Deposit) {
		t.Fatalf("usdc_ethereum: payouts %v, deposits %v", usdc.Payouts, usdc.Serves(Deposit))
	}
	for _, code := range []string{"ke_mpesa", "usdt_tron", "usdc_solana"} {
		if _, ok := c.Method(code); ok {
			t.Errorf("%s is offered without a provider", code)
		}
		_, e := c.CheckMethod(Payout, "to.code", code, "KES")
		if e == nil || len(e.Fields) != 1 || e.Fields[0].Field != "to.code" || !strings.Contains(e.Fields[0].Message, "no provider serves this method") {
			t.Errorf("%s: %+v", code, e)
		}
	}
	if _, e := c.CheckMethod(Payout, "to.code", "xx_nothing", "GHS"); e == nil || len(e.Fields) != 1 || strings.Contains(e.Fields[0].Message, "no provider") {
		t.Errorf("an unknown method: %+v", e)
	}
	for _, country := range c.Countries() {
		if len(country.Methods) == 0 {
			t.Errorf("%s is listed with no method", country.Code)
		}
		if country.Code != "GH" {
			t.Errorf("%s is listed, with no method served", country.Code)
		}
	}
	if n := c.Networks(); len(n) != 1 || n[0].Code != "usdc_ethereum" {
		t.Errorf("networks: %v", n)
	}
	if _, ok := c.VirtualAccountMethod("GHS"); ok {
		t.Error("GHS virtual accounts take deposits with no bank provider")
	}
	// The whole catalogue is untouched.
	if _, ok := DefaultCatalogue().Method("ke_mpesa"); !ok {
		t.Error("restricting changed the default catalogue")
	}
}
