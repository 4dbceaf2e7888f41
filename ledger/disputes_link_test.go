package ledger_test

import (
	"payments/ledger"
	"payments/ledger/disputes"
)

// The kernel's property test of conservation (conservation_test.go) opens
// and resolves disputes among its flows, through package disputes.
func init() {
	ledger.OpenDisputeForTest = func(at int64, id, org, collection string, amount ledger.Minor, messageID string) ledger.Command {
		return &disputes.Open{At: at, ID: id, OrgID: org, CollectionID: collection, Amount: amount, Category: "chargeback", MessageID: messageID}
	}
	ledger.ResolveDisputeForTest = func(at int64, id, org string, won bool) ledger.Command {
		return &disputes.Resolve{At: at, ID: id, OrgID: org, Won: won}
	}
}
