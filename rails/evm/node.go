package evm

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"payments/rails/provider"
)

// node is the chain as one JSON-RPC endpoint sees it. Every call is bounded
// by the configured timeout; the chain id is checked once before the first
// answer is believed.
type node struct {
	rpc     *rpc.Client
	eth     *ethclient.Client
	chainID *big.Int
	timeout time.Duration

	mu      sync.Mutex
	checked bool
}

func dialNode(c *config) (*node, error) {
	hc := &http.Client{Timeout: c.rpcTimeout}
	rc, err := rpc.DialOptions(context.Background(), c.rpcURL, rpc.WithHTTPClient(hc))
	if err != nil {
		return nil, errors.New("evm: the node's URL cannot be used") // never the URL: it may hold a key
	}
	return &node{rpc: rc, eth: ethclient.NewClient(rc), chainID: c.chainID, timeout: c.rpcTimeout}, nil
}

func (n *node) close() { n.rpc.Close() }

func (n *node) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, n.timeout)
}

// ready checks, once, that the node serves the configured chain: a
// deposit seen on another chain must never be credited, and a transaction
// signed for this one is refused there anyway.
func (n *node) ready(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.checked {
		return nil
	}
	c, cancel := n.ctx(ctx)
	defer cancel()
	id, err := n.eth.ChainID(c)
	if err != nil {
		return unavailable("asking the node its chain id", err)
	}
	if id.Cmp(n.chainID) != 0 {
		return provider.Errorf(provider.ErrUnavailable, "the node serves chain %s, not the configured %s", id, n.chainID)
	}
	n.checked = true
	return nil
}

func (n *node) blockNumber(ctx context.Context) (uint64, error) {
	return read(n, ctx, "reading the head block", n.eth.BlockNumber)
}

// nonceAt is the account's transaction count at block (nil: latest).
func (n *node) nonceAt(ctx context.Context, a common.Address, block *big.Int) (uint64, error) {
	return read(n, ctx, "reading a nonce", func(c context.Context) (uint64, error) {
		return n.eth.NonceAt(c, a, block)
	})
}

func (n *node) pendingNonce(ctx context.Context, a common.Address) (uint64, error) {
	return read(n, ctx, "reading the pending nonce", func(c context.Context) (uint64, error) {
		return n.eth.PendingNonceAt(c, a)
	})
}

func (n *node) balance(ctx context.Context, a common.Address) (*big.Int, error) {
	return read(n, ctx, "reading a balance", func(c context.Context) (*big.Int, error) {
		return n.eth.BalanceAt(c, a, nil)
	})
}

// tokenBalance calls balanceOf(a) on the token at the latest block.
func (n *node) tokenBalance(ctx context.Context, tok common.Address, a common.Address) (*big.Int, error) {
	c, cancel := n.ctx(ctx)
	defer cancel()
	out, err := n.eth.CallContract(c, ethereum.CallMsg{To: &tok, Data: balanceOfData(a)}, nil)
	if err != nil {
		return nil, unavailable("reading a token balance", err)
	}
	if len(out) != 32 {
		return nil, provider.Errorf(provider.ErrUnavailable, "balanceOf of %s answered %d bytes", tok.Hex(), len(out))
	}
	return new(big.Int).SetBytes(out), nil
}

func (n *node) estimateGas(ctx context.Context, msg ethereum.CallMsg) (uint64, error) {
	c, cancel := n.ctx(ctx)
	defer cancel()
	return n.eth.EstimateGas(c, msg)
}

func (n *node) receipt(ctx context.Context, h common.Hash) (*types.Receipt, error) {
	c, cancel := n.ctx(ctx)
	defer cancel()
	r, err := n.eth.TransactionReceipt(c, h)
	if errors.Is(err, ethereum.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable("reading a receipt", err)
	}
	return r, nil
}

// known reports whether the node has the transaction (mined or pending).
func (n *node) known(ctx context.Context, h common.Hash) (bool, error) {
	c, cancel := n.ctx(ctx)
	defer cancel()
	var raw map[string]any
	if err := n.rpc.CallContext(c, &raw, "eth_getTransactionByHash", h); err != nil {
		return false, unavailable("looking a transaction up", err)
	}
	return raw != nil, nil
}

func (n *node) header(ctx context.Context, number uint64) (*types.Header, error) {
	return read(n, ctx, fmt.Sprintf("reading block %d", number), func(c context.Context) (*types.Header, error) {
		return n.eth.HeaderByNumber(c, new(big.Int).SetUint64(number))
	})
}

// hashes reads the hashes of blocks from..to (inclusive) in one batch.
func (n *node) hashes(ctx context.Context, from, to uint64) ([]common.Hash, error) {
	if to < from {
		return nil, nil
	}
	type head struct {
		Hash   common.Hash    `json:"hash"`
		Number hexutil.Uint64 `json:"number"`
	}
	heads := make([]*head, to-from+1)
	batch := make([]rpc.BatchElem, len(heads))
	for i := range batch {
		heads[i] = new(head)
		batch[i] = rpc.BatchElem{Method: "eth_getBlockByNumber", Args: []any{hexutil.Uint64(from + uint64(i)), false}, Result: &heads[i]}
	}
	c, cancel := n.ctx(ctx)
	defer cancel()
	if err := n.rpc.BatchCallContext(c, batch); err != nil {
		return nil, unavailable("reading block hashes", err)
	}
	out := make([]common.Hash, len(heads))
	for i, b := range batch {
		if b.Error != nil {
			return nil, unavailable("reading block hashes", b.Error)
		}
		if heads[i] == nil || uint64(heads[i].Number) != from+uint64(i) {
			return nil, provider.Errorf(provider.ErrUnavailable, "block %d is not there yet", from+uint64(i))
		}
		out[i] = heads[i].Hash
	}
	return out, nil
}

func (n *node) logs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	return read(n, ctx, "reading logs", func(c context.Context) ([]types.Log, error) {
		return n.eth.FilterLogs(c, q)
	})
}

func (n *node) feeHistory(ctx context.Context, blocks int, percentile float64) (*ethereum.FeeHistory, error) {
	return read(n, ctx, "reading the fee history", func(c context.Context) (*ethereum.FeeHistory, error) {
		return n.eth.FeeHistory(c, uint64(blocks), nil, []float64{percentile})
	})
}

func (n *node) suggestTip(ctx context.Context) (*big.Int, error) {
	return read(n, ctx, "asking the node for a priority fee", n.eth.SuggestGasTipCap)
}

func (n *node) gasPrice(ctx context.Context) (*big.Int, error) {
	return read(n, ctx, "asking the node for a gas price", n.eth.SuggestGasPrice)
}

// sendRaw broadcasts exactly raw. Its error is the node's or the
// transport's, unclassified: see classifySend.
func (n *node) sendRaw(ctx context.Context, raw []byte) error {
	c, cancel := n.ctx(ctx)
	defer cancel()
	var h common.Hash
	return n.rpc.CallContext(c, &h, "eth_sendRawTransaction", hexutil.Bytes(raw))
}

func (n *node) call(ctx context.Context, msg ethereum.CallMsg, block *big.Int) ([]byte, error) {
	c, cancel := n.ctx(ctx)
	defer cancel()
	return n.eth.CallContract(c, msg, block)
}

// read does one call to the node, bounded by the timeout; its failure is
// unavailable(what).
func read[T any](n *node, ctx context.Context, what string, call func(context.Context) (T, error)) (T, error) {
	c, cancel := n.ctx(ctx)
	defer cancel()
	v, err := call(c)
	if err != nil {
		var zero T
		return zero, unavailable(what, err)
	}
	return v, nil
}

// unavailable wraps a failed read: nothing was sent, so asking again is
// safe.
func unavailable(what string, err error) error {
	var pe *provider.Error
	if errors.As(err, &pe) {
		return err
	}
	return &provider.Error{Kind: provider.ErrUnavailable, Message: what, Err: scrub(err)}
}

// scrub drops what a transport error may say about the URL (a key in its
// path or query).
func scrub(err error) error {
	var rerr rpc.Error
	if errors.As(err, &rerr) {
		return err
	}
	var he rpc.HTTPError
	if errors.As(err, &he) {
		return fmt.Errorf("the node answered HTTP %d", he.StatusCode)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return fmt.Errorf("%s: %v", op.Op, op.Err)
	}
	s := err.Error()
	if i := strings.Index(s, "http"); i >= 0 {
		s = s[:i] + "[node URL]"
	}
	return errors.New(s)
}

// sendKind says what a failed eth_sendRawTransaction means.
type sendKind int

const (
	sendUnknown  sendKind = iota // it may have reached the node: the outcome is unknown
	sendNotSent                  // it did not leave: retry
	sendKnown                    // the node has it already: success
	sendNonceLow                 // the nonce is used: mined already, or by another
	sendRefused                  // the node answered and refused it (fees, funds): not in the pool
)

func classifySend(err error) sendKind {
	var rerr rpc.Error
	if errors.As(err, &rerr) {
		msg := strings.ToLower(rerr.Error())
		switch {
		case strings.Contains(msg, "already known"), strings.Contains(msg, "known transaction"),
			strings.Contains(msg, "already imported"), strings.Contains(msg, "already exists"),
			strings.Contains(msg, "already in"):
			return sendKnown
		case strings.Contains(msg, "nonce too low"), strings.Contains(msg, "nonce is too low"),
			strings.Contains(msg, "nonce has already been used"):
			return sendNonceLow
		}
		return sendRefused
	}
	var he rpc.HTTPError
	if errors.As(err, &he) {
		if he.StatusCode == http.StatusTooManyRequests || he.StatusCode == http.StatusUnauthorized ||
			he.StatusCode == http.StatusForbidden || he.StatusCode == http.StatusBadRequest {
			return sendNotSent
		}
		return sendUnknown // a 5xx may come after the node took it
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return sendNotSent
	}
	return sendUnknown
}
