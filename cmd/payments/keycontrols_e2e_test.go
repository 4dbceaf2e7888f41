package main

import (
	"fmt"
	"net"
	nethttp "net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Key controls on a real three-process cluster.

type keyView struct {
	ID         string `json:"id"`
	Secret     string `json:"secret"`
	SpendUsage struct {
		Daily string `json:"daily"`
	} `json:"spendUsage"`
}

type errorView struct {
	Error   string            `json:"error"`
	Message string            `json:"message"`
	Details map[string]string `json:"details"`
}

// createKey creates a key with the bootstrap key and returns it.
func createKey(t *testing.T, addr string, body map[string]any) keyView {
	t.Helper()
	var out struct {
		Key keyView `json:"key"`
	}
	if st, err := call(addr, "POST", "/v1/keys", body, &out); err != nil || st != 201 {
		t.Fatalf("create key: %d %v", st, err)
	}
	return out.Key
}

// roles returns the leader and the followers of a ready cluster.
func roles(t *testing.T, procs []*proc) (leader *proc, followers []*proc) {
	t.Helper()
	i := leaderSeenBy(t, procs, 0, -1)
	return procs[i], []*proc{procs[(i+1)%3], procs[(i+2)%3]}
}

// Many concurrent payouts straddling a daily cap, sent to two nodes (a
// follower forwards to the leader): the sum admitted never passes the cap,
// every refusal is spend_cap_exceeded, and the balance is funded less
// exactly the admitted debits.
func TestSpendCapUnderConcurrencyOnCluster(t *testing.T) {
	endToEnd(t)
	// The organization's day (Africa/Accra, UTC) must not turn during the
	// test: a second day would admit more.
	if untilMidnight := time.Until(time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)); untilMidnight < time.Minute {
		time.Sleep(untilMidnight + time.Second)
	}
	procs := startCluster(t, 3)
	leader, followers := roles(t, procs)
	nodes := []*proc{leader, followers[0]}
	// GHS 100.00 delivered + 1.00 fee = GHS 101.00, worth 6.41 USD at the
	// sandbox rate (0.0634615384 USD per GHS, rounded up to the cent): a
	// daily cap of 100.00 USD admits 15 of them.
	const usdPerPayout, capCents, wantAdmitted = 641, 10_000, 15
	key := createKey(t, leader.addr, map[string]any{"name": "capped", "scopes": []string{"payouts:write", "payouts:read"},
		"spendCaps": map[string]any{"daily": "100.00"}})
	const funded = 1_000_000_00
	fundGHS(t, followers[1].addr, "1000000.00", "seed")
	const attempts = 48
	var mu sync.Mutex
	admitted, refused := 0, 0
	var problems []string
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < attempts; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var e errorView
			st, err := callWith(client, key.Secret, nil, nodes[i%2].addr, "POST", "/v1/payouts", mtnPayout("100.00", fmt.Sprintf("cap-%d", i)), &e)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				problems = append(problems, err.Error())
			case st == 201:
				admitted++
			case st == 403 && e.Error == "spend_cap_exceeded" && e.Details["cap"] == "daily" && e.Details["limit"] == "100.00" &&
				e.Details["attempted"] == "6.41":
				refused++
			default:
				problems = append(problems, fmt.Sprintf("%d %+v", st, e))
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(problems) > 0 {
		t.Fatalf("unexpected answers: %v", problems)
	}
	if admitted*usdPerPayout > capCents {
		t.Fatalf("admitted %d payouts worth %d USD cents, past the cap of %d", admitted, admitted*usdPerPayout, capCents)
	}
	if admitted != wantAdmitted || admitted+refused != attempts {
		t.Fatalf("admitted %d, refused %d of %d; want exactly %d admitted", admitted, refused, attempts, wantAdmitted)
	}
	// The key's usage and the balance agree with what was admitted, read
	// through a follower that has caught up.
	want := fmt.Sprintf("%d.%02d", admitted*usdPerPayout/100, admitted*usdPerPayout%100)
	var got struct {
		Key keyView `json:"key"`
	}
	if !eventually(5*time.Second, func() bool {
		st, err := call(followers[1].addr, "GET", "/v1/keys/"+key.ID, nil, &got)
		return err == nil && st == 200 && got.Key.SpendUsage.Daily == want
	}) {
		t.Fatalf("key usage %q, want %q", got.Key.SpendUsage.Daily, want)
	}
	if total := cents(t, ghsAccount(t, leader.addr).TotalBalance); total != funded-int64(admitted)*101_00 {
		t.Fatalf("balance %d, want %d − %d × 101.00", total, funded, admitted)
	}
	if n := len(listPayouts(t, leader.addr)); n != admitted {
		t.Fatalf("%d payouts exist, %d were admitted", n, admitted)
	}
}

// clientFrom is an HTTP client whose connections come from a loopback
// address of its own, so that the server sees a distinct caller.
func clientFrom(t *testing.T, ip string) *nethttp.Client {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("loopback address %s is not usable here: %v", ip, err)
	}
	ln.Close()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &nethttp.Client{Timeout: 20 * time.Second, Transport: &nethttp.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// An IP allowlist judged through a follower: the leader sees the follower's
// connection, and judges the request by the client's address the follower
// signed; a client's forged copy of that header is refused, and
// X-Forwarded-For counts only from a trusted proxy.
func TestAllowlistThroughFollower(t *testing.T) {
	endToEnd(t)
	allowed, other, proxy := clientFrom(t, "127.0.0.2"), clientFrom(t, "127.0.0.3"), clientFrom(t, "127.0.0.9")
	procs := startCluster(t, 3, "--trusted-proxies", "127.0.0.9/32")
	leader, followers := roles(t, procs)
	key := createKey(t, leader.addr, map[string]any{"name": "allowlisted", "scopes": []string{"payouts:read"},
		"ipAllowlist": []string{"127.0.0.2"}})
	get := func(hc *nethttp.Client, p *proc, headers map[string]string) (int, errorView) {
		var e errorView
		st, err := callWith(hc, key.Secret, headers, p.addr, "GET", "/v1/payouts?limit=1", nil, &e)
		if err != nil {
			t.Fatal(err)
		}
		return st, e
	}
	// The follower signs with the cluster's key, which creating the
	// allowlist committed; wait until the follower has applied it.
	if !eventually(5*time.Second, func() bool {
		st, _ := get(allowed, followers[0], nil)
		return st == 200
	}) {
		st, e := get(allowed, followers[0], nil)
		t.Fatalf("allowed client through a follower: %d %+v", st, e)
	}
	if st, e := get(allowed, leader, nil); st != 200 {
		t.Fatalf("allowed client to the leader: %d %+v", st, e)
	}
	for _, p := range []*proc{leader, followers[0], followers[1]} {
		st, e := get(other, p, nil)
		if st != 403 || e.Error != "forbidden" || !strings.Contains(e.Message, "127.0.0.3") || !strings.Contains(e.Message, "allowlist") {
			t.Fatalf("other client via %s: %d %+v", p.addr, st, e)
		}
	}
	// A client's X-Forwarded-For is not believed, through a follower or not.
	if st, e := get(other, followers[0], map[string]string{"X-Forwarded-For": "127.0.0.2"}); st != 403 || !strings.Contains(e.Message, "127.0.0.3") {
		t.Fatalf("X-Forwarded-For from an untrusted sender: %d %+v", st, e)
	}
	// A forged internal header is refused by a node that serves the
	// request (the leader, or a follower serving a read itself); a
	// follower relaying a write replaces it with its own statement.
	forged := map[string]string{"x-payments-client-addr": "127.0.0.2", "x-payments-client-token": fmt.Sprintf("%d.%064x", time.Now().Add(30*time.Second).Unix(), 0)}
	for _, p := range []*proc{leader, followers[0]} {
		if st, e := get(other, p, forged); st != 403 || !strings.Contains(e.Message, "internal") {
			t.Fatalf("forged header to %s: %d %+v", p.addr, st, e)
		}
	}
	var e errorView
	st, err := callWith(other, key.Secret, forged, followers[0].addr, "POST", "/v1/payouts",
		map[string]any{"to": map[string]any{"code": "gh_mtn", "currency": "GHS", "accountNumber": "233241234567", "amount": 1}, "externalReference": "forged-1"}, &e)
	if err != nil {
		t.Fatal(err)
	}
	if st != 403 || !strings.Contains(e.Message, "127.0.0.3") {
		t.Fatalf("forged header on a write relayed by a follower: %d %+v", st, e)
	}
	// From a trusted proxy, the right-most address that is not a proxy is
	// the client, through a follower too.
	for _, p := range []*proc{leader, followers[0]} {
		if st, e := get(proxy, p, map[string]string{"X-Forwarded-For": "198.51.100.7, 127.0.0.2"}); st != 200 {
			t.Fatalf("allowed client behind the trusted proxy via %s: %d %+v", p.addr, st, e)
		}
		if st, e := get(proxy, p, map[string]string{"X-Forwarded-For": "127.0.0.2, 198.51.100.7"}); st != 403 || !strings.Contains(e.Message, "198.51.100.7") {
			t.Fatalf("other client behind the trusted proxy via %s: %d %+v", p.addr, st, e)
		}
	}
}
