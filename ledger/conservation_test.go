package ledger

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"testing"
)

// Money is conserved across every flow. A random mix of fundings, deposits
// into virtual accounts, payouts, collections, conversions, orders (paid
// short, exactly or over, same- and cross-currency) and disputes runs
// against the ledger, while a separate tally follows what each command
// should do to each merchant balance and to fee revenue. After every command
// the journal must balance (Check), and at the end every merchant balance
// and every currency's fee revenue must equal the tally to the minor unit.
func TestMoneyConservedAcrossFlows(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { runConservation(t, seed, 3000) })
	}
}

type conservation struct {
	t        *testing.T
	rng      *rand.Rand
	s        *testState
	at       int64
	n        int
	balance  map[string]Minor // org/currency → merchant total, as the tally says
	fees     map[string]Minor // currency → fee revenue
	payouts  []string         // open payouts
	colls    []string         // open collections
	done     []string         // completed collections, disputable
	disputes []string         // open disputes
	disputed map[string]disputed
	quotes   []string          // pending quotes
	quoted   map[string]quoted // every quote, by id
	orders   []string          // orders awaiting funds
	orderOrg map[string]string // every order's organization, by id
	vas      map[string]string
	outcomes map[string]int
	log      []Command // every command applied, for the replay check
}

// disputed is what the tally needs of a dispute it opened.
type disputed struct {
	OrgID, Currency string
	Amount          Minor
}

// quoted is what a quote moves, as the tally keeps it.
type quoted struct {
	org, from, to        string
	fromAmount, toAmount Minor
}

var conservationOrgs = []string{"org_a", "org_b"}
var conservationCurrencies = []string{"GHS", "KES", "USD"}

func runConservation(t *testing.T, seed uint64, steps int) {
	c := &conservation{
		t: t, rng: rand.New(rand.NewPCG(seed, 7)), s: newTestState(t), at: 1_000,
		balance: map[string]Minor{}, fees: map[string]Minor{}, vas: map[string]string{}, outcomes: map[string]int{},
		disputed: map[string]disputed{}, orderOrg: map[string]string{},
	}
	for i, org := range conservationOrgs {
		hash := sha256.Sum256([]byte(org))
		c.must(&CreateOrganization{At: c.at, ID: org, Name: org, Key: CreateAPIKey{At: c.at, ID: fmt.Sprint("key_", i), OrgID: org, Hash: string(hash[:])}})
		for _, cur := range []string{"GHS", "KES"} {
			id := c.id("va_")
			c.must(Deposits.CreateVirtualAccount(c.at, id, org, cur, "Sandbox Bank"))
			c.vas[org+"/"+cur] = id
		}
	}
	for i := 0; i < steps; i++ {
		c.at += int64(c.rng.IntN(2000))
		if i%500 == 499 {
			// Let the sandbox clock run, so quotes expire on the way.
			c.must(&AdvanceClock{At: c.at, OrgID: conservationOrgs[c.rng.IntN(2)], Millis: 11 * 60 * 1000})
		}
		c.step()
		if i%64 == 0 || i == steps-1 {
			if err := c.s.Check(); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, i, err)
			}
		}
	}
	for key, want := range c.balance {
		var org, cur string
		fmt.Sscanf(key, "%5s/%3s", &org, &cur)
		a, _ := c.s.AccountFor(org, cur)
		if a.Total != want {
			t.Errorf("%s: balance %d, the tally says %d", key, a.Total, want)
		}
	}
	revenue := map[string]Minor{}
	for _, r := range c.s.st.accounts.rows {
		if a := r.v; a.Purpose == PurposeFeeRevenue {
			revenue[a.Currency] += a.Total
		}
	}
	for _, cur := range conservationCurrencies {
		if revenue[cur] != c.fees[cur] {
			t.Errorf("%s fee revenue %d, the tally says %d", cur, revenue[cur], c.fees[cur])
		}
	}
	// Every feature's rules are deterministic: the log, encoded, decoded and
	// replayed on an empty ledger in batches of other sizes, gives the same
	// state store, byte for byte, and so does loading a copy of it.
	want := encodeSnapshot(t, c.s)
	cmds, err := DecodeBatch(EncodeBatch(nil, c.log))
	if err != nil {
		t.Fatal(err)
	}
	replica := newTestState(t)
	for len(cmds) > 0 {
		// Each command was a log entry of its own; apply them in batches
		// of entries of other sizes, as the FSM groups them.
		n := min(len(cmds), 1+c.rng.IntN(40))
		entries := make([][]Command, n)
		for i := range entries {
			entries[i] = cmds[i : i+1]
		}
		replica.applyEntries(entries...)
		cmds = cmds[n:]
	}
	if !bytes.Equal(encodeSnapshot(t, replica), want) {
		t.Fatal("replaying the log gives a different state")
	}
	restored, err := Restore(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encodeSnapshot(t, restored), want) {
		t.Fatal("restoring the snapshot gives a different state")
	}
	for _, want := range []string{"fund", "payout/completed", "payout/failed", "payout/cross-currency", "collection/completed", "deposit", "conversion",
		"dispute/lost", "dispute/won", "order/underpaid", "order/paid", "order/overpaid"} {
		if c.outcomes[want] == 0 {
			t.Errorf("seed %d never reached %s: %v", seed, want, c.outcomes)
		}
	}
}

func (c *conservation) id(prefix string) string {
	c.n++
	return fmt.Sprintf("%s%020d", prefix, c.n)
}

// apply applies a command and logs it.
func (c *conservation) apply(cmd Command) Result {
	c.log = append(c.log, cmd)
	return c.s.Apply(cmd)
}

func (c *conservation) must(cmd Command) Result {
	c.t.Helper()
	r := c.apply(cmd)
	if r.Err != nil {
		c.t.Fatalf("%T: %v", cmd, r.Err)
	}
	return r
}

func (c *conservation) pick(l *[]string) (string, bool) {
	if len(*l) == 0 {
		return "", false
	}
	i := c.rng.IntN(len(*l))
	v := (*l)[i]
	(*l)[i] = (*l)[len(*l)-1]
	*l = (*l)[:len(*l)-1]
	return v, true
}

// settleOne settles one of the pending records, picked at random (pick),
// with the command settle makes: completed unless a draw of one in
// failOneIn fails it. It returns the record as read before the
// settlement; ok is false when none is pending.
func settleOne[V any](c *conservation, pending *[]string, failOneIn int, read func(string) (V, bool), settle func(id string, completed bool) Command) (v V, completed, ok bool) {
	id, ok := c.pick(pending)
	if !ok {
		return v, false, false
	}
	v, _ = read(id)
	completed = c.rng.IntN(failOneIn) != 0
	c.must(settle(id, completed))
	return v, completed, true
}

func (c *conservation) step() {
	org := conservationOrgs[c.rng.IntN(len(conservationOrgs))]
	cur := conservationCurrencies[c.rng.IntN(len(conservationCurrencies))]
	amount := Minor(1 + c.rng.IntN(50_000))
	switch c.rng.IntN(12) {
	case 0:
		ref := c.id("f")
		if c.must(&FundBalance{At: c.at, OrgID: org, Currency: cur, Amount: amount, ExternalReference: ref}).Funding != nil {
			c.balance[org+"/"+cur] += amount
			c.outcomes["fund"]++
		}
	case 1, 2:
		fee := amount / 100
		spec := PayoutSpec{Currency: cur, Amount: amount, AmountSide: SideTo, Method: "gh_mtn"}
		var cmd Command = &CreatePayout{At: c.at, ID: c.id("pay_"), OrgID: org, ExternalReference: c.id("p"),
			Spec: spec, MethodType: MethodMobileMoney, Fee: fee}
		from, debit := cur, amount
		if to := conservationCurrencies[c.rng.IntN(len(conservationCurrencies))]; to != cur && c.rng.IntN(3) == 0 {
			// Cross-currency: delivered in to at a rate of 2, debited in cur.
			spec.Currency, spec.Amount = to, amount*2
			cmd = (&TestFXPayout{At: c.at, ID: c.id("pay_"), OrgID: org, ExternalReference: c.id("p"),
				Spec: spec, MethodType: MethodMobileMoney, Fee: fee, FromCurrency: cur, FromAmount: amount, ToAmount: amount * 2, Rate: "2"}).Op()
		}
		r := c.apply(cmd)
		if r.Err == nil {
			c.balance[org+"/"+from] -= debit + fee
			c.fees[from] += fee
			c.payouts = append(c.payouts, r.Payout.ID)
			if r.Payout.FX != nil {
				c.outcomes["payout/cross-currency"]++
			}
		} else if r.Err.Code != CodeInsufficientFunds {
			c.t.Fatalf("payout: %v", r.Err)
		}
	case 3:
		p, completed, ok := settleOne(c, &c.payouts, 4, c.s.Payout, func(id string, completed bool) Command {
			return &SettlePayout{At: c.at, ID: id, Completed: completed}
		})
		if !ok {
			return
		}
		from, debit := p.Spec.Currency, p.Spec.Amount
		if p.FX != nil {
			from, debit = p.FX.FromCurrency, p.FX.FromAmount
		}
		if completed {
			c.outcomes["payout/completed"]++
		} else {
			c.balance[p.OrgID+"/"+from] += debit + p.Fee
			c.fees[from] -= p.Fee
			c.outcomes["payout/failed"]++
		}
	case 4:
		fee := amount * 150 / 10_000
		r := c.must(&CreateCollection{At: c.at, ID: c.id("col_"), OrgID: org, ExternalReference: c.id("c"),
			Spec: CollectionSpec{Currency: cur, Amount: amount, Method: "gh_mtn"}, MethodType: MethodMobileMoney, Fee: fee})
		c.colls = append(c.colls, r.Collection.ID)
	case 5:
		col, completed, ok := settleOne(c, &c.colls, 5, c.s.Collection, func(id string, completed bool) Command {
			return &SettleCollection{At: c.at, ID: id, Completed: completed}
		})
		if !ok {
			return
		}
		if completed {
			c.balance[col.OrgID+"/"+col.Spec.Currency] += col.Spec.Amount - col.Fee
			c.fees[col.Spec.Currency] += col.Fee
			c.done = append(c.done, col.ID)
			c.outcomes["collection/completed"]++
		}
	case 6:
		va, ok := c.vas[org+"/"+cur]
		if !ok {
			return
		}
		completed := c.rng.IntN(6) != 0
		r := c.must(Deposits.Receive(c.at, c.id("vad_"), c.id("col_"), org, va, amount, completed, c.id("d"), ""))
		if completed {
			c.balance[org+"/"+cur] += amount
			c.done = append(c.done, r.Collection.ID)
			c.outcomes["deposit"]++
		}
	case 7:
		to := conservationCurrencies[c.rng.IntN(len(conservationCurrencies))]
		if to == cur {
			return
		}
		toAmount := amount*3 + Minor(c.rng.IntN(7))
		id := c.id("qte_")
		c.must(Conversions.CreateQuote(c.at, id, org, cur, amount, to, toAmount, "3"))
		c.quotes = append(c.quotes, id)
		if c.quoted == nil {
			c.quoted = map[string]quoted{}
		}
		c.quoted[id] = quoted{org: org, from: cur, to: to, fromAmount: amount, toAmount: toAmount}
	case 8:
		id, ok := c.pick(&c.quotes)
		if !ok {
			return
		}
		q := c.quoted[id]
		r := c.apply(executeQuote(c.at, q.org, id, c.id("conv_"), ""))
		switch {
		case r.Err == nil:
			c.balance[q.org+"/"+q.from] -= q.fromAmount
			c.balance[q.org+"/"+q.to] += q.toAmount
			c.outcomes["conversion"]++
		case r.Err.Code == CodeInsufficientFunds || r.Err.Code == CodeBadRequest: // short, or expired
		default:
			c.t.Fatalf("execute: %v", r.Err)
		}
	case 10:
		// A GHS bank transfer in, paid out in GHS or, at a locked rate of
		// 3, in KES.
		to, toAmount, rate := "GHS", amount, ""
		if c.rng.IntN(2) == 0 {
			to, toAmount, rate = "KES", amount*3, "3"
		}
		r := c.must(Orders.BankTransfer(c.at, c.id("ord_"), org, c.id("o"), amount, to, toAmount, rate))
		id := Orders.Of(r).ID
		c.orders = append(c.orders, id)
		c.orderOrg[id] = org
	case 11:
		id, ok := c.pick(&c.orders)
		if !ok {
			return
		}
		o, _ := Orders.Get(c.s.Reader, c.orderOrg[id], id)
		expected := o.FromAmount + o.Fee
		received := expected
		switch c.rng.IntN(3) {
		case 0:
			received = 1 + Minor(c.rng.Int64N(int64(expected)))
		case 1:
			received = expected + Minor(c.rng.IntN(1000)) + 1
		}
		r := c.must(Orders.Deposit(c.at, o.OrgID, id, c.id("col_"), received))
		switch {
		case received < expected:
			c.balance[o.OrgID+"/GHS"] += received
			c.outcomes["order/underpaid"]++
		default:
			c.balance[o.OrgID+"/GHS"] += received - o.Fee
			c.fees["GHS"] += o.Fee
			if o.Rate != "" {
				c.balance[o.OrgID+"/GHS"] -= o.FromAmount
				c.balance[o.OrgID+"/"+o.ToCurrency] += o.ToAmount
			}
			c.balance[o.OrgID+"/"+o.ToCurrency] -= o.ToAmount
			c.payouts = append(c.payouts, Orders.Of(r).PayoutID)
			if received == expected {
				c.outcomes["order/paid"]++
			} else {
				c.outcomes["order/overpaid"]++
			}
		}
	case 9:
		if id, ok := c.pick(&c.disputes); ok {
			d := c.disputed[id]
			won := c.rng.IntN(2) == 0
			c.must(Disputes.Resolve(c.at, id, d.OrgID, won))
			if won {
				c.outcomes["dispute/won"]++
			} else {
				c.balance[d.OrgID+"/"+d.Currency] -= d.Amount
				c.outcomes["dispute/lost"]++
			}
			return
		}
		col, ok := c.pick(&c.done)
		if !ok {
			return
		}
		cl, _ := c.s.Collection(col)
		id, msg := c.id("dsp_"), c.id("dsm_")
		r := c.apply(Disputes.Open(c.at, id, cl.OrgID, col, cl.Spec.Amount, msg))
		switch {
		case r.Err == nil:
			c.disputes = append(c.disputes, id)
			c.disputed[id] = disputed{OrgID: cl.OrgID, Currency: cl.Spec.Currency, Amount: cl.Spec.Amount}
		case r.Err.Code == CodeInsufficientFunds: // the balance has moved on
		default:
			c.t.Fatalf("open dispute: %v", r.Err)
		}
	}
}
