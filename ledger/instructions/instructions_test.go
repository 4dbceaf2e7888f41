package instructions

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"payments/ledger"
	"payments/ledger/ledgertest"
)

// railFixture: ledgertest's rail fixture (org_a, pay_1, col_1).
var railFixture = ledgertest.RailFixture

var applyRejected = ledgertest.ApplyRejected

// openInstructions walks Open to the end, in small pages to walk several.
func openInstructions(r *ledger.Reader) []Instruction { return ledgertest.WalkOpen(r, Open, 7) }

func TestInstructionRules(t *testing.T) {
	s := railFixture(t)
	prep := &Prepare{At: 10, ID: "pay_1", Provider: "momo", Key: "k-1", Payload: "body"}
	r := s.Apply(prep)
	if r.Err != nil || r.Replayed || Of(r).Key != "k-1" || Of(r).OrgID != "org_a" {
		t.Fatalf("prepare: %+v %v", Of(r), r.Err)
	}
	for _, tc := range []struct {
		name string
		cmd  ledger.Command
		want error
	}{
		{"no provider", &Prepare{At: 11, ID: "col_1", Collection: true, Key: "k"}, ledger.ErrValidation},
		{"no key", &Prepare{At: 11, ID: "col_1", Collection: true, Provider: "momo"}, ledger.ErrValidation},
		{"payload too large", &Prepare{At: 11, ID: "col_1", Collection: true, Provider: "momo", Key: "k", Payload: string(make([]byte, PayloadBytesMax+1))}, ledger.ErrValidation},
		{"unknown payout", &Prepare{At: 11, ID: "pay_x", Provider: "momo", Key: "k"}, ledger.ErrNotFound},
		{"a collection taken for a payout", &Prepare{At: 11, ID: "col_1", Provider: "momo", Key: "k"}, ledger.ErrNotFound},
		{"key used by another", &Prepare{At: 11, ID: "col_1", Collection: true, Provider: "momo", Key: "k-1"}, ledger.ErrConflict},
		{"sent on a re-sendable", &MarkSent{At: 11, ID: "pay_1", Sent: true}, ledger.ErrValidation},
		{"sent of none", &MarkSent{At: 11, ID: "col_1", Sent: true}, ledger.ErrNotFound},
		{"empty reference", &SetReference{At: 11, ID: "pay_1"}, ledger.ErrValidation},
		{"replacement without key", &Replace{At: 11, ID: "pay_1"}, ledger.ErrValidation},
	} {
		t.Run(tc.name, func(t *testing.T) { applyRejected(t, s, tc.cmd, tc.want) })
	}

	// A second prepare, even with another value, answers the first.
	again := *prep
	again.Key, again.Payload = "k-2", "other"
	if r := s.Apply(&again); r.Err != nil || !r.Replayed || Of(r).Key != "k-1" || Of(r).Payload != "body" {
		t.Fatalf("second prepare: %+v %v", Of(r), r.Err)
	}
	if in, ok := ByKey(s.Reader, "momo", "k-1"); !ok || in.ID != "pay_1" {
		t.Fatalf("by key: %+v %v", in, ok)
	}
	if _, ok := ByKey(s.Reader, "other", "k-1"); ok {
		t.Fatal("a key is found under another provider")
	}

	// Send-once: sending recorded, cleared when nothing was done.
	once := &Prepare{At: 12, ID: "col_1", Collection: true, Provider: "mpesa", Key: "ws_1", SendOnce: true}
	if r := s.Apply(once); r.Err != nil || Of(r).Sent {
		t.Fatalf("prepare send-once: %+v %v", Of(r), r.Err)
	}
	for _, step := range []struct {
		sent, replayed bool
	}{{true, false}, {true, true}, {false, false}, {true, false}} {
		r := s.Apply(&MarkSent{At: 13, ID: "col_1", Sent: step.sent})
		if r.Err != nil || r.Replayed != step.replayed || Of(r).Sent != step.sent {
			t.Fatalf("mark sent %v: %+v", step.sent, r)
		}
	}
	if r := s.Apply(&SetReference{At: 14, ID: "col_1", ProviderRef: "ws_CO_1"}); r.Err != nil || Of(r).ProviderRef != "ws_CO_1" {
		t.Fatalf("reference: %+v", r)
	}
	if r := s.Apply(&SetReference{At: 14, ID: "col_1", ProviderRef: "ws_CO_1"}); !r.Replayed {
		t.Fatalf("same reference again: %+v", r)
	}

	// A replacement supersedes the prepared value; the key callbacks use
	// stays the first.
	if r := s.Apply(&Replace{At: 15, ID: "pay_1", Key: "k-1b", Payload: "body2"}); r.Err != nil ||
		Of(r).PreparedKey != "k-1b" || Of(r).Key != "k-1" || Of(r).Replacements != 1 {
		t.Fatalf("replace: %+v %v", Of(r), r.Err)
	}
	if in, ok := ByKey(s.Reader, "momo", "k-1"); !ok || in.Payload != "body2" {
		t.Fatalf("after replacement, by the first key: %+v %v", in, ok)
	}

	// Settling closes the instruction; a closed one takes no changes and
	// answers a late prepare with itself.
	if r := s.Apply(&ledger.SettlePayout{At: 20, ID: "pay_1", Completed: true}); r.Err != nil {
		t.Fatal(r.Err)
	}
	in, _ := Get(s.Reader, "pay_1")
	if !in.Closed || in.UpdatedAt != 20 {
		t.Fatalf("settled payout's instruction: %+v", in)
	}
	applyRejected(t, s, &Replace{At: 21, ID: "pay_1", Key: "k-1c"}, ledger.ErrConflict)
	if open := openInstructions(s.Reader); len(open) != 1 || open[0].ID != "col_1" {
		t.Fatalf("open instructions: %+v", open)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

// A payout or collection a provider carried settles against the
// instance's float, and the sandbox's exactly as before.
func TestInstructionSettlesAgainstFloat(t *testing.T) {
	s := railFixture(t)
	s.Apply(&Prepare{At: 10, ID: "pay_1", Provider: "momo_gh", Key: "k-1"})
	s.Apply(&Prepare{At: 10, ID: "col_1", Collection: true, Provider: "momo_gh", Key: "k-2"})
	s.Apply(&ledger.SettlePayout{At: 11, ID: "pay_1", Completed: true})
	s.Apply(&ledger.SettleCollection{At: 11, ID: "col_1", Completed: true})
	f, ok := Float(s.Reader, "momo_gh", "GHS")
	// Out 100.00 by the payout, in 50.00 by the collection: the provider
	// holds 50.00 less of ours.
	if !ok || f.Total != 10_000-5_000 || f.Purpose != PurposeProviderFloat {
		t.Fatalf("float: %+v %v", f, ok)
	}
	if _, ok := ledger.ReadAccount(s.Reader, ledger.SystemAccountNumber(ledger.PurposeRailSettlement, "GHS")); ok {
		t.Fatal("a provider's payout settled to the sandbox's rail account")
	}
	// Funding the float: the provider holds more of ours.
	fund := &FundFloat{At: 12, ID: "ffd_1", Provider: "momo_gh", Currency: "GHS", Amount: 20_000, Reference: "wire-1"}
	if r := s.Apply(fund); r.Err != nil || r.Replayed {
		t.Fatalf("fund: %+v", r)
	}
	again := *fund
	again.ID = "ffd_2"
	if r := s.Apply(&again); !r.Replayed || FundingOf(r).ID != "ffd_1" {
		t.Fatalf("fund again: %+v", r)
	}
	other := again
	other.Amount = 1
	applyRejected(t, s, &other, ledger.ErrConflict)
	if f, _ := Float(s.Reader, "momo_gh", "GHS"); f.Total != 5_000-20_000 {
		t.Fatalf("float after funding: %+v", f)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestInstructionCommandsRoundTrip(t *testing.T) {
	ledgertest.RoundTrip(t,
		&Prepare{At: 1, ID: "pay_1", Provider: "evm", Key: "0xabc", Payload: "\x00\x01signed", SendOnce: true},
		&Prepare{At: 1, ID: "col_1", Collection: true, Provider: "momo", Key: "k"},
		&MarkSent{At: 2, ID: "pay_1", Sent: true},
		&SetReference{At: 3, ID: "pay_1", ProviderRef: "ref"},
		&Replace{At: 4, ID: "pay_1", Key: "0xdef", Payload: "more"},
		&FundFloat{At: 7, ID: "ffd_1", Provider: "evm", Currency: "USDC", Amount: -3, Reference: "r"},
	)
}

// The property of instructions: a prepared value, once committed, is never
// lost. Whatever commands arrive in whatever order (prepares racing from
// two leaders, marks, references, replacements, the settlement), the
// instruction holds the first prepared key for good, its prepared value is
// the first or the latest replacement, and a snapshot restores it
// byte for byte.
func TestInstructionNeverLosesPrepared(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			s := railFixture(t)
			type model struct {
				key, prepared, payload string
				sendOnce, sent, closed bool
			}
			var m *model
			for step := 0; step < 60; step++ {
				at := int64(100 + step)
				var cmd ledger.Command
				switch rng.IntN(6) {
				case 0, 1:
					cmd = &Prepare{At: at, ID: "pay_1", Provider: "evm", Key: fmt.Sprintf("k%d", rng.IntN(4)),
						Payload: fmt.Sprintf("p%d", step), SendOnce: rng.IntN(2) == 0}
				case 2:
					cmd = &MarkSent{At: at, ID: "pay_1", Sent: rng.IntN(2) == 0}
				case 3:
					cmd = &Replace{At: at, ID: "pay_1", Key: fmt.Sprintf("r%d", step), Payload: fmt.Sprintf("rp%d", step)}
				case 4:
					cmd = &SetReference{At: at, ID: "pay_1", ProviderRef: fmt.Sprintf("ref%d", rng.IntN(3))}
				case 5:
					if rng.IntN(4) == 0 {
						cmd = &ledger.SettlePayout{At: at, ID: "pay_1", Completed: rng.IntN(2) == 0}
					} else {
						cmd = &MarkSent{At: at, ID: "pay_1", Sent: true}
					}
				}
				r := s.Apply(cmd)
				switch c := cmd.(type) {
				case *Prepare:
					if m == nil && r.Err == nil {
						m = &model{key: c.Key, prepared: c.Key, payload: c.Payload, sendOnce: c.SendOnce}
					}
				case *MarkSent:
					if m != nil && m.sendOnce && !m.closed && r.Err == nil {
						m.sent = c.Sent
					}
				case *Replace:
					if m != nil && !m.closed && r.Err == nil {
						m.prepared, m.payload = c.Key, c.Payload
					}
				case *ledger.SettlePayout:
					if m != nil && r.Err == nil {
						m.closed = true
					}
				}
				in, ok := Get(s.Reader, "pay_1")
				if (m != nil) != ok {
					t.Fatalf("step %d (%T): instruction exists %v, model %v", step, cmd, ok, m != nil)
				}
				if m == nil {
					continue
				}
				if in.Key != m.key || in.PreparedKey != m.prepared || in.Payload != m.payload || in.Sent != m.sent || in.Closed != m.closed {
					t.Fatalf("step %d (%T %+v): instruction %+v, model %+v", step, cmd, cmd, in, *m)
				}
				if by, ok := ByKey(s.Reader, "evm", m.key); !ok || by.ID != "pay_1" {
					t.Fatalf("step %d: the first key no longer finds it", step)
				}
			}
			r := s.Restored()
			a, _ := Get(s.Reader, "pay_1")
			b, _ := Get(r.Reader, "pay_1")
			if a != b || feature.Of(r.Ledger()).instructions.InMemory() != feature.Of(s.Ledger()).instructions.InMemory() {
				t.Fatalf("restored instruction %+v, was %+v", b, a)
			}
			if err := s.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
