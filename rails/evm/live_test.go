//go:build evm_live

package evm_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"payments/rails/evm"
	"payments/rails/provider"
)

// The contract tests against a real testnet (Sepolia, Base Sepolia, Amoy,
// BSC testnet), run with -tags evm_live and:
//
//	EVM_LIVE_SETTINGS   the instance's settings JSON (as in the providers file)
//	EVM_LIVE_HOT_KEY    the testnet hot wallet's key (hex)
//	EVM_LIVE_XPUB       a deposit xpub (optional: deposits are skipped without it)
//	EVM_LIVE_CURRENCY   the token to pay out (USDC)
//	EVM_LIVE_TO         a recipient address; with EVM_LIVE_SEND=1 a payout of
//	EVM_LIVE_AMOUNT_MINOR (default 1) is sent and followed to completion
//
// Skipped without them. They check what a local chain cannot: the real
// node's fee history and estimates, its answers to a resend, its log ranges.
func TestLiveTestnet(t *testing.T) {
	settings, key := os.Getenv("EVM_LIVE_SETTINGS"), os.Getenv("EVM_LIVE_HOT_KEY")
	if settings == "" || key == "" {
		t.Skip("EVM_LIVE_SETTINGS and EVM_LIVE_HOT_KEY are not set: no testnet credentials")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	methods := []provider.MethodConfig{{Code: "live", Directions: []string{"payouts"}}}
	secrets := provider.Secrets{evm.SecretHotWalletKey: provider.NewSecret(key)}
	if x := os.Getenv("EVM_LIVE_XPUB"); x != "" {
		methods[0].Directions = append(methods[0].Directions, "deposits")
		secrets[evm.SecretDepositXpub] = provider.NewSecret(x)
	}
	v, err := evm.Factory(provider.InstanceConfig{Name: "live", Kind: evm.Kind, Settings: []byte(settings), Methods: methods}, secrets)
	if err != nil {
		t.Fatal(err)
	}
	a := v.(*evm.Adapter)
	defer a.Close()
	bals, err := a.Balances(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("hot wallet %s: %+v", a.HotWallet().Hex(), bals)
	if _, ok := secrets[evm.SecretDepositXpub]; ok {
		d, err := a.ProvisionDeposit(ctx, provider.DepositRequest{Index: 0})
		if err != nil {
			t.Fatal(err)
		}
		ds, cur, err := a.PollDeposits(ctx, nil)
		if err != nil || len(cur) == 0 {
			t.Fatalf("poll: %v", err)
		}
		t.Logf("deposit address %s; %d deposits from the head", d.Address, len(ds))
	}
	to, cur := os.Getenv("EVM_LIVE_TO"), os.Getenv("EVM_LIVE_CURRENCY")
	if to == "" || cur == "" {
		return
	}
	amount, _ := strconv.ParseInt(os.Getenv("EVM_LIVE_AMOUNT_MINOR"), 10, 64)
	if amount <= 0 {
		amount = 1
	}
	in := provider.Instruction{ID: "pay_live_" + strconv.FormatInt(time.Now().Unix(), 10), Currency: cur, AmountMinor: amount, Exponent: 6, Address: to}
	p, err := a.PreparePayout(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prepared %s", p.Key)
	if os.Getenv("EVM_LIVE_SEND") != "1" {
		return
	}
	for i := 0; i < 2; i++ { // the second send is the node's "already known"
		if _, err := a.SubmitPayout(ctx, in, p); err != nil {
			t.Fatalf("submit %d: %v", i, err)
		}
	}
	for {
		o, err := a.PayoutStatus(ctx, in, p)
		if err != nil {
			t.Logf("status: %v", err)
		} else if o.Replacement != nil {
			p = *o.Replacement
			if _, err := a.SubmitPayout(ctx, in, p); err != nil {
				t.Logf("replacement: %v", err)
			}
		} else if o.State.Final() {
			if o.State != provider.StateCompleted {
				t.Fatalf("payout %s: %s", o.State, o.Message)
			}
			t.Logf("completed: %s", o.ProviderRef)
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("the payout did not complete in 30 minutes")
		case <-time.After(15 * time.Second):
		}
	}
}
