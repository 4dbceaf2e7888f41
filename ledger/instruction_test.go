package ledger

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"testing"
)

// railFixture is a ledger with an organization holding 1,000.00 GHS, a
// pending payout pay_1 (100.00 + 1.00 fee) and a pending collection col_1
// (50.00), and a USDC address on ethereum.
func railFixture(t *testing.T) *testState {
	t.Helper()
	s := newTestState(t)
	hash := sha256.Sum256([]byte("k"))
	for _, cmd := range []Command{
		&CreateOrganization{At: 1, ID: "org_a", Name: "A", Key: CreateAPIKey{At: 1, ID: "key_a", OrgID: "org_a", Hash: string(hash[:])}},
		&FundBalance{At: 2, OrgID: "org_a", Currency: "GHS", Amount: 100_000, ExternalReference: "f1"},
		&CreatePayout{At: 3, ID: "pay_1", OrgID: "org_a", ExternalReference: "p1", MethodType: MethodMobileMoney, Fee: 100,
			Spec: PayoutSpec{Currency: "GHS", Amount: 10_000, AmountSide: SideTo, Method: "gh_mtn", AccountNumber: "233241234567"}},
		&CreateCollection{At: 3, ID: "col_1", OrgID: "org_a", ExternalReference: "c1", MethodType: MethodMobileMoney,
			Spec: CollectionSpec{Currency: "GHS", Amount: 5_000, Method: "gh_mtn", PayerNumber: "233241234567"}},
		Deposits.CreateCryptoAddress(3, "addr_1", "org_a", "USDC", "ethereum", "0xAbC1"),
	} {
		if r := s.Apply(cmd); r.Err != nil {
			t.Fatalf("%T: %v", cmd, r.Err)
		}
	}
	return s
}

func TestInstructionRules(t *testing.T) {
	s := railFixture(t)
	prep := &PrepareInstruction{At: 10, ID: "pay_1", Provider: "momo", Key: "k-1", Payload: "body"}
	r := s.Apply(prep)
	if r.Err != nil || r.Replayed || r.Instruction.Key != "k-1" || r.Instruction.OrgID != "org_a" {
		t.Fatalf("prepare: %+v %v", r.Instruction, r.Err)
	}
	for _, tc := range []struct {
		name string
		cmd  Command
		want error
	}{
		{"no provider", &PrepareInstruction{At: 11, ID: "col_1", Collection: true, Key: "k"}, ErrValidation},
		{"no key", &PrepareInstruction{At: 11, ID: "col_1", Collection: true, Provider: "momo"}, ErrValidation},
		{"payload too large", &PrepareInstruction{At: 11, ID: "col_1", Collection: true, Provider: "momo", Key: "k", Payload: string(make([]byte, InstructionPayloadBytesMax+1))}, ErrValidation},
		{"unknown payout", &PrepareInstruction{At: 11, ID: "pay_x", Provider: "momo", Key: "k"}, ErrNotFound},
		{"a collection taken for a payout", &PrepareInstruction{At: 11, ID: "col_1", Provider: "momo", Key: "k"}, ErrNotFound},
		{"key used by another", &PrepareInstruction{At: 11, ID: "col_1", Collection: true, Provider: "momo", Key: "k-1"}, ErrConflict},
		{"sent on a re-sendable", &MarkInstructionSent{At: 11, ID: "pay_1", Sent: true}, ErrValidation},
		{"sent of none", &MarkInstructionSent{At: 11, ID: "col_1", Sent: true}, ErrNotFound},
		{"empty reference", &SetInstructionReference{At: 11, ID: "pay_1"}, ErrValidation},
		{"replacement without key", &ReplaceInstruction{At: 11, ID: "pay_1"}, ErrValidation},
	} {
		t.Run(tc.name, func(t *testing.T) { applyRejected(t, s, tc.cmd, tc.want) })
	}

	// A second prepare, even with another value, answers the first.
	again := *prep
	again.Key, again.Payload = "k-2", "other"
	if r := s.Apply(&again); r.Err != nil || !r.Replayed || r.Instruction.Key != "k-1" || r.Instruction.Payload != "body" {
		t.Fatalf("second prepare: %+v %v", r.Instruction, r.Err)
	}
	if in, ok := s.InstructionByKey("momo", "k-1"); !ok || in.ID != "pay_1" {
		t.Fatalf("by key: %+v %v", in, ok)
	}
	if _, ok := s.InstructionByKey("other", "k-1"); ok {
		t.Fatal("a key is found under another provider")
	}

	// Send-once: sending recorded, cleared when nothing was done.
	once := &PrepareInstruction{At: 12, ID: "col_1", Collection: true, Provider: "mpesa", Key: "ws_1", SendOnce: true}
	if r := s.Apply(once); r.Err != nil || r.Instruction.Sent {
		t.Fatalf("prepare send-once: %+v %v", r.Instruction, r.Err)
	}
	for _, step := range []struct {
		sent, replayed bool
	}{{true, false}, {true, true}, {false, false}, {true, false}} {
		r := s.Apply(&MarkInstructionSent{At: 13, ID: "col_1", Sent: step.sent})
		if r.Err != nil || r.Replayed != step.replayed || r.Instruction.Sent != step.sent {
			t.Fatalf("mark sent %v: %+v", step.sent, r)
		}
	}
	if r := s.Apply(&SetInstructionReference{At: 14, ID: "col_1", ProviderRef: "ws_CO_1"}); r.Err != nil || r.Instruction.ProviderRef != "ws_CO_1" {
		t.Fatalf("reference: %+v", r)
	}
	if r := s.Apply(&SetInstructionReference{At: 14, ID: "col_1", ProviderRef: "ws_CO_1"}); !r.Replayed {
		t.Fatalf("same reference again: %+v", r)
	}

	// A replacement supersedes the prepared value; the key callbacks use
	// stays the first.
	if r := s.Apply(&ReplaceInstruction{At: 15, ID: "pay_1", Key: "k-1b", Payload: "body2"}); r.Err != nil ||
		r.Instruction.PreparedKey != "k-1b" || r.Instruction.Key != "k-1" || r.Instruction.Replacements != 1 {
		t.Fatalf("replace: %+v %v", r.Instruction, r.Err)
	}
	if in, ok := s.InstructionByKey("momo", "k-1"); !ok || in.Payload != "body2" {
		t.Fatalf("after replacement, by the first key: %+v %v", in, ok)
	}

	// Settling closes the instruction; a closed one takes no changes and
	// answers a late prepare with itself.
	if r := s.Apply(&SettlePayout{At: 20, ID: "pay_1", Completed: true}); r.Err != nil {
		t.Fatal(r.Err)
	}
	in, _ := s.Instruction("pay_1")
	if !in.Closed || in.UpdatedAt != 20 {
		t.Fatalf("settled payout's instruction: %+v", in)
	}
	applyRejected(t, s, &ReplaceInstruction{At: 21, ID: "pay_1", Key: "k-1c"}, ErrConflict)
	if open := walkOpen(s.OpenInstructions); len(open) != 1 || open[0].ID != "col_1" {
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
	s.Apply(&PrepareInstruction{At: 10, ID: "pay_1", Provider: "momo_gh", Key: "k-1"})
	s.Apply(&PrepareInstruction{At: 10, ID: "col_1", Collection: true, Provider: "momo_gh", Key: "k-2"})
	s.Apply(&SettlePayout{At: 11, ID: "pay_1", Completed: true})
	s.Apply(&SettleCollection{At: 11, ID: "col_1", Completed: true})
	f, ok := s.ProviderFloat("momo_gh", "GHS")
	// Out 100.00 by the payout, in 50.00 by the collection: the provider
	// holds 50.00 less of ours.
	if !ok || f.Total != 10_000-5_000 || f.Purpose != PurposeProviderFloat {
		t.Fatalf("float: %+v %v", f, ok)
	}
	if _, ok := readRecord(s.Reader, accountKind, systemAccountNumber(PurposeRailSettlement, "GHS")); ok {
		t.Fatal("a provider's payout settled to the sandbox's rail account")
	}
	// Funding the float: the provider holds more of ours.
	fund := &FundProviderFloat{At: 12, ID: "ffd_1", Provider: "momo_gh", Currency: "GHS", Amount: 20_000, Reference: "wire-1"}
	if r := s.Apply(fund); r.Err != nil || r.Replayed {
		t.Fatalf("fund: %+v", r)
	}
	again := *fund
	again.ID = "ffd_2"
	if r := s.Apply(&again); !r.Replayed || r.FloatFunding.ID != "ffd_1" {
		t.Fatalf("fund again: %+v", r)
	}
	other := again
	other.Amount = 1
	applyRejected(t, s, &other, ErrConflict)
	if f, _ := s.ProviderFloat("momo_gh", "GHS"); f.Total != 5_000-20_000 {
		t.Fatalf("float after funding: %+v", f)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestInstructionCommandsRoundTrip(t *testing.T) {
	checkCommandsRoundTrip(t, []Command{
		&PrepareInstruction{At: 1, ID: "pay_1", Provider: "evm", Key: "0xabc", Payload: "\x00\x01signed", SendOnce: true},
		&PrepareInstruction{At: 1, ID: "col_1", Collection: true, Provider: "momo", Key: "k"},
		&MarkInstructionSent{At: 2, ID: "pay_1", Sent: true},
		&SetInstructionReference{At: 3, ID: "pay_1", ProviderRef: "ref"},
		&ReplaceInstruction{At: 4, ID: "pay_1", Key: "0xdef", Payload: "more"},
		&FundProviderFloat{At: 7, ID: "ffd_1", Provider: "evm", Currency: "USDC", Amount: -3, Reference: "r"},
	})
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
				var cmd Command
				switch rng.IntN(6) {
				case 0, 1:
					cmd = &PrepareInstruction{At: at, ID: "pay_1", Provider: "evm", Key: fmt.Sprintf("k%d", rng.IntN(4)),
						Payload: fmt.Sprintf("p%d", step), SendOnce: rng.IntN(2) == 0}
				case 2:
					cmd = &MarkInstructionSent{At: at, ID: "pay_1", Sent: rng.IntN(2) == 0}
				case 3:
					cmd = &ReplaceInstruction{At: at, ID: "pay_1", Key: fmt.Sprintf("r%d", step), Payload: fmt.Sprintf("rp%d", step)}
				case 4:
					cmd = &SetInstructionReference{At: at, ID: "pay_1", ProviderRef: fmt.Sprintf("ref%d", rng.IntN(3))}
				case 5:
					if rng.IntN(4) == 0 {
						cmd = &SettlePayout{At: at, ID: "pay_1", Completed: rng.IntN(2) == 0}
					} else {
						cmd = &MarkInstructionSent{At: at, ID: "pay_1", Sent: true}
					}
				}
				r := s.Apply(cmd)
				switch c := cmd.(type) {
				case *PrepareInstruction:
					if m == nil && r.Err == nil {
						m = &model{key: c.Key, prepared: c.Key, payload: c.Payload, sendOnce: c.SendOnce}
					}
				case *MarkInstructionSent:
					if m != nil && m.sendOnce && !m.closed && r.Err == nil {
						m.sent = c.Sent
					}
				case *ReplaceInstruction:
					if m != nil && !m.closed && r.Err == nil {
						m.prepared, m.payload = c.Key, c.Payload
					}
				case *SettlePayout:
					if m != nil && r.Err == nil {
						m.closed = true
					}
				}
				in, ok := s.Instruction("pay_1")
				if (m != nil) != ok {
					t.Fatalf("step %d (%T): instruction exists %v, model %v", step, cmd, ok, m != nil)
				}
				if m == nil {
					continue
				}
				if in.Key != m.key || in.PreparedKey != m.prepared || in.Payload != m.payload || in.Sent != m.sent || in.Closed != m.closed {
					t.Fatalf("step %d (%T %+v): instruction %+v, model %+v", step, cmd, cmd, in, *m)
				}
				if by, ok := s.InstructionByKey("evm", m.key); !ok || by.ID != "pay_1" {
					t.Fatalf("step %d: the first key no longer finds it", step)
				}
			}
			r := restoreSame(t, s)
			a, _ := s.Instruction("pay_1")
			b, _ := r.Instruction("pay_1")
			if a != b || len(r.st.instructions.rows) != len(s.st.instructions.rows) {
				t.Fatalf("restored instruction %+v, was %+v", b, a)
			}
			if err := s.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
