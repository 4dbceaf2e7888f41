package money

import (
	"payments/ledger"
	"testing"
	"time"
)

// One organization's exports take turns; another organization's export
// gets the node's next slot, not the queue behind the first one's.
func TestExportLanes(t *testing.T) {
	l := newExportLanes(time.Second)
	l.node = make(chan struct{}, 1) // one slot, as on a small node

	releaseA, err := l.acquire("org_a")
	if err != nil {
		t.Fatal(err)
	}

	// org_b waits for the node's slot, and gets it when org_a's export
	// ends and its lane has rested; org_a's next export is not ahead of it.
	got := make(chan *ledger.Error, 1)
	go func() {
		release, err := l.acquire("org_b")
		if err == nil {
			release()
		}
		got <- err
	}()
	until(t, "org_b waiting for the node's slot", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.orgs["org_b"] != nil
	})
	releaseA()
	if err := <-got; err != nil {
		t.Fatalf("org_b's export after org_a's: %v", err)
	}
	// A second export of one organization waits for the first, then
	// gives up.
	short := newExportLanes(50 * time.Millisecond)
	release, err := short.acquire("org_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := short.acquire("org_a"); err == nil || err.Code != "rate_limited" || err.RetryAfterSeconds < 1 {
		t.Fatalf("a second concurrent export of one organization: %v, want rate_limited", err)
	}
	release()

	// Every lane is forgotten once its exports are done.
	until(t, "every lane forgotten", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.orgs) == 0
	})
}

// until waits for cond, checking it every few milliseconds, or fails the
// test after two seconds.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.After(2 * time.Second); !cond(); {
		select {
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}
