package devchain

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"payments/rails/evm"
)

// Instance is an EVM provider instance over a local chain, as the
// providers file of `payments serve --providers` names it: "evm_local",
// USDC on the chain the reference calls ethereum, for payouts (from the
// hot wallet DevKey(1)) and deposits (to addresses derived from
// DepositAccount). The production demo and the production end-to-end
// tests configure their nodes with it.
type Instance struct {
	RPCURL        string         // the chain's JSON-RPC address
	USDC          common.Address // the test USDC token (Chain.Setup)
	Confirmations int            // blocks a deposit waits for before it is credited
	BlockTime     time.Duration  // how often the chain mines
	StuckAfter    time.Duration  // how long a sent transaction may stay unmined before it is sent again
}

// Provider is the instance's entry of a providers file. Its two secrets
// (the hot wallet's key and the deposit account's xpub) are written as
// files in dir, readable by their owner only.
func (in Instance) Provider(dir string) (map[string]any, error) {
	hot := filepath.Join(dir, "evm-hot-wallet-key")
	if err := os.WriteFile(hot, []byte(hex.EncodeToString(crypto.FromECDSA(DevKey(1)))+"\n"), 0o600); err != nil {
		return nil, err
	}
	xpub := filepath.Join(dir, "evm-deposit-xpub")
	if err := os.WriteFile(xpub, []byte(DepositAccount().Neuter().String()+"\n"), 0o600); err != nil {
		return nil, err
	}
	return map[string]any{
		"name": "evm_local", "kind": evm.Kind,
		"methods": []map[string]any{{"code": "usdc_ethereum", "directions": []string{"payouts", "deposits"}}},
		"settings": map[string]any{
			"chain": "ethereum", "chainId": ChainID, "rpcUrl": in.RPCURL,
			"tokens":        map[string]any{"USDC": map[string]any{"address": in.USDC.Hex(), "decimals": 6}},
			"confirmations": in.Confirmations, "blockTime": in.BlockTime.String(), "stuckAfter": in.StuckAfter.String(),
		},
		"secrets": map[string]any{
			evm.SecretHotWalletKey: map[string]string{"file": hot},
			evm.SecretDepositXpub:  map[string]string{"file": xpub},
		},
	}, nil
}
