package rails

import (
	"slices"
	"strings"

	"payments/ledger"
)

// What the catalogue says about deposits: which currencies virtual accounts
// are issued in, and which (asset, chain) pairs take crypto deposits.

// VirtualAccountBank returns the bank that issues virtual accounts in
// currency: a currency has virtual accounts when a country that uses it has
// an operational bank rail, and the sandbox's bank is named after that
// country. ok is false for every other currency.
func (c *Catalogue) VirtualAccountBank(currency string) (bank string, ok bool) {
	_, bank, ok = c.virtualAccountIssuer(currency)
	return bank, ok
}

// VirtualAccountMethod is the bank rail whose currency's virtual accounts
// take deposits (its Deposit fees price them); ok as for
// VirtualAccountBank.
func (c *Catalogue) VirtualAccountMethod(currency string) (Method, bool) {
	m, _, ok := c.virtualAccountIssuer(currency)
	return m, ok
}

func (c *Catalogue) virtualAccountIssuer(currency string) (m Method, bank string, ok bool) {
	for _, country := range c.countries {
		if country.Currency != currency {
			continue
		}
		for _, m := range country.Methods {
			if m.Type == ledger.MethodBankTransfer && m.Status == "operational" {
				return m, "Sandbox Bank " + country.Name, true
			}
		}
	}
	return Method{}, "", false
}

// Network returns the stablecoin network of currency on chain, whatever
// its status: the one an existing deposit address of that pair is on.
func (c *Catalogue) Network(currency, chain string) (Method, bool) {
	for _, m := range c.networks {
		if m.Currency == currency && m.Chain == chain {
			return m, true
		}
	}
	return Method{}, false
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
// currency on chain (a catalogue chain code): an operational network that
// supports collections, on a chain the address generator serves.
func (c *Catalogue) DepositNetwork(currency, chain string) (Method, bool) {
	for _, m := range c.networks {
		if m.Currency == currency && m.Chain == chain && m.Collections && m.Status == "operational" {
			if _, err := DepositAddress(m.Chain, nil); err == nil {
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
			pairs = append(pairs, m.Currency+" on "+c.chainName(m.Chain))
		}
	}
	return strings.Join(pairs, ", ")
}

// ParseChain returns the chain whose code or name is name, in any case
// ("Solana", "solana").
func (c *Catalogue) ParseChain(name string) (Chain, bool) {
	for _, ch := range c.chains {
		if strings.EqualFold(ch.Code, name) || strings.EqualFold(ch.Name, name) {
			return ch, true
		}
	}
	return Chain{}, false
}

// ChainNames lists the names of the catalogue's chains, sorted.
func (c *Catalogue) ChainNames() []string {
	var out []string
	for _, ch := range c.chains {
		out = append(out, ch.Name)
	}
	slices.Sort(out)
	return out
}

func (c *Catalogue) chainName(code string) string {
	if ch, ok := c.chains[code]; ok {
		return ch.Name
	}
	return code
}

// ChainName returns the name the API shows for a chain code of the
// embedded catalogue ("Solana" for "solana"); an unknown code is returned
// as is.
func ChainName(code string) string { return DefaultCatalogue().chainName(code) }
