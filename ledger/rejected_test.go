package ledger

import (
	"bytes"
	"errors"
	"testing"
)

// applyRejected applies cmd, wants the error want, and checks that nothing
// changed: the snapshot bytes are the same.
func applyRejected(t *testing.T, s *testState, cmd Command, want error) {
	t.Helper()
	before := encodeSnapshot(t, s)
	r := s.Apply(cmd)
	if !errors.Is(r.Err, want) {
		t.Fatalf("%T %+v: got %v, want %v", cmd, cmd, r.Err, want)
	}
	if !bytes.Equal(encodeSnapshot(t, s), before) {
		t.Fatalf("%T %+v: a rejected command changed the state", cmd, cmd)
	}
}

// balance is the total of org's balance in currency.
func balance(s *testState, org, currency string) Minor {
	a, _ := s.AccountFor(org, currency)
	return a.Total
}
