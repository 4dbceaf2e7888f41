package evm

import (
	"crypto/ecdsa"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"payments/rails/provider"
)

// Adapter is one configured EVM chain: payouts from its hot wallet,
// deposit addresses from its xpub, the deposit feed and the hot wallet's
// balances. It is safe for concurrent use.
type Adapter struct {
	cfg     *config
	node    *node
	signer  types.Signer
	hot     *ecdsa.PrivateKey // nil when the instance sends no payouts
	hotAddr common.Address
	tree    *depositTree // nil when the instance takes no deposits
	nonces  *nonces
	now     func() time.Time

	methods map[string]string // deposit method code by currency

	pollMu   sync.Mutex // one PollDeposits at a time
	mu       sync.Mutex
	prepared map[string]cachedPrepare // by Instruction.ID
}

type cachedPrepare struct {
	in    provider.Instruction
	p     provider.Prepared
	nonce uint64
	hash  common.Hash
}

var (
	_ provider.Payouter           = (*Adapter)(nil)
	_ provider.Restorer           = (*Adapter)(nil)
	_ provider.DepositProvisioner = (*Adapter)(nil)
	_ provider.DepositFeed        = (*Adapter)(nil)
	_ provider.Balancer           = (*Adapter)(nil)
	_ provider.Factory            = Factory
)

// Factory builds an Adapter from its instance's settings (see Settings)
// and secrets: hotWalletKey when a method has payouts, depositXpub when one
// has deposits, rpcUrl optionally. It refuses depositXprv and gasWalletKey:
// those belong to the sweeper (NewSweeper), never to the service. It does
// not reach the node; the first call that needs the chain checks its id.
func Factory(cfg provider.InstanceConfig, secrets provider.Secrets) (any, error) {
	for _, name := range []string{SecretDepositXprv, SecretGasWalletKey} {
		if _, ok := secrets[name]; ok {
			return nil, fmt.Errorf("evm: the secret %q is the sweeper's; the service must not hold it", name)
		}
	}
	for _, m := range cfg.Methods {
		for _, d := range m.Directions {
			if d == "collections" {
				return nil, fmt.Errorf("evm: method %s: a chain has no collections (payers are not prompted); use deposits", m.Code)
			}
		}
	}
	c, err := parseSettings(cfg.Settings, secrets)
	if err != nil {
		return nil, err
	}
	payouts, deposits := directions(cfg)
	a := &Adapter{cfg: c, signer: types.LatestSignerForChainID(c.chainID), nonces: newNonces(c.holdTimeout), now: time.Now, prepared: map[string]cachedPrepare{}}
	if payouts {
		s, err := secrets.Get(SecretHotWalletKey)
		if err != nil {
			return nil, err
		}
		if a.hot, err = parsePrivateKey(s); err != nil {
			return nil, fmt.Errorf("evm: secret %q: %w", SecretHotWalletKey, err)
		}
		a.hotAddr = crypto.PubkeyToAddress(a.hot.PublicKey)
	}
	if deposits {
		s, err := secrets.Get(SecretDepositXpub)
		if err != nil {
			return nil, err
		}
		xpub, err := ParseExtendedKey(s.Reveal())
		if err != nil {
			return nil, fmt.Errorf("evm: secret %q: %w", SecretDepositXpub, err)
		}
		if xpub.IsPrivate() {
			return nil, fmt.Errorf("evm: secret %q is an xprv: the service takes the xpub only", SecretDepositXpub)
		}
		if a.tree, err = newDepositTree(xpub); err != nil {
			return nil, err
		}
	}
	a.methods = depositMethods(cfg, c)
	if a.node, err = dialNode(c); err != nil {
		return nil, err
	}
	return a, nil
}

// HotWallet is the payout hot wallet's address (zero without payouts).
func (a *Adapter) HotWallet() common.Address { return a.hotAddr }

// Close releases the node connection.
func (a *Adapter) Close() { a.node.close() }

// depositMethods maps each token's currency to the deposit method code that
// serves it: the method whose code begins with the currency ("usdc_base"
// for USDC), or the instance's only deposit method.
func depositMethods(cfg provider.InstanceConfig, c *config) map[string]string {
	out := map[string]string{}
	var codes []string
	for _, m := range cfg.Methods {
		if !slices.Contains(m.Directions, "deposits") {
			continue
		}
		codes = append(codes, m.Code)
		cur, _, _ := strings.Cut(m.Code, "_")
		if c.tokens[strings.ToUpper(cur)] != nil {
			out[strings.ToUpper(cur)] = m.Code
		}
	}
	for cur := range c.tokens {
		if out[cur] == "" && len(codes) == 1 {
			out[cur] = codes[0]
		}
	}
	return out
}
