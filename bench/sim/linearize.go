package sim

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/anishathalye/porcupine"

	"payments/ledger"
)

// The hot accounts' history: each balance is a register that credits add
// to, debits take from (when it covers them) and reads return.

type opKind int

const (
	opRead opKind = iota
	opCredit
	opDebit
)

type opInput struct {
	kind   opKind
	amount ledger.Minor // credited, or debited (principal plus fee)
}

type opOutput struct {
	outcome outcome      // writes
	value   ledger.Minor // reads
}

type op struct {
	client    int
	account   string
	in        opInput
	out       opOutput
	call, ret int64 // nanoseconds since the run began
}

// unknownReturn is the return time of a write whose outcome stayed
// unknown: it may take effect at any time after its call.
const unknownReturn = math.MaxInt64 / 2

// balanceModel: a debit the client was told succeeded needs the balance to
// cover it; a refused one changed nothing (the actor may refuse one the
// balance covers, counting debits still in flight, so a refusal says
// nothing about the balance); an unknown write may or may not have
// happened.
var balanceModel = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var order []string
		for _, o := range history {
			acct := o.Metadata.(string)
			if _, ok := by[acct]; !ok {
				order = append(order, acct)
			}
			by[acct] = append(by[acct], o)
		}
		var out [][]porcupine.Operation
		for _, a := range order {
			out = append(out, by[a])
		}
		return out
	},
	Init: func() []interface{} { return []interface{}{ledger.Minor(0)} },
	Step: func(state, input, output interface{}) []interface{} {
		s, in, out := state.(ledger.Minor), input.(opInput), output.(opOutput)
		switch in.kind {
		case opRead:
			if out.value == s {
				return []interface{}{s}
			}
			return nil
		case opCredit:
			switch out.outcome {
			case acked:
				return []interface{}{s + in.amount}
			case unknown:
				return []interface{}{s, s + in.amount}
			}
			return []interface{}{s}
		default:
			switch out.outcome {
			case acked:
				if s >= in.amount {
					return []interface{}{s - in.amount}
				}
				return nil
			case unknown:
				if s >= in.amount {
					return []interface{}{s, s - in.amount}
				}
			}
			return []interface{}{s}
		}
	},
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(opInput), output.(opOutput)
		switch in.kind {
		case opRead:
			return fmt.Sprintf("read → %s", money(out.value))
		case opCredit:
			return fmt.Sprintf("credit %s → %s", money(in.amount), out.outcome)
		}
		return fmt.Sprintf("debit %s → %s", money(in.amount), out.outcome)
	},
	DescribeState: func(state interface{}) string { return money(state.(ledger.Minor)) },
}

func money(m ledger.Minor) string { return fmt.Sprintf("%d.%02d", m/100, m%100) }

// checkLinearizable checks the history with porcupine. On a failure it
// writes porcupine's visualisation into dir and returns its path.
func checkLinearizable(history []op, dir string, timeout time.Duration) (ok bool, visual string, err error) {
	ops := make([]porcupine.Operation, len(history))
	for i, o := range history {
		ops[i] = porcupine.Operation{ClientId: o.client, Input: o.in, Output: o.out, Call: o.call, Return: o.ret, Metadata: o.account}
	}
	model := balanceModel.ToModel()
	res, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
	switch res {
	case porcupine.Ok:
		return true, "", nil
	case porcupine.Unknown:
		return true, "", nil // the checker ran out of time: no verdict
	}
	visual = filepath.Join(dir, "linearizability.html")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, "", err
	}
	if err := porcupine.VisualizePath(model, info, visual); err != nil {
		return false, "", err
	}
	return false, visual, nil
}
