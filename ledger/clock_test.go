package ledger

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"slices"
	"testing"
)

func TestAdvanceClock(t *testing.T) {
	s := newTestState(t)
	hash := sha256.Sum256([]byte("k"))
	s.Apply(&CreateOrganization{At: 1, ID: "org_a", Name: "A", Key: CreateAPIKey{At: 1, ID: "key_a", OrgID: "org_a", Hash: string(hash[:])}})
	for _, tc := range []struct {
		cmd  *AdvanceClock
		want error
	}{
		{&AdvanceClock{At: 10, OrgID: "org_b", Millis: 1000}, ErrNotFound},
		{&AdvanceClock{At: 10, OrgID: "org_a", Millis: 0}, ErrValidation},
		{&AdvanceClock{At: 10, OrgID: "org_a", Millis: ClockAdvanceMax + 1}, ErrValidation},
	} {
		before := encodeSnapshot(t, s)
		if res := s.Apply(tc.cmd); !errors.Is(res.Err, tc.want) {
			t.Fatalf("%+v: got %v, want %v", tc.cmd, res.Err, tc.want)
		}
		if !bytes.Equal(encodeSnapshot(t, s), before) {
			t.Fatalf("%+v: a rejected advance changed the state", tc.cmd)
		}
	}
	s.Apply(&AdvanceClock{At: 10, OrgID: "org_a", Millis: 600_000})
	res := s.Apply(&AdvanceClock{At: 20, OrgID: "org_a", Millis: 1000})
	if res.Err != nil || res.Clock.OffsetMillis != 601_000 {
		t.Fatalf("advance: %+v", res)
	}
	if got := s.OrgNow("org_a", 100); got != 601_100 {
		t.Fatalf("OrgNow = %d", got)
	}
	if got := s.OrgNow("org_other", 100); got != 100 {
		t.Fatalf("an untouched organization's clock moved: %d", got)
	}
	// The clock survives a snapshot and a replay.
	r, err := Restore(bytes.NewReader(encodeSnapshot(t, s)))
	if err != nil || r.Clock("org_a").OffsetMillis != 601_000 {
		t.Fatalf("restored clock: %+v %v", r.Clock("org_a"), err)
	}
	cmds, err := DecodeBatch(EncodeBatch(nil, []Command{&AdvanceClock{At: 5, OrgID: "o", Millis: 7}, &Tick{At: 9}}))
	if err != nil || *cmds[0].(*AdvanceClock) != (AdvanceClock{At: 5, OrgID: "o", Millis: 7}) || cmds[1].(*Tick).At != 9 {
		t.Fatalf("round trip: %v %v", cmds, err)
	}
}

// After the sandbox clock moves, an order's own timestamps are on the
// organization's clock, but the events it emits, and the webhook deliveries
// scheduled from them, are on real time: a delivery is due at once, not
// after the length of the jump.
func TestEventsStayOnRealTimeAfterAnAdvance(t *testing.T) {
	f := newOrderFixture(t)
	f.must(endpoint("whe_1", "org_a", "*"))
	const jump = 3 * hour
	f.must(&AdvanceClock{At: 5, OrgID: "org_a", Millis: jump})
	const realAt = 10
	before := f.s.EventCount()
	f.must(cryptoOrder("ord_1", "r1", realAt), EventOrderAwaitingFunds)
	o := f.order("ord_1")
	if o.CreatedAt != realAt+jump {
		t.Fatalf("order createdAt %d, want the organization's clock %d", o.CreatedAt, realAt+jump)
	}
	ev, _ := f.s.EventAt(before + 1)
	if ev.Type != EventOrderAwaitingFunds || ev.At != realAt {
		t.Fatalf("event %s at %d, want real time %d", ev.Type, ev.At, realAt)
	}
	var due []int64
	for _, d := range f.s.pendingDeliveries() {
		if d.EventID == ev.ID {
			due = append(due, d.NextAttemptAt)
		}
	}
	if !slices.Equal(due, []int64{realAt}) {
		t.Fatalf("deliveries of the order's event due at %v, want [%d] (real time)", due, realAt)
	}
}
