package ledger

// EnumNames is a frozen enum's API names indexed by value; index 0 is the
// unset value and has no name. Every status and outcome enum, the feature
// packages' too, reads its names through one, so the bounds check of
// String and the search of its ParseX are written once, and the unset
// value or one past the table reads "unknown" rather than panicking.
type EnumNames[E ~uint8] []string

// String is v's name, or "unknown" for zero or a value past the table.
func (n EnumNames[E]) String(v E) string {
	if v == 0 || int(v) >= len(n) {
		return "unknown"
	}
	return n[v]
}

// Parse returns the value with the given API name; ok is false for a name
// no value has (the empty name included).
func (n EnumNames[E]) Parse(name string) (v E, ok bool) {
	for i := 1; i < len(n); i++ {
		if n[i] == name {
			return E(i), true
		}
	}
	return 0, false
}
