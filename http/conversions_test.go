package http_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Identifiers of quotes and conversions get placeholders in golden files
// like the others. (Ledger entry and transaction ids derive from sequence
// numbers, so they are the same on every run and stay as they are.)
func init() {
	volatile = append(volatile,
		struct {
			kind string
			re   *regexp.Regexp
		}{"qte", regexp.MustCompile(`qte_[a-z0-9]{20}`)},
		struct {
			kind string
			re   *regexp.Regexp
		}{"conv", regexp.MustCompile(`conv_[a-z0-9]{20}`)},
	)
}

// Dozens of executions of one quote at once, each on its own connection:
// one conversion is made, exactly one caller is told it created it, and
// every caller sees that conversion: those that joined the execution in
// flight get it (200, idempotent-replayed), those that arrived after it was
// applied are refused with bad_request naming it in details.existingId.
func TestConcurrentConversionOverHTTP(t *testing.T) {
	st := newStack(t, stackOptions{rateLimit: 1000})
	st.fund(st.key, "GHS", "1000.00", "seed")
	r := st.do("POST", "/v1/conversions/quote", st.key, `{"from":{"amount":"100.00","currency":"GHS"},"to":{"currency":"USD"}}`)
	st.mustStatus(r, 201)
	quoteID := r.json(t)["quote"].(map[string]any)["id"].(string)

	const n = 48
	type answer struct {
		status   int
		id       string
		replayed bool
	}
	answers := together(st, n, func(_ int, own *stack) {
		own.mustStatus(own.do("GET", "/v1/conversions/quote/"+quoteID, st.key, nil), 200)
	}, func(_ int, own *stack) answer {
		r := own.do("POST", "/v1/conversions", st.key, fmt.Sprintf(`{"quoteId":%q}`, quoteID))
		body := r.json(t)
		a := answer{status: r.status, replayed: r.header["idempotent-replayed"] == "true"}
		if c, ok := body["conversion"].(map[string]any); ok {
			a.id, _ = c["id"].(string)
		} else if d, ok := body["details"].(map[string]any); ok && body["error"] == "bad_request" {
			a.id, _ = d["existingId"].(string)
		}
		return a
	})
	ids := map[string]bool{}
	count := map[int]int{}
	for _, a := range answers {
		count[a.status]++
		ids[a.id] = true
		switch {
		case a.status == 201 && !a.replayed, a.status == 200 && a.replayed, a.status == 400:
		default:
			t.Errorf("status %d, replayed %v", a.status, a.replayed)
		}
	}
	t.Logf("statuses %v", count)
	if count[201] != 1 || len(ids) != 1 || ids[""] {
		t.Fatalf("statuses %v, conversion ids %v: want one conversion, created once, seen by every caller", count, ids)
	}
	list := st.do("GET", "/v1/conversions", st.key, nil).json(t)["data"].([]any)
	if len(list) != 1 {
		t.Fatalf("%d conversions", len(list))
	}
	for _, a := range st.do("GET", "/v1/accounts", st.key, nil).json(t)["data"].([]any) {
		acct := a.(map[string]any)
		want := map[string]string{"GHS": "900.00", "USD": "6.34"}[acct["currency"].(string)]
		if acct["totalBalance"] != want {
			t.Fatalf("%s balance %v, want %s", acct["currency"], acct["totalBalance"], want)
		}
	}
}

// minorOf reads a signed decimal string of a two-decimal currency as minor
// units, without floats.
func minorOf(t *testing.T, s string) int64 {
	t.Helper()
	neg := strings.HasPrefix(s, "-")
	whole, frac, ok := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	if !ok || len(frac) != 2 {
		t.Fatalf("amount %q", s)
	}
	v, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		t.Fatalf("amount %q: %v", s, err)
	}
	if neg {
		v = -v
	}
	return v
}

// Paging back through an account's ledger, by every view and page size,
// reproduces its balance exactly, and each row's running balance is the
// sum of the rows before it.
func TestLedgerPagingReproducesBalancesOverHTTP(t *testing.T) {
	st := newStack(t, stackOptions{rateLimit: 1000})
	st.fund(st.key, "GHS", "2000.00", "seed")
	for i := 0; i < 4; i++ {
		st.mustStatus(st.do("POST", "/v1/payouts", st.key, fmt.Sprintf(
			`{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":"%d.%02d"},"externalReference":"p-%d"}`, 10+i, 7*i, i)), 201)
		for _, pair := range [][2]string{{"GHS", "USD"}, {"USD", "GHS"}, {"GHS", "KES"}} {
			amount := "100.00"
			if pair[0] == "USD" {
				amount = "1.50"
			}
			q := st.do("POST", "/v1/conversions/quote", st.key, fmt.Sprintf(`{"from":{"amount":%q,"currency":%q},"to":{"currency":%q}}`, amount, pair[0], pair[1]))
			st.mustStatus(q, 201)
			id := q.json(t)["quote"].(map[string]any)["id"].(string)
			st.mustStatus(st.do("POST", "/v1/conversions", st.key, fmt.Sprintf(`{"quoteId":%q}`, id)), 201)
		}
	}
	accounts := st.do("GET", "/v1/accounts", st.key, nil).json(t)["data"].([]any)
	if len(accounts) != 3 {
		t.Fatalf("%d accounts", len(accounts))
	}
	for _, a := range accounts {
		acct := a.(map[string]any)
		number, currency := acct["id"].(string), acct["currency"].(string)
		total := minorOf(t, acct["totalBalance"].(string))
		views := []struct{ path, balance string }{
			{"/v1/accounts/" + number + "/ledger?limit=3", "balanceAfter"},
			{"/v1/ledger?accountNumber=" + number + "&limit=2", "balanceAfter"},
			{"/v1/ledger?currency=" + currency + "&limit=7", "balanceAfter"},
			{"/v1/transactions?currency=" + currency + "&limit=1", "runningBalance"},
			{"/v1/transactions?currency=" + currency + "&limit=100", "runningBalance"},
		}
		for _, v := range views {
			var rows []map[string]any
			path := v.path
			for pages := 0; ; pages++ {
				if pages > 100 {
					t.Fatalf("%s: paging does not end", v.path)
				}
				body := st.do("GET", path, st.key, nil).json(t)
				for _, r := range body["data"].([]any) {
					rows = append(rows, r.(map[string]any))
				}
				next, _ := body["nextCursor"].(string)
				if body["hasMore"] != true || next == "" {
					break
				}
				path = v.path + "&cursor=" + next
			}
			// Oldest first: the running balance is the sum so far.
			var sum int64
			for i := len(rows) - 1; i >= 0; i-- {
				sum += minorOf(t, rows[i]["amount"].(string))
				if got := minorOf(t, rows[i][v.balance].(string)); got != sum {
					t.Fatalf("%s: row %v has %s %d, running sum %d", v.path, rows[i]["id"], v.balance, got, sum)
				}
			}
			if sum != total || len(rows) == 0 {
				t.Fatalf("%s: %d rows sum to %d, totalBalance %d", v.path, len(rows), sum, total)
			}
		}
	}
}

// The CSV export holds the same rows as the JSON export, with the
// reference's columns.
func TestTransactionsExportCSV(t *testing.T) {
	st := newStack(t, stackOptions{})
	st.fund(st.key, "GHS", "300.00", "seed")
	st.mustStatus(st.do("POST", "/v1/payouts", st.key,
		`{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":"10.00"},"externalReference":"=cmd|evil"}`), 201)
	const rangeQuery = "/v1/transactions/export?from=2000-01-01&to=2999-12-31"
	rows := st.do("GET", rangeQuery, st.key, nil).json(t)["data"].([]any)
	r := st.do("GET", rangeQuery+"&format=csv", st.key, nil)
	st.mustStatus(r, 200)
	if !strings.HasPrefix(r.header["content-type"], "text/csv") || !strings.Contains(r.header["content-disposition"], "attachment") {
		t.Fatalf("headers %v", r.header)
	}
	records, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(records[0], ",") != "id,type,reference,amount,runningBalance,currency,description,status,relatedId,createdAt" {
		t.Fatalf("header %v", records[0])
	}
	if len(records) != len(rows)+1 || len(rows) != 3 {
		t.Fatalf("%d CSV records for %d JSON rows", len(records), len(rows))
	}
	for i, row := range rows {
		m := row.(map[string]any)
		rec := records[i+1]
		if rec[0] != m["id"] || rec[3] != m["amount"] || rec[4] != m["runningBalance"] || rec[7] != m["status"] {
			t.Fatalf("record %v, row %v", rec, m)
		}
	}
	// A reference that a spreadsheet would evaluate is quoted.
	if records[1][2] != "'=cmd|evil" {
		t.Fatalf("reference cell %q", records[1][2])
	}
}
