package evm

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"payments/rails/provider"
)

// nonces is the hot wallet's nonce source.
//
// The rule: PreparePayout takes the lowest nonce at or above the node's
// pending transaction count that no transaction of ours holds. A nonce is
// held by every transaction this process signed or was shown (PreparePayout,
// SubmitPayout, PayoutStatus, Restore). A hold from PreparePayout alone (its
// Prepared never came back, so it was not committed) lapses after
// holdTimeout; the next PreparePayout then fills the gap it left. Holds of
// mined nonces are kept a while, so a replacement and its original are
// still known to be siblings when either is asked about.
//
// The caller commits each Prepared before submitting it, and on taking the
// lead calls Restore with every committed Prepared not yet final: a
// committed but unsent transaction is invisible to the node's pending count,
// and only Restore keeps its nonce from being handed out again.
type nonces struct {
	mu          sync.Mutex
	holdTimeout time.Duration
	held        map[uint64]*hold
}

type hold struct {
	txs       map[common.Hash]heldTx // transactions at this nonce
	seen      time.Time              // last time anything of this nonce was seen
	committed bool                   // seen after PreparePayout: the caller committed it
}

// heldTx is one of our transactions: when this process first saw it, and
// the original of its payout (itself, or what it replaces): transactions
// of different payouts may share a nonce, and only those of one payout are
// siblings.
type heldTx struct {
	first time.Time
	root  common.Hash
}

// holdsMax bounds the table: beyond it the lowest mined nonces are
// forgotten first.
const holdsMax = 4096

// minedRetain is how long a mined nonce's hold is kept.
const minedRetain = 24 * time.Hour

func newNonces(holdTimeout time.Duration) *nonces {
	return &nonces{holdTimeout: holdTimeout, held: map[uint64]*hold{}}
}

// reserve picks the nonce for a new transaction: the lowest at or above
// pending that no hold covers. latest is the mined count, for pruning.
func (n *nonces) reserve(pending, latest uint64, now time.Time) uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.prune(latest, now)
	v := pending
	for n.held[v] != nil {
		v++
	}
	n.held[v] = &hold{txs: map[common.Hash]heldTx{}, seen: now}
	return v
}

// attach records tx hash h at nonce v (a signed transaction of ours, of
// the payout whose original is root); committed says the caller has it
// committed.
func (n *nonces) attach(v uint64, h, root common.Hash, now time.Time, committed bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	hd := n.held[v]
	if hd == nil {
		hd = &hold{txs: map[common.Hash]heldTx{}}
		n.held[v] = hd
	}
	if _, ok := hd.txs[h]; !ok {
		hd.txs[h] = heldTx{first: now, root: root}
	}
	hd.seen = now
	hd.committed = hd.committed || committed
}

// release drops a reservation that signed nothing.
func (n *nonces) release(v uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if hd := n.held[v]; hd != nil && len(hd.txs) == 0 {
		delete(n.held, v)
	}
}

// firstSeen is when this process first saw h at nonce v.
func (n *nonces) firstSeen(v uint64, h common.Hash) (time.Time, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if hd := n.held[v]; hd != nil {
		t, ok := hd.txs[h]
		return t.first, ok
	}
	return time.Time{}, false
}

// siblings lists the transactions of the payout whose original is root.
func (n *nonces) siblings(v uint64, root common.Hash) []common.Hash {
	n.mu.Lock()
	defer n.mu.Unlock()
	hd := n.held[v]
	if hd == nil {
		return nil
	}
	out := make([]common.Hash, 0, len(hd.txs))
	for h, t := range hd.txs {
		if t.root == root {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cmp(out[j]) < 0 })
	return out
}

// holds reports whether h is still held at nonce v (a cached Prepared may
// be handed out again only then).
func (n *nonces) holds(v uint64, h common.Hash) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	hd := n.held[v]
	if hd == nil {
		return false
	}
	_, ok := hd.txs[h]
	return ok
}

func (n *nonces) prune(latest uint64, now time.Time) {
	for v, hd := range n.held {
		switch {
		case !hd.committed && now.Sub(hd.seen) > n.holdTimeout && v >= latest:
			delete(n.held, v) // prepared, never committed: a gap to fill
		case v < latest && now.Sub(hd.seen) > minedRetain:
			delete(n.held, v)
		}
	}
	if len(n.held) <= holdsMax {
		return
	}
	mined := make([]uint64, 0, len(n.held))
	for v := range n.held {
		if v < latest {
			mined = append(mined, v)
		}
	}
	sort.Slice(mined, func(i, j int) bool { return mined[i] < mined[j] })
	for _, v := range mined {
		if len(n.held) <= holdsMax {
			break
		}
		delete(n.held, v)
	}
}

// Restore implements provider.Restorer: the caller hands over every
// committed Prepared of the instance that is not final, and their nonces
// are held so that PreparePayout never gives one out again. It adds to what
// is held and removes nothing, so it may run at any time.
func (a *Adapter) Restore(_ context.Context, inFlight []provider.Prepared) error {
	now := a.now()
	for _, p := range inFlight {
		txs, err := a.decodePrepared(p)
		if err != nil {
			return err
		}
		a.hold(txs, now)
	}
	return nil
}
