package evm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"payments/rails/evm"
	"payments/rails/provider"
)

// leaderChange starts a chain on which a leader prepared and committed A,
// a payout of 1.00 USDC to alice, then died before sending it; it returns
// A and the adapter of the new leader, which knows nothing of it yet.
func leaderChange(t *testing.T) (context.Context, *testChain, provider.Instruction, provider.Prepared, *evm.Adapter) {
	ctx := testCtx(t)
	tc := startChain(t, ctx)
	old := tc.adapter(t, nil)
	inA := payout("pay_a", "USDC", alice, 1_000_000)
	pA := prepare(t, ctx, old, inA)
	return ctx, tc, inA, pA, tc.adapter(t, nil)
}

// A leader prepared and committed A, then died before sending it. The new
// leader restores the committed, unfinished Prepared values before its
// first prepare: its next payout takes the nonce after A's, and both are
// mined once A is resent.
func TestNewLeaderRestoresHeldNonces(t *testing.T) {
	ctx, tc, inA, pA, leader := leaderChange(t)
	if err := leader.Restore(ctx, []provider.Prepared{pA}); err != nil {
		t.Fatal(err)
	}
	inC := payout("pay_c", "USDC", alice, 2_000_000)
	pC := prepare(t, ctx, leader, inC)
	if nonceOf(t, pC) != nonceOf(t, pA)+1 {
		t.Fatalf("nonces: A %d, C %d", nonceOf(t, pA), nonceOf(t, pC))
	}
	submit(t, ctx, leader, inC, pC) // waits behind A's nonce
	status(t, ctx, leader, inC, pC, provider.StatePending)
	submit(t, ctx, leader, inA, pA) // the new leader resumes A
	tc.waitMined(t, ctx, pC.Key)
	tc.mine(t, ctx, 3)
	status(t, ctx, leader, inA, pA, provider.StateCompleted)
	status(t, ctx, leader, inC, pC, provider.StateCompleted)
	if got := tc.balance(t, ctx, tc.usdc, alice); got != 3_000_000 {
		t.Fatalf("recipient holds %d, want 3000000", got)
	}
}

// Without Restore the new leader reuses A's nonce for C (the failure mode
// the rule exists for): C is mined, and A, whose nonce is gone, fails
// once that block is confirmed. Nothing is paid twice and nothing is lost:
// A's money never moved.
func TestNonceTakenByAnotherFailsSafely(t *testing.T) {
	ctx, tc, inA, pA, leader := leaderChange(t)
	inC := payout("pay_c", "USDC", alice, 2_000_000)
	pC := prepare(t, ctx, leader, inC)
	if nonceOf(t, pC) != nonceOf(t, pA) {
		t.Fatalf("nonces: A %d, C %d", nonceOf(t, pA), nonceOf(t, pC))
	}
	submit(t, ctx, leader, inC, pC)
	tc.waitMined(t, ctx, pC.Key)
	if o := submit(t, ctx, leader, inA, pA); o.State != provider.StateProcessing {
		t.Fatalf("A, its nonce taken by a block not yet final: %+v", o)
	}
	tc.mine(t, ctx, 2)
	o := status(t, ctx, leader, inA, pA, provider.StateFailed)
	if !strings.Contains(o.Message, "used by another transaction") {
		t.Fatalf("message %q", o.Message)
	}
	status(t, ctx, leader, inC, pC, provider.StateCompleted)
	if got := tc.balance(t, ctx, tc.usdc, alice); got != 2_000_000 {
		t.Fatalf("recipient holds %d, want C's 2000000 alone", got)
	}
}

// A nonce handed out by a prepare whose Prepared never came back (not
// committed) lapses after holdTimeout, and the next prepare fills the gap;
// while it is held, the next prepare takes the nonce after it.
func TestUncommittedNonceLapses(t *testing.T) {
	ctx := testCtx(t)
	tc := startChain(t, ctx)
	held := tc.adapter(t, nil)
	p1 := prepare(t, ctx, held, payout("pay_1", "USDC", alice, 1))
	p2 := prepare(t, ctx, held, payout("pay_2", "USDC", alice, 1))
	if nonceOf(t, p2) != nonceOf(t, p1)+1 {
		t.Fatalf("held: nonces %d then %d", nonceOf(t, p1), nonceOf(t, p2))
	}
	lapsing := tc.adapter(t, map[string]any{"nonces": map[string]any{"holdTimeout": "1ms"}})
	q1 := prepare(t, ctx, lapsing, payout("pay_3", "USDC", alice, 1))
	time.Sleep(5 * time.Millisecond)
	q2 := prepare(t, ctx, lapsing, payout("pay_4", "USDC", alice, 1))
	if nonceOf(t, q2) != nonceOf(t, q1) {
		t.Fatalf("lapsed: nonces %d then %d, want the gap filled", nonceOf(t, q1), nonceOf(t, q2))
	}
	// A submitted Prepared is committed: its hold never lapses while the
	// node does not have it mined.
	submitted := payout("pay_5", "USDC", alice, 1)
	if err := tc.SetAutomine(ctx, false); err != nil {
		t.Fatal(err)
	}
	q3 := prepare(t, ctx, lapsing, submitted)
	submit(t, ctx, lapsing, submitted, q3)
	if err := tc.Call(ctx, nil, "anvil_dropTransaction", q3.Key); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	q4 := prepare(t, ctx, lapsing, payout("pay_6", "USDC", alice, 1))
	if nonceOf(t, q4) != nonceOf(t, q3)+1 {
		t.Fatalf("committed: nonces %d then %d", nonceOf(t, q3), nonceOf(t, q4))
	}
}
