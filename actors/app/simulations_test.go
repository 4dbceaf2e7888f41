package app_test

import (
	"testing"
	"time"

	"payments/ledger"
)

// A funding credits the balance at once; its reference again replays it.
func TestFundBalance(t *testing.T) {
	s := newStack(t, stackOptions{})
	first := s.app.FundBalance(s.owner, "GHS", 10_000, "top-up-1")
	mustApply(t, "fund", first)
	again := s.app.FundBalance(s.owner, "GHS", 10_000, "top-up-1")
	mustApply(t, "fund again", again)
	if f := first.Result.Funding; f.Amount != 10_000 || f.BalanceAfter != 10_000 || first.Result.Replayed {
		t.Fatalf("funding %+v", f)
	}
	if !again.Result.Replayed || again.Result.Funding.EntrySeq != first.Result.Funding.EntrySeq {
		t.Fatalf("the replay: %+v", again.Result)
	}
	changed := s.app.FundBalance(s.owner, "GHS", 20_000, "top-up-1")
	wantCode(t, "the reference with another amount", changed, ledger.CodeConflict)
}

// The sandbox clock moves the organization's time by the advance, which
// accumulates; the answer says when it was advanced.
func TestAdvanceClock(t *testing.T) {
	s := newStack(t, stackOptions{})
	for i, by := range []time.Duration{time.Hour, 2 * time.Hour} {
		r := s.app.AdvanceClock(s.owner, by)
		mustApply(t, "advance", r.Reply)
		want := int64(time.Hour/time.Millisecond) * int64(i*2+1)
		if clk := r.Result.Clock; clk.OrgID != s.org || clk.OffsetMillis != want {
			t.Fatalf("advance %d: %+v, want offset %d", i, clk, want)
		}
		if r.At.IsZero() || time.Since(r.At) > time.Minute {
			t.Fatalf("advanced at %v", r.At)
		}
	}
	if now := s.sys.Reader().OrgNow(s.org, 0); now != 3*int64(time.Hour/time.Millisecond) {
		t.Fatalf("the organization's clock: %d", now)
	}
}
