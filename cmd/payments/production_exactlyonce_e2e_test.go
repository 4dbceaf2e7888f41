package main

import (
	"strings"
	"sync"
	"testing"
	"time"

	"payments/rails/momo/momofake"
	"payments/rails/mpesa/mpesafake"
)

// Exactly once at the providers, under a client's retries and the
// providers' duplicate callbacks: a POST retried with the same
// externalReference (at once, concurrently, while the payout is at its
// provider, and after it completed) answers the one payout or collection
// and never makes a second provider request; a callback delivered twice,
// the duplicate racing the first, settles once.
func TestProductionExactlyOnceRetriesAndDuplicates(t *testing.T) {
	endToEnd(t)
	momoFake := newMoMoFake(t)
	mpesaFake := newMPesaFake(t)
	node := newProductionNode(t)
	providers := providersFile(t, node.dir, momoInstance(t, node.dir, momoFake, node.callbacks()), mpesaInstance(t, node.dir, mpesaFake, node.callbacks()))
	p := node.start(t, providers)

	// post sends the same request n times at once and then once more,
	// and checks every answer names one resource: 201 for the one that
	// made it, 200 (replayed) for the others.
	post := func(path, key string, body map[string]any, n int) string {
		t.Helper()
		ids := make([]string, n)
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var out map[string]map[string]any
				st, err := liveCall(p.addr, "POST", path, body, &out)
				if err != nil {
					t.Errorf("POST %s: %v", path, err)
					return
				}
				statuses[i] = st
				ids[i], _ = out[key]["id"].(string)
			}()
		}
		wg.Wait()
		created := 0
		for i := range n {
			switch {
			case statuses[i] == 201:
				created++
			case statuses[i] != 200:
				t.Fatalf("POST %s attempt %d: %d", path, i, statuses[i])
			}
			if ids[i] == "" || ids[i] != ids[0] {
				t.Fatalf("POST %s: the attempts answered %v", path, ids)
			}
		}
		if created != 1 {
			t.Fatalf("POST %s: %d of %d attempts created (statuses %v), want 1", path, created, n, statuses)
		}
		return ids[0]
	}
	retry := func(path, key, id string, body map[string]any) {
		t.Helper()
		var out map[string]map[string]any
		if st, err := liveCall(p.addr, "POST", path, body, &out); err != nil || st != 200 || out[key]["id"] != id {
			t.Fatalf("POST %s again: %d %v %v, want 200 with %s", path, st, err, out[key]["id"], id)
		}
	}

	// Collections, each asked four times at once: one request to pay,
	// one STK push.
	momoCol := map[string]any{"from": map[string]any{"accountNumber": "233241234567", "code": "gh_mtn", "amount": "500.00", "currency": "GHS"},
		"to": map[string]any{"currency": "GHS"}, "externalReference": "col-momo"}
	mpesaCol := map[string]any{"from": map[string]any{"accountNumber": "254712345678", "code": "ke_mpesa", "amount": "1000.00", "currency": "KES"},
		"to": map[string]any{"currency": "KES"}, "externalReference": "col-mpesa"}
	colMoMo := post("/v1/collections", "collection", momoCol, 4)
	colMPesa := post("/v1/collections", "collection", mpesaCol, 4)
	waitStatus(t, p.addr, "/v1/collections/"+colMoMo, "collection", "completed", 20*time.Second)
	waitStatus(t, p.addr, "/v1/collections/"+colMPesa, "collection", "completed", 20*time.Second)
	retry("/v1/collections", "collection", colMoMo, momoCol)
	retry("/v1/collections", "collection", colMPesa, mpesaCol)
	if n, m := momoFake.Count(momofake.OpRequestToPay), mpesaFake.Count(mpesafake.OpSTKPush); n != 1 || m != 1 {
		t.Fatalf("%d requests to pay and %d STK pushes for one collection each", n, m)
	}

	// Payouts, held at the providers: asked four times at once, then again
	// while they are at the provider.
	momoFake.HoldTransfers()
	mpesaFake.HoldB2C()
	momoPay := map[string]any{"to": map[string]any{"code": "gh_mtn", "currency": "GHS", "accountNumber": "233241234567", "amount": "100.00"},
		"externalReference": "pay-momo"}
	mpesaPay := map[string]any{"to": map[string]any{"code": "ke_mpesa", "currency": "KES", "accountNumber": "254712345678", "amount": "100.00"},
		"externalReference": "pay-mpesa"}
	payMoMo := post("/v1/payouts", "payout", momoPay, 4)
	payMPesa := post("/v1/payouts", "payout", mpesaPay, 4)
	waitUntil(t, 20*time.Second, "both payouts at their providers", func() bool {
		return momoFake.Count(momofake.OpTransfer) == 1 && mpesaFake.Count(mpesafake.OpB2C) == 1
	})
	retry("/v1/payouts", "payout", payMoMo, momoPay)
	retry("/v1/payouts", "payout", payMPesa, mpesaPay)
	ghs, kes := liveBalance(t, p.addr, "GHS"), liveBalance(t, p.addr, "KES")

	// Released, each result is delivered twice: the duplicate follows the
	// first at once, as a proxy's replay would.
	if n, m := momoFake.ReleaseTransfers(), mpesaFake.ReleaseB2C(); n != 1 || m != 1 {
		t.Fatalf("released %d transfers and %d B2C payments, want 1 each", n, m)
	}
	// lastMoMoRef is the X-Reference-Id of the last request of op MoMo
	// received.
	lastMoMoRef := func(op string) string {
		return lastKey(momoFake.Requests(), func(r momofake.Request) (string, bool) { return r.ReferenceID, r.Op == op })
	}
	transferRef := lastMoMoRef(momofake.OpTransfer)
	b2cKey := lastKey(mpesaFake.Requests(), func(r mpesafake.Request) (string, bool) { return r.Key, r.Op == mpesafake.OpB2C })
	if !momoFake.Resend(transferRef) || !mpesaFake.ResendB2CResult(b2cKey) {
		t.Fatal("the providers have no result to send again")
	}
	waitStatus(t, p.addr, "/v1/payouts/"+payMoMo, "payout", "completed", 20*time.Second)
	waitStatus(t, p.addr, "/v1/payouts/"+payMPesa, "payout", "completed", 20*time.Second)

	// And the collections' results once more, long after they settled.
	rtpRef := lastMoMoRef(momofake.OpRequestToPay)
	checkoutID := lastKey(mpesaFake.Movements(), func(m mpesafake.Movement) (string, bool) { return m.Key, m.Op == mpesafake.OpSTKPush })
	if !momoFake.Resend(rtpRef) || !mpesaFake.ResendSTKResult(checkoutID) {
		t.Fatal("the providers have no collection result to send again")
	}
	// MoMo sent 2 callbacks per transaction (4); M-Pesa 2 per B2C and 2
	// per STK push, besides any transaction status answers.
	waitUntil(t, 20*time.Second, "every duplicate delivered and answered", func() bool {
		answered := func(status int, err error) bool { return err == nil && status >= 200 && status < 300 }
		n := 0
		for _, c := range momoFake.Callbacks() {
			if answered(c.Status, c.Err) {
				n++
			}
		}
		m := 0
		for _, c := range mpesaFake.Callbacks() {
			if answered(c.Status, c.Err) && (strings.Contains(string(c.Body), b2cKey) || strings.Contains(string(c.Body), checkoutID)) {
				m++
			}
		}
		return n == 4 && m == 4
	})
	retry("/v1/payouts", "payout", payMoMo, momoPay)
	retry("/v1/payouts", "payout", payMPesa, mpesaPay)

	// One provider request and one movement each; the balances moved by
	// the payouts once, and by nothing since.
	if n, m := momoFake.Count(momofake.OpTransfer), mpesaFake.Count(mpesafake.OpB2C); n != 1 || m != 1 {
		t.Errorf("%d transfers and %d B2C requests, want 1 each", n, m)
	}
	if n, m := len(momoFake.Movements()), len(mpesaFake.Movements()); n != 2 || m != 2 {
		t.Errorf("%d movements at MoMo and %d at M-Pesa, want 2 each", n, m)
	}
	if got := liveBalance(t, p.addr, "GHS"); got != ghs {
		t.Errorf("GHS balance %s after the payout settled, %s before", got, ghs)
	}
	if got := liveBalance(t, p.addr, "KES"); got != kes {
		t.Errorf("KES balance %s after the payout settled, %s before", got, kes)
	}
	for _, path := range []string{"/v1/collections/" + colMoMo, "/v1/collections/" + colMPesa} {
		waitStatus(t, p.addr, path, "collection", "completed", time.Second)
	}
	if got := liveBalance(t, p.addr, "GHS"); got != "391.50" { // 492.50 collected, 100.00 and its 1.00 fee paid out
		t.Errorf("GHS balance %s, want 391.50", got)
	}
}

// lastKey is the key of the last of records that key says is one of those
// sought, or "" when none is.
func lastKey[T any](records []T, key func(T) (k string, sought bool)) string {
	last := ""
	for _, r := range records {
		if k, ok := key(r); ok {
			last = k
		}
	}
	return last
}
