package devchain

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// The demo's chain: TestUSDC deployed, a million USDC with anvil's first
// default account, a hot wallet funded with USDC and ether.
func TestSetup(t *testing.T) {
	SkipWithoutAnvil(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hot := common.HexToAddress("0x00000000000000000000000000000000000000b0")
	token, err := c.Setup(ctx, 1_000_000, 5_000, 3, hot)
	if err != nil {
		t.Fatal(err)
	}
	owner := crypto.PubkeyToAddress(DevKey(0).PublicKey)
	if owner.Hex() != "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" {
		t.Fatalf("DevKey(0) is %s, not anvil's first account", owner.Hex())
	}
	for _, c2 := range []struct {
		who  common.Address
		want int64
	}{{owner, 1_000_000_000_000}, {hot, 5_000_000_000}} {
		got, err := c.TokenBalance(ctx, token, c2.who)
		if err != nil || got.Cmp(big.NewInt(c2.want)) != 0 {
			t.Fatalf("%s holds %v (%v), want %d", c2.who, got, err, c2.want)
		}
	}
	eth, err := c.Eth.BalanceAt(ctx, hot, nil)
	if err != nil || eth.Cmp(new(big.Int).Mul(big.NewInt(3), big.NewInt(1e18))) != 0 {
		t.Fatalf("hot wallet ether %v, %v", eth, err)
	}
}
