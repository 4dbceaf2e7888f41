package raft

// A node applies every command its log may hold, so it links every feature
// package of the ledger (ledger/feature.go): each registers its commands,
// records and rules when it is initialized.
import (
	_ "payments/ledger/conversions"
	_ "payments/ledger/deposits"
	_ "payments/ledger/disputes"
	_ "payments/ledger/fxpayouts"
	_ "payments/ledger/instructions"
	_ "payments/ledger/keycontrols"
	_ "payments/ledger/orders"
	_ "payments/ledger/paymentlinks"
	_ "payments/ledger/publicids"
	_ "payments/ledger/recipients"
	_ "payments/ledger/team"
	_ "payments/ledger/webhooks"
)
