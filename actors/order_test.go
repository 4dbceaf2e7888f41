package actors_test

import (
	"sync"
	"testing"
	"time"

	"payments/actors"
	"payments/ledger"
	"payments/ledger/orders"
)

func orderRequest(org, ref string) actors.OrderRequest {
	return actors.OrderRequest{
		OrgID: org, ExternalReference: ref,
		Spec: orders.Spec{FromMethod: "usdt_tron", FromCurrency: "USDT", ToMethod: "gh_mtn", ToCurrency: "GHS",
			ToAccountNumber: "233241234567", Amount: 100_000000, AmountSide: ledger.SideFrom},
		FromMethodType: ledger.MethodCrypto, ToMethodType: ledger.MethodMobileMoney,
		FromAmount: 100_000000, ToAmount: 1544_40, Fee: 1_000000, Rate: "15.444",
		Instructions: orders.Instructions{Type: orders.InstructionsCrypto, Chain: "Tron", Address: "TXYZ"},
	}
}

// waitOrder waits until the order reaches a terminal status or underpaid.
func (h *harness) waitOrder(t *testing.T, id string) orders.Order {
	t.Helper()
	var o orders.Order
	if !eventually(10*time.Second, func() bool {
		o, _ = orders.Get(h.sys.Reader(), h.org, id)
		return o.Status.Terminal() || o.Status == orders.Underpaid
	}) {
		t.Fatalf("order %s stuck in %s (%s)", id, o.Status, o.StatusMessage)
	}
	return o
}

// Concurrent creates with one reference meet in the order's actor: one
// order is created, the others are replays of it; a different spec under
// the same reference is a duplicate.
func TestOrderConcurrentSameReference(t *testing.T) {
	h := start(t)
	const n = 20
	replies := make([]actors.Reply, n)
	var wg sync.WaitGroup
	for i := range replies {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			replies[i] = h.sys.CreateOrder(orderRequest(h.org, "same"))
		}(i)
	}
	wg.Wait()
	ids := map[string]bool{}
	created := 0
	for _, r := range replies {
		if r.Err != nil || r.Result.Err != nil {
			t.Fatalf("create: %v %v", r.Err, r.Result.Err)
		}
		ids[orders.Of(r.Result).ID] = true
		if !r.Result.Replayed {
			created++
		}
	}
	if len(ids) != 1 || created != 1 {
		t.Fatalf("%d ids, %d created", len(ids), created)
	}
	changed := orderRequest(h.org, "same")
	changed.Spec.ToAccountNumber = "233200000000"
	if r := h.sys.CreateOrder(changed); r.Result.Err == nil || r.Result.Err.Code != ledger.CodeDuplicate {
		t.Fatalf("changed replay: %+v", r)
	}
}

// A crypto order funded by a deposit, and a mobile money order funded by
// the prompt, run to completed through the sandbox rails: the deposit's
// and the prompt's payouts are handed to the driver by the order actor and
// by the collection's worker.
func TestOrderLifecycleThroughRails(t *testing.T) {
	h := start(t)
	r := h.sys.CreateOrder(orderRequest(h.org, "crypto"))
	if r.Err != nil || r.Result.Err != nil {
		t.Fatalf("create: %v %v", r.Err, r.Result.Err)
	}
	crypto := orders.Of(r.Result).ID
	if d := h.sys.DepositOrder(h.org, crypto, 0, orders.DepositConfirmed, ""); d.Err != nil || d.Result.Err != nil || d.Result.Payout == nil {
		t.Fatalf("deposit: %+v", d)
	}
	if d := h.sys.DepositOrder(h.org, "ord_missing", 0, orders.DepositConfirmed, ""); d.Result.Err == nil || d.Result.Err.Code != ledger.CodeNotFound {
		t.Fatalf("deposit to a missing order: %+v", d)
	}

	mobile := orderRequest(h.org, "mobile")
	mobile.Spec = orders.Spec{FromMethod: "gh_mtn", FromCurrency: "GHS", FromAccountNumber: "233241234567",
		ToMethod: "gh_mtn", ToCurrency: "GHS", ToAccountNumber: "233200000000", Amount: 100_00, AmountSide: ledger.SideTo}
	mobile.FromMethodType, mobile.ToMethodType = ledger.MethodMobileMoney, ledger.MethodMobileMoney
	mobile.FromAmount, mobile.ToAmount, mobile.Fee, mobile.Rate = 100_00, 100_00, 1_00, ""
	mobile.Instructions = orders.Instructions{Type: orders.InstructionsMobileMoney, AccountNumber: "233241234567"}
	r = h.sys.CreateOrder(mobile)
	if r.Err != nil || r.Result.Err != nil || r.Result.Collection == nil {
		t.Fatalf("create mobile: %+v", r)
	}
	for _, id := range []string{crypto, orders.Of(r.Result).ID} {
		if o := h.waitOrder(t, id); o.Status != orders.Completed {
			t.Fatalf("order %s ended %s (%s)", id, o.Status, o.StatusMessage)
		}
	}
	{
		s := h.sys.Reader()
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
	}
	// Each order's fee is all that stayed: nothing is left on the balances.
	if h.balance("GHS").Total != 0 || h.balance("USDT").Total != 0 {
		t.Fatalf("balances GHS %d USDT %d", h.balance("GHS").Total, h.balance("USDT").Total)
	}
}
