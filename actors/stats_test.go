package actors_test

import (
	"fmt"
	"testing"
	"time"

	"payments/actors"
)

// The statistics the metrics read follow the work: payouts on a slow rail
// show as the driver's backlog while they settle and leave it when final;
// every message through the mailboxes is counted in and out, so an idle
// system has nothing waiting.
func TestStatsFollowTheWork(t *testing.T) {
	h := payoutsSettlingIn(t, 500*time.Millisecond, 20)
	st := h.sys.Stats()
	if st.DriverRunning+st.DriverQueued+st.DriverWaiting == 0 {
		t.Fatalf("20 payouts settling for 500ms, and the driver's backlog is empty: %+v", st)
	}
	if st.ActorsAlive == 0 || st.MessagesPosted == 0 {
		t.Fatalf("no actors or messages counted: %+v", st)
	}
	if !eventually(10*time.Second, func() bool {
		st = h.sys.Stats()
		return st.DriverRunning == 0 && st.DriverQueued == 0 && st.DriverWaiting == 0 && st.MessagesPosted == st.MessagesReceived
	}) {
		t.Fatalf("the driver's backlog or the mailboxes did not drain: %+v", st)
	}
	if st.ParkedTransitions != 0 {
		t.Fatalf("%d transitions parked on a rail that refuses nothing", st.ParkedTransitions)
	}
}

// A payout whose settlement is not due holds no driver worker while it
// waits: the workers bound the rail's I/O in flight, not the payouts
// settling, so the driver keeps up with any rate of creation (with a worker
// asleep through each settlement, 8,192 workers settled at most ~16,000
// payouts a second on the sandbox's half-second rail, and a node taking
// more grew its open set without bound).
func TestPayoutsAwaitingSettlementHoldNoWorker(t *testing.T) {
	const payouts = 30
	h := payoutsSettlingIn(t, 3*time.Second, payouts)
	var st actors.Stats
	if !eventually(2*time.Second, func() bool {
		st = h.sys.Stats()
		return st.DriverWaiting == payouts
	}) {
		t.Fatalf("%d payouts submitted to a rail settling in 3s, want all %d waiting off the workers: %+v", st.DriverWaiting, payouts, st)
	}
	if st.DriverRunning != 0 || st.DriverQueued != 0 {
		t.Fatalf("payouts awaiting settlement hold workers or queue places: %+v", st)
	}
	if !eventually(10*time.Second, func() bool {
		st = h.sys.Stats()
		return st.DriverWaiting == 0 && st.DriverRunning == 0 && st.DriverQueued == 0
	}) {
		t.Fatalf("the payouts did not settle after waiting: %+v", st)
	}
	if got := h.balance("GHS"); got.Held != 0 {
		t.Fatalf("after settlement, %d still held, want 0: %+v", got.Held, got)
	}
}

// payoutsSettlingIn starts a system whose rail settles in settlement, funds
// it and creates n payouts of 10.00 GHS.
func payoutsSettlingIn(t *testing.T, settlement time.Duration, n int) *harness {
	t.Helper()
	slow := fastSandbox
	slow.Settlement = settlement
	h := startWithRail(t, actors.Config{}, slow)
	h.fund(t, "GHS", 1_000_000, "seed")
	for i := range n {
		if r := h.payout(fmt.Sprintf("settling-%d", i), 1_000); r.Err != nil || r.Result.Err != nil {
			t.Fatalf("payout %d: %v %v", i, r.Err, r.Result.Err)
		}
	}
	return h
}
