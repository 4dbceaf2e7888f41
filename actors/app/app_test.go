package app

import (
	"sync"
	"testing"
	"time"

	"payments/actors"
	"payments/actors/actorstest"
	"payments/rails"
)

// testApp is an App over the real service below it: a single-node Raft
// cluster on Pebble in a temporary directory, the actors, and the
// sandbox's rail, whose payouts and collections stay pending (their
// timing is an hour) so that results do not depend on its speed.
type testApp struct {
	*App
	sys *actors.System
	org string // the bootstrap organization
}

// startApp starts the service and the App cfg describes (its System is
// set here).
func startApp(t *testing.T, cfg Config) *testApp {
	t.Helper()
	node := actorstest.OpenNode(t)
	pending := rails.SandboxTiming{SubmitLatency: time.Hour, Settlement: time.Hour, Timeout: time.Hour}
	sys := actorstest.Start(t, node, actors.Config{Rail: rails.NewSandbox(pending)})
	if _, err := sys.EnsureBootstrap(t.Context(), actors.Bootstrap{Live: cfg.Live, OrgName: "Test Org",
		Country: "GH", Timezone: "Africa/Accra", DefaultCurrency: "GHS"}); err != nil {
		t.Fatal(err)
	}
	org, ok := sys.Reader().FirstOrganization()
	if !ok {
		t.Fatal("no organization after the bootstrap")
	}
	cfg.System = sys
	return &testApp{App: New(cfg), sys: sys, org: org.ID}
}

// caller is the bootstrap organization, as the hosted checkout asks (no
// key, no member).
func (ta *testApp) caller() Caller { return Caller{OrgID: ta.org} }

// handClock is a Clock whose timers fire only when the test says: it
// reads the time from the system clock.
type handClock struct {
	mu     sync.Mutex
	timers []*handTimer
}

type handTimer struct {
	d       time.Duration
	f       func()
	stopped bool
}

func (t *handTimer) Stop() bool {
	was := !t.stopped
	t.stopped = true
	return was
}

func (c *handClock) Now() time.Time { return time.Now() }

func (c *handClock) AfterFunc(d time.Duration, f func()) actors.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &handTimer{d: d, f: f}
	c.timers = append(c.timers, t)
	return t
}

// fire runs the timers set so far and returns their durations.
func (c *handClock) fire() []time.Duration {
	c.mu.Lock()
	timers := c.timers
	c.timers = nil
	c.mu.Unlock()
	var out []time.Duration
	for _, t := range timers {
		if !t.stopped {
			t.stopped = true
			out = append(out, t.d)
			t.f()
		}
	}
	return out
}
