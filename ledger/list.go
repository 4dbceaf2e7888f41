package ledger

import (
	"math"
	"slices"
)

// Cursor is a position in one of an organization's lists, which only ever
// grow at the end: a page starting at Cursor c holds items below position c,
// newest first. Positions never move, so a cursor stays valid while new items
// arrive.
type Cursor uint64

// CursorStart asks for the newest page.
const CursorStart Cursor = math.MaxUint64

// Page is one page of a list, newest first.
type Page[T any] struct {
	Items   []T
	HasMore bool
	Next    Cursor // valid when HasMore
}

// page walks ids (oldest first) backwards from before, keeping items that
// match, until it has limit of them and knows whether another one exists. A
// nil list is empty.
func page[K, T any](ids *appendList[K], before Cursor, limit int, get func(K) (T, bool), keep func(T) bool) Page[T] {
	var p Page[T]
	if ids == nil {
		return p
	}
	i := ids.len()
	if before < Cursor(i) {
		i = int(before)
	}
	for i > 0 {
		i--
		v, ok := get(ids.at(i))
		if !ok || !keep(v) {
			continue
		}
		if len(p.Items) == limit {
			p.HasMore = true
			p.Next = Cursor(i + 1)
			break
		}
		p.Items = append(p.Items, v)
	}
	return p
}

// sortByCreation orders records by creation time, then id, so that lists
// built from maps come out in a deterministic order.
func sortByCreation[T any](items []T, key func(T) (int64, string)) {
	slices.SortFunc(items, func(a, b T) int {
		ta, ia := key(a)
		tb, ib := key(b)
		switch {
		case ta < tb:
			return -1
		case ta > tb:
			return 1
		case ia < ib:
			return -1
		case ia > ib:
			return 1
		}
		return 0
	})
}
