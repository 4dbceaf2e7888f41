package evm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"payments/rails/provider"
)

// The feed's cursor, JSON, committed by the caller after what a poll
// reported:
//
//	{"v":1, "next":N, "base":B, "hashes":[…], "issued":I, "open":[…]}
//
// next is the first block not scanned yet; hashes are the hashes of blocks
// base..next-1 (the latest confirmations + reorgDepthMax of them), so a
// reorganisation is noticed after a restart too; issued is the count of
// deposit indexes known issued; open are the deposits reported and not yet
// confirmed, with their block and its hash (orphan: its block was
// reorganised away and the rescan has not found it again).
type cursor struct {
	V      int           `json:"v"`
	Next   uint64        `json:"next"`
	Base   uint64        `json:"base"`
	Hashes []common.Hash `json:"hashes"`
	Issued uint32        `json:"issued"`
	Open   []openDeposit `json:"open"`
}

type openDeposit struct {
	Identity    string      `json:"id"`
	Block       uint64      `json:"block"`
	BlockHash   common.Hash `json:"blockHash"`
	Currency    string      `json:"currency"`
	AmountMinor int64       `json:"amount"`
	To          string      `json:"to"`
	From        string      `json:"from"`
	Orphan      bool        `json:"orphan,omitempty"`
}

const (
	cursorVersion = 1
	// cursorHashesMax bounds the remembered block hashes.
	cursorHashesMax = 1024
	// openMax bounds the deposits awaiting confirmation in a cursor; a
	// feed with this many stops scanning new blocks until some confirm.
	openMax = 2000
	// cursorBytesMax bounds what decodeCursor reads.
	cursorBytesMax = 1 << 20
)

func decodeCursor(b []byte) (*cursor, error) {
	if len(b) > cursorBytesMax {
		return nil, errors.New("evm: the deposit cursor is too large")
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("evm: the deposit cursor: %w", err)
	}
	switch {
	case c.V != cursorVersion:
		return nil, fmt.Errorf("evm: the deposit cursor has version %d, not %d", c.V, cursorVersion)
	case len(c.Hashes) > cursorHashesMax || len(c.Open) > openMax:
		return nil, errors.New("evm: the deposit cursor is over its bounds")
	case len(c.Hashes) > 0 && c.Base+uint64(len(c.Hashes)) != c.Next:
		return nil, errors.New("evm: the deposit cursor's hashes do not end at its next block")
	}
	return &c, nil
}

// PollDeposits scans the configured tokens' Transfer logs to the watched
// deposit addresses, from the cursor's block on, at most rangesPerPoll
// ranges of rangeBlocks. Each transfer is reported when first seen (with
// its confirmations so far and Required), again once when confirmed, and
// with Dropped when a reorganisation removed it before it was confirmed
// and the rescan up to the head did not find it again. A transfer found
// again after a reorganisation keeps its identity when its log index is
// unchanged, and is then not reported twice. Polls are serialized.
//
// Errors: ErrUnavailable when the node cannot be read (the cursor is not
// advanced); a plain error for a cursor that is not this feed's or a
// reorganisation deeper than the cursor remembers (an operator must look).
func (a *Adapter) PollDeposits(ctx context.Context, cur []byte) ([]provider.Deposit, []byte, error) {
	if a.tree == nil {
		return nil, nil, provider.Errorf(provider.ErrRejected, "this instance takes no deposits")
	}
	a.pollMu.Lock()
	defer a.pollMu.Unlock()
	if err := a.node.ready(ctx); err != nil {
		return nil, nil, err
	}
	head, err := a.node.blockNumber(ctx)
	if err != nil {
		return nil, nil, err
	}
	var c *cursor
	if len(cur) == 0 {
		c = &cursor{V: cursorVersion, Next: a.cfg.deposits.StartBlock}
		if c.Next == 0 {
			c.Next = head
		}
		c.Base = c.Next
	} else if c, err = decodeCursor(cur); err != nil {
		return nil, nil, err
	}
	c.Issued = max(c.Issued, a.tree.issuedCount())
	if err := a.rewindOnReorg(ctx, c, head); err != nil {
		return nil, nil, err
	}
	n := min(uint64(c.Issued)+uint64(a.cfg.deposits.Lookahead), uint64(a.cfg.deposits.AddressesMax))
	byAddr, addrs, err := a.tree.watched(uint32(n))
	if err != nil {
		return nil, nil, err
	}
	var out []provider.Deposit
	open := map[string]int{}
	for i, o := range c.Open {
		open[o.Identity] = i
	}
	for r := 0; r < a.cfg.deposits.RangesPerPoll && c.Next <= head && len(out) < a.cfg.deposits.DepositsPerPollMax && len(c.Open) < openMax; r++ {
		more, err := a.scanRange(ctx, c, head, byAddr, addrs, open, &out)
		if err != nil {
			return nil, nil, err
		}
		if !more {
			break
		}
	}
	// Open deposits that reached their confirmations, on blocks still
	// canonical.
	kept := c.Open[:0]
	for _, o := range c.Open {
		conf := confirmations(head, o.Block)
		if !o.Orphan && conf >= a.cfg.confirmations {
			if ok, err := a.canonical(ctx, o.Block, o.BlockHash); err != nil {
				return nil, nil, err
			} else if ok {
				out = append(out, a.deposit(o, conf, false))
				continue
			}
		}
		if o.Orphan && c.Next > head {
			// Rescanned to the head without finding it again.
			out = append(out, a.deposit(o, 0, true))
			continue
		}
		kept = append(kept, o)
	}
	c.Open = kept
	next, err := json.Marshal(c)
	if err != nil {
		return nil, nil, err
	}
	return out, next, nil
}

func confirmations(head, block uint64) int {
	if head < block {
		return 0
	}
	return int(head - block + 1)
}

func (a *Adapter) deposit(o openDeposit, conf int, dropped bool) provider.Deposit {
	return provider.Deposit{Identity: o.Identity, Method: a.depositMethod(o.Currency), Currency: o.Currency, AmountMinor: o.AmountMinor,
		To: o.To, From: o.From, Confirmations: conf, Required: a.cfg.confirmations, Dropped: dropped}
}

// depositMethod is the method code the instance serves deposits of a
// currency by: the configured method whose code begins with the currency's
// (usdc_… for USDC), else the only deposit method.
func (a *Adapter) depositMethod(currency string) string { return a.methods[currency] }

func (a *Adapter) canonical(ctx context.Context, block uint64, hash common.Hash) (bool, error) {
	hs, err := a.node.hashes(ctx, block, block)
	if err != nil {
		return false, err
	}
	return hs[0] == hash, nil
}

// rewindOnReorg compares the remembered hashes with the node's; on a
// difference it rewinds the cursor to the last common block and marks the
// open deposits above it orphans. A node whose head is below the cursor's
// last block and agrees with what it has is behind, not reorganised: the
// poll waits (ErrUnavailable) rather than drop deposits it cannot see yet.
func (a *Adapter) rewindOnReorg(ctx context.Context, c *cursor, head uint64) error {
	if len(c.Hashes) == 0 {
		return nil
	}
	last := c.Next - 1
	if last <= head {
		hs, err := a.node.hashes(ctx, last, last)
		if err != nil {
			return err
		}
		if hs[0] == c.Hashes[len(c.Hashes)-1] {
			return nil
		}
	}
	top := min(last, head)
	if top < c.Base {
		// A node behind the blocks we remember (one of several behind a
		// load balancer, say) is not a reorganisation: wait for it.
		return provider.Errorf(provider.ErrUnavailable, "the node's head %d is behind the feed's block %d", head, last)
	}
	hs, err := a.node.hashes(ctx, c.Base, top)
	if err != nil {
		return err
	}
	if top < last && hs[len(hs)-1] == c.Hashes[top-c.Base] {
		return provider.Errorf(provider.ErrUnavailable, "the node's head %d is behind the feed's block %d", head, last)
	}
	fork := -1
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i] == c.Hashes[i] {
			fork = i
			break
		}
	}
	if fork < 0 {
		return fmt.Errorf("evm: a reorganisation deeper than the %d blocks the deposit cursor remembers (from block %d); an operator must look", len(c.Hashes), c.Base)
	}
	forkBlock := c.Base + uint64(fork)
	c.Hashes = c.Hashes[:fork+1]
	c.Next = forkBlock + 1
	for i := range c.Open {
		if c.Open[i].Block > forkBlock {
			c.Open[i].Orphan = true
		}
	}
	return nil
}

// scanRange reads one range of logs from c.Next and reports the transfers
// to watched addresses in it; more is false when it stopped early (the
// answer is full, or the chain moved under it).
func (a *Adapter) scanRange(ctx context.Context, c *cursor, head uint64, byAddr map[common.Address]uint32, addrs []common.Address,
	open map[string]int, out *[]provider.Deposit) (more bool, err error) {
	from := c.Next
	to := min(from+a.cfg.deposits.RangeBlocks-1, head)
	keep := uint64(a.cfg.confirmations + a.cfg.deposits.ReorgDepthMax)
	// Hashes of the blocks in the range that are recent enough to keep.
	lo := from
	if head+1 > keep && head+1-keep > lo {
		lo = head + 1 - keep
	}
	var hs []common.Hash
	if lo <= to {
		if hs, err = a.node.hashes(ctx, lo, to); err != nil {
			return false, err
		}
	}
	hashOf := func(b uint64) (common.Hash, bool) {
		if b < lo || b > to {
			return common.Hash{}, false
		}
		return hs[b-lo], true
	}
	q := ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(from), ToBlock: new(big.Int).SetUint64(to), Topics: [][]common.Hash{{TransferTopic}}}
	for addr := range a.cfg.tokenByAddress {
		q.Addresses = append(q.Addresses, addr)
	}
	if len(addrs) <= a.cfg.deposits.TopicFilterMax {
		var tos []common.Hash
		for _, ad := range addrs {
			tos = append(tos, common.BytesToHash(ad.Bytes()))
		}
		if len(tos) == 0 {
			tos = []common.Hash{{}} // nothing issued: match no one
		}
		q.Topics = append(q.Topics, nil, tos)
	}
	logs, err := a.node.logs(ctx, q)
	if err != nil {
		return false, err
	}
	end := to // the last block whose transfers were all taken
	for i, l := range logs {
		if l.Removed || l.BlockNumber < from || l.BlockNumber > to {
			continue
		}
		want, ok := hashOf(l.BlockNumber)
		stop := ok && want != l.BlockHash || // the chain moved between the two reads: look again next poll
			i > 0 && l.BlockNumber != logs[i-1].BlockNumber && len(*out) >= a.cfg.deposits.DepositsPerPollMax ||
			len(c.Open) >= openMax
		if stop {
			if l.BlockNumber == from {
				return false, nil // nothing taken
			}
			end = l.BlockNumber - 1
			break
		}
		a.takeLog(l, head, byAddr, c, open, out)
	}
	// Remember the hashes of the recent blocks taken.
	if len(hs) > 0 && end >= lo {
		if len(c.Hashes) == 0 || c.Base+uint64(len(c.Hashes)) != lo {
			c.Hashes, c.Base = nil, lo
		}
		c.Hashes = append(c.Hashes, hs[:end-lo+1]...)
	} else {
		c.Hashes, c.Base = nil, end+1
	}
	if n := uint64(len(c.Hashes)); n > keep {
		c.Hashes = append([]common.Hash(nil), c.Hashes[n-keep:]...)
		c.Base += n - keep
	}
	c.Next = end + 1
	return end == to, nil
}

// takeLog reports one Transfer log if it pays a watched address.
func (a *Adapter) takeLog(l types.Log, head uint64, byAddr map[common.Address]uint32, c *cursor, open map[string]int, out *[]provider.Deposit) {
	tok := a.cfg.tokenByAddress[l.Address]
	if tok == nil || len(l.Topics) != 3 || l.Topics[0] != TransferTopic || len(l.Data) != 32 {
		return
	}
	to := common.BytesToAddress(l.Topics[2].Bytes())
	if _, ok := byAddr[to]; !ok {
		return
	}
	minor, _, err := toMinor(new(big.Int).SetBytes(l.Data), tok.decimals, tok.exponent)
	if err != nil || minor <= 0 {
		return // nothing creditable (dust below the currency's precision, or absurd)
	}
	o := openDeposit{Identity: fmt.Sprintf("%s:%s:%d", a.cfg.chain, l.TxHash.Hex(), l.Index), Block: l.BlockNumber, BlockHash: l.BlockHash,
		Currency: tok.currency, AmountMinor: minor, To: to.Hex(), From: common.BytesToAddress(l.Topics[1].Bytes()).Hex()}
	conf := confirmations(head, l.BlockNumber)
	if i, ok := open[o.Identity]; ok {
		// Reported before: found again after a reorganisation, or a
		// rescan. Its new block is what counts.
		c.Open[i].Block, c.Open[i].BlockHash, c.Open[i].Orphan = o.Block, o.BlockHash, false
		return
	}
	*out = append(*out, a.deposit(o, conf, false))
	if conf < a.cfg.confirmations {
		open[o.Identity] = len(c.Open)
		c.Open = append(c.Open, o)
	}
}
