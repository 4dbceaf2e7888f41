package ledger

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"
)

// One organization's sandbox top-ups, however large, never block another's:
// each tops up from a source of its own. A top-up that would take a balance
// past the most an account holds is refused with balance_limit_exceeded and
// changes nothing.
func TestFundingLimitIsPerOrganization(t *testing.T) {
	s := newTestState(t)
	for i, org := range []string{"org_a", "org_b"} {
		hash := sha256.Sum256([]byte(org))
		if r := s.Apply(&CreateOrganization{At: 1, ID: org, Name: org,
			Key: CreateAPIKey{At: 1, ID: fmt.Sprint("key_", i), OrgID: org, Hash: string(hash[:])}}); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	// Fill org_a's GHS balance until the next top-up cannot fit.
	var refused *Error
	for i := 0; refused == nil; i++ {
		if i > 10_000_000 {
			t.Fatal("the balance never filled")
		}
		r := s.Apply(&FundBalance{At: 2, OrgID: "org_a", Currency: "GHS", Amount: AmountMax, ExternalReference: fmt.Sprint("a-", i)})
		refused = r.Err
	}
	if !errors.Is(refused, &Error{Code: CodeBalanceLimit}) || refused.Currency != "GHS" {
		t.Fatalf("a top-up past the limit: %v, want balance_limit_exceeded", refused)
	}
	before := encodeSnapshot(t, s)
	if r := s.Apply(&FundBalance{At: 3, OrgID: "org_a", Currency: "GHS", Amount: AmountMax, ExternalReference: "a-again"}); !errors.Is(r.Err, &Error{Code: CodeBalanceLimit}) {
		t.Fatalf("again: %v", r.Err)
	}
	if !bytes.Equal(encodeSnapshot(t, s), before) {
		t.Fatal("a refused top-up changed the state")
	}
	// org_b still tops up, from its own source.
	if r := s.Apply(&FundBalance{At: 4, OrgID: "org_b", Currency: "GHS", Amount: AmountMax, ExternalReference: "b-1"}); r.Err != nil {
		t.Fatalf("org_b's top-up after org_a filled its balance: %v", r.Err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}
