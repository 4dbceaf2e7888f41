package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"payments/actors/actorstest/testkit"
	"payments/rails/evm/devchain"
	"payments/rails/momo"
	"payments/rails/momo/momofake"
	"payments/rails/mpesa"
	"payments/rails/mpesa/mpesafake"
)

// End-to-end tests of the production stack against the providers' fakes
// and a real local chain: the binary runs as a process configured with a
// providers file, and money moves only through the adapters.

// liveCall is call with the production key.
func liveCall(addr, method, path string, body, out any) (int, error) {
	return callWith(client, liveKey, nil, addr, method, path, body, out)
}

// liveCreate POSTs body to path on addr, wanting 201, and returns the id
// of the resource created (under key in the answer).
func liveCreate(t *testing.T, addr, path, key string, body map[string]any) string {
	t.Helper()
	var created map[string]struct {
		ID string `json:"id"`
	}
	st, err := liveCall(addr, "POST", path, body, &created)
	if err != nil || st != 201 {
		t.Fatalf("POST %s (%v): %d %v", path, body["externalReference"], st, err)
	}
	return created[key].ID
}

// liveCollect asks addr for a collection of amount in currency from the
// mobile money number (of method code), under reference ref, and returns
// its id.
func liveCollect(t *testing.T, addr, code, currency, number, amount, ref string) string {
	t.Helper()
	return liveCreate(t, addr, "/v1/collections", "collection", map[string]any{
		"from": map[string]any{"accountNumber": number, "code": code, "amount": amount, "currency": currency},
		"to":   map[string]any{"currency": currency}, "externalReference": ref})
}

// livePayout asks addr for a payout to the recipient to (its method code,
// currency, account and amount), under reference ref, and returns its id.
func livePayout(t *testing.T, addr string, to map[string]any, ref string) string {
	t.Helper()
	return liveCreate(t, addr, "/v1/payouts", "payout", map[string]any{"to": to, "externalReference": ref})
}

// writeFile writes content to name under dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// providersFile writes a providers file of the given instances.
func providersFile(t *testing.T, dir string, instances ...map[string]any) string {
	t.Helper()
	b, err := json.MarshalIndent(map[string]any{"providers": instances}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, "providers.json", string(b))
}

// newMoMoFake is a MoMo fake serving MTN Ghana in GHS, closed when the
// test ends.
func newMoMoFake(t *testing.T) *momofake.Server {
	fake := momofake.NewServer(momofake.Options{TargetEnvironment: "mtnghana", Currency: "GHS", Exponent: 2, CallbackMethod: "POST"})
	t.Cleanup(fake.Close)
	return fake
}

// newMPesaFake is an M-Pesa fake, closed when the test ends.
func newMPesaFake(t *testing.T) *mpesafake.Server {
	fake := mpesafake.NewServer(mpesafake.Options{})
	t.Cleanup(fake.Close)
	return fake
}

// secretFiles writes an instance's secrets, each in its own file under
// dir named prefix-name, and answers each as a providers file names it.
func secretFiles(t *testing.T, dir, prefix string) func(name, v string) map[string]string {
	return func(name, v string) map[string]string {
		return map[string]string{"file": writeFile(t, dir, prefix+"-"+name, v+"\n")}
	}
}

// momoInstance configures an mtn_momo instance against fake, its secrets
// in files under dir, its callbacks sent to base.
func momoInstance(t *testing.T, dir string, fake *momofake.Server, base string) map[string]any {
	o := fake.Options()
	secret := secretFiles(t, dir, "momo")
	return mobileMoneyInstance("momo_gh", momo.Kind, "gh_mtn",
		map[string]any{"baseUrl": fake.URL, "targetEnvironment": o.TargetEnvironment, "currency": "GHS", "callbackBaseUrl": base},
		map[string]any{
			momo.SecretCollectionAPIUser: secret("cu", o.Collection.APIUser), momo.SecretCollectionAPIKey: secret("ck", o.Collection.APIKey),
			momo.SecretCollectionSubscriptionKey: secret("cs", o.Collection.SubscriptionKey),
			momo.SecretDisbursementAPIUser:       secret("du", o.Disbursement.APIUser), momo.SecretDisbursementAPIKey: secret("dk", o.Disbursement.APIKey),
			momo.SecretDisbursementSubscriptionKey: secret("ds", o.Disbursement.SubscriptionKey),
		})
}

// mobileMoneyInstance is a providers file entry of kind with one method,
// which pays out and collects, checked on 300ms after a send and timed out
// after 5s; settings and secrets are the kind's own.
func mobileMoneyInstance(name, kind, method string, settings, secrets map[string]any) map[string]any {
	settings["checkAfter"], settings["requestTimeout"] = "300ms", "5s"
	return map[string]any{
		"name": name, "kind": kind,
		"methods":  []map[string]any{{"code": method, "directions": []string{"payouts", "collections"}}},
		"settings": settings, "secrets": secrets,
	}
}

// productionNode is where a single production node lives: a directory
// (its data under node/, the files it is given beside it) and the address
// it serves on, which its providers call back.
type productionNode struct {
	dir, addr string
}

func newProductionNode(t *testing.T) productionNode {
	return productionNode{dir: t.TempDir(), addr: freeAddrs(t, 1)[0]}
}

// callbacks is the base URL the node's providers send their callbacks to.
func (n productionNode) callbacks() string { return "http://" + n.addr }

// start runs the node (again, after a kill, on the same data) with the
// providers file and waits until it is ready.
func (n productionNode) start(t *testing.T, providers string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"--stack", "production", "--bootstrap-key", liveKey, "--http-addr", n.addr,
		"--providers", providers, "--deposit-poll-interval", "100ms"}, extra...)
	p := startReady(t, filepath.Join(n.dir, "node"), args...)
	return p
}

// waitStatus polls GET path until its resource (under key) has status
// want, failing after timeout; it returns the resource's JSON.
func waitStatus(t *testing.T, addr, path, key, want string, timeout time.Duration) map[string]any {
	t.Helper()
	var last map[string]any
	var st int
	var err error
	ok := eventually(timeout, func() bool {
		var body map[string]map[string]any
		st, err = liveCall(addr, "GET", path, nil, &body)
		if err == nil && st == 200 {
			last = body[key]
		}
		return last["status"] == want
	})
	if !ok {
		t.Fatalf("%s: not %s after %s: %d %v %v", path, want, timeout, st, err, last)
	}
	return last
}

func liveBalance(t *testing.T, addr, currency string) string {
	t.Helper()
	var body struct {
		Data []struct {
			Currency         string `json:"currency"`
			AvailableBalance string `json:"availableBalance"`
		} `json:"data"`
	}
	if st, err := liveCall(addr, "GET", "/v1/accounts", nil, &body); err != nil || st != 200 {
		t.Fatalf("accounts: %d %v", st, err)
	}
	for _, a := range body.Data {
		if a.Currency == currency {
			return a.AvailableBalance
		}
	}
	return ""
}

// A MoMo collection and payout through the production API complete
// through the fake's callbacks: one request to pay, one transfer, each
// settled once; a node killed with -9 while a payout is at MoMo sends it
// again only under the same X-Reference-Id, and MoMo moves the money once;
// reconcile sees the difference the operator's opening float makes until
// it is recorded.
func TestProductionMoMo(t *testing.T) {
	endToEnd(t)
	fake := newMoMoFake(t)
	node := newProductionNode(t)
	providers := providersFile(t, node.dir, momoInstance(t, node.dir, fake, node.callbacks()))
	token := writeFile(t, node.dir, "admin-token", "e2e-admin-token-0123456789\n")
	extra := []string{"--admin-token-file", token, "--admin-addr", "127.0.0.1:0"}
	p := node.start(t, providers, extra...)
	checkOffersOnlyConfigured(t, p.addr)

	// A collection: the payer approves, MoMo calls back (unsigned), the
	// node asks the status and completes it.
	collectionID := liveCollect(t, p.addr, "gh_mtn", "GHS", "233241234567", "500.00", "col-1")
	t0 := time.Now()
	waitStatus(t, p.addr, "/v1/collections/"+collectionID, "collection", "completed", 20*time.Second)
	t.Logf("collection completed in %s", time.Since(t0))
	if got := liveBalance(t, p.addr, "GHS"); got != "492.50" {
		t.Fatalf("GHS balance %s after a 500.00 collection (1.5%% fee)", got)
	}
	if n := fake.Count(momofake.OpRequestToPay); n != 1 {
		t.Fatalf("%d requests to pay", n)
	}
	callbacks := fake.Callbacks()
	if len(callbacks) != 1 || callbacks[0].Status != 200 {
		t.Fatalf("callbacks: %+v", callbacks)
	}

	// A payout.
	payoutID := livePayout(t, p.addr, map[string]any{"code": "gh_mtn", "currency": "GHS", "accountNumber": "233241234567", "amount": "100.00"}, "pay-1")
	t0 = time.Now()
	waitStatus(t, p.addr, "/v1/payouts/"+payoutID, "payout", "completed", 20*time.Second)
	t.Logf("payout completed in %s", time.Since(t0))
	if n := len(fake.Movements()); n != 2 {
		t.Fatalf("%d movements at MoMo", n)
	}

	// Killed mid-payout: MoMo takes the transfer and the answer is lost
	// (the money moved), the status answers 500 a few times, and the node
	// dies with the payout in flight; a new process takes over from the
	// log.
	fake.FailNext(momofake.OpTransfer, momofake.Fault{DropAfterApply: true})
	for i := 0; i < 4; i++ {
		fake.FailNext(momofake.OpStatus, momofake.Fault{Status: 500})
	}
	transfers := fake.Count(momofake.OpTransfer)
	inFlight := livePayout(t, p.addr, map[string]any{"code": "gh_mtn", "currency": "GHS", "accountNumber": "233240000001", "amount": "50.00"}, "pay-2")
	waitUntil(t, 20*time.Second, "the payout at MoMo", func() bool { return fake.Count(momofake.OpTransfer) > transfers })
	p.kill()
	t0 = time.Now()
	p = node.start(t, providers, extra...)
	t.Logf("restarted in %s", time.Since(t0))
	waitStatus(t, p.addr, "/v1/payouts/"+inFlight, "payout", "completed", 30*time.Second)
	t.Logf("the payout in flight completed %s after the restart", time.Since(t0))
	var refs []string
	for _, r := range fake.Requests() {
		if r.Op == momofake.OpTransfer && strings.Contains(string(r.Body), inFlight) {
			refs = append(refs, r.ReferenceID)
		}
	}
	for _, r := range refs {
		if r != refs[0] {
			t.Fatalf("the payout was sent under two references: %v", refs)
		}
	}
	t.Logf("the payout in flight was sent %d times, under one reference", len(refs))
	moved := 0
	for _, m := range fake.Movements() {
		if m.ReferenceID == refs[0] {
			moved++
		}
	}
	if moved != 1 {
		t.Fatalf("the payout moved money %d times (requests under %v)", moved, refs)
	}

	// Reconcile: MoMo holds the opening 100,000.00 the ledger never saw,
	// until the operator records it.
	admin := p.stdoutValue("admin_addr")
	out, _, code := runReconcile(t, "--providers", providers, "--admin-addr", admin, "--admin-token-file", token)
	if code != 1 || !strings.Contains(out, "+100000.00") {
		t.Fatalf("reconcile before funding: exit %d\n%s", code, out)
	}
	if _, errOut, code := runReconcile(t, "fund", "--provider", "momo_gh", "--currency", "GHS", "--amount", "100000.00",
		"--reference", "opening", "--admin-addr", admin, "--admin-token-file", token); code != 0 {
		t.Fatalf("fund: exit %d: %s", code, errOut)
	}
	out, errOut, code := runReconcile(t, "--providers", providers, "--admin-addr", admin, "--admin-token-file", token)
	if code != 0 {
		t.Fatalf("reconcile after funding: exit %d\n%s%s", code, out, errOut)
	}
}

// runReconcile runs `payments reconcile args…`.
func runReconcile(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e testkit.Buffer
	code = reconcileCommand(args, &o, &e)
	return o.String(), e.String(), code
}

// mpesaInstance configures an mpesa instance against fake.
func mpesaInstance(t *testing.T, dir string, fake *mpesafake.Server, base string) map[string]any {
	o := fake.Options()
	secret := secretFiles(t, dir, "mpesa")
	return mobileMoneyInstance("mpesa_ke", mpesa.Kind, "ke_mpesa",
		map[string]any{"baseUrl": fake.URL, "callbackBaseUrl": base, "shortCode": o.ShortCode,
			"b2cShortCode": o.B2CShortCode, "initiatorName": o.InitiatorName},
		map[string]any{
			mpesa.SecretConsumerKey: secret("ck", o.ConsumerKey), mpesa.SecretConsumerSecret: secret("cs", o.ConsumerSecret),
			mpesa.SecretPasskey: secret("pk", o.Passkey), mpesa.SecretInitiatorPassword: secret("ip", o.InitiatorPassword),
			mpesa.SecretCertificate: secret("cert", string(fake.CertificatePEM())),
		})
}

// M-Pesa is send-once: an STK push collection and a B2C payout complete
// through Daraja's callbacks, and a node killed with -9 once a B2C request
// may have reached Daraja never sends it again: the payout settles by the
// result callback or the transaction status.
func TestProductionMPesaSendOnce(t *testing.T) {
	endToEnd(t)
	fake := newMPesaFake(t)
	node := newProductionNode(t)
	providers := providersFile(t, node.dir, mpesaInstance(t, node.dir, fake, node.callbacks()))
	p := node.start(t, providers)

	collectionID := liveCollect(t, p.addr, "ke_mpesa", "KES", "254712345678", "1000.00", "col-1")
	waitStatus(t, p.addr, "/v1/collections/"+collectionID, "collection", "completed", 20*time.Second)
	if got := liveBalance(t, p.addr, "KES"); got != "985.00" {
		t.Fatalf("KES balance %s", got)
	}
	if n := fake.Count(mpesafake.OpSTKPush); n != 1 {
		t.Fatalf("%d STK pushes", n)
	}

	// The B2C's answer is lost after the money moved, and the node dies.
	fake.FailNext(mpesafake.OpB2C, mpesafake.Fault{DropAfterApply: true})
	payoutID := livePayout(t, p.addr, map[string]any{"code": "ke_mpesa", "currency": "KES", "accountNumber": "254712345678", "amount": "100.00"}, "pay-1")
	waitUntil(t, 20*time.Second, "the B2C at Daraja", func() bool { return fake.Count(mpesafake.OpB2C) == 1 })
	p.kill()
	p = node.start(t, providers)
	waitStatus(t, p.addr, "/v1/payouts/"+payoutID, "payout", "completed", 30*time.Second)
	if n := fake.Count(mpesafake.OpB2C); n != 1 {
		t.Fatalf("the B2C was sent %d times", n)
	}
	if n := len(fake.Movements()); n != 2 {
		t.Fatalf("%d movements at M-Pesa", n)
	}
}

// balancer is a load balancer in front of the nodes procs returns, for the
// providers' callbacks: it sends each request to the nodes in turn until
// one answers (a killed node refuses the connection).
func balancer(t *testing.T, procs func() []*proc) string {
	lb := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		body, _ := io.ReadAll(r.Body)
		for _, p := range procs() {
			req, _ := nethttp.NewRequest(r.Method, "http://"+p.addr+r.URL.RequestURI(), bytes.NewReader(body))
			req.Header = r.Header.Clone()
			resp, err := client.Do(req)
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			w.WriteHeader(resp.StatusCode)
			w.Write(b)
			return
		}
		w.WriteHeader(nethttp.StatusBadGateway)
	}))
	t.Cleanup(lb.Close)
	return lb.URL
}

// A three-node cluster moves money through MoMo and M-Pesa while its
// leader is killed with -9: every payout completes once, MoMo's under one
// X-Reference-Id each, M-Pesa's with one B2C request each. The providers
// hold the payouts (MoMo's transfers pending, M-Pesa's queued) until the
// leader is dead, so every one of them is at its provider, unsettled,
// when it dies, and one answer at each was lost on the way back.
func TestProductionLeaderChangeDuringPayouts(t *testing.T) {
	endToEnd(t)
	momoFake := newMoMoFake(t)
	mpesaFake := newMPesaFake(t)
	dir := t.TempDir()
	// The nodes need the balancer's address, the balancer the nodes.
	var mu sync.Mutex
	var procs []*proc
	front := balancer(t, func() []*proc {
		mu.Lock()
		defer mu.Unlock()
		return procs
	})
	providers := providersFile(t, dir, momoInstance(t, dir, momoFake, front), mpesaInstance(t, dir, mpesaFake, front))
	started := startCluster(t, 3, "--stack", "production", "--bootstrap-key", liveKey, "--providers", providers)
	mu.Lock()
	procs = started
	mu.Unlock()

	leader := leaderSeenBy(t, procs, 0, -1)
	follower := procs[(leader+1)%3]
	collect := func(code, currency, number, amount, ref string) {
		t.Helper()
		id := liveCollect(t, follower.addr, code, currency, number, amount, ref)
		waitStatus(t, follower.addr, "/v1/collections/"+id, "collection", "completed", 30*time.Second)
	}
	collect("gh_mtn", "GHS", "233241234567", "2000.00", "fund-ghs")
	collect("ke_mpesa", "KES", "254712345678", "5000.00", "fund-kes")

	// A lost answer at each provider, then the payouts, held at the
	// providers, then the leader dies with them in flight.
	momoFake.HoldTransfers()
	mpesaFake.HoldB2C()
	momoFake.FailNext(momofake.OpTransfer, momofake.Fault{DropAfterApply: true})
	mpesaFake.FailNext(mpesafake.OpB2C, mpesafake.Fault{DropAfterApply: true})
	type sent struct{ id, code string }
	var payouts []sent
	const perRail = 5
	for i := 0; i < perRail; i++ {
		for _, d := range []struct{ code, currency, number string }{
			{"gh_mtn", "GHS", "233241234567"}, {"ke_mpesa", "KES", "254712345678"},
		} {
			id := livePayout(t, follower.addr, map[string]any{"code": d.code, "currency": d.currency, "accountNumber": d.number, "amount": "20.00"}, fmt.Sprintf("%s-%d", d.code, i))
			payouts = append(payouts, sent{id, d.code})
		}
	}
	waitUntil(t, 30*time.Second, "every payout at its provider", func() bool {
		return momoFake.Count(momofake.OpTransfer) >= perRail && mpesaFake.Count(mpesafake.OpB2C) >= perRail
	})
	for _, p := range payouts {
		var body map[string]map[string]any
		if st, err := liveCall(procs[leader].addr, "GET", "/v1/payouts/"+p.id, nil, &body); err != nil || st != 200 || body["payout"]["status"] != "processing" {
			t.Fatalf("payout %s before the kill: %d %v %v, want processing", p.id, st, err, body["payout"]["status"])
		}
	}
	procs[leader].kill()
	next := leaderSeenBy(t, procs, (leader+1)%3, leader)
	t.Logf("n%d killed with all %d payouts at their providers; n%d leads", leader+1, len(payouts), next+1)
	if n, m := momoFake.ReleaseTransfers(), mpesaFake.ReleaseB2C(); n != perRail || m != perRail {
		t.Fatalf("released %d MoMo transfers and %d B2C payments, want %d each: a payout was sent twice", n, m, perRail)
	}
	for _, p := range payouts {
		waitStatus(t, procs[next].addr, "/v1/payouts/"+p.id, "payout", "completed", 60*time.Second)
	}

	refs := map[string]map[string]bool{} // payout → MoMo references it was sent under
	for _, r := range momoFake.Requests() {
		if r.Op != momofake.OpTransfer {
			continue
		}
		for _, p := range payouts {
			if strings.Contains(string(r.Body), p.id) {
				if refs[p.id] == nil {
					refs[p.id] = map[string]bool{}
				}
				refs[p.id][r.ReferenceID] = true
			}
		}
	}
	moved := map[string]int{}
	for _, m := range momoFake.Movements() {
		moved[m.ReferenceID]++
	}
	b2c := map[string]int{}
	for _, r := range mpesaFake.Requests() {
		if r.Op != mpesafake.OpB2C {
			continue
		}
		for _, p := range payouts {
			if strings.Contains(string(r.Body), p.id) {
				b2c[p.id]++
			}
		}
	}
	for _, p := range payouts {
		switch p.code {
		case "gh_mtn":
			if len(refs[p.id]) != 1 {
				t.Errorf("MoMo payout %s sent under %d references", p.id, len(refs[p.id]))
			}
			for ref := range refs[p.id] {
				if moved[ref] != 1 {
					t.Errorf("MoMo payout %s moved money %d times", p.id, moved[ref])
				}
			}
		case "ke_mpesa":
			if b2c[p.id] != 1 {
				t.Errorf("M-Pesa payout %s: %d B2C requests", p.id, b2c[p.id])
			}
		}
	}
}

// capabilityGroup is a country's methods in GET /v1/capabilities.
type capabilityGroup struct {
	Country struct {
		Code string `json:"code"`
	} `json:"country"`
	Methods []struct {
		Code string `json:"code"`
	} `json:"methods"`
}

// countryMethods lists groups' methods as country:method, sorted and
// space-separated.
func countryMethods(groups []capabilityGroup) string {
	var out []string
	for _, c := range groups {
		for _, m := range c.Methods {
			out = append(out, c.Country.Code+":"+m.Code)
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// checkOffersOnlyConfigured checks a production node whose only provider
// serves gh_mtn: capabilities list Ghana with MTN alone, and a request
// naming a method no provider serves is a 400 on that field, not a 503;
// nothing is created.
func checkOffersOnlyConfigured(t *testing.T, addr string) {
	t.Helper()
	var caps struct {
		Capabilities struct {
			Payouts []capabilityGroup `json:"payouts"`
		} `json:"capabilities"`
	}
	if st, err := liveCall(addr, "GET", "/v1/capabilities", nil, &caps); err != nil || st != 200 {
		t.Fatalf("capabilities: %d %v", st, err)
	}
	if got := countryMethods(caps.Capabilities.Payouts); got != "GH:gh_mtn" {
		t.Fatalf("payout capabilities list %q, want only GH:gh_mtn", got)
	}
	refused := func(path string, body map[string]any, field string) {
		t.Helper()
		var e struct {
			Error   string `json:"error"`
			Details any    `json:"details"`
		}
		st, err := liveCall(addr, "POST", path, body, &e)
		if err != nil || st != 400 || e.Error != "validation_error" || !strings.Contains(testkit.JSON(t, e.Details), field) {
			t.Fatalf("POST %s: %d %v %+v, want 400 on %s", path, st, err, e, field)
		}
		if field == "to.code" && !strings.Contains(testkit.JSON(t, e.Details), "no provider serves this method") {
			t.Fatalf("POST %s: %+v does not say no provider serves the method", path, e)
		}
	}
	refused("/v1/payouts", map[string]any{"to": map[string]any{"code": "ke_mpesa", "currency": "KES", "accountNumber": "254712345678", "amount": "10.00"},
		"externalReference": "unserved-1"}, "to.code")
	refused("/v1/crypto-addresses", map[string]any{"currency": "USDC", "chain": "ethereum"}, "chain")
	refused("/v1/payment-links", map[string]any{"email": "ama@example.com", "amount": "25.00", "currency": "GHS",
		"title": "Invoice", "allowedMethods": []string{"mobile_money", "bank_transfer"}}, "allowedMethods")
	var link struct {
		PaymentLink struct {
			AllowedMethods []string `json:"allowedMethods"`
		} `json:"paymentLink"`
	}
	if st, err := liveCall(addr, "POST", "/v1/payment-links", map[string]any{"email": "ama@example.com", "amount": "25.00",
		"currency": "GHS", "title": "Invoice", "allowedMethods": []string{"mobile_money"}}, &link); err != nil || st != 201 || strings.Join(link.PaymentLink.AllowedMethods, ",") != "mobile_money" {
		t.Fatalf("a payment link taking mobile money: %d %v %v, want 201", st, err, link.PaymentLink.AllowedMethods)
	}
	var page struct {
		Data []any `json:"data"`
	}
	if st, err := liveCall(addr, "GET", "/v1/payouts", nil, &page); err != nil || st != 200 || len(page.Data) != 0 {
		t.Fatalf("payouts after the refusals: %d %v %d", st, err, len(page.Data))
	}
}

// evmInstance configures the local chain's evm instance (devchain.Instance):
// two confirmations at a block every 500 ms, a transaction sent again after
// 30 s unmined; secrets in files under dir.
func evmInstance(t *testing.T, dir string, chain *devchain.Chain, usdc common.Address) map[string]any {
	return evmInstanceAt(t, dir, chain.URL, usdc)
}

// evmInstanceAt is evmInstance against the node at rpcURL.
func evmInstanceAt(t *testing.T, dir, rpcURL string, usdc common.Address) map[string]any {
	t.Helper()
	p, err := devchain.Instance{RPCURL: rpcURL, USDC: usdc, Confirmations: 2,
		BlockTime: 500 * time.Millisecond, StuckAfter: 30 * time.Second}.Provider(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// USDC payouts on a three-node production cluster while its leader is
// killed with -9: each completes with exactly one ERC-20 transfer (each
// recipient holds exactly its amount) and the hot wallet spent exactly one
// nonce per payout; the deposit that funded them was credited once. The
// chain stops mining while the payouts are sent, so that every one of
// them is signed, sent and unmined in the mempool when the leader dies:
// the new leader restores them and sends the same bytes again.
func TestProductionEVMLeaderChange(t *testing.T) {
	endToEnd(t)
	devchain.SkipWithoutAnvil(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	chain, err := devchain.Start(ctx, "--block-time", "1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(chain.Close)
	hot := crypto.PubkeyToAddress(devchain.DevKey(1).PublicKey)
	usdc, err := chain.Setup(ctx, 1_000_000, 10_000, 10, hot)
	if err != nil {
		t.Fatal(err)
	}
	nonce0, err := chain.Eth.NonceAt(ctx, hot, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The chain needs no callbacks: the node polls its feed and receipts.
	providers := providersFile(t, dir, evmInstance(t, dir, chain, usdc))
	procs := startCluster(t, 3, "--stack", "production", "--bootstrap-key", liveKey, "--providers", providers,
		"--deposit-poll-interval", "200ms")
	leader := leaderSeenBy(t, procs, 0, -1)
	follower := procs[(leader+1)%3]

	// Funded by a deposit on the chain, credited once.
	var addr struct {
		Address struct {
			Address string `json:"address"`
		} `json:"address"`
	}
	if st, err := liveCall(follower.addr, "POST", "/v1/crypto-addresses", map[string]any{"currency": "USDC", "chain": "ethereum"}, &addr); err != nil || st != 201 {
		t.Fatalf("crypto address: %d %v", st, err)
	}
	if _, err := chain.TransferToken(ctx, devchain.DevKey(0), usdc, common.HexToAddress(addr.Address.Address), big.NewInt(500_000_000)); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "the deposit credited", func() bool { return liveBalance(t, follower.addr, "USDC") == "500.000000" })

	// Payouts to fresh recipients, sent while the chain mines nothing,
	// then the leader dies with them in the mempool.
	if err := chain.Call(ctx, nil, "evm_setIntervalMining", 0); err != nil {
		t.Fatal(err)
	}
	const n = 6
	recipients := make([]common.Address, n)
	ids := make([]string, n)
	for i := range ids {
		recipients[i] = crypto.PubkeyToAddress(devchain.DevKey(uint32(10 + i)).PublicKey)
		ids[i] = livePayout(t, follower.addr, map[string]any{"code": "usdc_ethereum", "currency": "USDC", "address": recipients[i].Hex(), "amount": fmt.Sprint(10 + i)}, fmt.Sprintf("usdc-%d", i))
	}
	waitUntil(t, 30*time.Second, "every payout's transaction in the mempool", func() bool {
		pending, err := chain.Eth.PendingNonceAt(ctx, hot)
		return err == nil && pending-nonce0 == n
	})
	for _, id := range ids {
		var body map[string]map[string]any
		st, err := liveCall(procs[leader].addr, "GET", "/v1/payouts/"+id, nil, &body)
		if status := body["payout"]["status"]; err != nil || st != 200 || status != "pending" && status != "processing" {
			t.Fatalf("payout %s before the kill: %d %v %v, want it unsettled", id, st, err, status)
		}
	}
	procs[leader].kill()
	next := leaderSeenBy(t, procs, (leader+1)%3, leader)
	t.Logf("n%d killed with %d USDC payouts unmined in the mempool; n%d leads", leader+1, n, next+1)
	if err := chain.Call(ctx, nil, "evm_setIntervalMining", 1); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		waitStatus(t, procs[next].addr, "/v1/payouts/"+id, "payout", "completed", 90*time.Second)
	}
	for i, r := range recipients {
		got, err := chain.TokenBalance(ctx, usdc, r)
		if err != nil {
			t.Fatal(err)
		}
		if want := big.NewInt(int64(10+i) * 1_000_000); got.Cmp(want) != 0 {
			t.Errorf("recipient %d holds %s USDC units, want %s: not one transfer", i, got, want)
		}
	}
	nonce1, err := chain.Eth.NonceAt(ctx, hot, nil)
	if err != nil {
		t.Fatal(err)
	}
	if nonce1-nonce0 != n {
		t.Errorf("the hot wallet spent %d nonces for %d payouts", nonce1-nonce0, n)
	}
	if got := liveBalance(t, procs[next].addr, "USDC"); got == "500.000000" {
		t.Errorf("the balance was not debited: %s", got)
	}
}
