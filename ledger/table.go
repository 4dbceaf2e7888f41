package ledger

// table is a map of records that can be frozen in O(1) for a snapshot.
//
// While frozen, the base map is read-only: writes go to an overlay and reads
// look in the overlay first. A snapshot encodes the frozen base on another
// goroutine while Apply goes on; thaw folds the overlay back in. Records are
// stored by value and never mutated in place, so a record read from the base
// stays as it was when the snapshot was taken.
type table[V any] struct {
	base    map[string]V
	overlay map[string]V // non-nil while frozen
}

func newTable[V any]() table[V] {
	return table[V]{base: make(map[string]V)}
}

func (t *table[V]) get(key string) (V, bool) {
	if t.overlay != nil {
		if v, ok := t.overlay[key]; ok {
			return v, true
		}
	}
	v, ok := t.base[key]
	return v, ok
}

func (t *table[V]) put(key string, v V) {
	if t.overlay != nil {
		t.overlay[key] = v
		return
	}
	t.base[key] = v
}

// freeze makes the base read-only and returns it.
func (t *table[V]) freeze() map[string]V {
	if t.overlay != nil {
		panic("ledger: table frozen twice")
	}
	t.overlay = make(map[string]V)
	return t.base
}

// thaw folds the overlay into the base. The caller guarantees nobody reads
// the frozen base any more.
func (t *table[V]) thaw() {
	for k, v := range t.overlay {
		t.base[k] = v
	}
	t.overlay = nil
}
