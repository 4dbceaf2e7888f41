package rails_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"payments/actors"
	"payments/ledger"
	"payments/ledger/deposits"
	"payments/ledger/instructions"
	"payments/raft"
	"payments/rails"
	"payments/rails/evm"
	"payments/rails/evm/devchain"
	"payments/rails/provider"
)

// The production rails wired end to end on one node, against a real local
// chain: the actors drive the EVM adapter through rails.Providers over a
// real Raft log, as `payments serve --stack production` does.

type chainStack struct {
	t        *testing.T
	ctx      context.Context
	chain    *devchain.Chain
	usdc     common.Address
	hot      common.Address
	node     *raft.Node
	sys      *actors.System
	org      string
	customer *devchain.Chain
}

func startChainStack(t *testing.T) *chainStack {
	t.Helper()
	devchain.SkipWithoutAnvil(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	c, err := devchain.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	hotKey := devchain.DevKey(1)
	s := &chainStack{t: t, ctx: ctx, chain: c, hot: crypto.PubkeyToAddress(hotKey.PublicKey), org: "org_chain"}
	if s.usdc, err = c.Setup(ctx, 1_000_000, 1_000, 10, s.hot); err != nil {
		t.Fatal(err)
	}
	seed := sha256.Sum256([]byte("rails production test deposit tree"))
	master, _ := evm.NewMasterKey(seed[:])
	acct, err := master.Derive(44+evm.HardenedOffset, 60+evm.HardenedOffset, evm.HardenedOffset)
	if err != nil {
		t.Fatal(err)
	}
	settings, _ := json.Marshal(map[string]any{
		"chain": "ethereum", "chainId": devchain.ChainID, "rpcUrl": c.URL,
		"tokens":        map[string]any{"USDC": map[string]any{"address": s.usdc.Hex(), "decimals": 6}},
		"confirmations": 3, "blockTime": "50ms", "stuckAfter": "1h",
	})
	cfg := provider.Config{Providers: []provider.InstanceConfig{{
		Name: "evm_local", Kind: evm.Kind, Settings: settings,
		Methods: []provider.MethodConfig{{Code: "usdc_ethereum", Directions: []string{"payouts", "deposits"}}},
		Secrets: map[string]provider.SecretSource{
			evm.SecretHotWalletKey: {Env: "HOT"}, evm.SecretDepositXpub: {Env: "XPUB"},
		},
	}}}
	env := map[string]string{"HOT": fmt.Sprintf("%x", crypto.FromECDSA(hotKey)), "XPUB": acct.Neuter().String()}
	reg, err := provider.Build(cfg, map[string]provider.Factory{evm.Kind: evm.Factory}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	s.node, err = raft.Open(raft.Config{DataDir: t.TempDir(), HeartbeatTimeout: 50 * time.Millisecond,
		ElectionTimeout: 50 * time.Millisecond, LeaderLeaseTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s.sys = actors.Start(actors.Config{Log: s.node, State: s.node, Rail: rails.NoProvider{},
		Providers: rails.NewProviders(reg, nil), DepositPollInterval: 20 * time.Millisecond})
	t.Cleanup(func() {
		s.sys.Stop()
		s.node.Close()
	})
	select {
	case leading := <-s.node.Leadership():
		if !leading {
			t.Fatal("no leadership")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no leader")
	}
	s.sys.SetLeading(true)
	hash := sha256.Sum256([]byte("key"))
	s.propose(&ledger.CreateOrganization{At: time.Now().UnixMilli(), ID: s.org, Name: "Chain org",
		Key: ledger.CreateAPIKey{ID: "key_chain", OrgID: s.org, Hash: string(hash[:]), Scopes: ledger.ScopesMerchant}})
	return s
}

func (s *chainStack) propose(cmd ledger.Command) ledger.Result {
	s.t.Helper()
	r := s.sys.Propose(s.ctx, cmd)
	if r.Err != nil || r.Result.Err != nil {
		s.t.Fatalf("%T: %v %v", cmd, r.Err, r.Result.Err)
	}
	return r.Result
}

// address issues the organization's USDC deposit address, derived from the
// index the ledger allocates.
func (s *chainStack) address() common.Address {
	s.t.Helper()
	addr, _, err := s.sys.ProvisionDeposit(s.ctx, "addr_usdc", "usdc_ethereum", "USDC")
	if err != nil {
		s.t.Fatal(err)
	}
	s.propose(&deposits.CreateCryptoAddress{At: time.Now().UnixMilli(), ID: "addr_usdc", OrgID: s.org, Currency: "USDC", Chain: "ethereum", Address: addr})
	return common.HexToAddress(addr)
}

func (s *chainStack) usdcBalance() ledger.Minor {
	a, _ := s.sys.Reader().AccountFor(s.org, "USDC")
	return a.Total
}

// until waits for cond, mining a block every few milliseconds so that
// confirmations accrue.
func (s *chainStack) until(what string, mine bool, cond func() bool) {
	s.t.Helper()
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			s.t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
			if mine {
				if err := s.chain.Mine(s.ctx, 1); err != nil {
					s.t.Fatal(err)
				}
			}
		}
	}
}

func (s *chainStack) deposit(to common.Address, units int64) common.Hash {
	s.t.Helper()
	tx, err := s.chain.TransferToken(s.ctx, devchain.DevKey(0), s.usdc, to, big.NewInt(units))
	if err != nil {
		s.t.Fatal(err)
	}
	return tx.Hash()
}

func (s *chainStack) collectionByHash(h common.Hash) (ledger.Collection, bool) {
	d, ok := deposits.ByReference(s.sys.Reader(), s.org, "ethereum:"+h.Hex()+":0")
	if !ok {
		return ledger.Collection{}, false
	}
	return s.sys.Reader().Collection(d.CollectionID)
}

// A USDC transfer to an address the ledger allocated is pending when seen,
// credited once after the confirmations, and never credited when a
// reorganisation drops it first.
func TestChainDepositsCreditedOnceAfterConfirmations(t *testing.T) {
	s := startChainStack(t)
	to := s.address()

	h := s.deposit(to, 25_000_000)
	s.until("the deposit to be seen", false, func() bool { _, ok := s.collectionByHash(h); return ok })
	if c, _ := s.collectionByHash(h); c.Status != ledger.CollectionPending || s.usdcBalance() != 0 {
		t.Fatalf("first sight: %+v, balance %d", c, s.usdcBalance())
	}
	s.until("the deposit to be credited", true, func() bool {
		c, _ := s.collectionByHash(h)
		return c.Status == ledger.CollectionCompleted
	})
	if s.usdcBalance() != 25_000_000 {
		t.Fatalf("balance %d", s.usdcBalance())
	}

	// Dropped by a reorganisation before its confirmations.
	snap, err := s.chain.Snapshot(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	dropped := s.deposit(to, 7_000_000)
	s.until("the second deposit to be seen", false, func() bool { _, ok := s.collectionByHash(dropped); return ok })
	if err := s.chain.Revert(s.ctx, snap); err != nil {
		t.Fatal(err)
	}
	s.until("the dropped deposit to fail", true, func() bool {
		c, _ := s.collectionByHash(dropped)
		return c.Status == ledger.CollectionFailed
	})
	if c, _ := s.collectionByHash(dropped); c.StatusMessage == "" || s.usdcBalance() != 25_000_000 {
		t.Fatalf("dropped: %+v, balance %d", c, s.usdcBalance())
	}
	if f, _ := instructions.Float(s.sys.Reader(), "evm_local", "USDC"); f.Total != -25_000_000 {
		t.Fatalf("float %+v", f)
	}
	if err := s.sys.Reader().Check(); err != nil {
		t.Fatal(err)
	}
}

// USDC payouts produce their ERC-20 transfer and complete after the
// confirmations; one whose transaction is in the mempool when the
// leadership moves is restored and sent again as the same bytes: each
// payout moves the tokens once and takes one nonce.
func TestChainPayoutsSendOnceAcrossLeaderChange(t *testing.T) {
	s := startChainStack(t)
	s.deposit(s.address(), 100_000_000)
	s.until("the funding deposit", true, func() bool { return s.usdcBalance() == 100_000_000 })
	recipient := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	nonce0, err := s.chain.Eth.NonceAt(s.ctx, s.hot, nil)
	if err != nil {
		t.Fatal(err)
	}
	pay := func(ref string, units ledger.Minor) string {
		t.Helper()
		r := s.sys.CreatePayout(actors.PayoutRequest{OrgID: s.org, ExternalReference: ref, MethodType: ledger.MethodCrypto,
			Spec: ledger.PayoutSpec{Currency: "USDC", Amount: units, AmountSide: ledger.SideTo, Method: "usdc_ethereum", Address: recipient.Hex()}})
		if r.Err != nil || r.Result.Err != nil {
			t.Fatalf("payout: %v %v", r.Err, r.Result.Err)
		}
		return r.Result.Payout.ID
	}
	status := func(id string) ledger.PayoutStatus {
		p, _ := s.sys.Reader().Payout(id)
		return p.Status
	}
	first := pay("p1", 10_000_000)
	s.until("the first payout to complete", true, func() bool { return status(first) == ledger.PayoutCompleted })

	// The second is in the mempool (mining off) when the term ends.
	if err := s.chain.SetAutomine(s.ctx, false); err != nil {
		t.Fatal(err)
	}
	second := pay("p2", 5_000_000)
	s.until("the second payout to be sent", false, func() bool { return status(second) == ledger.PayoutProcessing })
	s.sys.SetLeading(false)
	s.sys.SetLeading(true)
	if err := s.chain.SetAutomine(s.ctx, true); err != nil {
		t.Fatal(err)
	}
	s.until("the second payout to complete", true, func() bool { return status(second) == ledger.PayoutCompleted })

	got, err := s.chain.TokenBalance(s.ctx, s.usdc, recipient)
	if err != nil {
		t.Fatal(err)
	}
	if got.Int64() != 15_000_000 {
		t.Fatalf("the recipient holds %s units, want 15000000", got)
	}
	nonce, err := s.chain.Eth.NonceAt(s.ctx, s.hot, nil)
	if err != nil {
		t.Fatal(err)
	}
	if nonce != nonce0+2 {
		t.Fatalf("the hot wallet used %d nonces for 2 payouts", nonce-nonce0)
	}
	for _, id := range []string{first, second} {
		in, _ := instructions.Get(s.sys.Reader(), id)
		if !in.Closed || in.Provider != "evm_local" {
			t.Fatalf("instruction %+v", in)
		}
	}
	if f, _ := instructions.Float(s.sys.Reader(), "evm_local", "USDC"); f.Total != -100_000_000+15_000_000 {
		t.Fatalf("float %+v", f)
	}
}
