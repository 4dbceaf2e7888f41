package evm

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"

	"payments/rails/provider"
)

// PreparePayout signs an ERC-20 transfer of the instruction's amount from
// the hot wallet to in.Address, with the next free nonce (see nonces), gas
// estimated by the node plus the configured margin, and fees from the
// node's fee history. Nothing is sent. Prepared.Key is the transaction hash
// and Payload its signed bytes: commit both before SubmitPayout.
//
// Asked again for the same instruction while its nonce is still held, it
// returns the same Prepared. Errors: ErrRejected for an instruction that
// cannot be paid (an unknown currency, a bad address, an amount that does
// not convert exactly to the token's decimals, a transfer the token would
// refuse, such as one above the hot wallet's balance); ErrUnavailable when
// the node cannot be asked, the hot wallet lacks gas, or fees are above the
// ceiling.
func (a *Adapter) PreparePayout(ctx context.Context, in provider.Instruction) (provider.Prepared, error) {
	if a.hot == nil {
		return provider.Prepared{}, provider.Errorf(provider.ErrRejected, "this instance sends no payouts")
	}
	tok, ok := a.cfg.tokens[in.Currency]
	if !ok {
		return provider.Prepared{}, provider.Errorf(provider.ErrRejected, "%s is not a token of this instance", in.Currency)
	}
	to, err := parseAddress(in.Address)
	if err != nil {
		return provider.Prepared{}, provider.Errorf(provider.ErrRejected, "the recipient address: %v", err)
	}
	if to == a.hotAddr || a.cfg.tokenByAddress[to] != nil {
		return provider.Prepared{}, provider.Errorf(provider.ErrRejected, "the recipient is the hot wallet or a token contract")
	}
	units, err := toTokenUnits(in.AmountMinor, in.Exponent, tok.decimals)
	if err != nil {
		return provider.Prepared{}, provider.Errorf(provider.ErrRejected, "%v", err)
	}
	if p, ok := a.cachedPrepare(in); ok {
		return p, nil
	}
	if err := a.node.ready(ctx); err != nil {
		return provider.Prepared{}, err
	}
	data := transferData(to, units)
	bal, err := a.node.tokenBalance(ctx, tok.address, a.hotAddr)
	if err != nil {
		return provider.Prepared{}, err
	}
	if bal.Cmp(units) < 0 {
		return provider.Prepared{}, provider.Errorf(provider.ErrRejected, "the hot wallet holds %s base units of %s, less than the %s asked", bal, in.Currency, units)
	}
	gas, err := a.node.estimateGas(ctx, ethereum.CallMsg{From: a.hotAddr, To: &tok.address, Data: data})
	if err != nil {
		var rerr rpc.Error
		if errors.As(err, &rerr) {
			msg := "the token refuses the transfer"
			if r := revertReason(errorData(err)); r != "" {
				msg += ": " + r
			}
			return provider.Prepared{}, &provider.Error{Kind: provider.ErrRejected, Message: msg, Err: err}
		}
		return provider.Prepared{}, unavailable("estimating gas", err)
	}
	limit := gas + gas*uint64(a.cfg.limitMargin)/100
	f, err := a.currentFees(ctx)
	if err != nil {
		return provider.Prepared{}, err
	}
	perGas := f.feeCap
	if f.legacy {
		perGas = f.gasPrice
	}
	need := new(big.Int).Mul(perGas, new(big.Int).SetUint64(limit))
	native, err := a.node.balance(ctx, a.hotAddr)
	if err != nil {
		return provider.Prepared{}, err
	}
	if native.Cmp(need) < 0 {
		return provider.Prepared{}, provider.Errorf(provider.ErrUnavailable, "the hot wallet's gas balance %s wei is below the %s wei this transfer may cost", native, need)
	}
	latest, err := a.node.nonceAt(ctx, a.hotAddr, nil)
	if err != nil {
		return provider.Prepared{}, err
	}
	pending, err := a.node.pendingNonce(ctx, a.hotAddr)
	if err != nil {
		return provider.Prepared{}, err
	}
	now := a.now()
	nonce := a.nonces.reserve(max(pending, latest), latest, now)
	tx, err := a.sign(nonce, tok.address, data, limit, f)
	if err != nil {
		a.nonces.release(nonce)
		return provider.Prepared{}, err
	}
	p, err := encodePrepared([]*types.Transaction{tx})
	if err != nil {
		a.nonces.release(nonce)
		return provider.Prepared{}, err
	}
	a.nonces.attach(nonce, tx.Hash(), tx.Hash(), now, false)
	a.mu.Lock()
	a.prepared[in.ID] = cachedPrepare{in: in, p: p, nonce: nonce, hash: tx.Hash()}
	a.mu.Unlock()
	return p, nil
}

func (a *Adapter) cachedPrepare(in provider.Instruction) (provider.Prepared, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, c := range a.prepared { // bounded: entries go with their holds
		if !a.nonces.holds(c.nonce, c.hash) {
			delete(a.prepared, id)
		}
	}
	c, ok := a.prepared[in.ID]
	if !ok || c.in != in {
		return provider.Prepared{}, false
	}
	return c.p, true
}

func (a *Adapter) sign(nonce uint64, to common.Address, data []byte, gas uint64, f fees) (*types.Transaction, error) {
	var inner types.TxData
	if f.legacy {
		inner = &types.LegacyTx{Nonce: nonce, GasPrice: f.gasPrice, Gas: gas, To: &to, Data: data}
	} else {
		inner = &types.DynamicFeeTx{ChainID: a.cfg.chainID, Nonce: nonce, GasTipCap: f.tip, GasFeeCap: f.feeCap, Gas: gas, To: &to, Data: data}
	}
	tx, err := types.SignNewTx(a.hot, a.signer, inner)
	if err != nil {
		return nil, fmt.Errorf("evm: signing: %w", err)
	}
	return tx, nil
}

// SubmitPayout broadcasts the newest transaction of p, byte for byte.
// Sending the same Prepared again is the same request: a node that already
// has it, or whose chain already mined it, is answered as success. Errors:
// ErrUnavailable when the transaction did not reach the node or the node
// refused it (too little gas money, fees under its minimum; PayoutStatus
// proposes a replacement once it counts as stuck); ErrUnknownOutcome when
// it may have reached the node.
func (a *Adapter) SubmitPayout(ctx context.Context, in provider.Instruction, p provider.Prepared) (provider.Outcome, error) {
	txs, err := a.decodePrepared(p)
	if err != nil {
		return provider.Outcome{}, err
	}
	a.hold(txs, a.now())
	err = a.node.sendRaw(ctx, mustBinary(txs[0])) // for a single transaction: p.Payload itself
	switch classifySend(err) {
	case sendKnown:
		err = nil
	case sendNonceLow:
		return a.status(ctx, txs)
	}
	if err == nil {
		return provider.Outcome{State: provider.StatePending, ProviderRef: txs[0].Hash().Hex(), CheckAfter: a.cfg.blockTime}, nil
	}
	switch classifySend(err) {
	case sendRefused:
		if strings.Contains(strings.ToLower(err.Error()), "underpriced") && len(txs) > 1 {
			// An earlier transaction of this payout holds the nonce in the
			// node's pool: it may still be mined.
			return a.status(ctx, txs)
		}
		return provider.Outcome{}, &provider.Error{Kind: provider.ErrUnavailable, Message: "the node refused the transaction", Err: err}
	case sendNotSent:
		return provider.Outcome{}, &provider.Error{Kind: provider.ErrUnavailable, Message: "the transaction was not sent", Err: scrub(err)}
	}
	return provider.Outcome{}, &provider.Error{Kind: provider.ErrUnknownOutcome, Message: "the node may have the transaction", Err: scrub(err)}
}

// PayoutStatus reports where p's transfer stands. Any transaction of p (the
// original or a replacement) that is mined is reported: processing until
// it has the configured confirmations, then completed if its receipt
// succeeded and carries the token's Transfer log (a token whose transfer
// returns nothing works the same), or failed with the revert's reason. A
// payout whose nonce was taken by a transaction that is not one of p's is
// failed once that block is confirmed: its transfer can never be mined.
// A transaction the node does not know is broadcast again; one at the head
// of the hot wallet's queue and unmined for StuckAfter comes back with a
// Replacement at the same nonce with higher fees.
//
// Call it with the latest committed Prepared: it holds every transaction
// the payout ever had, so whichever is mined is found by hash.
func (a *Adapter) PayoutStatus(ctx context.Context, in provider.Instruction, p provider.Prepared) (provider.Outcome, error) {
	txs, err := a.decodePrepared(p)
	if err != nil {
		return provider.Outcome{}, err
	}
	a.hold(txs, a.now())
	return a.status(ctx, txs)
}

// hold records a committed Prepared's transactions (newest first; the
// last is the payout's original).
func (a *Adapter) hold(txs []*types.Transaction, now time.Time) {
	root := txs[len(txs)-1].Hash()
	for _, tx := range txs {
		a.nonces.attach(tx.Nonce(), tx.Hash(), root, now, true)
	}
}

func (a *Adapter) status(ctx context.Context, txs []*types.Transaction) (provider.Outcome, error) {
	if err := a.node.ready(ctx); err != nil {
		return provider.Outcome{}, err
	}
	newest := txs[0]
	nonce := newest.Nonce()
	// The mined count first: if the nonce is taken, the transaction that
	// took it is mined before the receipts below are asked for.
	latest, err := a.node.nonceAt(ctx, a.hotAddr, nil)
	if err != nil {
		return provider.Outcome{}, err
	}
	byHash := map[common.Hash]*types.Transaction{}
	for _, tx := range txs {
		byHash[tx.Hash()] = tx
	}
	candidates := make([]common.Hash, 0, len(txs))
	for _, tx := range txs {
		candidates = append(candidates, tx.Hash())
	}
	for _, h := range a.nonces.siblings(nonce, txs[len(txs)-1].Hash()) {
		if byHash[h] == nil {
			candidates = append(candidates, h)
		}
	}
	for _, h := range candidates {
		r, err := a.node.receipt(ctx, h)
		if err != nil {
			return provider.Outcome{}, err
		}
		if r != nil {
			return a.minedOutcome(ctx, byHash[h], r)
		}
	}
	if latest > nonce {
		// Taken by a transaction that is none of ours for this payout.
		head, err := a.node.blockNumber(ctx)
		if err != nil {
			return provider.Outcome{}, err
		}
		if head+1 >= uint64(a.cfg.confirmations) {
			final, err := a.node.nonceAt(ctx, a.hotAddr, new(big.Int).SetUint64(head+1-uint64(a.cfg.confirmations)))
			if err != nil {
				return provider.Outcome{}, err
			}
			if final > nonce {
				return provider.Outcome{State: provider.StateFailed, ProviderRef: newest.Hash().Hex(),
					Message: fmt.Sprintf("nonce %d of the hot wallet was used by another transaction; this transfer was never mined", nonce)}, nil
			}
		}
		return provider.Outcome{State: provider.StateProcessing, ProviderRef: newest.Hash().Hex(), CheckAfter: a.cfg.blockTime}, nil
	}
	known, err := a.node.known(ctx, newest.Hash())
	if err != nil {
		return provider.Outcome{}, err
	}
	if !known {
		// Lost from the node's pool, or never sent: the same bytes again.
		_ = a.node.sendRaw(ctx, mustBinary(newest))
	}
	out := provider.Outcome{State: provider.StatePending, ProviderRef: newest.Hash().Hex(), CheckAfter: a.cfg.blockTime}
	since, ok := a.nonces.firstSeen(nonce, newest.Hash())
	if ok && nonce == latest && a.now().Sub(since) >= a.cfg.stuckAfter && len(txs) <= replacementsMax {
		if p, ok := a.replacement(ctx, txs); ok {
			out.Replacement = &p
		}
	}
	return out, nil
}

// replacement re-signs the newest transaction at the same nonce with
// bumped fees; the Prepared it returns carries every earlier transaction
// too.
func (a *Adapter) replacement(ctx context.Context, txs []*types.Transaction) (provider.Prepared, bool) {
	newest := txs[0]
	now, err := a.currentFees(ctx)
	if err != nil {
		return provider.Prepared{}, false
	}
	f, ok := a.bumped(newest, now)
	if !ok {
		return provider.Prepared{}, false
	}
	tx, err := a.sign(newest.Nonce(), *newest.To(), newest.Data(), newest.Gas(), f)
	if err != nil {
		return provider.Prepared{}, false
	}
	p, err := encodePrepared(append([]*types.Transaction{tx}, txs...))
	if err != nil {
		return provider.Prepared{}, false
	}
	a.nonces.attach(tx.Nonce(), tx.Hash(), txs[len(txs)-1].Hash(), a.now(), false)
	return p, true
}

// minedOutcome reads a receipt of one of the payout's transactions.
func (a *Adapter) minedOutcome(ctx context.Context, tx *types.Transaction, r *types.Receipt) (provider.Outcome, error) {
	head, err := a.node.blockNumber(ctx)
	if err != nil {
		return provider.Outcome{}, err
	}
	block := r.BlockNumber.Uint64()
	conf := 0
	if head >= block {
		conf = int(head - block + 1)
	}
	ref := r.TxHash.Hex()
	waiting := provider.Outcome{State: provider.StateProcessing, ProviderRef: ref, CheckAfter: a.checkAfter(conf)}
	if tx == nil {
		// A sibling known only to this process: read it from the node.
		c, cancel := a.node.ctx(ctx)
		t, _, err := a.node.eth.TransactionByHash(c, r.TxHash)
		cancel()
		if err != nil {
			return provider.Outcome{}, unavailable("reading a transaction", err)
		}
		tx = t
	}
	if r.Status != types.ReceiptStatusSuccessful {
		if conf < a.cfg.confirmations {
			return waiting, nil
		}
		msg := fmt.Sprintf("the transfer reverted on chain (transaction %s, block %d)", ref, block)
		if reason := a.replayReason(ctx, tx, r.BlockNumber); reason != "" {
			msg += ": " + reason
		}
		return provider.Outcome{State: provider.StateFailed, ProviderRef: ref, Message: msg}, nil
	}
	to, amount, err := parseTransferData(tx.Data())
	if err != nil {
		return provider.Outcome{}, err
	}
	if !hasTransferLog(r, *tx.To(), a.hotAddr, to, amount) {
		return provider.Outcome{}, provider.Errorf(provider.ErrUnknownOutcome,
			"transaction %s succeeded without the token's Transfer log of the amount: an operator must look", ref)
	}
	if conf < a.cfg.confirmations {
		return waiting, nil
	}
	return provider.Outcome{State: provider.StateCompleted, ProviderRef: ref}, nil
}

func (a *Adapter) checkAfter(conf int) time.Duration {
	left := a.cfg.confirmations - conf
	if left < 1 {
		left = 1
	}
	return a.cfg.blockTime * time.Duration(min(left, 10))
}

func hasTransferLog(r *types.Receipt, tok, from, to common.Address, amount *big.Int) bool {
	for _, l := range r.Logs {
		if l.Address == tok && len(l.Topics) == 3 && l.Topics[0] == TransferTopic &&
			common.BytesToAddress(l.Topics[1].Bytes()) == from && common.BytesToAddress(l.Topics[2].Bytes()) == to &&
			len(l.Data) == 32 && new(big.Int).SetBytes(l.Data).Cmp(amount) == 0 {
			return true
		}
	}
	return false
}

// replayReason runs a reverted transaction's call again on the state after
// its block, to name the reason; "" when the node does not say.
func (a *Adapter) replayReason(ctx context.Context, tx *types.Transaction, block *big.Int) string {
	_, err := a.node.call(ctx, ethereum.CallMsg{From: a.hotAddr, To: tx.To(), Data: tx.Data(), Gas: tx.Gas()}, block)
	if err == nil {
		return ""
	}
	return revertReason(errorData(err))
}

// errorData is the revert data a node attaches to an error, if any.
func errorData(err error) []byte {
	var de rpc.DataError
	if !errors.As(err, &de) {
		return nil
	}
	if s, ok := de.ErrorData().(string); ok {
		if b, err := hexutil.Decode(s); err == nil {
			return b
		}
	}
	return nil
}
