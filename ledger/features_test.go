package ledger_test

// The kernel's tests run with every feature package linked, as a node
// runs (package raft links them all): every State they make holds the
// features' stores and hooks, and TestEncodingsFrozen samples the
// features' commands and records with the kernel's.
import (
	_ "payments/ledger/paymentlinks"
	_ "payments/ledger/recipients"
	_ "payments/ledger/team"
	_ "payments/ledger/webhooks"
)
