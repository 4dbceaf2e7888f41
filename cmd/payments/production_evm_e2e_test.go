package main

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"payments/rails/evm/devchain"
)

// evmInstance configures the local chain's evm instance (devchain.Instance):
// two confirmations at a block every 500 ms, a transaction sent again after
// 30 s unmined; secrets in files under dir.
func evmInstance(t *testing.T, dir string, chain *devchain.Chain, usdc common.Address) map[string]any {
	return evmInstanceAt(t, dir, chain.URL, usdc)
}

// evmInstanceAt is evmInstance against the node at rpcURL.
func evmInstanceAt(t *testing.T, dir, rpcURL string, usdc common.Address) map[string]any {
	t.Helper()
	p, err := devchain.Instance{RPCURL: rpcURL, USDC: usdc, Confirmations: 2,
		BlockTime: 500 * time.Millisecond, StuckAfter: 30 * time.Second}.Provider(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// USDC payouts on a three-node production cluster while its leader is
// killed with -9: each completes with exactly one ERC-20 transfer (each
// recipient holds exactly its amount) and the hot wallet spent exactly one
// nonce per payout; the deposit that funded them was credited once. The
// chain stops mining while the payouts are sent, so that every one of
// them is signed, sent and unmined in the mempool when the leader dies:
// the new leader restores them and sends the same bytes again.
func TestProductionEVMLeaderChange(t *testing.T) {
	endToEnd(t)
	if _, ok := devchain.AnvilPath(); !ok {
		if os.Getenv("PAYMENTS_REQUIRE_ANVIL") != "" {
			t.Fatal("anvil is not installed and PAYMENTS_REQUIRE_ANVIL is set: run make evm-tools")
		}
		t.Skip("anvil is not installed: run make evm-tools")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	chain, err := devchain.Start(ctx, "--block-time", "1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(chain.Close)
	hot := crypto.PubkeyToAddress(devchain.DevKey(1).PublicKey)
	usdc, err := chain.Setup(ctx, 1_000_000, 10_000, 10, hot)
	if err != nil {
		t.Fatal(err)
	}
	nonce0, err := chain.Eth.NonceAt(ctx, hot, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The chain needs no callbacks: the node polls its feed and receipts.
	providers := providersFile(t, dir, evmInstance(t, dir, chain, usdc))
	procs := startCluster(t, 3, "--stack", "production", "--bootstrap-key", liveKey, "--providers", providers,
		"--deposit-poll-interval", "200ms")
	leader := leaderSeenBy(t, procs, 0, -1)
	follower := procs[(leader+1)%3]

	// Funded by a deposit on the chain, credited once.
	var addr struct {
		Address struct {
			Address string `json:"address"`
		} `json:"address"`
	}
	if st, err := liveCall(follower.addr, "POST", "/v1/crypto-addresses", map[string]any{"currency": "USDC", "chain": "ethereum"}, &addr); err != nil || st != 201 {
		t.Fatalf("crypto address: %d %v", st, err)
	}
	if _, err := chain.TransferToken(ctx, devchain.DevKey(0), usdc, common.HexToAddress(addr.Address.Address), big.NewInt(500_000_000)); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "the deposit credited", func() bool { return liveBalance(t, follower.addr, "USDC") == "500.000000" })

	// Payouts to fresh recipients, sent while the chain mines nothing,
	// then the leader dies with them in the mempool.
	if err := chain.Call(ctx, nil, "evm_setIntervalMining", 0); err != nil {
		t.Fatal(err)
	}
	const n = 6
	recipients := make([]common.Address, n)
	ids := make([]string, n)
	for i := range ids {
		recipients[i] = crypto.PubkeyToAddress(devchain.DevKey(uint32(10 + i)).PublicKey)
		ids[i] = livePayout(t, follower.addr, map[string]any{"code": "usdc_ethereum", "currency": "USDC", "address": recipients[i].Hex(), "amount": fmt.Sprint(10 + i)}, fmt.Sprintf("usdc-%d", i))
	}
	waitUntil(t, 30*time.Second, "every payout's transaction in the mempool", func() bool {
		pending, err := chain.Eth.PendingNonceAt(ctx, hot)
		return err == nil && pending-nonce0 == n
	})
	for _, id := range ids {
		var body map[string]map[string]any
		st, err := liveCall(procs[leader].addr, "GET", "/v1/payouts/"+id, nil, &body)
		if status := body["payout"]["status"]; err != nil || st != 200 || status != "pending" && status != "processing" {
			t.Fatalf("payout %s before the kill: %d %v %v, want it unsettled", id, st, err, status)
		}
	}
	procs[leader].kill()
	next := leaderSeenBy(t, procs, (leader+1)%3, leader)
	t.Logf("n%d killed with %d USDC payouts unmined in the mempool; n%d leads", leader+1, n, next+1)
	if err := chain.Call(ctx, nil, "evm_setIntervalMining", 1); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		waitStatus(t, procs[next].addr, "/v1/payouts/"+id, "payout", "completed", 90*time.Second)
	}
	for i, r := range recipients {
		got, err := chain.TokenBalance(ctx, usdc, r)
		if err != nil {
			t.Fatal(err)
		}
		if want := big.NewInt(int64(10+i) * 1_000_000); got.Cmp(want) != 0 {
			t.Errorf("recipient %d holds %s USDC units, want %s: not one transfer", i, got, want)
		}
	}
	nonce1, err := chain.Eth.NonceAt(ctx, hot, nil)
	if err != nil {
		t.Fatal(err)
	}
	if nonce1-nonce0 != n {
		t.Errorf("the hot wallet spent %d nonces for %d payouts", nonce1-nonce0, n)
	}
	if got := liveBalance(t, procs[next].addr, "USDC"); got == "500.000000" {
		t.Errorf("the balance was not debited: %s", got)
	}
}
