package evm

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ethereum/go-ethereum/common"

	"payments/rails/provider"
)

// depositTree derives deposit addresses from the xpub: index i is
// xpub/0/i for an account-level xpub (depth 3, m/44'/60'/0') and xpub/i
// for one a level lower (depth 4, m/44'/60'/0'/0). Only public derivation:
// no signing key is here.
type depositTree struct {
	base *ExtendedKey

	mu     sync.Mutex
	addrs  []common.Address // by index, derived so far
	byAddr map[common.Address]uint32
	issued uint32 // the highest index provisioned here, plus one
}

func newDepositTree(xpub *ExtendedKey) (*depositTree, error) {
	t := &depositTree{byAddr: map[common.Address]uint32{}}
	switch xpub.Depth() {
	case 3:
		base, err := xpub.Child(0)
		if err != nil {
			return nil, err
		}
		t.base = base
	case 4:
		t.base = xpub
	default:
		return nil, fmt.Errorf("evm: the deposit xpub is at depth %d; give the account's (m/44'/60'/0', depth 3) or its external chain's (depth 4)", xpub.Depth())
	}
	return t, nil
}

func (t *depositTree) address(i uint32) (common.Address, error) {
	if i >= HardenedOffset {
		return common.Address{}, errors.New("evm: deposit indexes are below 2^31")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if int64(i) < int64(len(t.addrs)) {
		return t.addrs[i], nil
	}
	k, err := t.base.Child(i)
	if err != nil {
		return common.Address{}, err
	}
	return k.Address(), nil
}

// watched returns the address → index map of indexes 0..n-1, deriving what
// is missing.
func (t *depositTree) watched(n uint32) (map[common.Address]uint32, []common.Address, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for uint32(len(t.addrs)) < n {
		i := uint32(len(t.addrs))
		k, err := t.base.Child(i)
		if err != nil {
			// Probability below 2^-127; the index is unusable and skipped.
			t.addrs = append(t.addrs, common.Address{})
			continue
		}
		a := k.Address()
		t.addrs = append(t.addrs, a)
		t.byAddr[a] = i
	}
	return t.byAddr, t.addrs[:n], nil
}

func (t *depositTree) issue(i uint32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.issued = max(t.issued, i+1)
}

func (t *depositTree) issuedCount() uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.issued
}

// ProvisionDeposit returns the deposit address of req.Index, the same on
// every node and after every restart; the feed watches it from then on.
// Errors: ErrRejected for an index beyond the configured bound or a
// currency that is not a token of the instance.
func (a *Adapter) ProvisionDeposit(_ context.Context, req provider.DepositRequest) (provider.DepositDetails, error) {
	if a.tree == nil {
		return provider.DepositDetails{}, provider.Errorf(provider.ErrRejected, "this instance takes no deposits")
	}
	if req.Currency != "" && a.cfg.tokens[req.Currency] == nil {
		return provider.DepositDetails{}, provider.Errorf(provider.ErrRejected, "%s is not a token of this instance", req.Currency)
	}
	if req.Index >= a.cfg.deposits.AddressesMax {
		return provider.DepositDetails{}, provider.Errorf(provider.ErrRejected, "deposit index %d is beyond the %d addresses this instance watches", req.Index, a.cfg.deposits.AddressesMax)
	}
	addr, err := a.tree.address(req.Index)
	if err != nil {
		return provider.DepositDetails{}, provider.Errorf(provider.ErrRejected, "%v", err)
	}
	a.tree.issue(req.Index)
	return provider.DepositDetails{Address: addr.Hex()}, nil
}
