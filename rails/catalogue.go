package rails

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"payments/ledger"
)

// The catalogue of payment methods is data, not code: catalogue.json lists
// each country's methods and the stablecoin networks, with their limits,
// their fee schedules and the input fields they need. It is embedded in the
// binary and parsed once.
//
//go:embed catalogue.json
var catalogueJSON []byte

// Method is one way to move money: a mobile money operator, a bank rail or a
// stablecoin network. Its code is "<country>_<provider>" ("gh_mtn") or
// "<token>_<chain>" ("usdt_tron").
type Method struct {
	Code                string
	Name                string
	Type                ledger.MethodType
	Status              string // "operational", "maintenance", …
	Country             string // ISO 3166-1 alpha-2; empty for networks
	Chain               string // crypto only
	Currency            string
	Payouts             bool // money can be sent with it
	Collections         bool // money can be collected with it
	Min, Max            ledger.Minor
	EstimatedSettlement string
	Fields              []Field
	fees                [directions]ledger.FeeSchedule // by Direction, for the directions it serves
	// noDeposits: a bank rail whose currency's virtual accounts take no
	// deposits here (a production deployment with no provider for them).
	noDeposits bool
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

// Field returns the method's input field with key.
func (m Method) Field(key string) (Field, bool) {
	for _, f := range m.Fields {
		if f.Key == key {
			return f, true
		}
	}
	return Field{}, false
}

// Routes reports whether routing is one of the bank codes the method
// lists as the options of its routingNumber field; false for a method
// without one.
func (m *Method) Routes(routing string) bool {
	f, ok := m.Field("routingNumber")
	if !ok {
		return false
	}
	for _, o := range f.Options {
		if o.Value == routing {
			return true
		}
	}
	return false
}

// Country groups the methods of one country.
type Country struct {
	Code         string // ISO 3166-1 alpha-2, upper case
	Name         string
	Flag         string
	Currency     string
	CurrencyName string
	DialCode     string // the international calling code, digits only
	Methods      []Method
}

// Chain is a blockchain the stablecoin networks run on.
type Chain struct {
	Code              string // "tron", "ethereum", …: the Method.Chain value
	Name              string
	SandboxNetwork    string // the test network the sandbox stack uses
	ProductionNetwork string
	RequiresMemo      bool // a deposit to a shared address needs its memo
}

// Catalogue is the set of payment methods. It is immutable and safe for
// concurrent use.
type Catalogue struct {
	methods   map[string]Method
	countries []Country
	networks  []Method
	chains    map[string]Chain
	// withheld are the methods a production deployment leaves out (no
	// provider serves them): named in the error a request for one gets.
	withheld map[string]bool
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
		DialCode string         `json:"dialCode"`
		Methods  []methodRecord `json:"methods"`
	} `json:"countries"`
	Networks []methodRecord `json:"networks"`
	Chains   map[string]struct {
		Name              string `json:"name"`
		SandboxNetwork    string `json:"sandboxNetwork"`
		ProductionNetwork string `json:"productionNetwork"`
		RequiresMemo      bool   `json:"requiresMemo"`
	} `json:"chains"`
	FieldSets map[string][]Field `json:"fieldSets"`
	// Fees are the fee schedules of each method type (by its stored
	// name), per direction; a method's own fees override its type's.
	Fees map[string]feesRecord `json:"fees"`
}

// feesRecord is a fee schedule per direction ("payout", "collection",
// "deposit").
type feesRecord map[string]struct {
	BasisPoints *int64 `json:"basisPoints"`
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
	EstimatedSettlement string     `json:"estimatedSettlement"`
	Fields              string     `json:"fields"`
	Fees                feesRecord `json:"fees"`
}

// ParseCatalogue parses and checks catalogue data.
func ParseCatalogue(data []byte) (*Catalogue, error) {
	var f catalogueFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("rails: catalogue: %w", err)
	}
	c := &Catalogue{methods: make(map[string]Method), chains: make(map[string]Chain)}
	for code, ch := range f.Chains {
		if _, ok := addressRules[code]; !ok {
			return nil, fmt.Errorf("rails: chain %s has no address rules", code)
		}
		c.chains[code] = Chain{Code: code, Name: ch.Name, SandboxNetwork: ch.SandboxNetwork,
			ProductionNetwork: ch.ProductionNetwork, RequiresMemo: ch.RequiresMemo}
	}
	build := func(r methodRecord, country, dialCode, currency string) (Method, error) {
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
		set, ok := f.FieldSets[r.Fields]
		if !ok {
			return Method{}, fmt.Errorf("rails: method %s: unknown field set %q", r.Code, r.Fields)
		}
		// Each method has its own copy of its fields, with the country's
		// calling code in the placeholders.
		fields := make([]Field, len(set))
		for i, fd := range set {
			fd.Placeholder = strings.ReplaceAll(fd.Placeholder, "{dial}", dialCode)
			if (fd.Type == "select") != (len(fd.Options) > 0) {
				return Method{}, fmt.Errorf("rails: method %s: field %s: options go with type select", r.Code, fd.Key)
			}
			fields[i] = fd
		}
		typ, ok := ledger.MethodTypeOf(r.Type)
		if !ok || !typ.Valid() {
			return Method{}, fmt.Errorf("rails: method %s: unknown type %q", r.Code, r.Type)
		}
		if _, dup := c.methods[r.Code]; dup {
			return Method{}, fmt.Errorf("rails: method %s listed twice", r.Code)
		}
		m := Method{
			Code: r.Code, Name: r.Name, Type: typ, Status: r.Status, Country: country, Chain: r.Chain,
			Currency: cur.Code, Payouts: r.Payouts, Collections: r.Collections, Min: minimum, Max: maximum,
			EstimatedSettlement: r.EstimatedSettlement, Fields: fields,
		}
		if err := m.setFees(r.Fees, f.Fees[r.Type]); err != nil {
			return Method{}, err
		}
		c.methods[m.Code] = m
		return m, nil
	}
	for _, rc := range f.Countries {
		cur, ok := ledger.LookupCurrency(rc.Currency)
		if !ok || len(rc.Code) != 2 || rc.DialCode == "" {
			return nil, fmt.Errorf("rails: country %q: needs a two-letter code, a known currency and a calling code", rc.Code)
		}
		country := Country{Code: rc.Code, Name: rc.Name, Flag: rc.Flag, Currency: cur.Code, CurrencyName: cur.Name, DialCode: rc.DialCode}
		for _, r := range rc.Methods {
			m, err := build(r, rc.Code, rc.DialCode, rc.Currency)
			if err != nil {
				return nil, err
			}
			country.Methods = append(country.Methods, m)
		}
		c.countries = append(c.countries, country)
	}
	for _, r := range f.Networks {
		m, err := build(r, "", "", "")
		if err != nil {
			return nil, err
		}
		if _, ok := c.chains[m.Chain]; m.Type != ledger.MethodCrypto || !ok {
			return nil, fmt.Errorf("rails: network %s must be a crypto method on a listed chain", m.Code)
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

// Country returns the country with an ISO 3166-1 alpha-2 code, in either
// case.
func (c *Catalogue) Country(code string) (Country, bool) {
	code = strings.ToUpper(code)
	for _, country := range c.countries {
		if country.Code == code {
			return country, true
		}
	}
	return Country{}, false
}

// Chain returns the chain with the given code ("tron").
func (c *Catalogue) Chain(code string) (Chain, bool) {
	ch, ok := c.chains[code]
	return ch, ok
}

// Direction is which way money moves through a method.
type Direction uint8

// Directions.
const (
	Payout     Direction = iota + 1 // sent out of a balance
	Collection                      // charged to a payer, who approves it
	// Deposit is money a customer sends unasked: a transfer into a
	// virtual account, a transfer to a crypto address.
	Deposit

	directions = iota + 1 // one past the last
)

var directionNames = [directions]string{"", "payout", "collection", "deposit"}

func (d Direction) String() string {
	if d < directions {
		return directionNames[d]
	}
	return "unknown"
}

// Serves reports whether money moves through the method in direction dir:
// payouts and collections as the catalogue flags them (a stablecoin
// network's collections are the deposits to its addresses), deposits into
// the virtual accounts of a bank rail's currency and to the addresses of a
// network that collects.
func (m *Method) Serves(dir Direction) bool {
	switch dir {
	case Payout:
		return m.Payouts
	case Collection:
		return m.Collections && m.Type != ledger.MethodCrypto
	case Deposit:
		return m.Type == ledger.MethodBankTransfer && !m.noDeposits || m.Type == ledger.MethodCrypto && m.Collections
	}
	return false
}

// Fees is the method's fee schedule for direction dir; ok is false for a
// direction it does not serve. Every direction it serves has one (the
// catalogue does not parse otherwise): no fee is 0 by omission.
func (m *Method) Fees(dir Direction) (s ledger.FeeSchedule, ok bool) {
	if !m.Serves(dir) {
		return ledger.FeeSchedule{}, false
	}
	return m.fees[dir], true
}

// setFees sets the schedule of each direction the method serves: its own,
// else its type's.
func (m *Method) setFees(own, ofType feesRecord) error {
	for dir := Payout; dir < directions; dir++ {
		if !m.Serves(dir) {
			continue
		}
		s, ok := own[dir.String()]
		if !ok {
			s, ok = ofType[dir.String()]
		}
		if !ok || s.BasisPoints == nil {
			return fmt.Errorf("rails: method %s has no %s fee schedule (fees.%s.%s)", m.Code, dir, m.Type, dir)
		}
		if bps := *s.BasisPoints; bps < 0 || bps > 10_000 {
			return fmt.Errorf("rails: method %s: %s fee of %d basis points is out of range", m.Code, dir, bps)
		}
		m.fees[dir] = ledger.FeeSchedule{BasisPoints: *s.BasisPoints}
	}
	return nil
}

// Check validates a request to move amount of currency through method code:
// the method exists, supports the direction, is operational, carries the
// currency, and the amount is within its limits. field names the request
// field that holds the method code and amountField the amount, for the error.
func (c *Catalogue) Check(dir Direction, field, amountField, code, currency string, amount ledger.Minor) (Method, *ledger.Error) {
	m, e := c.CheckMethod(dir, field, code, currency)
	if e == nil {
		e = m.CheckAmount(amountField, amount)
	}
	if e != nil {
		return Method{}, e
	}
	return m, nil
}

// Lookup is Method for a request that names a method in field: a method
// a production deployment leaves out (Restrict) is refused as one no
// provider serves, any other code as unknown.
func (c *Catalogue) Lookup(field, code string) (Method, *ledger.Error) {
	m, ok := c.methods[code]
	switch {
	case ok:
		return m, nil
	case c.withheld[code]:
		return Method{}, ledger.FieldInvalid(field, fmt.Sprintf("%s: no provider serves this method on this deployment; see GET /v1/capabilities", code))
	}
	return Method{}, ledger.FieldInvalid(field, fmt.Sprintf("%q is not a known payment method; see GET /v1/capabilities", code))
}

// CheckMethod is Check without the amount: for a request that moves
// amounts through two methods, each to be checked once both are known.
func (c *Catalogue) CheckMethod(dir Direction, field, code, currency string) (Method, *ledger.Error) {
	m, e := c.Lookup(field, code)
	if e != nil {
		return Method{}, e
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
	return m, nil
}

// CheckAmount checks amount, in the method's currency, against its
// limits; amountField names the request field for the error.
func (m *Method) CheckAmount(amountField string, amount ledger.Minor) *ledger.Error {
	if amount < m.Min || amount > m.Max {
		cur, _ := ledger.LookupCurrency(m.Currency)
		return ledger.FieldInvalid(amountField, fmt.Sprintf("must be between %s and %s %s for %s",
			ledger.FormatMinor(m.Min, cur), ledger.FormatMinor(m.Max, cur), cur.Code, m.Code))
	}
	return nil
}

// Restrict is the catalogue a production deployment offers: the methods,
// and of each the directions, that serves says a provider instance serves
// (a stablecoin network's collections are its deposits). Capabilities,
// validation and the checkout then list exactly what is configured, and a
// request naming a method left out is told that no provider serves it.
// A country or network left with no method is left out.
func (c *Catalogue) Restrict(serves func(code string, dir Direction) bool) *Catalogue {
	out := &Catalogue{methods: map[string]Method{}, chains: c.chains, withheld: map[string]bool{}}
	offer := func(m Method) (Method, bool) {
		if m.Type == ledger.MethodCrypto {
			m.Collections = m.Collections && serves(m.Code, Deposit)
		} else {
			m.Collections = m.Collections && serves(m.Code, Collection)
		}
		m.Payouts = m.Payouts && serves(m.Code, Payout)
		m.noDeposits = m.noDeposits || m.Type == ledger.MethodBankTransfer && !serves(m.Code, Deposit)
		return m, m.Payouts || m.Collections || m.Serves(Deposit)
	}
	for code, m := range c.methods {
		if kept, ok := offer(m); ok {
			out.methods[code] = kept
		} else {
			out.withheld[code] = true
		}
	}
	for _, country := range c.countries {
		var methods []Method
		for _, m := range country.Methods {
			if kept, ok := out.methods[m.Code]; ok {
				methods = append(methods, kept)
			}
		}
		if len(methods) > 0 {
			country.Methods = methods
			out.countries = append(out.countries, country)
		}
	}
	for _, m := range c.networks {
		if kept, ok := out.methods[m.Code]; ok {
			out.networks = append(out.networks, kept)
		}
	}
	return out
}
