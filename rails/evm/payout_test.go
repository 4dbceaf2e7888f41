package evm_test

import (
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rlp"

	"payments/rails/provider"
)

var alice = common.HexToAddress("0x00000000000000000000000000000000000a11ce")

// A payout is processing once mined and completed only after the configured
// confirmations; the tokens moved once. The Tether-style token, whose
// transfer returns nothing, completes the same way.
func TestPayoutCompletesAfterConfirmations(t *testing.T) {
	ctx := testCtx(t)
	tc := startChain(t, ctx)
	a := tc.adapter(t, nil)
	tc.eachToken(t, func(t *testing.T, currency string, token common.Address) {
		before := tc.balance(t, ctx, token, addr(tc.hot))
		in := payout("pay_"+currency, currency, alice, 12_345_678) // 12.345678
		p := prepare(t, ctx, a, in)
		tx := new(types.Transaction)
		if err := tx.UnmarshalBinary(p.Payload); err != nil || tx.Hash().Hex() != p.Key {
			t.Fatalf("the payload is not the signed transaction the key names: %v", err)
		}
		if *tx.To() != token || tx.Gas() == 0 || tx.GasFeeCap().Sign() == 0 || tx.GasTipCap().Sign() == 0 {
			t.Fatalf("transaction to %s with gas %d, fee cap %s, tip %s", tx.To(), tx.Gas(), tx.GasFeeCap(), tx.GasTipCap())
		}
		if o := submit(t, ctx, a, in, p); o.State != provider.StatePending || o.ProviderRef != p.Key {
			t.Fatalf("SubmitPayout = %+v", o)
		}
		tc.waitMined(t, ctx, p.Key) // automine: one confirmation of three
		o := status(t, ctx, a, in, p, provider.StateProcessing)
		if o.ProviderRef != p.Key || o.CheckAfter <= 0 {
			t.Fatalf("outcome %+v", o)
		}
		tc.mine(t, ctx, 1)
		status(t, ctx, a, in, p, provider.StateProcessing)
		tc.mine(t, ctx, 1)
		status(t, ctx, a, in, p, provider.StateCompleted)
		if got := tc.balance(t, ctx, token, alice); got != 12_345_678 {
			t.Fatalf("recipient holds %d, want 12345678", got)
		}
		if got := tc.balance(t, ctx, token, addr(tc.hot)); got != before-12_345_678 {
			t.Fatalf("hot wallet holds %d, want %d", got, before-12_345_678)
		}
	})
	bals, err := a.Balances(ctx)
	want := int64(1000*usdcUnit - 12_345_678)
	if err != nil || len(bals) != 2 || bals[0].Currency != "USDC" || bals[0].AmountMinor != want || bals[1].Currency != "USDT" || bals[1].AmountMinor != want {
		t.Fatalf("Balances = %+v, %v", bals, err)
	}
}

// The same Prepared submitted twice, and again after it was mined, is one
// transfer; preparing the same instruction again gives the same Prepared.
func TestSubmitTwiceSendsOnce(t *testing.T) {
	ctx := testCtx(t)
	tc := startChain(t, ctx)
	a := tc.adapter(t, nil)
	if err := tc.SetAutomine(ctx, false); err != nil {
		t.Fatal(err)
	}
	in := payout("pay_twice", "USDC", alice, 5*usdcUnit)
	p := prepare(t, ctx, a, in)
	if again := prepare(t, ctx, a, in); again.Key != p.Key {
		t.Fatalf("preparing again gave %s, then %s", p.Key, again.Key)
	}
	nonce0, err := tc.Eth.NonceAt(ctx, addr(tc.hot), nil)
	if err != nil {
		t.Fatal(err)
	}
	submit(t, ctx, a, in, p)
	if o := submit(t, ctx, a, in, p); o.State != provider.StatePending { // "already known"
		t.Fatalf("second submit: %+v", o)
	}
	tc.mine(t, ctx, 1)
	if o := submit(t, ctx, a, in, p); o.State != provider.StateProcessing { // "nonce too low": it is mined
		t.Fatalf("submit after mining: %+v", o)
	}
	tc.mine(t, ctx, 2)
	status(t, ctx, a, in, p, provider.StateCompleted)
	if got := tc.balance(t, ctx, tc.usdc, alice); got != 5*usdcUnit {
		t.Fatalf("recipient holds %d, want one transfer of %d", got, 5*usdcUnit)
	}
	if n, _ := tc.Eth.NonceAt(ctx, addr(tc.hot), nil); n != nonce0+1 {
		t.Fatalf("the hot wallet sent %d transactions, want 1", n-nonce0)
	}
}

// A transaction stuck under a risen base fee gets a replacement at the
// same nonce with higher fees; the replacement is mined, the original
// never, and the status of either Prepared reports the mined one.
func TestStuckPayoutIsReplaced(t *testing.T) {
	ctx := testCtx(t)
	tc := startChain(t, ctx)
	a := tc.adapter(t, map[string]any{"stuckAfter": "1ms"})
	if err := tc.SetAutomine(ctx, false); err != nil {
		t.Fatal(err)
	}
	in := payout("pay_stuck", "USDC", alice, 7*usdcUnit)
	p := prepare(t, ctx, a, in)
	submit(t, ctx, a, in, p)
	orig := new(types.Transaction)
	orig.UnmarshalBinary(p.Payload)
	// The next block charges ten times what the transaction offers.
	high := new(big.Int).Mul(orig.GasFeeCap(), big.NewInt(10))
	if err := tc.Call(ctx, nil, "anvil_setNextBlockBaseFeePerGas", (*hexutil.Big)(high)); err != nil {
		t.Fatal(err)
	}
	tc.mine(t, ctx, 1)
	o := status(t, ctx, a, in, p, provider.StatePending)
	if o.Replacement == nil {
		t.Fatal("no replacement for a stuck transaction")
	}
	r := *o.Replacement
	if r.Key == p.Key || nonceOfChain(t, r) != orig.Nonce() {
		t.Fatalf("replacement %s at nonce %d; original %s at %d", r.Key, nonceOfChain(t, r), p.Key, orig.Nonce())
	}
	submit(t, ctx, a, in, r)
	tc.mine(t, ctx, 1)
	o = status(t, ctx, a, in, r, provider.StateProcessing)
	if o.ProviderRef != r.Key {
		t.Fatalf("mined %s, want the replacement %s", o.ProviderRef, r.Key)
	}
	// The original's Prepared reports the replacement too.
	if o := status(t, ctx, a, in, p, provider.StateProcessing); o.ProviderRef != r.Key {
		t.Fatalf("status of the original reports %s, want %s", o.ProviderRef, r.Key)
	}
	// Submitting the original now changes nothing.
	if _, err := a.SubmitPayout(ctx, in, p); err != nil {
		t.Fatalf("resubmitting the original: %v", err)
	}
	tc.mine(t, ctx, 2)
	status(t, ctx, a, in, r, provider.StateCompleted)
	if got := tc.balance(t, ctx, tc.usdc, alice); got != 7*usdcUnit {
		t.Fatalf("recipient holds %d, want one transfer of %d", got, 7*usdcUnit)
	}
	if rc, err := tc.Eth.TransactionReceipt(ctx, orig.Hash()); err == nil {
		t.Fatalf("the original was mined too: %+v", rc)
	}
	// A new adapter (a restart) finds the replacement from the committed
	// Prepared alone.
	b := tc.adapter(t, nil)
	if o := status(t, ctx, b, in, r, provider.StateCompleted); o.ProviderRef != r.Key {
		t.Fatalf("after a restart: %+v", o)
	}
}

func nonceOfChain(t *testing.T, p provider.Prepared) uint64 {
	t.Helper()
	// A replacement's payload is the marker 0xb0 and an RLP list of the
	// signed transactions, newest first.
	var list [][]byte
	if p.Payload[0] != 0xb0 {
		return nonceOf(t, p)
	}
	if err := rlp.DecodeBytes(p.Payload[1:], &list); err != nil {
		t.Fatal(err)
	}
	tx := new(types.Transaction)
	if err := tx.UnmarshalBinary(list[0]); err != nil {
		t.Fatal(err)
	}
	return tx.Nonce()
}

// A transfer the token refuses once mined (two payouts prepared against a
// balance that covers one) fails with the token's reason, after the
// confirmations; the first completes.
func TestRevertedPayoutFails(t *testing.T) {
	ctx := testCtx(t)
	tc := startChain(t, ctx)
	a := tc.adapter(t, nil)
	reasons := map[string]string{"USDC": "insufficient token balance", "USDT": "insufficient balance"}
	tc.eachToken(t, func(t *testing.T, currency string, token common.Address) {
		all := tc.balance(t, ctx, token, addr(tc.hot))
		first := payout("pay_all_"+currency, currency, alice, all)
		second := payout("pay_again_"+currency, currency, alice, all)
		p1 := prepare(t, ctx, a, first)
		p2 := prepare(t, ctx, a, second)
		if nonceOf(t, p2) != nonceOf(t, p1)+1 {
			t.Fatalf("nonces %d and %d", nonceOf(t, p1), nonceOf(t, p2))
		}
		submit(t, ctx, a, first, p1)
		submit(t, ctx, a, second, p2)
		tc.waitMined(t, ctx, p2.Key)
		status(t, ctx, a, second, p2, provider.StateProcessing) // reverted, not yet final
		tc.mine(t, ctx, 3)
		status(t, ctx, a, first, p1, provider.StateCompleted)
		o := status(t, ctx, a, second, p2, provider.StateFailed)
		if !strings.Contains(o.Message, "reverted") || !strings.Contains(o.Message, reasons[currency]) {
			t.Fatalf("message %q, want the revert and %q", o.Message, reasons[currency])
		}
		// Refused before anything is signed: the balance is gone now.
		_, err := a.PreparePayout(ctx, payout("pay_more_"+currency, currency, alice, 1))
		wantKind(t, err, provider.ErrRejected, "hot wallet holds")
	})
}

// What cannot be paid is refused before anything is signed.
func TestPrepareRefuses(t *testing.T) {
	ctx := testCtx(t)
	tc := startChain(t, ctx)
	a := tc.adapter(t, nil)
	cases := []struct {
		name string
		in   provider.Instruction
		want string
	}{
		{"unknown currency", payout("p1", "DAI", alice, 1), "not a token"},
		{"bad address", provider.Instruction{ID: "p2", Currency: "USDC", AmountMinor: 1, Exponent: 6, Address: "0x1234"}, "recipient address"},
		{"bad checksum", provider.Instruction{ID: "p3", Currency: "USDC", AmountMinor: 1, Exponent: 6, Address: "0x00000000000000000000000000000000000a11cE"}, "checksum"},
		{"zero address", provider.Instruction{ID: "p4", Currency: "USDC", AmountMinor: 1, Exponent: 6, Address: "0x0000000000000000000000000000000000000000"}, "zero address"},
		{"token contract", payout("p5", "USDC", tc.usdc, 1), "token contract"},
		{"inexact amount", provider.Instruction{ID: "p6", Currency: "USDC", AmountMinor: 123, Exponent: 8, Address: alice.Hex()}, "more decimal places"},
		{"zero amount", payout("p7", "USDC", alice, 0), "positive"},
		{"above the float", payout("p8", "USDC", alice, 2000*usdcUnit), "hot wallet holds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := a.PreparePayout(ctx, c.in)
			wantKind(t, err, provider.ErrRejected, c.want)
		})
	}
	// An exponent above the token's converts when exact: 1.00000000 at
	// exponent 8 is 1.000000.
	p := prepare(t, ctx, a, provider.Instruction{ID: "p9", Currency: "USDC", AmountMinor: 100_000_000, Exponent: 8, Address: alice.Hex()})
	if p.Key == "" {
		t.Fatal("no key")
	}
	// A node that cannot be reached: nothing was sent.
	tc.Close()
	_, err := a.PreparePayout(ctx, payout("p10", "USDC", alice, 1))
	wantKind(t, err, provider.ErrUnavailable, "")
	_, err = a.SubmitPayout(ctx, payout("p9", "USDC", alice, 1), p)
	wantKind(t, err, provider.ErrUnavailable, "not sent")
}
