package rails

import "payments/ledger"

// Outcome names a deterministic sandbox behaviour.
type Outcome string

// Sandbox outcomes.
const (
	OutcomeCompleted                    Outcome = "completed"
	OutcomeRejected                     Outcome = "rejected"
	OutcomeTimeoutThenReconciled        Outcome = "timeout_then_reconciled"
	OutcomeDelayedCompletion            Outcome = "delayed_completion"
	OutcomeFailed                       Outcome = "failed"
	OutcomeCustomerTimeout              Outcome = "customer_timeout"
	OutcomeTransientErrorThenReconciled Outcome = "transient_error_then_reconciled"
)

// Trigger is a sandbox behaviour selected through the normal API: a request
// field and a rule pick a scenario. The simulators and the simulation index
// read the same definitions, so what the index says is what happens.
type Trigger struct {
	Operation   string
	Method      string
	Path        string
	Description string
	Field       string // the request field that selects the scenario
	Rule        string // "last_two_decimal_digits" or "suffix"
	Scenarios   map[string]Outcome
	Default     Outcome
}

// PayoutTrigger drives the sandbox payout rail.
var PayoutTrigger = Trigger{
	Operation:   "create_payout",
	Method:      "POST",
	Path:        "/v1/payouts",
	Description: "The last two decimal digits of the amount pick the payout's outcome: 01 is rejected by the rail and refunded, 03 times out at submission and then reconciles as completed, anything else completes.",
	Field:       "amount",
	Rule:        "last_two_decimal_digits",
	Scenarios: map[string]Outcome{
		"01": OutcomeRejected,
		"03": OutcomeTimeoutThenReconciled,
	},
	Default: OutcomeCompleted,
}

// CollectionTrigger drives the sandbox mobile money collection rail.
var CollectionTrigger = Trigger{
	Operation:   "create_collection",
	Method:      "POST",
	Path:        "/v1/collections",
	Description: "The last two decimal digits of the amount pick the collection's outcome: 01 rejected, 03 times out and then reconciles as completed, 50 completes after a delay, 51 fails, 52 the payer never approves, 99 a transient error and then reconciled; anything else completes.",
	Field:       "from.amount",
	Rule:        "last_two_decimal_digits",
	Scenarios: map[string]Outcome{
		"01": OutcomeRejected,
		"03": OutcomeTimeoutThenReconciled,
		"50": OutcomeDelayedCompletion,
		"51": OutcomeFailed,
		"52": OutcomeCustomerTimeout,
		"99": OutcomeTransientErrorThenReconciled,
	},
	Default: OutcomeCompleted,
}

// Select returns the outcome the trigger picks for an amount.
func (t Trigger) Select(amount ledger.Minor, currency string) Outcome {
	if o, ok := t.Scenarios[lastTwoDecimalDigits(amount, currency)]; ok {
		return o
	}
	return t.Default
}

// lastTwoDecimalDigits returns the first two digits after the decimal point
// ("100.01" → "01"). For currencies without two decimal places (XOF, UGX) it
// is the last two digits of the whole amount ("1501" → "01").
func lastTwoDecimalDigits(amount ledger.Minor, currency string) string {
	cur, _ := ledger.LookupCurrency(currency)
	v := int64(amount)
	for d := cur.Decimals; d > 2; d-- {
		v /= 10
	}
	v %= 100
	return string([]byte{byte('0' + v/10), byte('0' + v%10)})
}
