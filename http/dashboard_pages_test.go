package http_test

import (
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"payments/ledger"
	"payments/rails"
)

// A member of organization B sees nothing of A through the pages: not its
// keys, payouts, webhooks or requests, in the lists or by address; and B's
// forms act on B only. The pages call the API's handlers as the member, so
// this holds the handlers to the member's organization.
func TestDashboardPagesKeepOrganizationsApart(t *testing.T) {
	st := newStack(t, stackOptions{})
	ownerA := setUpDashboardOwner(t, st, "a@pages.example")

	// A's things, made through the API with A's bootstrap key.
	r := st.do("POST", "/v1/keys", st.key, map[string]any{"name": "A's secret key"})
	if r.status != 201 {
		t.Fatalf("A's key: %d %s", r.status, r.body)
	}
	aKey := r.json(t)["key"].(map[string]any)["id"].(string)
	st.mustStatus(st.do("POST", "/v1/simulations/fund-balance", st.key, map[string]any{"amount": "900.00", "currency": "GHS", "externalReference": "a-fund"}), 201)
	r = st.do("POST", "/v1/payouts", st.key, mtnGHS("to", "12.00", "a-payout"))
	if r.status != 201 {
		t.Fatalf("A's payout: %d %s", r.status, r.body)
	}
	aPayout := r.json(t)["payout"].(map[string]any)["id"].(string)
	aRequest := r.header["x-request-id"]
	r = st.do("POST", "/v1/webhooks/endpoints", st.key, map[string]any{"url": "http://127.0.0.1:1/a-hook", "events": []string{"*"}})
	if r.status != 201 {
		t.Fatalf("A's endpoint: %d %s", r.status, r.body)
	}
	r = st.do("POST", "/v1/webhooks/endpoints/"+r.json(t)["endpoint"].(map[string]any)["id"].(string)+"/test", st.key, nil)
	if r.status != 200 {
		t.Fatalf("A's test event: %d %s", r.status, r.body)
	}
	aDelivery := r.json(t)["test"].(map[string]any)["deliveryId"].(string)

	// A's owner sees them.
	keysA := ownerA.get("/dashboard/keys")
	wantDashStatus(t, "A's keys page", keysA, 200)
	if !strings.Contains(keysA.body, "A&#39;s secret key") && !strings.Contains(keysA.body, "A's secret key") {
		t.Fatalf("A's keys page does not show A's key: %s", keysA.body)
	}
	wantDashStatus(t, "A's payout page", ownerA.get("/dashboard/payouts/"+aPayout), 200)
	deliveryA := ownerA.get("/dashboard/webhooks/deliveries/" + aDelivery)
	wantDashStatus(t, "A's delivery page", deliveryA, 200)
	if !strings.Contains(deliveryA.body, `data-attempt="1"`) || !strings.Contains(deliveryA.body, "connection refused") {
		t.Fatalf("A's delivery page does not show its attempt: %s", deliveryA.body)
	}

	// Organization B and its first owner.
	ownerB := setUpOrgBOwner(t, st, "b@pages.example", "inv_pagesb", "setup-link-token-of-pages-org-b-0123456789a")

	for _, path := range []string{"/dashboard", "/dashboard/keys", "/dashboard/payouts", "/dashboard/webhooks", "/dashboard/requests", "/dashboard/ledger"} {
		p := ownerB.get(path)
		wantDashStatus(t, "B's "+path, p, 200)
		for _, a := range []string{aKey, aPayout, aRequest, aDelivery, "secret key", "a-payout", "900.00", "a-hook"} {
			if strings.Contains(p.body, a) {
				t.Errorf("B's %s shows A's %q", path, a)
			}
		}
	}
	wantDashStatus(t, "A's key on B's key page", ownerB.get("/dashboard/keys/"+aKey), 404)
	wantDashStatus(t, "A's payout on B's payout page", ownerB.get("/dashboard/payouts/"+aPayout), 404)
	wantDashStatus(t, "A's request on B's request page", ownerB.get("/dashboard/requests/"+aRequest), 404)
	wantDashStatus(t, "A's delivery on B's delivery page", ownerB.get("/dashboard/webhooks/deliveries/"+aDelivery), 404)
	webhooksB := ownerB.get("/dashboard/webhooks")
	wantDashStatus(t, "B replaying A's delivery", ownerB.post("/dashboard/webhooks/deliveries/"+aDelivery+"/replay",
		url.Values{"csrf": {webhooksB.csrf(t)}, "from": {"delivery"}}), 404)
	r = st.do("GET", "/v1/webhooks/deliveries/"+aDelivery, st.key, nil)
	if d := r.json(t)["delivery"].(map[string]any); r.status != 200 || d["status"] != "failed" || d["attempts"] != 1.0 {
		t.Fatalf("A's delivery after B's replay: %d %s", r.status, r.body)
	}

	// B's owner revoking A's key by its id: not found, and A's key works.
	keysB := ownerB.get("/dashboard/keys")
	wantDashStatus(t, "B revoking A's key", ownerB.post("/dashboard/keys/"+aKey+"/revoke", url.Values{"csrf": {keysB.csrf(t)}, "confirm": {"yes"}}), 404)
	r = st.do("GET", "/v1/keys/"+aKey, st.key, nil)
	if r.status != 200 || r.json(t)["key"].(map[string]any)["status"] != "active" {
		t.Fatalf("A's key after B's attempt: %d %s", r.status, r.body)
	}
}

// A page answers a form without its session's CSRF token with 403 and
// does nothing; with it, the API's answer decides, the member's role's
// scopes included.
func TestDashboardPagesCSRFAndRoles(t *testing.T) {
	st := newStack(t, stackOptions{})
	owner := setUpDashboardOwner(t, st, "owner@pages.example")
	keys := owner.get("/dashboard/keys")
	wantDashStatus(t, "the keys page", keys, 200)
	wantDashStatus(t, "a key form without its CSRF token", owner.post("/dashboard/keys", url.Values{"name": {"No token"}}), 403)
	wantDashStatus(t, "a key form with another token", owner.post("/dashboard/keys", url.Values{"name": {"No token"}, "csrf": {"x" + keys.csrf(t)}}), 403)
	created := owner.post("/dashboard/keys", url.Values{"name": {"With token"}, "csrf": {keys.csrf(t)}, "capDaily": {"-1"}})
	wantDashStatus(t, "a key with a negative cap", created, 400)
	if !strings.Contains(created.body, "spendCaps.daily") {
		t.Fatalf("the page does not name the API's field: %s", created.body)
	}
	created = owner.post("/dashboard/keys", url.Values{"name": {"With token"}, "csrf": {keys.csrf(t)}, "capDaily": {"25.00"}, "ipAllowlist": {"10.0.0.0/8\n192.0.2.7"}})
	wantDashStatus(t, "a key with its token", created, 201)
	if cc := created.header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("the page with a new secret is cached: %q", cc)
	}
	r := st.do("GET", "/v1/keys", st.key, nil)
	var made map[string]any
	for _, k := range r.json(t)["data"].([]any) {
		if k.(map[string]any)["name"] == "With token" {
			made = k.(map[string]any)
		}
		if k.(map[string]any)["name"] == "No token" {
			t.Fatal("a form without its CSRF token created a key")
		}
	}
	if made == nil || made["spendCaps"].(map[string]any)["daily"] != "25.00" || len(made["ipAllowlist"].([]any)) != 2 {
		t.Fatalf("the key made by the page: %v", made)
	}
}

// On production the pages name the stack, offer no sandbox tools, and a
// sandbox form sent anyway is refused by the API's own check.
func TestDashboardPagesOnProduction(t *testing.T) {
	st := newStack(t, stackOptions{live: true})
	owner := setUpDashboardOwner(t, st, "owner@live.example")
	home := owner.get("/dashboard")
	wantDashStatus(t, "the home page", home, 200)
	if !strings.Contains(home.body, `id="stack">Production<`) || strings.Contains(home.body, `href="/dashboard/sandbox"`) {
		t.Fatalf("the production home page: %s", home.body)
	}
	tools := owner.get("/dashboard/sandbox")
	wantDashStatus(t, "the sandbox page", tools, 200)
	if !strings.Contains(tools.body, "no sandbox tools") || strings.Contains(tools.body, `id="fund"`) {
		t.Fatalf("the sandbox page on production: %s", tools.body)
	}
	fund := owner.post("/dashboard/sandbox/fund", url.Values{"csrf": {home.csrf(t)}, "amount": {"100.00"}, "currency": {"GHS"}, "externalReference": {"x"}})
	if fund.status < 400 || !strings.Contains(fund.body, `id="problem"`) {
		t.Fatalf("funding on production: %d %s", fund.status, fund.body)
	}
}

// mtnGHS is the body of a payout (side "to") or a collection (side "from")
// of amount GHS by MTN Mobile Money Ghana, under ref.
func mtnGHS(side, amount, ref string) map[string]any {
	return map[string]any{
		side:                map[string]any{"code": "gh_mtn", "currency": "GHS", "accountNumber": "233241234567", "amount": amount},
		"externalReference": ref,
	}
}

var nextPage = regexp.MustCompile(`id="next-page" href="([^"]+)"`)

// A money list pages back with the API's cursor, keeping its filters.
func TestDashboardPagesCursorPaging(t *testing.T) {
	st := newStack(t, stackOptions{})
	owner := setUpDashboardOwner(t, st, "owner@paging.example")
	st.mustStatus(st.do("POST", "/v1/simulations/fund-balance", st.key, map[string]any{"amount": "9000.00", "currency": "GHS", "externalReference": "fund"}), 201)
	for i := range 21 {
		st.mustStatus(st.do("POST", "/v1/collections", st.key, mtnGHS("from", "10.00", fmt.Sprintf("c-%02d", i))), 201)
	}
	first := owner.get("/dashboard/collections?currency=GHS")
	wantDashStatus(t, "the first page", first, 200)
	m := nextPage.FindStringSubmatch(first.body)
	if m == nil || !strings.Contains(first.body, "c-20") || strings.Contains(first.body, "c-00") {
		t.Fatalf("the first page of collections: %s", first.body)
	}
	next := html.UnescapeString(m[1])
	if u, err := url.Parse(next); err != nil || u.Query().Get("currency") != "GHS" || u.Query().Get("cursor") == "" {
		t.Fatalf("the next page's address %q", next)
	}
	second := owner.get(next)
	wantDashStatus(t, "the second page", second, 200)
	if !strings.Contains(second.body, "c-00") || strings.Contains(second.body, "c-20") || nextPage.MatchString(second.body) {
		t.Fatalf("the second page of collections: %s", second.body)
	}
}

var volumeDesc = regexp.MustCompile(`<desc id="volume-desc">([^<]*)</desc>`)

// The home page's charts count on the organization's clock: a sandbox
// clock moved two days on puts today's payouts two days on.
func TestDashboardChartsOnTheOrganizationsClock(t *testing.T) {
	st := newStack(t, stackOptions{})
	owner := setUpDashboardOwner(t, st, "owner@clock.example")
	st.mustStatus(st.do("POST", "/v1/simulations/advance-clock", st.key, map[string]any{"seconds": 2 * 86400}), 200)
	st.mustStatus(st.do("POST", "/v1/simulations/fund-balance", st.key, map[string]any{"amount": "100.00", "currency": "GHS", "externalReference": "fund"}), 201)
	for i := range 2 {
		st.mustStatus(st.do("POST", "/v1/payouts", st.key, mtnGHS("to", "10.00", fmt.Sprintf("p-%d", i))), 201)
	}
	day := func() string { return time.Now().UTC().AddDate(0, 0, 2).Format("2 Jan") + ": 2." }
	before := day()
	home := owner.get("/dashboard")
	wantDashStatus(t, "the home page", home, 200)
	m := volumeDesc.FindStringSubmatch(home.body)
	if m == nil || (html.UnescapeString(m[1]) != before && html.UnescapeString(m[1]) != day()) { // midnight may pass
		t.Fatalf("the volume chart says %v, want %q", m, before)
	}
}

// The sandbox page's deposit tool pushes a deposit to a crypto address
// made through the API, through the API's simulation; the same form sent
// twice is one deposit.
func TestDashboardSandboxDeposit(t *testing.T) {
	st := newStack(t, stackOptions{})
	owner := setUpDashboardOwner(t, st, "owner@deposit.example")
	var currency, chain string
	for _, m := range rails.DefaultCatalogue().Networks() {
		if _, ok := rails.DefaultCatalogue().DepositNetwork(m.Currency, m.Chain); ok && m.Type == ledger.MethodCrypto && m.Status == "operational" {
			currency, chain = m.Currency, m.Chain
			break
		}
	}
	if currency == "" {
		t.Fatal("no crypto deposit network in the catalogue")
	}
	r := st.do("POST", "/v1/crypto-addresses", st.key, map[string]any{"currency": currency, "chain": chain})
	if r.status != 201 {
		t.Fatalf("crypto address: %d %s", r.status, r.body)
	}
	address := r.json(t)["address"].(map[string]any)["id"].(string)
	tools := owner.get("/dashboard/sandbox")
	wantDashStatus(t, "the sandbox page", tools, 200)
	if !strings.Contains(tools.body, `value="crypto:`+address+`"`) {
		t.Fatalf("the deposit form does not offer the address: %s", tools.body)
	}
	ref := regexp.MustCompile(`name="externalReference" value="([^"]+)"`).FindStringSubmatch(tools.body)[1]
	form := url.Values{"csrf": {tools.csrf(t)}, "target": {"crypto:" + address}, "amount": {"25.00"}, "outcome": {"completed"}, "externalReference": {ref}}
	var pages []string
	for range 2 {
		done := owner.post("/dashboard/sandbox/deposit", form)
		wantDashStatus(t, "the deposit", done, 200)
		pages = append(pages, done.body)
	}
	list := st.do("GET", "/v1/collections", st.key, nil).json(t)["data"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["type"] != "crypto" {
		t.Fatalf("collections after the deposit form sent twice: %v", list)
	}
	notice := "Deposit simulated: collection " + list[0].(map[string]any)["id"].(string) + "."
	for i, page := range pages {
		if !strings.Contains(page, notice) {
			t.Fatalf("the deposit's page (sent %d times) does not say %q: %s", i+1, notice, page)
		}
	}
}
