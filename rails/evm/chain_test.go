package evm_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"payments/rails/evm"
	"payments/rails/evm/devchain"
	"payments/rails/provider"
)

// testChain is one anvil with both test tokens deployed, a funded hot
// wallet and a customer holding tokens.
type testChain struct {
	*devchain.Chain
	usdc, usdt common.Address
	owner      *ecdsa.PrivateKey // deployed the tokens; mints
	hot        *ecdsa.PrivateKey
	customer   *ecdsa.PrivateKey
	xpub, xprv string
	gas        *ecdsa.PrivateKey
}

const usdcUnit = 1_000_000 // base units of one token (six decimals)

// eachToken runs f in a subtest per test token, named by its currency:
// USDC, and USDT, the Tether-style one whose transfer returns nothing.
func (tc *testChain) eachToken(t *testing.T, f func(t *testing.T, currency string, token common.Address)) {
	tokens := map[string]common.Address{"USDC": tc.usdc, "USDT": tc.usdt}
	for _, currency := range slices.Sorted(maps.Keys(tokens)) {
		t.Run(currency, func(t *testing.T) { f(t, currency, tokens[currency]) })
	}
}

func startChain(t *testing.T, ctx context.Context) *testChain {
	t.Helper()
	devchain.SkipWithoutAnvil(t)
	c, err := devchain.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	tc := &testChain{Chain: c, owner: devchain.DevKey(0), hot: devchain.DevKey(1), customer: devchain.DevKey(3), gas: devchain.DevKey(2)}
	if tc.usdc, err = c.Deploy(ctx, tc.owner, devchain.TestUSDC); err != nil {
		t.Fatal(err)
	}
	if tc.usdt, err = c.Deploy(ctx, tc.owner, devchain.TestUSDT); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []common.Address{tc.usdc, tc.usdt} {
		for _, to := range []common.Address{addr(tc.hot), addr(tc.customer)} {
			if err := c.Mint(ctx, tc.owner, tok, to, big.NewInt(1000*usdcUnit)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A deposit tree of its own: its addresses hold no ether.
	seed := sha256.Sum256([]byte("rails/evm test deposit tree"))
	master, err := evm.NewMasterKey(seed[:])
	if err != nil {
		t.Fatal(err)
	}
	account, err := master.Derive(44+evm.HardenedOffset, 60+evm.HardenedOffset, evm.HardenedOffset)
	if err != nil {
		t.Fatal(err)
	}
	tc.xprv, tc.xpub = account.String(), account.Neuter().String()
	return tc
}

func addr(k *ecdsa.PrivateKey) common.Address { return crypto.PubkeyToAddress(k.PublicKey) }

func keyHex(k *ecdsa.PrivateKey) string { return fmt.Sprintf("%x", crypto.FromECDSA(k)) }

// settings are the instance's settings with overrides merged in.
func (tc *testChain) settings(t *testing.T, extra map[string]any) json.RawMessage {
	s := map[string]any{
		"chain": "ethereum", "chainId": devchain.ChainID, "rpcUrl": tc.URL,
		"tokens": map[string]any{
			"USDC": map[string]any{"address": tc.usdc.Hex(), "decimals": 6},
			"USDT": map[string]any{"address": tc.usdt.Hex(), "decimals": 6},
		},
		"confirmations": 3, "blockTime": "50ms", "stuckAfter": "1h",
		"deposits": map[string]any{"startBlock": 1, "rangeBlocks": 4},
		"sweep":    map[string]any{"to": addr(tc.hot).Hex()},
	}
	for k, v := range extra {
		s[k] = v
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (tc *testChain) instance(t *testing.T, extra map[string]any) provider.InstanceConfig {
	return provider.InstanceConfig{Name: "evm_local", Kind: evm.Kind, Settings: tc.settings(t, extra), Methods: []provider.MethodConfig{
		{Code: "usdc_ethereum", Directions: []string{"payouts", "deposits"}},
		{Code: "usdt_ethereum", Directions: []string{"payouts", "deposits"}},
	}}
}

// adapter builds a new adapter instance, as a restarted node or a new
// leader would.
func (tc *testChain) adapter(t *testing.T, extra map[string]any) *evm.Adapter {
	t.Helper()
	a, err := evm.Factory(tc.instance(t, extra), provider.Secrets{
		evm.SecretHotWalletKey: provider.NewSecret(keyHex(tc.hot)),
		evm.SecretDepositXpub:  provider.NewSecret(tc.xpub),
	})
	if err != nil {
		t.Fatal(err)
	}
	ad := a.(*evm.Adapter)
	t.Cleanup(ad.Close)
	return ad
}

func (tc *testChain) balance(t *testing.T, ctx context.Context, tok, a common.Address) int64 {
	t.Helper()
	b, err := tc.TokenBalance(ctx, tok, a)
	if err != nil {
		t.Fatal(err)
	}
	return b.Int64()
}

func (tc *testChain) mine(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	if err := tc.Mine(ctx, n); err != nil {
		t.Fatal(err)
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func payout(id, currency string, to common.Address, minor int64) provider.Instruction {
	return provider.Instruction{ID: id, Method: strings.ToLower(currency) + "_ethereum", Currency: currency, AmountMinor: minor, Exponent: 6, Address: to.Hex()}
}

// status asks PayoutStatus and wants state.
func status(t *testing.T, ctx context.Context, a provider.Payouter, in provider.Instruction, p provider.Prepared, want provider.State) provider.Outcome {
	t.Helper()
	o, err := a.PayoutStatus(ctx, in, p)
	if err != nil {
		t.Fatalf("PayoutStatus: %v", err)
	}
	if o.State != want {
		t.Fatalf("state = %s (%q), want %s", o.State, o.Message, want)
	}
	return o
}

func submit(t *testing.T, ctx context.Context, a provider.Payouter, in provider.Instruction, p provider.Prepared) provider.Outcome {
	t.Helper()
	o, err := a.SubmitPayout(ctx, in, p)
	if err != nil {
		t.Fatalf("SubmitPayout: %v", err)
	}
	return o
}

func prepare(t *testing.T, ctx context.Context, a provider.Payouter, in provider.Instruction) provider.Prepared {
	t.Helper()
	p, err := a.PreparePayout(ctx, in)
	if err != nil {
		t.Fatalf("PreparePayout: %v", err)
	}
	return p
}

func nonceOf(t *testing.T, p provider.Prepared) uint64 {
	t.Helper()
	tx := new(types.Transaction)
	if err := tx.UnmarshalBinary(p.Payload); err != nil {
		t.Fatalf("payload: %v", err)
	}
	return tx.Nonce()
}

func wantKind(t *testing.T, err, kind error, contains string) {
	t.Helper()
	if !errors.Is(err, kind) || !strings.Contains(err.Error(), contains) {
		t.Fatalf("err = %v, want %v containing %q", err, kind, contains)
	}
}

// waitMined waits until the transaction named by a Prepared's key is mined
// (automine mines just after the node answers the send).
func (tc *testChain) waitMined(t *testing.T, ctx context.Context, key string) {
	t.Helper()
	for {
		if _, err := tc.Eth.TransactionReceipt(ctx, common.HexToHash(key)); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("transaction %s not mined", key)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
