package evm_test

import (
	"testing"

	"payments/rails/evm"
	"payments/rails/provider"
)

// Sweeping moves a deposit address's tokens to the hot wallet: the gas
// wallet funds exactly the gas first (the address holds no ether), the
// derived key signs. The addresses the sweeper derives from the xprv are
// the ones the service derived from the xpub.
func TestSweepToHotWallet(t *testing.T) {
	ctx := testCtx(t)
	tc := startChain(t, ctx)
	a := tc.adapter(t, nil)
	to := provision(t, ctx, a, 4)
	tc.deposit(t, ctx, tc.usdc, to, 40_000_000)
	tc.deposit(t, ctx, tc.usdt, to, 2_500_000)
	if eth, _ := tc.Eth.BalanceAt(ctx, to, nil); eth.Sign() != 0 {
		t.Fatalf("the deposit address holds %s wei before the sweep", eth)
	}
	s, err := evm.NewSweeper(tc.instance(t, nil), provider.Secrets{
		evm.SecretDepositXprv:  provider.NewSecret(tc.xprv),
		evm.SecretGasWalletKey: provider.NewSecret(keyHex(tc.gas)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if got, _ := s.Address(4); got != to {
		t.Fatalf("the sweeper derives %s for index 4, the service %s", got, to)
	}
	hotUSDC, hotUSDT := tc.balance(t, ctx, tc.usdc, addr(tc.hot)), tc.balance(t, ctx, tc.usdt, addr(tc.hot))
	res, err := s.Sweep(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	if res.GasTx == ([32]byte{}) || len(res.Swept) != 2 || res.Swept[0].Currency != "USDC" || res.Swept[0].AmountMinor != 40_000_000 || res.Swept[1].AmountMinor != 2_500_000 {
		t.Fatalf("sweep result %+v", res)
	}
	if got := tc.balance(t, ctx, tc.usdc, to); got != 0 {
		t.Fatalf("the deposit address still holds %d USDC units", got)
	}
	if got := tc.balance(t, ctx, tc.usdc, addr(tc.hot)); got != hotUSDC+40_000_000 {
		t.Fatalf("hot wallet USDC %d, want %d", got, hotUSDC+40_000_000)
	}
	if got := tc.balance(t, ctx, tc.usdt, addr(tc.hot)); got != hotUSDT+2_500_000 {
		t.Fatalf("hot wallet USDT %d, want %d", got, hotUSDT+2_500_000)
	}
	// Nothing left: a second sweep does nothing.
	if res, err := s.Sweep(ctx, 4); err != nil || len(res.Swept) != 0 || res.GasTx != ([32]byte{}) {
		t.Fatalf("second sweep: %+v, %v", res, err)
	}
	// The feed sees the two deposits and not the sweeper's transfers out.
	ds, _, err := a.PollDeposits(ctx, nil)
	if err != nil || len(ds) != 2 {
		t.Fatalf("feed: %+v, %v", ds, err)
	}
	for _, d := range ds {
		if d.To != to.Hex() || d.From == to.Hex() {
			t.Fatalf("feed reported %+v", d)
		}
	}
}

// The service never holds the sweeper's keys, and the gas wallet is never
// the hot wallet.
func TestSweeperKeysApart(t *testing.T) {
	ctx := testCtx(t)
	tc := startChain(t, ctx)
	_, err := evm.Factory(tc.instance(t, nil), provider.Secrets{
		evm.SecretHotWalletKey: provider.NewSecret(keyHex(tc.hot)),
		evm.SecretDepositXpub:  provider.NewSecret(tc.xpub),
		evm.SecretDepositXprv:  provider.NewSecret(tc.xprv),
	})
	if err == nil {
		t.Fatal("the service took the deposit xprv")
	}
	_, err = evm.Factory(tc.instance(t, nil), provider.Secrets{
		evm.SecretHotWalletKey: provider.NewSecret(keyHex(tc.hot)),
		evm.SecretDepositXpub:  provider.NewSecret(tc.xprv),
	})
	if err == nil {
		t.Fatal("the service took an xprv as its xpub")
	}
	_, err = evm.NewSweeper(tc.instance(t, nil), provider.Secrets{
		evm.SecretDepositXprv:  provider.NewSecret(tc.xprv),
		evm.SecretGasWalletKey: provider.NewSecret(keyHex(tc.hot)),
	})
	if err == nil {
		t.Fatal("the sweeper paid gas from the hot wallet")
	}
}
