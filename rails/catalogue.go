package rails

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"payments/ledger"
)

// The catalogue of payment methods is data, not code: catalogue.json lists
// each country's methods and the stablecoin networks, with their limits and
// the input fields they need. It is embedded in the binary and parsed once.
//
//go:embed catalogue.json
var catalogueJSON []byte

// Method is one way to move money: a mobile money operator, a bank rail or a
// stablecoin network. Its code is "<country>_<provider>" ("gh_mtn") or
// "<token>_<chain>" ("usdt_tron").
type Method struct {
	Code                string
	Name                string
	Type                string // "mobile_money", "bank", "crypto"
	Status              string // "operational", "maintenance", …
	Country             string // ISO 3166-1 alpha-2; empty for networks
	Chain               string // crypto only
	Currency            string
	Payouts             bool // money can be sent with it
	Collections         bool // money can be collected with it
	Min, Max            ledger.Minor
	EstimatedSettlement string
	Fields              []Field
}

// Field is an input a method needs from the caller.
type Field struct {
	Key         string   `json:"key"`
	Label       string   `json:"label"`
	Type        string   `json:"type"`
	Placeholder string   `json:"placeholder"`
	Description string   `json:"description"`
	Group       string   `json:"group"`
	Options     []Option `json:"options,omitempty"`
}

// Option is one allowed value of a field.
type Option struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// Country groups the methods of one country.
type Country struct {
	Code     string
	Name     string
	Flag     string
	Currency string
	Methods  []Method
}

// Catalogue is the set of payment methods. It is immutable and safe for
// concurrent use.
type Catalogue struct {
	methods   map[string]Method
	countries []Country
	networks  []Method
}

var (
	defaultCatalogue     *Catalogue
	defaultCatalogueOnce sync.Once
)

// DefaultCatalogue returns the embedded catalogue. It panics if the embedded
// data is invalid, which a test rules out.
func DefaultCatalogue() *Catalogue {
	defaultCatalogueOnce.Do(func() {
		c, err := ParseCatalogue(catalogueJSON)
		if err != nil {
			panic(err)
		}
		defaultCatalogue = c
	})
	return defaultCatalogue
}

type catalogueFile struct {
	Countries []struct {
		Code     string         `json:"code"`
		Name     string         `json:"name"`
		Flag     string         `json:"flag"`
		Currency string         `json:"currency"`
		Methods  []methodRecord `json:"methods"`
	} `json:"countries"`
	Networks  []methodRecord     `json:"networks"`
	FieldSets map[string][]Field `json:"fieldSets"`
}

type methodRecord struct {
	Code        string `json:"code"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	Chain       string `json:"chain"`
	Currency    string `json:"currency"`
	Status      string `json:"status"`
	Payouts     bool   `json:"payouts"`
	Collections bool   `json:"collections"`
	Limits      struct {
		Min string `json:"min"`
		Max string `json:"max"`
	} `json:"limits"`
	EstimatedSettlement string `json:"estimatedSettlement"`
	Fields              string `json:"fields"`
}

// ParseCatalogue parses and checks catalogue data.
func ParseCatalogue(data []byte) (*Catalogue, error) {
	var f catalogueFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("rails: catalogue: %w", err)
	}
	c := &Catalogue{methods: make(map[string]Method)}
	build := func(r methodRecord, country, currency string) (Method, error) {
		if currency == "" {
			currency = r.Currency
		}
		cur, ok := ledger.LookupCurrency(currency)
		if !ok {
			return Method{}, fmt.Errorf("rails: method %s: unknown currency %q", r.Code, currency)
		}
		minimum, err := ledger.ParseAmount(r.Limits.Min, cur)
		if err != nil {
			return Method{}, fmt.Errorf("rails: method %s: min: %w", r.Code, err)
		}
		maximum, err := ledger.ParseAmount(r.Limits.Max, cur)
		if err != nil || maximum < minimum {
			return Method{}, fmt.Errorf("rails: method %s: max %q invalid", r.Code, r.Limits.Max)
		}
		fields, ok := f.FieldSets[r.Fields]
		if !ok {
			return Method{}, fmt.Errorf("rails: method %s: unknown field set %q", r.Code, r.Fields)
		}
		switch r.Type {
		case "mobile_money", "bank", "crypto":
		default:
			return Method{}, fmt.Errorf("rails: method %s: unknown type %q", r.Code, r.Type)
		}
		if _, dup := c.methods[r.Code]; dup {
			return Method{}, fmt.Errorf("rails: method %s listed twice", r.Code)
		}
		m := Method{
			Code: r.Code, Name: r.Name, Type: r.Type, Status: r.Status, Country: country, Chain: r.Chain,
			Currency: cur.Code, Payouts: r.Payouts, Collections: r.Collections, Min: minimum, Max: maximum,
			EstimatedSettlement: r.EstimatedSettlement, Fields: fields,
		}
		c.methods[m.Code] = m
		return m, nil
	}
	for _, rc := range f.Countries {
		country := Country{Code: rc.Code, Name: rc.Name, Flag: rc.Flag, Currency: rc.Currency}
		for _, r := range rc.Methods {
			m, err := build(r, rc.Code, rc.Currency)
			if err != nil {
				return nil, err
			}
			country.Methods = append(country.Methods, m)
		}
		c.countries = append(c.countries, country)
	}
	for _, r := range f.Networks {
		m, err := build(r, "", "")
		if err != nil {
			return nil, err
		}
		if m.Type != "crypto" || m.Chain == "" {
			return nil, fmt.Errorf("rails: network %s must be a crypto method with a chain", m.Code)
		}
		c.networks = append(c.networks, m)
	}
	slices.SortFunc(c.countries, func(a, b Country) int {
		switch {
		case a.Code < b.Code:
			return -1
		case a.Code > b.Code:
			return 1
		}
		return 0
	})
	return c, nil
}

// Method returns the method with the given code.
func (c *Catalogue) Method(code string) (Method, bool) {
	m, ok := c.methods[code]
	return m, ok
}

// Countries lists the countries, by code.
func (c *Catalogue) Countries() []Country { return c.countries }

// Networks lists the stablecoin networks.
func (c *Catalogue) Networks() []Method { return c.networks }

// Direction is which way money moves through a method.
type Direction uint8

// Directions.
const (
	Payout Direction = iota + 1
	Collection
)

// Check validates a request to move amount of currency through method code:
// the method exists, supports the direction, is operational, carries the
// currency, and the amount is within its limits. field names the request
// field that holds the method code and amountField the amount, for the error.
func (c *Catalogue) Check(dir Direction, field, amountField, code, currency string, amount ledger.Minor) (Method, *ledger.Error) {
	m, ok := c.methods[code]
	if !ok {
		return Method{}, ledger.FieldInvalid(field, fmt.Sprintf("%q is not a known payment method; see GET /v1/capabilities", code))
	}
	switch {
	case dir == Payout && !m.Payouts:
		return Method{}, ledger.FieldInvalid(field, fmt.Sprintf("%s does not support payouts", code))
	case dir == Collection && !m.Collections:
		return Method{}, ledger.FieldInvalid(field, fmt.Sprintf("%s does not support collections", code))
	case m.Status != "operational":
		return Method{}, ledger.FieldInvalid(field, fmt.Sprintf("%s is not operational right now (status %s)", code, m.Status))
	}
	if currency != m.Currency {
		return Method{}, ledger.FieldInvalid(field, fmt.Sprintf("%s moves %s, not %s", code, m.Currency, currency))
	}
	cur, _ := ledger.LookupCurrency(m.Currency)
	if amount < m.Min || amount > m.Max {
		return Method{}, ledger.FieldInvalid(amountField, fmt.Sprintf("must be between %s and %s %s for %s",
			ledger.FormatMinor(m.Min, cur), ledger.FormatMinor(m.Max, cur), cur.Code, code))
	}
	return m, nil
}
