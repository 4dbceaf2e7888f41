package evm

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"payments/rails/provider"
)

// Sweeper moves the token balances of deposit addresses to the hot wallet.
//
// A deposit address holds tokens but no gas money, so the sweeper first
// sends it exactly the gas its transfers may cost, from a gas wallet of its
// own, then signs the token transfers with the address's key derived from
// the deposit tree's xprv. The xprv and the gas wallet's key are the
// sweeper's alone: the service (Factory) refuses them and derives addresses
// from the xpub. The gas wallet is not the hot wallet, so the sweeper never
// touches the nonces of payouts; it needs only the hot wallet's address
// (settings sweep.to).
//
// Sweeping is treasury work outside the ledger: the swept tokens were
// credited when their deposits confirmed, and reconciliation sees them in
// the hot wallet. Sweeps are serialized; Sweep waits for each transaction
// to be mined (once) before it returns.
type Sweeper struct {
	cfg     *config
	node    *node
	signer  types.Signer
	base    *ExtendedKey // private: the parent of index keys
	gas     *ecdsa.PrivateKey
	gasAddr common.Address
	to      common.Address
	poll    time.Duration

	mu sync.Mutex
}

// Swept is one token moved by a sweep.
type Swept struct {
	Currency    string
	AmountMinor int64    // rounded down; Units is exact
	Units       *big.Int // token base units
	Tx          common.Hash
}

// SweepResult says what a sweep did.
type SweepResult struct {
	Index   uint32
	Address common.Address
	GasTx   common.Hash // the gas funding, zero if none was needed
	Swept   []Swept
}

// NewSweeper builds a sweeper from the instance's settings (sweep.to is
// required) and the secrets depositXprv and gasWalletKey.
func NewSweeper(cfg provider.InstanceConfig, secrets provider.Secrets) (*Sweeper, error) {
	c, err := parseSettings(cfg.Settings, secrets)
	if err != nil {
		return nil, err
	}
	to, err := parseAddress(c.sweepTo)
	if err != nil {
		return nil, fmt.Errorf("evm: settings: sweep.to: %w", err)
	}
	xs, err := secrets.Get(SecretDepositXprv)
	if err != nil {
		return nil, err
	}
	xprv, err := ParseExtendedKey(xs.Reveal())
	if err != nil || !xprv.IsPrivate() {
		return nil, fmt.Errorf("evm: secret %q is not an xprv", SecretDepositXprv)
	}
	tree, err := newDepositTree(xprv) // derives privately from an xprv
	if err != nil {
		return nil, err
	}
	gs, err := secrets.Get(SecretGasWalletKey)
	if err != nil {
		return nil, err
	}
	gas, err := parsePrivateKey(gs)
	if err != nil {
		return nil, fmt.Errorf("evm: secret %q: %w", SecretGasWalletKey, err)
	}
	s := &Sweeper{cfg: c, signer: types.LatestSignerForChainID(c.chainID), base: tree.base, gas: gas,
		gasAddr: crypto.PubkeyToAddress(gas.PublicKey), to: to, poll: max(c.blockTime/4, 50*time.Millisecond)}
	if s.gasAddr == to {
		return nil, errors.New("evm: the gas wallet must not be the hot wallet: payouts own the hot wallet's nonces")
	}
	if s.node, err = dialNode(c); err != nil {
		return nil, err
	}
	return s, nil
}

// Close releases the node connection.
func (s *Sweeper) Close() { s.node.close() }

// Address is the deposit address of index, as the service derives it.
func (s *Sweeper) Address(index uint32) (common.Address, error) {
	k, err := s.key(index)
	if err != nil {
		return common.Address{}, err
	}
	return k.Address(), nil
}

func (s *Sweeper) key(index uint32) (*ExtendedKey, error) {
	if index >= HardenedOffset {
		return nil, errors.New("evm: deposit indexes are below 2^31")
	}
	return s.base.Child(index)
}

// Sweep moves every configured token's balance at the deposit address of
// index (at least sweep.minMinor of it) to the hot wallet. Errors are
// ErrUnavailable-kinded when the node cannot be read; a sweep that failed
// halfway is safe to run again (it reads the balances anew).
func (s *Sweeper) Sweep(ctx context.Context, index uint32) (SweepResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, err := s.key(index)
	if err != nil {
		return SweepResult{}, err
	}
	res := SweepResult{Index: index, Address: key.Address()}
	if err := s.node.ready(ctx); err != nil {
		return res, err
	}
	type job struct {
		tok   *token
		units *big.Int
		data  []byte
		gas   uint64
	}
	var jobs []job
	for h, err := range s.node.holdings(ctx, s.cfg.tokens, res.Address) {
		if err != nil {
			return res, err
		}
		if h.minorErr != nil || h.units.Sign() == 0 || h.minor < s.cfg.sweepMin[h.currency] {
			continue
		}
		data := transferData(s.to, h.units)
		gas, err := s.node.estimateGas(ctx, ethereum.CallMsg{From: res.Address, To: &h.tok.address, Data: data})
		if err != nil {
			return res, unavailable("estimating a sweep's gas", err)
		}
		jobs = append(jobs, job{tok: h.tok, units: h.units, data: data, gas: gas + gas*uint64(s.cfg.limitMargin)/100})
	}
	if len(jobs) == 0 {
		return res, nil
	}
	f, err := currentFees(ctx, s.node, s.cfg)
	if err != nil {
		return res, err
	}
	perGas := f.feeCap
	if f.legacy {
		perGas = f.gasPrice
	}
	need := new(big.Int)
	for _, j := range jobs {
		need.Add(need, new(big.Int).Mul(perGas, new(big.Int).SetUint64(j.gas)))
	}
	have, err := s.node.balance(ctx, res.Address)
	if err != nil {
		return res, err
	}
	if have.Cmp(need) < 0 {
		top := new(big.Int).Sub(need, have)
		tx, err := s.send(ctx, s.gas, s.gasAddr, res.Address, top, nil, 21000, f)
		if err != nil {
			return res, fmt.Errorf("evm: funding the deposit address's gas: %w", err)
		}
		res.GasTx = tx.Hash()
		if _, err := s.wait(ctx, tx.Hash()); err != nil {
			return res, fmt.Errorf("evm: funding the deposit address's gas: %w", err)
		}
	}
	priv := key.PrivateKey()
	for _, j := range jobs {
		tx, err := s.send(ctx, priv, res.Address, j.tok.address, nil, j.data, j.gas, f)
		if err != nil {
			return res, fmt.Errorf("evm: sweeping %s: %w", j.tok.currency, err)
		}
		r, err := s.wait(ctx, tx.Hash())
		if err != nil {
			return res, fmt.Errorf("evm: sweeping %s: %w", j.tok.currency, err)
		}
		if r.Status != types.ReceiptStatusSuccessful || !hasTransferLog(r, j.tok.address, res.Address, s.to, j.units) {
			return res, fmt.Errorf("evm: sweeping %s: transaction %s did not move the tokens", j.tok.currency, tx.Hash().Hex())
		}
		minor, _, _ := toMinor(j.units, j.tok.decimals, j.tok.exponent)
		res.Swept = append(res.Swept, Swept{Currency: j.tok.currency, AmountMinor: minor, Units: j.units, Tx: tx.Hash()})
	}
	return res, nil
}

// send signs and broadcasts one transaction from an account the sweeper
// alone uses (so the node's pending count is its nonce).
func (s *Sweeper) send(ctx context.Context, key *ecdsa.PrivateKey, from, to common.Address, value *big.Int, data []byte, gas uint64, f fees) (*types.Transaction, error) {
	nonce, err := s.node.pendingNonce(ctx, from)
	if err != nil {
		return nil, err
	}
	if value == nil {
		value = new(big.Int)
	}
	var inner types.TxData
	if f.legacy {
		inner = &types.LegacyTx{Nonce: nonce, GasPrice: f.gasPrice, Gas: gas, To: &to, Value: value, Data: data}
	} else {
		inner = &types.DynamicFeeTx{ChainID: s.cfg.chainID, Nonce: nonce, GasTipCap: f.tip, GasFeeCap: f.feeCap, Gas: gas, To: &to, Value: value, Data: data}
	}
	tx, err := types.SignNewTx(key, s.signer, inner)
	if err != nil {
		return nil, err
	}
	if err := s.node.sendRaw(ctx, mustBinary(tx)); err != nil && classifySend(err) != sendKnown {
		return nil, scrub(err)
	}
	return tx, nil
}

func (s *Sweeper) wait(ctx context.Context, h common.Hash) (*types.Receipt, error) {
	for {
		r, err := s.node.receipt(ctx, h)
		if err != nil {
			return nil, err
		}
		if r != nil {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("transaction %s not mined yet: %w", h.Hex(), ctx.Err())
		case <-time.After(s.poll):
		}
	}
}
