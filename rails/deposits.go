package rails

import (
	"slices"
	"strings"
)

// What the catalogue says about deposits: which currencies virtual accounts
// are issued in, and which (asset, chain) pairs take crypto deposits.

// VirtualAccountBank returns the bank that issues virtual accounts in
// currency: a currency has virtual accounts when a country that uses it has
// an operational bank rail, and the sandbox's bank is named after that
// country. ok is false for every other currency.
func (c *Catalogue) VirtualAccountBank(currency string) (bank string, ok bool) {
	for _, country := range c.countries {
		if country.Currency != currency {
			continue
		}
		for _, m := range country.Methods {
			if m.Type == "bank" && m.Status == "operational" {
				return "Sandbox Bank " + country.Name, true
			}
		}
	}
	return "", false
}

// VirtualAccountCurrencies lists the currencies virtual accounts are issued
// in, sorted.
func (c *Catalogue) VirtualAccountCurrencies() []string {
	var out []string
	for _, country := range c.countries {
		if _, ok := c.VirtualAccountBank(country.Currency); ok && !slices.Contains(out, country.Currency) {
			out = append(out, country.Currency)
		}
	}
	slices.Sort(out)
	return out
}

// DepositNetwork returns the stablecoin network that takes deposits of
// currency on chain (a catalogue chain id): an operational network that
// supports collections and has an address generator.
func (c *Catalogue) DepositNetwork(currency, chain string) (Method, bool) {
	for _, m := range c.networks {
		if m.Currency == currency && m.Chain == chain && m.Collections && m.Status == "operational" {
			if _, known := chainNames[m.Chain]; known {
				return m, true
			}
		}
	}
	return Method{}, false
}

// DepositNetworks lists the pairs DepositNetwork accepts, as "USDC on
// Solana", for error messages.
func (c *Catalogue) DepositNetworks() string {
	var pairs []string
	for _, m := range c.networks {
		if _, ok := c.DepositNetwork(m.Currency, m.Chain); ok {
			pairs = append(pairs, m.Currency+" on "+ChainName(m.Chain))
		}
	}
	return strings.Join(pairs, ", ")
}
