package money

import (
	"bytes"
	"encoding/csv"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"payments/http/core"
	"payments/ledger"
	"payments/ledger/conversions"
	"payments/ledger/publicids"
)

// Balance accounts and the ledger views: each account with its balances
// (GET /v1/accounts, one per currency) and its statement (GET
// /v1/accounts/{id}/ledger); the organization's journal as ledger entries
// (GET /v1/ledger, the same rows as the statements) and as transactions
// (GET /v1/transactions, with a description, the related resource's status
// and the running balance), and the transactions export.
// Every view is a merge of the organization's account statements, newest
// first by sequence; paging back to the start reproduces each balance.
// Each answer reads one pinned view of the state store: one command books
// on several accounts (a conversion's two legs) and changes the resource
// a transaction describes (a failed payout's refund and its status).

func init() {
	// Reads only: no view writes.
	read := func(path string, list, get func(*core.Call)) []core.Endpoint {
		return core.Resource(path, ledger.ScopeBalancesRead, 0, core.Handlers{List: list, Get: get})
	}
	core.RegisterRoutes(read("/v1/accounts", listAccounts, getAccount)...)
	core.RegisterRoutes(read("/v1/ledger", listLedger, getLedgerEntry)...)
	core.RegisterRoutes(read("/v1/transactions", listTransactions, getTransaction)...)
	core.RegisterRoutes(
		core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/accounts/{id}/ledger", Scope: ledger.ScopeBalancesRead, H: accountLedger},
		core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/transactions/export", Scope: ledger.ScopeBalancesRead, H: exportTransactions},
	)
	core.RegisterEventRenderer(ledger.SubjectAccount, core.RenderAs(renderAccount))
}

// Cursor kinds of the journal views.
const (
	listJournalKind      core.ListKind = 'j'
	listTransactionsKind core.ListKind = 't'
)

// exportRowsMax bounds one export.
const exportRowsMax = 10_000

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

type ledgerEntryBody struct {
	LedgerEntry entryJSON `json:"ledgerEntry"`
}

// listLedger: GET /v1/ledger.
func listLedger(c *core.Call) {
	limit, before, ok := c.Page(listJournalKind)
	if !ok {
		return
	}
	var f ledger.JournalFilter
	var p core.Problems
	f.Account, _ = core.Query(c.Ctx, "accountNumber")
	if v, ok := core.Query(c.Ctx, "currency"); ok {
		if _, known := ledger.LookupCurrency(v); !known {
			p.Add("currency", "is not a supported currency (codes are upper case, e.g. GHS)")
		}
		f.Currency = v
	}
	ef := entryFilter(c, &p)
	f.Type, f.RefID, f.From, f.To = ef.Type, ef.RefID, ef.From, ef.To
	if c.Refused(p) {
		return
	}
	var page ledger.Page[ledger.NumberedEntry]
	var currencies map[string]string
	found := true
	{
		s, release := c.Server.Config.Actors.Reader().Pinned()
		defer release()
		if f.Account != "" {
			a, ok := s.Account(f.Account)
			found = ok && a.OrgID == c.Org
		}
		if found {
			page = s.Journal(c.Org, f, before, limit)
			currencies = accountCurrencies(s, c.Org)
		}
	}
	if !found {
		c.Fail(core.NotFound("Account"))
		return
	}
	c.OK(fasthttp.StatusOK, core.NewList(listJournalKind, page, func(n *ledger.NumberedEntry) entryJSON {
		return renderEntry(c.Server.PublicIDs(), n, currencies[n.Entry.Account])
	}))
}

// accountCurrencies maps the organization's account numbers to currencies.
func accountCurrencies(s *ledger.Reader, org string) map[string]string {
	out := map[string]string{}
	for _, a := range s.Accounts(org) {
		out[a.Number] = a.Currency
	}
	return out
}

// getLedgerEntry: GET /v1/ledger/{id}.
func getLedgerEntry(c *core.Call) {
	ids := c.Server.PublicIDs()
	if e, ok := core.Lookup(c, "id", "Ledger entry", func(st *ledger.Reader, id string) (entryJSON, bool) {
		seq, ok := ids.ParseEntryID(id)
		if !ok {
			return entryJSON{}, false
		}
		n, a, ok := st.OrgEntry(c.Org, seq)
		if !ok {
			return entryJSON{}, false
		}
		return renderEntry(ids, &n, a.Currency), true
	}); ok {
		c.OK(fasthttp.StatusOK, &ledgerEntryBody{e})
	}
}

type transactionJSON struct {
	ID             string  `json:"id"`
	Type           string  `json:"type"`
	Reference      *string `json:"reference"`
	Amount         string  `json:"amount"`
	RunningBalance string  `json:"runningBalance"`
	Currency       string  `json:"currency"`
	Description    string  `json:"description"`
	Status         string  `json:"status"`
	RelatedID      *string `json:"relatedId"`
	CreatedAt      string  `json:"createdAt"`
}

type transactionBody struct {
	Transaction transactionJSON `json:"transaction"`
}

// transactionID is a transaction's id: its entry's id with the raw ledger
// type as a middle segment, "le_payout_debit_…".
func transactionID(ids *publicids.IDs, n *ledger.NumberedEntry) string {
	return "le_" + n.Entry.Type.String() + "_" + strings.TrimPrefix(ids.EntryID(n.Seq), "le_")
}

// parseTransactionID returns the sequence number and type name of a
// transaction id.
func parseTransactionID(ids *publicids.IDs, id string) (uint64, string, bool) {
	i := strings.LastIndexByte(id, '_')
	if !strings.HasPrefix(id, "le_") || i <= len("le_") {
		return 0, "", false
	}
	seq, ok := ids.ParseEntryID("le_" + id[i+1:])
	return seq, id[len("le_"):i], ok
}

// transactionTypes maps ledger entry types to the transaction types of
// the API; types not here pass through under their ledger name.
var transactionTypes = map[string]string{
	"manual_credit":         "topup",
	"payout_debit":          "payout",
	"payout_refund":         "refund",
	"fee_debit":             "fee",
	"fee_refund":            "fee_refund",
	"conversion_debit":      "conversion",
	"conversion_credit":     "conversion",
	"collection_credit":     "collection",
	"collection_fee_debit":  "collection_fee",
	"crypto_deposit":        "deposit",
	"batch_reserve":         "reserve",
	"batch_reserve_release": "reserve_release",
}

// renderTransaction renders an entry of a merchant account as a
// transaction, describing it from the resource that booked it, as s reads
// it: one pinned view for a page of transactions.
func renderTransaction(ids *publicids.IDs, s *ledger.Reader, n *ledger.NumberedEntry, currency string) transactionJSON {
	e := &n.Entry
	raw := e.Type.String()
	typ, ok := transactionTypes[raw]
	if !ok {
		typ = raw
	}
	t := transactionJSON{
		ID:             transactionID(ids, n),
		Type:           typ,
		Amount:         core.Money(e.Amount, currency),
		RunningBalance: core.Money(e.BalanceAfter, currency),
		Currency:       currency,
		Status:         "completed",
		CreatedAt:      core.Timestamp(e.At),
	}
	if !strings.HasPrefix(e.RefID, "le_") { // a top-up refers to its own entry
		t.RelatedID = core.Optional(e.RefID)
	}
	switch {
	case strings.HasPrefix(e.RefID, "pay_"):
		t.Reference = core.Optional(e.ExternalRef)
		p, _ := s.Payout(e.RefID)
		t.Status = p.Status.String()
		dest := core.FirstNonEmpty(p.Spec.AccountNumber, p.Spec.Address)
		switch e.Type {
		case ledger.EntryFeeDebit:
			t.Description = "Fee for payout to " + dest + " (" + p.Spec.Method + ")"
		case ledger.EntryFeeRefund:
			t.Description = "Fee refunded: payout to " + dest + " failed"
		case ledger.EntryPayoutRefund:
			t.Description = "Refund: payout to " + dest + " (" + p.Spec.Method + ") failed"
		default:
			t.Description = "Payout to " + dest + " (" + p.Spec.Method + ")"
		}
	case strings.HasPrefix(e.RefID, "conv_"):
		a, _ := s.Account(e.Account)
		conv, _ := conversions.Get(s, a.OrgID, e.RefID)
		t.Status = conv.Status.String()
		t.Description = "Conversion of " + conv.FromCurrency + " " + core.Money(conv.FromAmount, conv.FromCurrency) +
			" to " + conv.ToCurrency + " " + core.Money(conv.ToAmount, conv.ToCurrency) + " at " + conv.Rate
	case strings.HasPrefix(e.RefID, "col_"):
		col, _ := s.Collection(e.RefID)
		t.Status = col.Status.String()
		if e.Type == ledger.EntryCollectionFeeDebit {
			t.Description = "Fee for collection from " + col.Spec.PayerNumber + " (" + col.Spec.Method + ")"
		} else {
			t.Description = "Collection from " + col.Spec.PayerNumber + " (" + col.Spec.Method + ")"
		}
	case e.Type == ledger.EntryManualCredit:
		t.Description = "Balance funded"
		if e.ExternalRef != "" {
			t.Description += " (" + e.ExternalRef + ")"
		}
	default:
		t.Description = strings.ReplaceAll(raw, "_", " ")
		if e.RefID != "" {
			t.Description += " (" + ids.PublicRef(e.RefID) + ")"
		}
	}
	return t
}

// transactionFilter reads the currency, from and to of a transactions
// request. from and to are ISO dates or timestamps, inclusive; a bare date
// in to covers the whole day.
func transactionFilter(ctx *fasthttp.RequestCtx, required bool) (ledger.JournalFilter, *ledger.Error) {
	var f ledger.JournalFilter
	var p core.Problems
	if v, ok := core.Query(ctx, "currency"); ok {
		if _, known := ledger.LookupCurrency(v); !known {
			p.Add("currency", "is not a supported currency (codes are upper case, e.g. GHS)")
		}
		f.Currency = v
	}
	for _, name := range []string{"from", "to"} {
		v, ok := core.Query(ctx, name)
		if !ok {
			if required {
				p.Add(name, "is required: an ISO date (2026-08-01) or timestamp")
			}
			continue
		}
		ms, ok := parseDateOrTime(v, name == "to")
		if !ok {
			p.Add(name, "must be an ISO date (2026-08-01) or timestamp (2026-08-01T09:00:00Z)")
			continue
		}
		if name == "from" {
			f.From = ms
		} else {
			f.To = ms
		}
	}
	if f.From != 0 && f.To != 0 && f.To < f.From {
		p.Add("to", "must not be before from")
	}
	return f, p.Err()
}

// parseDateOrTime reads an ISO 8601 date or timestamp as unix ms. A bare
// date is the start of the day (UTC), or with endOfDay its last millisecond.
func parseDateOrTime(v string, endOfDay bool) (int64, bool) {
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if endOfDay {
			return d.AddDate(0, 0, 1).UnixMilli() - 1, true
		}
		return d.UnixMilli(), true
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
}

// listTransactions: GET /v1/transactions.
func listTransactions(c *core.Call) {
	limit, before, ok := c.Page(listTransactionsKind)
	if !ok {
		return
	}
	f, e := transactionFilter(c.Ctx, false)
	if e != nil {
		c.Fail(e)
		return
	}
	body := core.ListBody[transactionJSON]{}
	{
		s, release := c.Server.Config.Actors.Reader().Pinned()
		defer release()
		page := s.Journal(c.Org, f, before, limit)
		currencies := accountCurrencies(s, c.Org)
		body = core.NewList(listTransactionsKind, page, func(n *ledger.NumberedEntry) transactionJSON {
			return renderTransaction(c.Server.PublicIDs(), s, n, currencies[n.Entry.Account])
		})
	}
	c.OK(fasthttp.StatusOK, &body)
}

// getTransaction: GET /v1/transactions/{id}.
func getTransaction(c *core.Call) {
	ids := c.Server.PublicIDs()
	if t, ok := core.Lookup(c, "id", "Transaction", func(st *ledger.Reader, id string) (transactionJSON, bool) {
		seq, typ, ok := parseTransactionID(ids, id)
		if !ok {
			return transactionJSON{}, false
		}
		n, a, ok := st.OrgEntry(c.Org, seq)
		if !ok || n.Entry.Type.String() != typ {
			return transactionJSON{}, false
		}
		return renderTransaction(ids, st, &n, a.Currency), true
	}); ok {
		c.OK(fasthttp.StatusOK, &transactionBody{t})
	}
}

// exportTransactions: GET /v1/transactions/export. Every transaction in
// the range, newest first, as JSON rows or a CSV attachment; at most
// exportRowsMax rows, a larger range is refused so the export is never
// silently cut. With email, the answer is the reference's 200 {message};
// this deployment has no mail transport, so the message says that nothing
// was sent and how to download the file instead.
func exportTransactions(c *core.Call) {
	f, e := transactionFilter(c.Ctx, true)
	var p core.Problems
	if e != nil {
		p = append(p, e.Fields...)
	}
	format := "json"
	if v, ok := core.Query(c.Ctx, "format"); ok {
		format = v
		if v != "json" && v != "csv" {
			p.Add("format", "must be json or csv")
		}
	}
	email, emailed := core.Query(c.Ctx, "email")
	if emailed {
		if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > 254 {
			p.Add("email", "must be an email address such as finance@example.com")
		}
	}
	if c.Refused(p) {
		return
	}
	if emailed {
		c.OK(fasthttp.StatusOK, &struct {
			Message string `json:"message"`
		}{"Email delivery is not configured on this deployment, so no export was sent to " + email +
			"; request the export without email to download it"})
		return
	}
	release, busy := exports(c.Server).acquire(c.Org)
	if busy != nil {
		c.Fail(busy)
		return
	}
	defer release()
	s, unpin := c.Server.Config.Actors.Reader().Pinned()
	defer unpin()
	page := s.Journal(c.Org, f, ledger.CursorStart, exportRowsMax)
	if page.HasMore {
		c.Fail(ledger.FieldInvalid("from", "selects more than "+strconv.Itoa(exportRowsMax)+" transactions: export a shorter range"))
		return
	}
	currencies := accountCurrencies(s, c.Org)
	rows := make([]transactionJSON, 0, len(page.Items))
	for i := range page.Items {
		rows = append(rows, renderTransaction(c.Server.PublicIDs(), s, &page.Items[i], currencies[page.Items[i].Entry.Account]))
	}
	if format == "json" {
		c.OK(fasthttp.StatusOK, &struct {
			Data []transactionJSON `json:"data"`
		}{rows})
		return
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"id", "type", "reference", "amount", "runningBalance", "currency", "description", "status", "relatedId", "createdAt"})
	deref := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	for _, t := range rows {
		w.Write([]string{t.ID, t.Type, csvText(deref(t.Reference)), t.Amount, t.RunningBalance, t.Currency,
			csvText(t.Description), t.Status, deref(t.RelatedID), t.CreatedAt})
	}
	w.Flush()
	c.Ctx.Response.Header.Set("Content-Disposition", `attachment; filename="transactions.csv"`)
	c.Ctx.SetContentType("text/csv; charset=utf-8")
	c.Ctx.SetStatusCode(fasthttp.StatusOK)
	c.Ctx.SetBody(buf.Bytes())
}

// csvText guards a caller-supplied text cell against spreadsheet formula
// injection: a cell that a spreadsheet would evaluate gets a leading quote.
func csvText(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}
