package ledger

import (
	"fmt"
	"maps"
	"slices"

	"payments/ledger/kv"
)

// Check verifies the ledger's invariants over the committed state store
// and returns the first violation: the journal sums to zero per currency;
// every account's total is the sum of its entries and each entry's
// BalanceAfter is the running total; no merchant's available balance is
// negative; every account holds exactly the amounts of its unresolved
// disputes (the features' hold counts, AddHoldCount). It walks the whole
// journal, so tests and audits call it, not the hot path.
func Check(kvr KVReader) (err error) {
	defer kv.RecoverStoreError(&err)
	accounts := make(map[string]Account)
	prefix := kv.NewKey(accountKind.tag, subRecord)
	kv.Scan(kvr, prefix, kv.PrefixEnd(prefix), false, func(_, v []byte) bool {
		a := decodeOrFail(v, accountKind.decodeStored).v
		accounts[a.Number] = a
		return true
	})
	sums := make(map[string]Minor)
	running := make(map[string]Minor)
	var next uint64 = 1
	jp := kv.NewKey(tagJournal)
	kv.Scan(kvr, jp, kv.PrefixEnd(jp), false, func(key, page []byte) bool {
		if first := kv.TrailingSeq(key); first != next {
			err = fmt.Errorf("journal: page at entry %d, expected %d", first, next)
			return false
		}
		eachEntry(page, next, func(n NumberedEntry) bool {
			e := n.Entry
			a, ok := accounts[e.Account]
			if !ok {
				err = fmt.Errorf("entry %d: unknown account %s", n.Seq, e.Account)
				return false
			}
			sums[a.Currency] += e.Amount
			running[e.Account] += e.Amount
			if running[e.Account] != e.BalanceAfter {
				err = fmt.Errorf("entry %d on %s: balanceAfter %d, running total %d", n.Seq, e.Account, e.BalanceAfter, running[e.Account])
				return false
			}
			next++
			return true
		})
		return err == nil
	})
	if err != nil {
		return err
	}
	if last := readCounter(kvr, "journal"); last != next-1 {
		return fmt.Errorf("journal: %d entries stored, counter says %d", next-1, last)
	}
	for _, cur := range slices.Sorted(maps.Keys(sums)) {
		if sums[cur] != 0 {
			return fmt.Errorf("postings in %s sum to %d, not zero", cur, sums[cur])
		}
	}
	held := make(map[string]Minor)
	for _, count := range holdCounts {
		count(NewReader(kvr, &Views{}), func(account string, amount Minor) { held[account] += amount })
	}
	for _, n := range slices.Sorted(maps.Keys(accounts)) {
		a := accounts[n]
		switch {
		case a.Total != running[n]:
			return fmt.Errorf("account %s: total %d, entries sum to %d", n, a.Total, running[n])
		case a.Purpose == PurposeMerchant && a.Available() < 0:
			return fmt.Errorf("account %s: available balance %d is negative", n, a.Available())
		case a.Held != held[n]:
			return fmt.Errorf("account %s: holds %d, its unresolved disputes %d", n, a.Held, held[n])
		}
	}
	return nil
}
