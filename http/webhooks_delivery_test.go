package http_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"payments/actors"
	"payments/actors/actorstest"
	api "payments/http"
	"payments/ledger"
	"payments/ledger/orders"
	"payments/ledger/webhooks"
	"payments/raft"
	"payments/rails"
)

// engineHarness is a real single-node Raft cluster on Pebble with the
// actors and webhook delivery, without the HTTP front end.
type engineHarness struct {
	t   *testing.T
	sys *actors.System
	org string
}

// startClockedEngine is startEngine on a manual clock, which the test
// moves (timers fire when it passes their time, so a day of retries takes
// milliseconds), delivering webhooks to loopback with a second's timeout.
func startClockedEngine(t *testing.T) (*engineHarness, *actors.ManualClock) {
	t.Helper()
	clock := actors.NewManualClock(time.UnixMilli(1_800_000_000_000))
	return startEngine(t, actors.Config{Now: clock.Now, Webhooks: actors.WebhookConfig{
		Clock: clock, Timeout: time.Second, Policy: actors.WebhookURLPolicy{AllowLoopback: true},
	}}), clock
}

func startEngine(t *testing.T, cfg actors.Config) *engineHarness {
	t.Helper()
	cfg.Rail = rails.NewSandbox(frozenTiming)
	cfg.Webhooks.Payload = api.EventPayload
	sys := actorstest.Start(t, actorstest.OpenNode(t), cfg)
	h := &engineHarness{t: t, sys: sys, org: "org_webhooks"}
	h.propose(&ledger.CreateOrganization{At: h.now(), ID: h.org, Name: "Webhooks",
		Key: ledger.CreateAPIKey{At: h.now(), ID: "key_webhooks", OrgID: h.org, Hash: actors.HashKey("k"), Scopes: ledger.ScopesMerchant}})
	return h
}

func (h *engineHarness) now() int64 { return h.sys.Now().UnixMilli() }

func (h *engineHarness) propose(cmd ledger.Command) ledger.Result {
	h.t.Helper()
	r := h.sys.Propose(context.Background(), cmd)
	if r.Err != nil || r.Result.Err != nil {
		h.t.Fatalf("%T: %v %v", cmd, r.Err, r.Result.Err)
	}
	return r.Result
}

// endpoint registers url directly in the ledger, as if it had passed the
// creation check (DNS may change later).
func (h *engineHarness) endpoint(id, url string) {
	h.propose(&webhooks.CreateEndpoint{At: h.now(), ID: id, OrgID: h.org, URL: url, Events: []string{"*"}, Secret: actors.NewWebhookSecret()})
}

func (h *engineHarness) fund(ref string) {
	h.propose(&ledger.FundBalance{At: h.now(), OrgID: h.org, Currency: "GHS", Amount: 100, ExternalReference: ref})
}

func (h *engineHarness) delivery(endpointID string, n int) webhooks.Delivery {
	var page ledger.Page[webhooks.Delivery]
	{
		s := h.sys.Reader()
		page = webhooks.ListDeliveries(s, h.org, webhooks.DeliveryFilter{EndpointID: endpointID}, ledger.CursorStart, 100)
	}
	if len(page.Items) <= n {
		return webhooks.Delivery{}
	}
	return page.Items[len(page.Items)-1-n] // oldest first
}

func (h *engineHarness) endpointState(id string) webhooks.Endpoint {
	var e webhooks.Endpoint
	e, _ = webhooks.GetEndpoint(h.sys.Reader(), h.org, id)
	return e
}

// The retry schedule, with an injected clock: a failing delivery is tried
// at 30s, 2m, 8m, 32m, 2h, 6h, 6h, 6h (each ±10%) after each failure, then
// fails; every attempt has the same webhook-id. Ten failures in a row,
// across deliveries, disable the endpoint; a 410 disables it at once.
func TestWebhookRetryScheduleAndAutoDisable(t *testing.T) {
	h, clock := startClockedEngine(t)
	rcv := newReceiver(t, func(int) string { return "500" })
	h.endpoint("whe_sched", rcv.url())
	h.fund("first")

	sched := actors.DefaultWebhookSchedule
	for i := 0; i <= len(sched); i++ {
		waitFor(t, fmt.Sprintf("attempt %d", i+1), 10*time.Second, func() bool { return h.delivery("whe_sched", 0).Attempts == int64(i+1) })
		d := h.delivery("whe_sched", 0)
		if i == len(sched) {
			if d.Status != webhooks.Failed || d.CompletedAt != clock.Now().UnixMilli() {
				t.Fatalf("after the schedule: %+v", d)
			}
			break
		}
		wait := time.Duration(d.NextAttemptAt-clock.Now().UnixMilli()) * time.Millisecond
		if d.Status != webhooks.Pending || d.LastStatusCode != 500 || d.LastError != "HTTP 500" ||
			wait < sched[i]*9/10-time.Millisecond || wait > sched[i]*11/10+time.Millisecond {
			t.Fatalf("after attempt %d: waits %v (schedule %v): %+v", i+1, wait, sched[i], d)
		}
		// Nothing happens before the time comes.
		clock.Advance(time.UnixMilli(d.NextAttemptAt - 1).Sub(clock.Now()))
		time.Sleep(20 * time.Millisecond)
		if n := len(rcv.requests()); n != i+1 {
			t.Fatalf("attempt %d came early: %d requests", i+2, n)
		}
		clock.Advance(time.UnixMilli(d.NextAttemptAt).Sub(clock.Now()))
	}
	// Every attempt is in the delivery's history, oldest first.
	if d := h.delivery("whe_sched", 0); len(d.History) != len(sched)+1 {
		t.Fatalf("history of %d attempts, want %d: %+v", len(d.History), len(sched)+1, d.History)
	} else {
		for i, a := range d.History {
			if a.Number != int64(i+1) || a.Succeeded || a.StatusCode != 500 || a.StartedAt == 0 || a.StartedAt > a.At ||
				a.Error != "HTTP 500" || (i > 0 && a.StartedAt < d.History[i-1].At) {
				t.Fatalf("attempt %d of the history: %+v", i+1, a)
			}
		}
	}
	reqs := rcv.requests()
	if len(reqs) != len(sched)+1 {
		t.Fatalf("%d requests, want %d", len(reqs), len(sched)+1)
	}
	for _, r := range reqs {
		if r.id != reqs[0].id {
			t.Fatalf("webhook-id changed between retries: %s, %s", reqs[0].id, r.id)
		}
	}
	if e := h.endpointState("whe_sched"); e.Status != webhooks.Active || e.FailureCount != int64(len(sched)+1) {
		t.Fatalf("endpoint after %d failures: %+v", len(sched)+1, e)
	}

	// The tenth failure in a row disables the endpoint.
	h.fund("second")
	waitFor(t, "the endpoint to be disabled", 10*time.Second, func() bool {
		return h.endpointState("whe_sched").Status == webhooks.Disabled
	})
	if e := h.endpointState("whe_sched"); e.DisabledReason != webhooks.DisabledConsecutiveFailures || e.FailureCount != webhooks.FailuresMax {
		t.Fatalf("auto-disabled endpoint: %+v", e)
	}
	if d := h.delivery("whe_sched", 1); d.Status != webhooks.Failed || d.Attempts != 1 {
		t.Fatalf("the delivery that disabled it: %+v", d)
	}
	h.fund("third") // a disabled endpoint gets no delivery
	if d := h.delivery("whe_sched", 2); d.ID != "" {
		t.Fatalf("a disabled endpoint got %+v", d)
	}

	// Re-activated, then a 410: disabled at once.
	h.propose(&webhooks.UpdateEndpoint{At: h.now(), ID: "whe_sched", OrgID: h.org, EndpointChange: webhooks.EndpointChange{SetStatus: true, Status: webhooks.Active}})
	gone := newReceiver(t, func(int) string { return "410" })
	h.propose(&webhooks.UpdateEndpoint{At: h.now(), ID: "whe_sched", OrgID: h.org, EndpointChange: webhooks.EndpointChange{SetURL: true, URL: gone.url()}})
	h.fund("fourth")
	waitFor(t, "the 410 to disable the endpoint", 10*time.Second, func() bool {
		return h.endpointState("whe_sched").Status == webhooks.Disabled
	})
	if e := h.endpointState("whe_sched"); e.DisabledReason != webhooks.DisabledGone || e.FailureCount != 1 || len(gone.requests()) != 1 {
		t.Fatalf("after a 410: %+v, %d requests", e, len(gone.requests()))
	}
}

// An event on an organization's sandbox clock (an order's), after a
// simulation advanced that clock, is delivered at once: its delivery's
// first attempt is due when it is made, not when the leader's clock
// reaches the organization's.
func TestWebhookDueAtOnceAfterClockAdvance(t *testing.T) {
	h, _ := startClockedEngine(t)
	rcv := newReceiver(t, func(int) string { return "ok" })
	h.endpoint("whe_clock", rcv.url())
	h.propose(&ledger.AdvanceClock{At: h.now(), OrgID: h.org, Millis: 3_600_000})
	method, _ := rails.DefaultCatalogue().Method("gh_mtn")
	in, err := rails.SandboxDepositInstructions(method, "Webhooks", "233241234567")
	if err != nil {
		t.Fatal(err)
	}
	r := h.sys.CreateOrder(actors.OrderRequest{
		OrgID: h.org, ExternalReference: "order-1",
		Spec: orders.Spec{FromMethod: "gh_mtn", FromCurrency: "GHS", FromAccountNumber: "233241234567",
			ToMethod: "gh_mtn", ToCurrency: "GHS", ToAccountNumber: "233241234567", Amount: 1000, AmountSide: ledger.SideFrom},
		FromMethodType: ledger.MethodMobileMoney, ToMethodType: ledger.MethodMobileMoney, FromAmount: 1000, ToAmount: 1000,
		Fee: 10, Instructions: in, // 1% of 10.00, the payout fee of gh_mtn

	})
	if r.Err != nil || r.Result.Err != nil {
		t.Fatalf("create order: %v %v", r.Err, r.Result.Err)
	}
	waitFor(t, "the order's events to be delivered", 10*time.Second, func() bool {
		page := webhooks.ListDeliveries(h.sys.Reader(), h.org, webhooks.DeliveryFilter{EndpointID: "whe_clock"}, ledger.CursorStart, 100)
		var orderEvents int
		for _, d := range page.Items {
			if d.Status != webhooks.Success {
				return false
			}
			if strings.HasPrefix(d.EventType, "order.") {
				orderEvents++
			}
		}
		return orderEvents > 0
	})
}

// SSRF at delivery: a URL that passed the creation check but now resolves
// to loopback, or names it, is refused at the dial on production; and a
// redirect is an answer, never followed, on every stack.
func TestWebhookDeliveryRefusesPrivateTargets(t *testing.T) {
	rcv := newReceiver(t, nil)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(rcv.srv.URL, "http://"))
	h := startEngine(t, actors.Config{Webhooks: actors.WebhookConfig{
		Timeout: time.Second, Policy: actors.WebhookURLPolicy{Resolver: goldenDNS}, // production
	}})
	h.endpoint("whe_rebind", "https://rebind.example.com:"+port+"/hook")
	h.endpoint("whe_literal", "https://127.0.0.1:"+port+"/hook")
	h.endpoint("whe_private", "https://10.0.0.7:"+port+"/hook")
	h.fund("ssrf")
	for id, want := range map[string]string{
		"whe_rebind":  "host rebind.example.com resolves to 127.0.0.1, which is loopback",
		"whe_literal": "address 127.0.0.1 is loopback",
		"whe_private": "address 10.0.0.7 is private",
	} {
		waitFor(t, id+"'s first attempt", 10*time.Second, func() bool { return h.delivery(id, 0).Attempts == 1 })
		if d := h.delivery(id, 0); !strings.Contains(d.LastError, want) || d.LastStatusCode != 0 {
			t.Fatalf("%s: %+v, want an error with %q", id, d, want)
		}
	}
	if n := len(rcv.requests()); n != 0 {
		t.Fatalf("the loopback receiver got %d requests on production", n)
	}
}

func TestWebhookRedirectNotFollowed(t *testing.T) {
	target := newReceiver(t, nil)
	redirector := newReceiver(t, func(int) string { return "redirect" })
	redirector.location = target.url()
	h := startEngine(t, actors.Config{Webhooks: actors.WebhookConfig{Timeout: time.Second, Policy: actors.WebhookURLPolicy{AllowLoopback: true}}})
	h.endpoint("whe_redirect", redirector.url())
	h.fund("redirect")
	waitFor(t, "the first attempt", 10*time.Second, func() bool { return h.delivery("whe_redirect", 0).Attempts == 1 })
	if d := h.delivery("whe_redirect", 0); d.Status != webhooks.Pending || d.LastStatusCode != 307 {
		t.Fatalf("after a redirect: %+v", d)
	}
	if n := len(target.requests()); n != 0 {
		t.Fatalf("the redirect was followed: %d requests", n)
	}
}

// clusterNode is one node of an in-process three-node cluster with its
// own actors and webhook engine.
type clusterNode struct {
	node *raft.Node
	sys  *actors.System
	stop chan struct{}
}

// At least once across a leader's death: three nodes, a receiver that
// fails at random, and the leader killed while deliveries are in flight
// (some of them already answered 2xx by the receiver but not recorded).
// The new leader resends them with the same webhook-id and body; every
// committed event reaches the receiver; nothing reaches it that did not
// commit.
func TestWebhookLeaderKilledMidDelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("three-node cluster")
	}
	schedule := make([]time.Duration, 40)
	for i := range schedule {
		schedule[i] = 30 * time.Millisecond
	}
	var holding atomic.Bool
	faulty := randomFaults(rand.New(rand.NewPCG(7, 11)), fault{"500", 1}, fault{"close", 1}, fault{"hang", 1})
	rcv := newReceiver(t, func(n int) string {
		if holding.Load() {
			return "hold"
		}
		return faulty(n)
	})
	rcv.hang = 500 * time.Millisecond

	peers, lns := clusterPeers(t, 3)
	nodes := make([]*clusterNode, 3)
	for i := range nodes {
		node := openClusterNode(t, peers, i, lns[i])
		sys := actors.Start(actors.Config{Log: node, State: node, Rail: rails.NewSandbox(frozenTiming), Webhooks: actors.WebhookConfig{
			Payload: api.EventPayload, Policy: actors.WebhookURLPolicy{AllowLoopback: true},
			Timeout: 200 * time.Millisecond, Schedule: schedule,
		}})
		cn := &clusterNode{node: node, sys: sys, stop: make(chan struct{})}
		nodes[i] = cn
		go sys.FollowLeadership(node.Leadership(), cn.stop)
	}
	kill := func(i int) {
		if nodes[i] == nil {
			return
		}
		close(nodes[i].stop)
		nodes[i].node.Close()
		nodes[i].sys.Stop()
		nodes[i] = nil
	}
	t.Cleanup(func() {
		for i := range nodes {
			kill(i)
		}
	})
	leader := func() int {
		at := -1
		waitFor(t, "a leader", 15*time.Second, func() bool {
			for i, n := range nodes {
				if n != nil && n.node.IsLeader() {
					at = i
				}
			}
			return at >= 0
		})
		return at
	}
	// propose commits cmd through whichever node leads, retrying an
	// unknown outcome: every command here is idempotent.
	propose := func(cmd ledger.Command) {
		waitFor(t, fmt.Sprintf("%T committed", cmd), 30*time.Second, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			r := nodes[leader()].sys.Propose(ctx, cmd)
			return r.Err == nil && (r.Result.Err == nil || r.Result.Err.Code == ledger.CodeConflict)
		})
	}
	const org = "org_cluster"
	propose(&ledger.CreateOrganization{At: time.Now().UnixMilli(), ID: org, Name: "Cluster",
		Key: ledger.CreateAPIKey{At: time.Now().UnixMilli(), ID: "key_cluster", OrgID: org, Hash: actors.HashKey("c"), Scopes: ledger.ScopesMerchant}})
	secret := actors.NewWebhookSecret()
	propose(&webhooks.CreateEndpoint{At: time.Now().UnixMilli(), ID: "whe_cluster", OrgID: org, URL: rcv.url(), Events: []string{"*"}, Secret: secret})
	fund := func(from, to int) {
		for i := from; i < to; i++ {
			propose(&ledger.FundBalance{At: time.Now().UnixMilli(), OrgID: org, Currency: "GHS", Amount: 100, ExternalReference: fmt.Sprint("ref-", i)})
		}
	}
	const events = 40
	fund(0, events/2)

	// Hold the receiver's answers, wait for deliveries in flight, kill the
	// leader's log, then let the receiver answer 2xx to the dead leader.
	holding.Store(true)
	fund(events/2, events/2+5)
	waitFor(t, "deliveries in flight", 10*time.Second, func() bool { return rcv.held.Load() >= 2 })
	old := leader()
	nodes[old].node.Close()
	close(rcv.release)
	holding.Store(false)
	// The held deliveries are answered 2xx, which the old leader can no
	// longer record.
	waitFor(t, "the held deliveries answered", 10*time.Second, func() bool { return rcv.held.Load() == 0 })
	kill(old)

	fund(events/2+5, events)
	var survivor *actors.System
	waitFor(t, "every delivery to succeed on the new leader", 60*time.Second, func() bool {
		survivor = nodes[leader()].sys
		var pending, count int
		{
			s := survivor.Reader()
			pending = webhooks.PendingDeliveryCount(s)
			count = int(webhooks.DeliveryCount(s))
		}
		return pending == 0 && count == events
	})
	checkAtLeastOnce(t, survivor, rcv, secret, events)
	var sawResend bool
	seen := map[string]int{}
	for _, r := range rcv.requests() {
		seen[r.id]++
		if seen[r.id] > 1 && r.answered == "ok" {
			sawResend = true
		}
	}
	if !sawResend {
		t.Fatal("no delivery was sent twice: the test did not exercise a resend")
	}
	// Both survivors hold the same deliveries.
	var other *actors.System
	for _, n := range nodes {
		if n != nil && n.sys != survivor {
			other = n.sys
		}
	}
	waitFor(t, "the follower to catch up", 10*time.Second, func() bool {
		var a, b []webhooks.Delivery
		{
			s := survivor.Reader()
			a = webhooks.ListDeliveries(s, org, webhooks.DeliveryFilter{}, ledger.CursorStart, 100).Items
		}
		{
			s := other.Reader()
			b = webhooks.ListDeliveries(s, org, webhooks.DeliveryFilter{}, ledger.CursorStart, 100).Items
		}
		return fmt.Sprint(a) == fmt.Sprint(b)
	})
}

// Each attempt's history entry says when it was sent and when its outcome
// was known, on the leader's clock: a receiver that takes 200 ms to answer
// shows an attempt of at least 200 ms.
func TestWebhookAttemptHistoryTimed(t *testing.T) {
	rcv := newReceiver(t, func(n int) string { return map[bool]string{true: "500", false: "hang"}[n == 0] })
	rcv.hang = 200 * time.Millisecond
	h := startEngine(t, actors.Config{Webhooks: actors.WebhookConfig{
		Timeout: 5 * time.Second, Schedule: []time.Duration{50 * time.Millisecond},
		Policy: actors.WebhookURLPolicy{AllowLoopback: true},
	}})
	h.endpoint("whe_timed", rcv.url())
	h.fund("timed")
	waitFor(t, "the retry to succeed", 10*time.Second, func() bool { return h.delivery("whe_timed", 0).Status == webhooks.Success })
	d := h.delivery("whe_timed", 0)
	if len(d.History) != 2 {
		t.Fatalf("history %+v", d.History)
	}
	first, second := d.History[0], d.History[1]
	if first.Number != 1 || first.Succeeded || first.StatusCode != 500 || first.Error != "HTTP 500" ||
		first.StartedAt == 0 || first.At < first.StartedAt {
		t.Fatalf("first attempt %+v", first)
	}
	if second.Number != 2 || !second.Succeeded || second.StatusCode != 204 || second.Error != "" ||
		second.StartedAt < first.At+40 || second.At-second.StartedAt < 200 {
		t.Fatalf("second attempt %+v (after the first, waiting its 50 ms ±10%%, and taking at least 200 ms)", second)
	}
}

// A dead endpoint holds only its own slots: while every attempt to it
// hangs, no more than EndpointConcurrency of them are in flight, and a
// healthy endpoint of the same organization receives everything.
func TestWebhookSlowEndpointDelaysNoOther(t *testing.T) {
	stuck := newReceiver(t, func(int) string { return "hold" })
	healthy := newReceiver(t, nil)
	h := startEngine(t, actors.Config{Webhooks: actors.WebhookConfig{
		Timeout: 30 * time.Second, EndpointConcurrency: 2, Concurrency: 8,
		Policy: actors.WebhookURLPolicy{AllowLoopback: true},
	}})
	h.endpoint("whe_stuck", stuck.url())
	h.endpoint("whe_healthy", healthy.url())
	const events = 10
	for i := 0; i < events; i++ {
		h.fund(fmt.Sprint("slow-", i))
	}
	waitFor(t, "the healthy endpoint to receive every event", 20*time.Second, func() bool {
		var done int
		{
			s := h.sys.Reader()
			done = len(webhooks.ListDeliveries(s, h.org, webhooks.DeliveryFilter{EndpointID: "whe_healthy", Status: webhooks.Success}, ledger.CursorStart, 100).Items)
		}
		return done == events
	})
	waitFor(t, "attempts in flight to the stuck endpoint", 10*time.Second, func() bool { return stuck.held.Load() >= 2 })
	if held := stuck.held.Load(); held != 2 {
		t.Fatalf("%d attempts in flight to the stuck endpoint, want its bound of 2", held)
	}
	close(stuck.release)
	waitFor(t, "the stuck endpoint to catch up", 20*time.Second, func() bool {
		var pending int
		pending = webhooks.PendingDeliveryCount(h.sys.Reader())
		return pending == 0
	})
}
