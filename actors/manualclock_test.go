package actors_test

import (
	"slices"
	"testing"
	"time"

	"payments/actors"
)

// The manual clock fires timers in the order of their due time, then of
// their creation, each with the clock reading its due time; a stopped
// timer never fires; nothing fires before the clock is advanced to it.
func TestManualClockFiresInDueOrder(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	c := actors.NewManualClock(start)
	type fired struct {
		name string
		at   time.Duration // the clock's reading, from start
	}
	var got []fired
	at := func(name string, d time.Duration) {
		c.AfterFunc(d, func() { got = append(got, fired{name, c.Now().Sub(start)}) })
	}
	at("c", 30*time.Millisecond)
	at("a", 10*time.Millisecond)
	at("b1", 20*time.Millisecond)
	at("b2", 20*time.Millisecond)
	stopped := c.AfterFunc(15*time.Millisecond, func() { t.Error("a stopped timer fired") })
	at("now", 0)
	if !stopped.Stop() || stopped.Stop() {
		t.Error("Stop should report true once, then false")
	}
	if len(got) != 0 {
		t.Fatalf("fired before any advance: %v", got)
	}

	c.Advance(25 * time.Millisecond)
	want := []fired{{"now", 0}, {"a", 10 * time.Millisecond}, {"b1", 20 * time.Millisecond}, {"b2", 20 * time.Millisecond}}
	if !slices.Equal(got, want) {
		t.Fatalf("after 25ms fired %v, want %v", got, want)
	}
	if now := c.Now().Sub(start); now != 25*time.Millisecond {
		t.Fatalf("clock reads %v after advancing 25ms", now)
	}

	// A timer set while another fires is due from the firing one's time.
	got = nil
	c.AfterFunc(10*time.Millisecond, func() {
		at("chained", 5*time.Millisecond) // due at 40ms
	})
	c.Advance(100 * time.Millisecond)
	want = []fired{{"c", 30 * time.Millisecond}, {"chained", 40 * time.Millisecond}}
	if !slices.Equal(got, want) {
		t.Fatalf("after 125ms fired %v, want %v", got, want)
	}
}
