package core

import (
	"github.com/valyala/fasthttp"

	"payments/ledger"
)

func init() {
	registerRoutes(
		endpoint{fasthttp.MethodGet, "/v1/organization", 0, (*call).getOrganization, nil},
		endpoint{fasthttp.MethodGet, "/v1/accounts", ledger.ScopeBalancesRead, (*call).listAccounts, nil},
		endpoint{fasthttp.MethodGet, "/v1/accounts/{id}", ledger.ScopeBalancesRead, (*call).getAccount, nil},
		endpoint{fasthttp.MethodGet, "/v1/accounts/{id}/ledger", ledger.ScopeBalancesRead, (*call).accountLedger, nil},
	)
	registerEventRenderer(ledger.SubjectAccount, renderAs(renderAccount))
}

type accountBody struct {
	Account accountJSON `json:"account"`
}

// listAccounts: GET /v1/accounts. One account per currency; not paginated.
func (c *call) listAccounts() {
	var accounts []ledger.Account
	accounts = c.s.cfg.Actors.Reader().Accounts(c.org)
	c.ok(fasthttp.StatusOK, newList(0, ledger.Page[ledger.Account]{Items: accounts}, c.s.renderAccountNow))
}

// account finds the caller's account named by the path.
func (c *call) account() (ledger.Account, bool) {
	return lookup(c, "id", "Account", func(st *ledger.Reader, id string) (ledger.Account, bool) {
		a, ok := st.Account(id)
		return a, ok && a.OrgID == c.org
	})
}

// getAccount: GET /v1/accounts/{id}.
func (c *call) getAccount() {
	if a, ok := c.account(); ok {
		c.ok(fasthttp.StatusOK, &accountBody{c.s.renderAccountNow(&a)})
	}
}

// accountLedger: GET /v1/accounts/{id}/ledger, the account's statement.
func (c *call) accountLedger() {
	a, ok := c.account()
	if !ok {
		return
	}
	limit, before, e := pageParams(c.ctx, listEntries, 20)
	if e != nil {
		c.fail(e)
		return
	}
	var f ledger.EntryFilter
	var p problems
	if v, ok := query(c.ctx, "type"); ok {
		t, known := ledger.ParseEntryType(v)
		if !known {
			p.add("type", "is not a ledger entry type")
		}
		f.Type = t
	}
	f.RefID, _ = query(c.ctx, "referenceId")
	f.RefID = c.s.publicIDs().InternalEntryRef(f.RefID)
	var err *ledger.Error
	if f.From, err = queryTime(c.ctx, "from"); err != nil {
		p = append(p, err.Fields...)
	}
	if f.To, err = queryTime(c.ctx, "to"); err != nil {
		p = append(p, err.Fields...)
	}
	if e := p.err(); e != nil {
		c.fail(e)
		return
	}
	var page ledger.Page[ledger.NumberedEntry]
	page = c.s.cfg.Actors.Reader().Statement(a.Number, f, before, limit)
	c.ok(fasthttp.StatusOK, newList(listEntries, page, func(n *ledger.NumberedEntry) entryJSON {
		return renderEntry(c.s.publicIDs(), n, a.Currency)
	}))
}

type organizationBody struct {
	Organization organizationJSON `json:"organization"`
}

// getOrganization: GET /v1/organization, the caller's own organization.
func (c *call) getOrganization() {
	var o ledger.Organization
	var found bool
	o, found = c.s.cfg.Actors.Reader().Organization(c.org)
	if !found {
		c.fail(notFound("Organization"))
		return
	}
	c.ok(fasthttp.StatusOK, &organizationBody{renderOrganization(&o)})
}
