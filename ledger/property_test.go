package ledger

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"payments/ledger/kv"
)

var propertySeed = flag.Uint64("ledger.seed", 0, "seed for the ledger property test (0: several fixed seeds)")

// model is a deliberately simple reference for the ledger: balances per
// organization and currency, and the few facts about payouts and collections
// that decide what a command may do.
type model struct {
	orgs        map[string]bool
	balance     map[string]Minor // org/currency → available
	payouts     map[string]modelPayout
	payoutRefs  map[string]string // org/ref → payout id
	collections map[string]modelCollection
	collRefs    map[string]string
	fundRefs    map[string]FundBalance
	refused     map[string]modelRefusal // org/ref → a payout refused under Decided
}

type modelRefusal struct {
	spec PayoutSpec
	code Code
}

type modelPayout struct {
	org, currency string
	spec          PayoutSpec
	debit         Minor
	status        PayoutStatus
	attempt       string // the Decided attempt that created it
}

type modelCollection struct {
	org      string
	spec     CollectionSpec
	fee      Minor
	terminal bool
}

func newModel() *model {
	return &model{
		orgs:        map[string]bool{},
		balance:     map[string]Minor{},
		payouts:     map[string]modelPayout{},
		payoutRefs:  map[string]string{},
		collections: map[string]modelCollection{},
		collRefs:    map[string]string{},
		fundRefs:    map[string]FundBalance{},
		refused:     map[string]modelRefusal{},
	}
}

// seenAnswer is the ledger's answer to a request under a reference it has
// seen: a replay, answered as code, of the same request, else the refusal
// other.
func seenAnswer(same bool, code, other Code) (Code, bool) {
	if same {
		return code, true
	}
	return other, false
}

// expect applies cmd to the model and returns the error code the ledger must
// return ("" for success) and whether the result is a replay.
func (m *model) expect(cmd Command) (Code, bool) {
	switch c := cmd.(type) {
	case *CreateOrganization:
		m.orgs[c.ID] = true
		return "", false
	case *Decided:
		// A payout whose refusal is final for its reference: the
		// reference's payout answers first, then its refusal.
		p := c.Op.(*CreatePayout)
		key := p.OrgID + "/" + p.ExternalReference
		if r, ok := m.refused[key]; ok && m.payoutRefs[key] == "" {
			return seenAnswer(r.spec == p.Spec, r.code, CodeDuplicate)
		}
		code, replay := m.expect(p)
		id := m.payoutRefs[key]
		switch {
		case code != "" && code != CodeDuplicate && code != CodeValidation:
			m.refused[key] = modelRefusal{spec: p.Spec, code: code}
		case code == "" && !replay && c.Attempt != "":
			mp := m.payouts[id]
			mp.attempt = c.Attempt
			m.payouts[id] = mp
		case code == "" && replay && c.Attempt != "" && m.payouts[id].attempt == c.Attempt:
			replay = false // its own creation, relayed again
		}
		return code, replay
	case *FundBalance:
		key := c.OrgID + "/" + c.ExternalReference
		if prev, ok := m.fundRefs[key]; ok {
			return seenAnswer(prev.Currency == c.Currency && prev.Amount == c.Amount, "", CodeConflict)
		}
		m.fundRefs[key] = *c
		m.balance[c.OrgID+"/"+c.Currency] += c.Amount
		return "", false
	case *CreatePayout:
		key := c.OrgID + "/" + c.ExternalReference
		if id, ok := m.payoutRefs[key]; ok {
			return seenAnswer(m.payouts[id].spec == c.Spec, "", CodeDuplicate)
		}
		bk := c.OrgID + "/" + c.Spec.Currency
		if m.balance[bk] < c.Spec.Amount+c.Fee {
			return CodeInsufficientFunds, false
		}
		m.balance[bk] -= c.Spec.Amount + c.Fee
		m.payoutRefs[key] = c.ID
		m.payouts[c.ID] = modelPayout{org: c.OrgID, currency: c.Spec.Currency, spec: c.Spec, debit: c.Spec.Amount + c.Fee, status: PayoutPending}
		return "", false
	case *MarkPayoutProcessing:
		p, ok := m.payouts[c.ID]
		if !ok {
			return CodeNotFound, false
		}
		if p.status != PayoutPending {
			return CodeConflict, false
		}
		p.status = PayoutProcessing
		m.payouts[c.ID] = p
		return "", false
	case *SettlePayout:
		p, ok := m.payouts[c.ID]
		if !ok {
			return CodeNotFound, false
		}
		if p.status.Terminal() {
			return CodeConflict, false
		}
		if c.Completed {
			p.status = PayoutCompleted
		} else {
			p.status = PayoutFailed
			m.balance[p.org+"/"+p.currency] += p.debit
		}
		m.payouts[c.ID] = p
		return "", false
	case *CreateCollection:
		key := c.OrgID + "/" + c.ExternalReference
		if id, ok := m.collRefs[key]; ok {
			return seenAnswer(m.collections[id].spec == c.Spec, "", CodeDuplicate)
		}
		m.collRefs[key] = c.ID
		m.collections[c.ID] = modelCollection{org: c.OrgID, spec: c.Spec, fee: c.Fee}
		return "", false
	case *SettleCollection:
		col, ok := m.collections[c.ID]
		if !ok {
			return CodeNotFound, false
		}
		if col.terminal {
			return CodeConflict, false
		}
		col.terminal = true
		m.collections[c.ID] = col
		if c.Completed {
			m.balance[col.org+"/"+col.spec.Currency] += col.spec.Amount - col.fee
		}
		return "", false
	}
	panic(fmt.Sprintf("model: unexpected %T", cmd))
}

// generator draws random commands, biased towards interesting collisions:
// reused references, payouts larger than the balance, settling twice.
type generator struct {
	rng        *rand.Rand
	at         int64
	orgs       []string
	payouts    []string
	colls      []string
	n          int
	currencies []string
	sent       []Command // earlier creates, to retry
}

func (g *generator) id(prefix string) string {
	g.n++
	return fmt.Sprintf("%s%08d", prefix, g.n)
}

func (g *generator) org() string { return g.orgs[g.rng.IntN(len(g.orgs))] }

func (g *generator) next() Command {
	c := g.draw()
	switch c.(type) {
	case *CreatePayout, *FundBalance, *CreateCollection, *Decided:
		g.sent = append(g.sent, c)
	}
	return c
}

// retry repeats an earlier create as a client retry would: same request,
// new identifier and time chosen by the leader.
func (g *generator) retry() Command {
	switch c := g.sent[g.rng.IntN(len(g.sent))].(type) {
	case *Decided:
		again := *c.Op.(*CreatePayout)
		again.At, again.ID = g.at, g.id("pay_")
		g.payouts = append(g.payouts, again.ID)
		attempt := c.Attempt // a node's re-send of the same attempt, or the client's retry
		if g.rng.IntN(2) == 0 {
			attempt = fmt.Sprintf("req_%d", g.n)
		}
		return &Decided{Attempt: attempt, Op: &again}
	case *CreatePayout:
		again := *c
		again.At, again.ID = g.at, g.id("pay_")
		g.payouts = append(g.payouts, again.ID)
		return &again
	case *FundBalance:
		again := *c
		again.At = g.at
		return &again
	case *CreateCollection:
		again := *c
		again.At, again.ID = g.at, g.id("col_")
		g.colls = append(g.colls, again.ID)
		return &again
	}
	panic("unreachable")
}

func (g *generator) draw() Command {
	g.at += int64(g.rng.IntN(1000))
	if len(g.sent) > 0 && g.rng.IntN(10) == 0 {
		return g.retry()
	}
	if len(g.orgs) == 0 || g.rng.IntN(50) == 0 {
		id := g.id("org_")
		g.orgs = append(g.orgs, id)
		hash := sha256.Sum256([]byte(id))
		return &CreateOrganization{
			At: g.at, ID: id, Name: "Org " + id, Country: "GH", Timezone: "Africa/Accra", DefaultCurrency: "GHS",
			Key: CreateAPIKey{At: g.at, ID: g.id("key_"), OrgID: id, Name: "first", Hash: string(hash[:]), Scopes: ScopesMerchant},
		}
	}
	cur := g.currencies[g.rng.IntN(len(g.currencies))]
	ref := fmt.Sprintf("ref-%d", g.rng.IntN(40)) // small space: references collide
	switch r := g.rng.IntN(100); {
	case r < 20:
		return &FundBalance{At: g.at, OrgID: g.org(), Currency: cur, Amount: Minor(1 + g.rng.IntN(100_000)), ExternalReference: ref}
	case r < 50:
		amount := Minor(1 + g.rng.IntN(20_000))
		methodType := []MethodType{MethodMobileMoney, MethodBankTransfer, MethodCrypto}[g.rng.IntN(3)]
		id := g.id("pay_")
		g.payouts = append(g.payouts, id)
		p := &CreatePayout{
			At: g.at, ID: id, OrgID: g.org(), ExternalReference: ref,
			Spec: PayoutSpec{
				Currency: cur, Amount: amount, AmountSide: SideTo, Method: "gh_mtn",
				AccountNumber: fmt.Sprintf("2335%d", g.rng.IntN(3)), Metadata: `{"k":1}`,
			},
			MethodType: methodType, Fee: payoutFee(methodType, amount), Reservation: uint64(g.n),
		}
		if g.rng.IntN(2) == 0 { // as the account actor proposes it, its refusal final
			return &Decided{Attempt: fmt.Sprintf("req_%d", g.n), Op: p}
		}
		return p
	case r < 62 && len(g.payouts) > 0:
		return &MarkPayoutProcessing{At: g.at, ID: g.payouts[g.rng.IntN(len(g.payouts))], ProviderReference: "prv"}
	case r < 80 && len(g.payouts) > 0:
		return &SettlePayout{At: g.at, ID: g.payouts[g.rng.IntN(len(g.payouts))], Completed: g.rng.IntN(3) > 0, Message: "done"}
	case r < 90:
		amount := Minor(1 + g.rng.IntN(50_000))
		id := g.id("col_")
		g.colls = append(g.colls, id)
		return &CreateCollection{
			At: g.at, ID: id, OrgID: g.org(), ExternalReference: ref,
			Spec:       CollectionSpec{Currency: cur, Amount: amount, Method: "gh_mtn", PayerNumber: fmt.Sprintf("2335%d", g.rng.IntN(2))},
			MethodType: MethodMobileMoney, Fee: collectionFee(amount),
		}
	case len(g.colls) > 0:
		return &SettleCollection{At: g.at, ID: g.colls[g.rng.IntN(len(g.colls))], Completed: g.rng.IntN(4) > 0}
	default:
		return &SettlePayout{At: g.at, ID: "pay_missing", Completed: true}
	}
}

func TestLedgerAgainstModel(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5}
	if *propertySeed != 0 {
		seeds = []uint64{*propertySeed}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			runProperty(t, seed, 4000)
		})
	}
}

func runProperty(t *testing.T, seed uint64, steps int) {
	g := &generator{rng: rand.New(rand.NewPCG(seed, 0)), currencies: []string{"GHS", "KES", "XOF"}}
	m := newModel()
	s := newTestState(t)
	var log [][]byte // the commands in batches, as the Raft log would hold them
	var batch []Command
	var snapAt int
	var snapBytes []byte
	outcomes := map[string]int{}
	for i := 0; i < steps; i++ {
		cmd := g.next()
		wantCode, wantReplay := m.expect(cmd)
		res := s.st.Apply(cmd) // committed with its log entry, below
		var gotCode Code
		if res.Err != nil {
			gotCode = res.Err.Code
		}
		if gotCode != wantCode || res.Replayed != wantReplay {
			t.Fatalf("seed %d step %d: %T %+v: got (%q, replay %v) %v, model wants (%q, replay %v)",
				seed, i, cmd, cmd, gotCode, res.Replayed, res.Err, wantCode, wantReplay)
		}
		outcomes[fmt.Sprintf("%T/%s/%v", cmd, gotCode, res.Replayed)]++
		if res.Err != nil && res.Err.Code == CodeInsufficientFunds && res.Err.Available >= res.Err.Required {
			t.Fatalf("insufficient_funds with available %d ≥ required %d", res.Err.Available, res.Err.Required)
		}
		batch = append(batch, cmd)
		if g.rng.IntN(8) == 0 || i == steps-1 || i == steps/2 {
			log = append(log, EncodeBatch(nil, batch))
			batch = nil
			s.st.EndEntry()
			if g.rng.IntN(3) == 0 || i == steps-1 || i == steps/2 {
				s.commit() // now and then several entries in one applied batch
			}
		}
		// Copy the state store in the middle, as a leader sends it to a
		// follower.
		if i == steps/2 {
			snapBytes = encodeSnapshot(t, s)
			snapAt = len(log)
			if len(batch) > 0 {
				t.Fatal("test bug: snapshot must fall on a batch boundary")
			}
		}
		if i%500 == 0 && len(batch) == 0 {
			s.commit()
			if err := s.Check(); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, i, err)
			}
		}
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	// The generator must reach every interesting outcome, or the test
	// proves less than it claims.
	for _, want := range []string{
		"*ledger.CreatePayout//false", "*ledger.CreatePayout//true", "*ledger.CreatePayout/duplicate/false",
		"*ledger.CreatePayout/insufficient_funds/false", "*ledger.FundBalance//true", "*ledger.FundBalance/conflict/false",
		"*ledger.SettlePayout//false", "*ledger.SettlePayout/conflict/false", "*ledger.MarkPayoutProcessing//false",
		"*ledger.CreateCollection//true", "*ledger.CreateCollection/duplicate/false", "*ledger.SettleCollection//false",
		"*ledger.Decided//false", "*ledger.Decided//true", "*ledger.Decided/insufficient_funds/false",
		"*ledger.Decided/insufficient_funds/true", "*ledger.Decided/duplicate/false",
	} {
		if outcomes[want] == 0 {
			t.Errorf("seed %d: no command ended as %s; outcomes: %v", seed, want, outcomes)
		}
	}
	for key, want := range m.balance {
		org, cur, _ := strings.Cut(key, "/")
		got := Minor(0)
		if a, ok := s.AccountFor(org, cur); ok {
			got = a.Available()
		}
		if got != want {
			t.Errorf("seed %d: balance %s = %d, model %d", seed, key, got, want)
		}
	}
	final := encodeSnapshot(t, s)

	// Replaying the log from scratch, each entry one applied batch (the
	// original committed several entries together now and then), yields
	// byte-identical state.
	replay := newTestState(t)
	for _, entry := range log {
		cmds, err := DecodeBatch(entry)
		if err != nil {
			t.Fatal(err)
		}
		replay.applyBatch(cmds...)
	}
	if !bytes.Equal(encodeSnapshot(t, replay), final) {
		t.Fatalf("seed %d: replayed state differs from the original", seed)
	}

	// Loading the mid-run copy of the store, as a follower that installs
	// it does, and applying the rest of the log yields the same state too.
	restored, err := Restore(bytes.NewReader(snapBytes))
	if err != nil {
		t.Fatal(err)
	}
	for _, entry := range log[snapAt:] {
		cmds, _ := DecodeBatch(entry)
		restored.applyBatch(cmds...)
	}
	if !bytes.Equal(encodeSnapshot(t, restored), final) {
		t.Fatalf("seed %d: snapshot + log tail differs from the original", seed)
	}
}

func TestSnapshotRejectsCorruption(t *testing.T) {
	g := &generator{rng: rand.New(rand.NewPCG(9, 9)), currencies: []string{"GHS"}}
	s := newTestState(t)
	for i := 0; i < 300; i++ {
		s.Apply(g.next())
	}
	good := encodeSnapshot(t, s)
	if _, err := Restore(bytes.NewReader(good)); err != nil {
		t.Fatalf("restore of a good snapshot: %v", err)
	}
	for _, at := range []int{0, 9, len(good) / 2, len(good) - 1} {
		bad := bytes.Clone(good)
		bad[at] ^= 0x40
		if _, err := Restore(bytes.NewReader(bad)); err == nil {
			t.Errorf("restore accepted a snapshot with byte %d flipped", at)
		}
	}
	if _, err := Restore(bytes.NewReader(good[:len(good)-3])); err == nil {
		t.Error("restore accepted a truncated snapshot")
	}
}

func TestBatchRoundTrip(t *testing.T) {
	g := &generator{rng: rand.New(rand.NewPCG(7, 7)), currencies: []string{"GHS", "USDT"}}
	var cmds []Command
	for i := 0; i < 500; i++ {
		cmds = append(cmds, g.next())
	}
	checkCommandsRoundTrip(t, cmds)
}

func FuzzDecodeBatch(f *testing.F) {
	g := &generator{rng: rand.New(rand.NewPCG(3, 3)), currencies: []string{"GHS"}}
	for i := 0; i < 20; i++ {
		f.Add(EncodeBatch(nil, []Command{g.next(), g.next()}))
	}
	f.Add([]byte{1, 200, 1})
	// A seed for every registered kind: its zero value, so the fuzzer
	// starts inside each feature's decoder.
	for _, k := range registeredKinds() {
		d := kv.NewDecoder(make([]byte, 256))
		if c := commandDecoders[k](&d); d.Err() == nil {
			f.Add(EncodeBatch(nil, []Command{c}))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) { decodeCanonical(t, b) })
}

func TestEntryIDRoundTrip(t *testing.T) {
	for _, seq := range []uint64{1, 2, 3, 1000, 1 << 40, 1<<64 - 1} {
		id := EntryID(seq)
		got, ok := ParseEntryID(id)
		if !ok || got != seq {
			t.Errorf("ParseEntryID(EntryID(%d)=%q) = %d, %v", seq, id, got, ok)
		}
	}
	for _, bad := range []string{"", "le_", "le_!", "pay_123", "le_zzzzzzzzzzzzzzzzzzzz"} {
		if _, ok := ParseEntryID(bad); ok {
			t.Errorf("ParseEntryID(%q) accepted", bad)
		}
	}
}

func TestInsufficientFundsChangesNothing(t *testing.T) {
	s := newOrgTestState(t)
	s.Apply(&FundBalance{At: 2, OrgID: "org_a", Currency: "GHS", Amount: 10_000, ExternalReference: "f1"})
	before := encodeSnapshot(t, s)
	res := s.Apply(&CreatePayout{
		At: 3, ID: "pay_ghs_x", OrgID: "org_a", ExternalReference: "p1",
		Spec: PayoutSpec{Currency: "GHS", Amount: 10_000, AmountSide: SideTo, Method: "gh_mtn"}, MethodType: MethodMobileMoney, Fee: 100,
	})
	if !errors.Is(res.Err, ErrInsufficientFunds) {
		t.Fatalf("got %v, want insufficient_funds", res.Err)
	}
	if res.Err.Available != 10_000 || res.Err.Required != 10_100 || res.Err.Currency != "GHS" {
		t.Fatalf("details = %+v", res.Err)
	}
	if !bytes.Equal(encodeSnapshot(t, s), before) {
		t.Fatal("a rejected payout changed the state")
	}
}
