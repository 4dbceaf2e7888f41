package money

import (
	"strings"

	"github.com/goccy/go-json/jsontext"
	"github.com/valyala/fasthttp"

	"payments/http/core"
	"payments/ledger"
	"payments/rails"
)

// Capabilities: the method catalogue (package rails, an embedded data
// file) as the API shows it. Reference data: any valid key reads it.

func init() {
	core.RegisterRoutes(
		core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/capabilities", H: listCapabilities},
		core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/capabilities/{country}", H: countryCapabilities},
		core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/capabilities/{country}/{method}", H: getMethod},
	)
}

type paymentMethodJSON struct {
	Code                string        `json:"code"`
	Name                string        `json:"name"`
	Type                string        `json:"type"`
	Status              string        `json:"status"`
	Limits              limitsJSON    `json:"limits"`
	EstimatedSettlement string        `json:"estimatedSettlement"`
	Fields              []rails.Field `json:"fields"`
}

// limitsJSON carries the bounds as JSON numbers, as the contract shows
// them, written from their decimal text (never through a float).
type limitsJSON struct {
	Min      jsontext.Value `json:"min"`
	Max      jsontext.Value `json:"max"`
	Currency string         `json:"currency"`
}

type countryCapabilityJSON struct {
	Country  countryJSON         `json:"country"`
	Currency currencyJSON        `json:"currency"`
	Methods  []paymentMethodJSON `json:"methods"`
}

type countryJSON struct {
	Code string `json:"code"`
	Name string `json:"name"`
	Flag string `json:"flag"`
}

type currencyJSON struct {
	Code string `json:"code"`
	Name string `json:"name"`
}

type depositAssetJSON struct {
	Currency string             `json:"currency"`
	Name     string             `json:"name"`
	Chains   []depositChainJSON `json:"chains"`
}

type depositChainJSON struct {
	Chain        string `json:"chain"`
	Network      string `json:"network"`
	Code         string `json:"code"`
	RequiresMemo bool   `json:"requiresMemo"`
}

type capabilitiesJSON struct {
	Payouts     []countryCapabilityJSON `json:"payouts"`
	Collections []countryCapabilityJSON `json:"collections"`
	Deposits    []depositAssetJSON      `json:"deposits,omitempty"`
}

type capabilitiesBody struct {
	Capabilities capabilitiesJSON `json:"capabilities"`
}

type methodBody struct {
	Method paymentMethodJSON `json:"method"`
}

func renderMethod(m *rails.Method) paymentMethodJSON {
	cur, _ := ledger.LookupCurrency(m.Currency)
	return paymentMethodJSON{
		Code: m.Code, Name: m.Name, Type: m.Type.APIName(), Status: m.Status,
		Limits: limitsJSON{
			Min:      jsontext.Value(ledger.FormatMinor(m.Min, cur)),
			Max:      jsontext.Value(ledger.FormatMinor(m.Max, cur)),
			Currency: cur.Code,
		},
		EstimatedSettlement: m.EstimatedSettlement,
		Fields:              m.Fields,
	}
}

// renderCountry renders the country's methods in one direction; ok is false
// when it has none.
func renderCountry(c *rails.Country, dir rails.Direction) (countryCapabilityJSON, bool) {
	out := countryCapabilityJSON{
		Country:  countryJSON{Code: c.Code, Name: c.Name, Flag: c.Flag},
		Currency: currencyJSON{Code: c.Currency, Name: c.CurrencyName},
		Methods:  []paymentMethodJSON{},
	}
	for i := range c.Methods {
		m := &c.Methods[i]
		if dir == rails.Payout && m.Payouts || dir == rails.Collection && m.Collections {
			out.Methods = append(out.Methods, renderMethod(m))
		}
	}
	return out, len(out.Methods) > 0
}

func renderCapabilities(s *core.Server, countries []rails.Country) capabilitiesJSON {
	out := capabilitiesJSON{Payouts: []countryCapabilityJSON{}, Collections: []countryCapabilityJSON{}}
	for i := range countries {
		if c, ok := renderCountry(&countries[i], rails.Payout); ok {
			out.Payouts = append(out.Payouts, c)
		}
		if c, ok := renderCountry(&countries[i], rails.Collection); ok {
			out.Collections = append(out.Collections, c)
		}
	}
	return out
}

// depositAssets groups the stablecoin networks by token, in catalogue order. The
// network names are the stack's: test networks on the sandbox.
func depositAssets(s *core.Server) []depositAssetJSON {
	out := []depositAssetJSON{}
	index := map[string]int{}
	for _, m := range s.Config.Catalogue.Networks() {
		if !m.Collections {
			continue
		}
		ch, _ := s.Config.Catalogue.Chain(m.Chain)
		network := ch.SandboxNetwork
		if s.Config.Live {
			network = ch.ProductionNetwork
		}
		i, ok := index[m.Currency]
		if !ok {
			cur, _ := ledger.LookupCurrency(m.Currency)
			i = len(out)
			index[m.Currency] = i
			out = append(out, depositAssetJSON{Currency: cur.Code, Name: cur.Name})
		}
		out[i].Chains = append(out[i].Chains, depositChainJSON{Chain: ch.Name, Network: network, Code: m.Code, RequiresMemo: ch.RequiresMemo})
	}
	return out
}

// listCapabilities: GET /v1/capabilities.
func listCapabilities(c *core.Call) {
	body := capabilitiesBody{renderCapabilities(c.Server, c.Server.Config.Catalogue.Countries())}
	body.Capabilities.Deposits = depositAssets(c.Server)
	c.OK(fasthttp.StatusOK, &body)
}

// countryCapabilities: GET /v1/capabilities/{country}.
func countryCapabilities(c *core.Call) {
	country, ok := country(c)
	if !ok {
		return
	}
	c.OK(fasthttp.StatusOK, &capabilitiesBody{renderCapabilities(c.Server, []rails.Country{country})})
}

// getMethod: GET /v1/capabilities/{country}/{method}.
func getMethod(c *core.Call) {
	country, ok := country(c)
	if !ok {
		return
	}
	code, ok := c.Param("method")
	if !ok {
		return
	}
	code = strings.ToLower(code)
	for i := range country.Methods {
		if m := &country.Methods[i]; m.Code == code {
			c.OK(fasthttp.StatusOK, &methodBody{renderMethod(m)})
			return
		}
	}
	// Stablecoin networks (usdt_tron, usdc_stellar, …) belong to no
	// country: any country's path reads them, as GET /v1/capabilities
	// lists them under deposits.
	for _, m := range c.Server.Config.Catalogue.Networks() {
		if m.Code == code {
			c.OK(fasthttp.StatusOK, &methodBody{renderMethod(&m)})
			return
		}
	}
	c.Fail(&ledger.Error{Code: ledger.CodeNotFound, Message: "Method " + core.Truncate(code, 64) + " for country " + country.Code + " not found"})
}

// country reads the {country} path parameter, answering 404 for a country
// the catalogue does not list.
func country(c *core.Call) (rails.Country, bool) {
	code, e := core.PathParam(c.Ctx, "country")
	if e != nil {
		c.Fail(e)
		return rails.Country{}, false
	}
	country, ok := c.Server.Config.Catalogue.Country(code)
	if !ok {
		c.Fail(&ledger.Error{Code: ledger.CodeNotFound,
			Message: "Capabilities for country " + strings.ToUpper(core.Truncate(code, 8)) + " not found; countries are ISO 3166-1 alpha-2 codes listed by GET /v1/capabilities"})
		return rails.Country{}, false
	}
	return country, true
}
