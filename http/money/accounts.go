package money

import (
	"github.com/valyala/fasthttp"

	"payments/http/core"
	"payments/ledger"
)

func init() {
	core.RegisterRoutes(
		core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/accounts", Scope: ledger.ScopeBalancesRead, H: listAccounts},
		core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/accounts/{id}", Scope: ledger.ScopeBalancesRead, H: getAccount},
		core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/accounts/{id}/ledger", Scope: ledger.ScopeBalancesRead, H: accountLedger},
	)
	core.RegisterEventRenderer(ledger.SubjectAccount, core.RenderAs(renderAccount))
}

type accountBody struct {
	Account accountJSON `json:"account"`
}

// listAccounts: GET /v1/accounts. One account per currency; not paginated.
// The balances are of one moment (a pinned view): a conversion moves two.
func listAccounts(c *core.Call) {
	st, release := c.Server.Config.Actors.Reader().Pinned()
	accounts := st.Accounts(c.Org)
	release()
	c.OK(fasthttp.StatusOK, core.NewList(0, ledger.Page[ledger.Account]{Items: accounts}, func(a *ledger.Account) accountJSON { return renderAccountNow(c.Server, a) }))
}

// account finds the caller's account named by the path.
func account(c *core.Call) (ledger.Account, bool) {
	return core.Lookup(c, "id", "Account", func(st *ledger.Reader, id string) (ledger.Account, bool) {
		a, ok := st.Account(id)
		return a, ok && a.OrgID == c.Org
	})
}

// getAccount: GET /v1/accounts/{id}.
func getAccount(c *core.Call) {
	if a, ok := account(c); ok {
		c.OK(fasthttp.StatusOK, &accountBody{renderAccountNow(c.Server, &a)})
	}
}

// accountLedger: GET /v1/accounts/{id}/ledger, the account's statement.
func accountLedger(c *core.Call) {
	a, ok := account(c)
	if !ok {
		return
	}
	ids := c.Server.PublicIDs()
	core.List(c, core.ListEntries, func(c *core.Call) (ledger.EntryFilter, *ledger.Error) {
		var p core.Problems
		f := entryFilter(c, &p)
		return f, p.Err()
	}, func(st *ledger.Reader, _ string, f ledger.EntryFilter, before ledger.Cursor, limit int) ledger.Page[ledger.NumberedEntry] {
		return st.Statement(a.Number, f, before, limit)
	}, func(n *ledger.NumberedEntry) entryJSON { return renderEntry(ids, n, a.Currency) })
}

// entryFilter reads the filters an account's statement and the journal
// share: type, referenceId (a public id), from and to.
func entryFilter(c *core.Call, p *core.Problems) ledger.EntryFilter {
	var f ledger.EntryFilter
	if v, ok := core.Query(c.Ctx, "type"); ok {
		t, known := ledger.ParseEntryType(v)
		if !known {
			p.Add("type", "is not a ledger entry type")
		}
		f.Type = t
	}
	f.RefID, _ = core.Query(c.Ctx, "referenceId")
	f.RefID = c.Server.PublicIDs().InternalEntryRef(f.RefID)
	f.From = p.QueryTime(c.Ctx, "from")
	f.To = p.QueryTime(c.Ctx, "to")
	return f
}
