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
	slow := fastSandbox
	slow.Settlement = 500 * time.Millisecond
	h := startWithRail(t, actors.Config{}, slow)
	h.fund(t, "GHS", 1_000_000, "seed")
	const payouts = 20
	for i := range payouts {
		if r := h.payout(fmt.Sprintf("stats-%d", i), 1_000); r.Err != nil || r.Result.Err != nil {
			t.Fatalf("payout %d: %v %v", i, r.Err, r.Result.Err)
		}
	}
	st := h.sys.Stats()
	if st.DriverRunning+st.DriverQueued == 0 {
		t.Fatalf("20 payouts settling for 500ms, and the driver's backlog is empty: %+v", st)
	}
	if st.ActorsAlive == 0 || st.MessagesPosted == 0 {
		t.Fatalf("no actors or messages counted: %+v", st)
	}
	if !eventually(10*time.Second, func() bool {
		st = h.sys.Stats()
		return st.DriverRunning == 0 && st.DriverQueued == 0 && st.MessagesPosted == st.MessagesReceived
	}) {
		t.Fatalf("the driver's backlog or the mailboxes did not drain: %+v", st)
	}
	if st.ParkedTransitions != 0 {
		t.Fatalf("%d transitions parked on a rail that refuses nothing", st.ParkedTransitions)
	}
}
