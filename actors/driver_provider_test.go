package actors_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payments/actors"
	"payments/ledger"
	"payments/ledger/deposits"
	"payments/ledger/instructions"
)

// scripted is a provider instance whose answers a test scripts. It serves
// gh_mtn payouts and collections and records every call.
type scripted struct {
	name     string
	sendOnce bool

	mu       sync.Mutex
	calls    []string
	restores [][]actors.Prepared
	submits  map[string]int // by prepared key
	statuses map[string]int // by id
	prepare  func(w actors.Work) (actors.Prepared, error)
	submit   func(w actors.Work, p actors.Prepared, n int) (actors.ProviderOutcome, error)
	status   func(w actors.Work, p actors.Prepared, n int) (actors.ProviderOutcome, error)
	callback func(cb actors.Callback) (actors.Notification, error)

	// Deposits.
	feed    func(cursor []byte) ([]actors.FeedDeposit, []byte, error)
	cursors []string
	noted   []uint32
}

func newScripted(name string) *scripted {
	return &scripted{name: name, submits: map[string]int{}, statuses: map[string]int{},
		prepare: func(w actors.Work) (actors.Prepared, error) { return actors.Prepared{Key: "key-" + w.ID()}, nil },
		submit: func(actors.Work, actors.Prepared, int) (actors.ProviderOutcome, error) {
			return actors.ProviderOutcome{RailOutcome: actors.RailOutcome{CheckAfter: time.Millisecond}}, nil
		},
		status: func(actors.Work, actors.Prepared, int) (actors.ProviderOutcome, error) {
			return actors.ProviderOutcome{RailOutcome: actors.RailOutcome{Final: true, Completed: true}}, nil
		},
	}
}

func (s *scripted) note(f string, args ...any) {
	s.mu.Lock()
	s.calls = append(s.calls, fmt.Sprintf(f, args...))
	s.mu.Unlock()
}

func (s *scripted) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

func (s *scripted) count(prefix string) int {
	n := 0
	for _, c := range s.log() {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

func (s *scripted) Name() string                             { return s.name }
func (s *scripted) Serves(m string, d actors.Direction) bool { return m == "gh_mtn" }
func (s *scripted) SendOnce(actors.Direction) bool           { return s.sendOnce }

func (s *scripted) Prepare(_ context.Context, w actors.Work) (actors.Prepared, error) {
	s.note("prepare %s", w.ID())
	return s.prepare(w)
}

func (s *scripted) Submit(ctx context.Context, w actors.Work, p actors.Prepared) (actors.ProviderOutcome, error) {
	s.mu.Lock()
	s.submits[p.Key]++
	n := s.submits[p.Key]
	s.mu.Unlock()
	s.note("submit %s %s", w.ID(), p.Key)
	return s.submit(w, p, n)
}

func (s *scripted) Status(_ context.Context, w actors.Work, p actors.Prepared) (actors.ProviderOutcome, error) {
	s.mu.Lock()
	s.statuses[w.ID()]++
	n := s.statuses[w.ID()]
	s.mu.Unlock()
	s.note("status %s %s", w.ID(), p.Key)
	return s.status(w, p, n)
}

func (s *scripted) Restore(_ context.Context, inFlight []actors.Prepared) error {
	s.mu.Lock()
	s.restores = append(s.restores, slices.Clone(inFlight))
	s.mu.Unlock()
	s.note("restore %d", len(inFlight))
	return nil
}

func (s *scripted) HandleCallback(_ context.Context, cb actors.Callback) (actors.Notification, error) {
	if s.callback == nil {
		return actors.Notification{}, actors.ErrNoCallbacks
	}
	return s.callback(cb)
}

func (s *scripted) HasDepositFeed() bool { return s.feed != nil }

func (s *scripted) PollDeposits(_ context.Context, cursor []byte) ([]actors.FeedDeposit, []byte, error) {
	s.mu.Lock()
	s.cursors = append(s.cursors, string(cursor))
	s.mu.Unlock()
	return s.feed(cursor)
}

func (s *scripted) NoteDepositIndexes(n uint32) {
	s.mu.Lock()
	s.noted = append(s.noted, n)
	s.mu.Unlock()
}

func (s *scripted) ProvisionDeposit(_ context.Context, req actors.DepositRequest) (string, string, error) {
	return fmt.Sprintf("0xDEP%d", req.Index), "", nil
}

// oneProvider is a deployment of one instance.
type oneProvider struct{ p *scripted }

func (o oneProvider) For(m string, d actors.Direction) (actors.Provider, bool) {
	if o.p.Serves(m, d) {
		return o.p, true
	}
	return nil, false
}
func (o oneProvider) Named(n string) (actors.Provider, bool) { return o.p, n == o.p.name }
func (o oneProvider) All() []actors.Provider                 { return []actors.Provider{o.p} }

func (h *harness) payoutStatus(t *testing.T, id string) ledger.Payout {
	t.Helper()
	p, ok := h.sys.Reader().Payout(id)
	if !ok {
		t.Fatalf("payout %s not found", id)
	}
	return p
}

func startProvider(t *testing.T, p *scripted) *harness {
	t.Helper()
	h := startWith(t, actors.Config{Providers: oneProvider{p}})
	h.fund(t, "GHS", 1_000_000, "seed")
	return h
}

func (h *harness) newPayout(t *testing.T, ref string) string {
	t.Helper()
	r := h.payout(ref, 10_000)
	if r.Err != nil || r.Result.Err != nil {
		t.Fatalf("payout: %v %v", r.Err, r.Result.Err)
	}
	return r.Result.Payout.ID
}

// A re-sendable instance: the prepared value is committed before the first
// request, every request carries it, an unknown outcome leaves the payout
// processing, and one the provider never received is sent again, the same.
func TestProviderPayoutUnknownOutcomeThenResent(t *testing.T) {
	p := newScripted("momo_gh")
	p.submit = func(_ actors.Work, _ actors.Prepared, n int) (actors.ProviderOutcome, error) {
		if n == 1 {
			return actors.ProviderOutcome{}, &actors.RailError{Kind: actors.ErrRailTimeout, Message: "no answer"}
		}
		return actors.ProviderOutcome{RailOutcome: actors.RailOutcome{CheckAfter: time.Millisecond}, ProviderRef: "fin-1"}, nil
	}
	p.status = func(_ actors.Work, _ actors.Prepared, n int) (actors.ProviderOutcome, error) {
		switch n {
		case 1:
			return actors.ProviderOutcome{}, &actors.RailError{Kind: actors.ErrRailNotFound}
		case 2:
			return actors.ProviderOutcome{RailOutcome: actors.RailOutcome{CheckAfter: time.Millisecond}}, nil
		}
		return actors.ProviderOutcome{RailOutcome: actors.RailOutcome{Final: true, Completed: true}, ProviderRef: "fin-1"}, nil
	}
	h := startProvider(t, p)
	id := h.newPayout(t, "p1")
	waitFor(t, "the payout to complete", func() bool { return h.payoutStatus(t, id).Status == ledger.PayoutCompleted })

	in, ok := instructions.Get(h.sys.Reader(), id)
	if !ok || !in.Closed || in.Key != "key-"+id || in.ProviderRef != "fin-1" || in.Provider != "momo_gh" {
		t.Fatalf("instruction: %+v", in)
	}
	if n := p.count("prepare"); n != 1 {
		t.Fatalf("prepared %d times", n)
	}
	for _, c := range p.log() {
		if strings.HasPrefix(c, "submit") && c != "submit "+id+" key-"+id {
			t.Fatalf("a request with another key: %q", c)
		}
	}
	if p.count("submit") != 2 {
		t.Fatalf("calls: %v", p.log())
	}
	if f, _ := instructions.Float(h.sys.Reader(), "momo_gh", "GHS"); f.Total != 10_000 {
		t.Fatalf("float: %+v", f)
	}
}

// A definite rejection fails the payout and refunds it, with the
// provider's words.
func TestProviderPayoutRejected(t *testing.T) {
	p := newScripted("momo_gh")
	p.submit = func(actors.Work, actors.Prepared, int) (actors.ProviderOutcome, error) {
		return actors.ProviderOutcome{}, &actors.RailError{Kind: actors.ErrRailRejected, Message: "payee not found"}
	}
	h := startProvider(t, p)
	id := h.newPayout(t, "p1")
	waitFor(t, "the payout to fail", func() bool { return h.payoutStatus(t, id).Status == ledger.PayoutFailed })
	if got := h.payoutStatus(t, id); got.StatusMessage != "payee not found" {
		t.Fatalf("message %q", got.StatusMessage)
	}
	if h.balance("GHS").Total != 1_000_000 {
		t.Fatal("a rejected payout was not refunded")
	}
}

// A send-once instance: "sent" is committed before the request; after a
// leader change with no answer recorded, the new term never sends again
// and settles by the status. An answer that nothing was done is the only
// one that allows a second request.
func TestSendOnceNeverResentAfterLeaderChange(t *testing.T) {
	p := newScripted("mpesa_ke")
	p.sendOnce = true
	release := make(chan struct{})
	p.submit = func(_ actors.Work, _ actors.Prepared, n int) (actors.ProviderOutcome, error) {
		if n == 1 {
			return actors.ProviderOutcome{}, &actors.RailError{Kind: actors.ErrRailNothingDone, Message: "503"}
		}
		<-release // the leader loses its term while the request is out
		return actors.ProviderOutcome{}, context.Canceled
	}
	h := startProvider(t, p)
	id := h.newPayout(t, "p1")
	waitFor(t, "the second request", func() bool { return p.count("submit") == 2 })
	if in, _ := instructions.Get(h.sys.Reader(), id); !in.Sent || !in.SendOnce {
		t.Fatalf("instruction before the request: %+v", in)
	}
	h.sys.SetLeading(false)
	close(release)
	h.sys.SetLeading(true)
	waitFor(t, "the payout to complete", func() bool { return h.payoutStatus(t, id).Status == ledger.PayoutCompleted })
	if n := p.count("submit"); n != 2 {
		t.Fatalf("%d requests: %v", n, p.log())
	}
	if got := h.payoutStatus(t, id); got.ProcessingAt == 0 {
		t.Fatalf("the resumed payout was not marked processing: %+v", got)
	}
}

// A replacement is committed before it is sent, and a new term restores
// every instruction in flight before it prepares anything.
func TestProviderReplacementAndRestore(t *testing.T) {
	p := newScripted("evm_1")
	hold := make(chan struct{})
	p.status = func(w actors.Work, pr actors.Prepared, n int) (actors.ProviderOutcome, error) {
		switch {
		case pr.Key == "key-"+w.ID():
			return actors.ProviderOutcome{RailOutcome: actors.RailOutcome{CheckAfter: time.Millisecond},
				Replacement: &actors.Prepared{Key: "bumped-" + w.ID(), Payload: []byte("tx2")}}, nil
		case w.Payout.ExternalReference == "p2":
			<-hold
		}
		return actors.ProviderOutcome{RailOutcome: actors.RailOutcome{Final: true, Completed: true}}, nil
	}
	h := startProvider(t, p)
	id := h.newPayout(t, "p1")
	waitFor(t, "the payout to complete", func() bool { return h.payoutStatus(t, id).Status == ledger.PayoutCompleted })
	in, _ := instructions.Get(h.sys.Reader(), id)
	if in.PreparedKey != "bumped-"+id || in.Payload != "tx2" || in.Key != "key-"+id || in.Replacements != 1 {
		t.Fatalf("instruction: %+v", in)
	}
	if p.count("submit "+id+" bumped-"+id) != 1 {
		t.Fatalf("the replacement was not sent once: %v", p.log())
	}

	// An instruction in flight across a term: restored first.
	id2 := h.newPayout(t, "p2")
	waitFor(t, "p2 in flight", func() bool { return p.count("status "+id2) > 1 })
	h.sys.SetLeading(false)
	h.sys.SetLeading(true)
	id3 := h.newPayout(t, "p3")
	waitFor(t, "p3 prepared", func() bool { return p.count("prepare "+id3) == 1 })
	close(hold)
	p.mu.Lock()
	restores := slices.Clone(p.restores)
	p.mu.Unlock()
	last := restores[len(restores)-1]
	if len(last) != 1 || last[0].Key != "bumped-"+id2 {
		t.Fatalf("restored %+v, want p2's replacement", last)
	}
	log := p.log()
	if slices.Index(log, "restore 1") > slices.Index(log, "prepare "+id3) {
		t.Fatalf("prepared before the restore: %v", log)
	}
}

// Callbacks: an authenticated final outcome settles once; a duplicate, or
// one after the end, changes nothing; an unauthenticated one prompts an
// immediate status check.
func TestProviderCallbacks(t *testing.T) {
	p := newScripted("mpesa_ke")
	p.sendOnce = true
	var checked sync.WaitGroup
	checked.Add(1)
	p.status = func(w actors.Work, _ actors.Prepared, n int) (actors.ProviderOutcome, error) {
		if n == 2 {
			checked.Done()
		}
		// Never final by the status: only a callback ends it, and the
		// next check is an hour away unless a callback prompts one.
		return actors.ProviderOutcome{RailOutcome: actors.RailOutcome{CheckAfter: time.Hour}}, nil
	}
	var notify actors.Notification
	var notifyMu sync.Mutex
	p.callback = func(cb actors.Callback) (actors.Notification, error) {
		if string(cb.Body) == "bad" {
			return actors.Notification{}, actors.ErrBadCallback
		}
		notifyMu.Lock()
		defer notifyMu.Unlock()
		return notify, nil
	}
	h := startProvider(t, p)
	id := h.newPayout(t, "p1")
	waitFor(t, "the first status check", func() bool { return p.count("status "+id) == 1 })
	ctx := context.Background()

	if _, err := h.sys.ProviderCallback(ctx, "mpesa_ke", actors.Callback{Body: []byte("bad")}); !errors.Is(err, actors.ErrBadCallback) {
		t.Fatalf("bad callback: %v", err)
	}
	if _, err := h.sys.ProviderCallback(ctx, "nobody", actors.Callback{}); !errors.Is(err, actors.ErrUnknownProvider) {
		t.Fatalf("unknown instance: %v", err)
	}
	notify = actors.Notification{Key: "key-" + id, Outcome: actors.ProviderOutcome{RailOutcome: actors.RailOutcome{Final: true, Completed: true}}}
	r, err := h.sys.ProviderCallback(ctx, "mpesa_ke", actors.Callback{})
	if err != nil || !r.Checked || r.Settled || r.ID != id {
		t.Fatalf("unauthenticated: %+v %v", r, err)
	}
	checked.Wait() // the prompt, not the hour
	if h.payoutStatus(t, id).Status.Terminal() {
		t.Fatal("an unauthenticated callback settled the payout")
	}

	notify.Authenticated = true
	notify.Outcome.ProviderRef = "UAB123"
	for i, want := range []bool{true, false, false} {
		r, err := h.sys.ProviderCallback(ctx, "mpesa_ke", actors.Callback{})
		if err != nil || r.Settled != want {
			t.Fatalf("authenticated callback %d: %+v %v", i, r, err)
		}
	}
	got := h.payoutStatus(t, id)
	if got.Status != ledger.PayoutCompleted {
		t.Fatalf("payout: %+v", got)
	}
	if in, _ := instructions.Get(h.sys.Reader(), id); !in.Closed || in.ProviderRef != "UAB123" {
		t.Fatalf("instruction: %+v", in)
	}
	if n := p.count("submit"); n != 1 {
		t.Fatalf("%d requests", n)
	}
	unknown := notify
	unknown.Key = "someone-else"
	if r, err := h.sys.ProviderCallback(ctx, "mpesa_ke", actors.Callback{}); err != nil || r.ID != id {
		t.Fatalf("late callback: %+v %v", r, err)
	}
	notifyMu.Lock()
	notify = unknown
	notifyMu.Unlock()
	if r, err := h.sys.ProviderCallback(ctx, "mpesa_ke", actors.Callback{}); err != nil || r.ID != "" {
		t.Fatalf("a callback naming nothing of ours: %+v %v", r, err)
	}
	if err := h.sys.Reader().Check(); err != nil {
		t.Fatal(err)
	}
}

// A collection through a re-sendable instance completes once and credits
// the balance from the instance's float.
func TestProviderCollection(t *testing.T) {
	p := newScripted("momo_gh")
	h := startProvider(t, p)
	r := h.sys.CreateCollection(actors.CollectionRequest{
		OrgID: h.org, ExternalReference: "c1", MethodType: ledger.MethodMobileMoney,
		Spec: ledger.CollectionSpec{Currency: "GHS", Amount: 5_000, Method: "gh_mtn", PayerNumber: "233559630374"},
	})
	if r.Err != nil || r.Result.Err != nil {
		t.Fatal(r.Err, r.Result.Err)
	}
	id := r.Result.Collection.ID
	waitFor(t, "the collection to complete", func() bool {
		c, _ := h.sys.Reader().Collection(id)
		return c.Status == ledger.CollectionCompleted
	})
	if f, _ := instructions.Float(h.sys.Reader(), "momo_gh", "GHS"); f.Total != -5_000 {
		t.Fatalf("float: %+v", f)
	}
	if in, _ := instructions.Get(h.sys.Reader(), id); !in.Closed || !in.Collection {
		t.Fatalf("instruction: %+v", in)
	}
}

// The deposit watcher commits each poll with its cursor: a transfer is
// pending when first seen, credited once when confirmed, and a new term
// resumes from the committed cursor and learns the allocated indexes.
func TestDepositWatcher(t *testing.T) {
	p := newScripted("evm_1")
	// The chain sees the transfer only once the address is handed out,
	// that is after its record commits: a transfer the feed reports to an
	// address not yet recorded is not ours, and is passed over for good.
	var handedOut atomic.Bool
	p.feed = func(cursor []byte) ([]actors.FeedDeposit, []byte, error) {
		if !handedOut.Load() {
			return nil, cursor, nil
		}
		dep := actors.FeedDeposit{Identity: "ethereum:0xt:0", Method: "usdc_ethereum", Chain: "ethereum", Currency: "USDC",
			Amount: 2_500_000, To: "0xDEP0", Hash: "0xt", Required: 2}
		switch string(cursor) {
		case "":
			dep.Confirmations = 1
			return []actors.FeedDeposit{dep}, []byte("c1"), nil
		case "c1":
			dep.Confirmations = 2
			return []actors.FeedDeposit{dep, dep}, []byte("c2"), nil
		}
		return nil, cursor, nil
	}
	h := startWith(t, actors.Config{Providers: oneProvider{p}, DepositPollInterval: 10 * time.Millisecond})
	ctx := context.Background()
	addr, _, err := h.sys.ProvisionDeposit(ctx, "addr_1", "gh_mtn", "USDC")
	if err != nil || addr != "0xDEP0" {
		t.Fatalf("provision: %q %v", addr, err)
	}
	r := h.sys.Propose(ctx, &deposits.CreateCryptoAddress{At: time.Now().UnixMilli(), ID: "addr_1", OrgID: h.org, Currency: "USDC", Chain: "ethereum", Address: addr})
	if r.Err != nil || r.Result.Err != nil {
		t.Fatal(r.Err, r.Result.Err)
	}
	handedOut.Store(true)
	waitFor(t, "the deposit to be credited", func() bool { return h.balance("USDC").Total == 2_500_000 })
	d, ok := deposits.ByReference(h.sys.Reader(), h.org, "ethereum:0xt:0")
	if !ok {
		t.Fatal("no deposit")
	}
	c, _ := h.sys.Reader().Collection(d.CollectionID)
	if c.Status != ledger.CollectionCompleted || c.Deposit.SourceReference != "0xt" {
		t.Fatalf("collection: %+v", c)
	}
	// An earlier term may have noted the indexes too (a term that began
	// after the first poll committed): only the new term's note counts.
	p.mu.Lock()
	notedBefore := len(p.noted)
	p.mu.Unlock()
	h.sys.SetLeading(false)
	h.sys.SetLeading(true)
	waitFor(t, "a poll of the new term", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.noted) > notedBefore && p.cursors[len(p.cursors)-1] == "c2"
	})
	p.mu.Lock()
	noted := slices.Clone(p.noted[notedBefore:])
	p.mu.Unlock()
	if noted[0] != 1 {
		t.Fatalf("the new term noted %v indexes", noted)
	}
	if h.balance("USDC").Total != 2_500_000 {
		t.Fatal("credited twice")
	}
	if st, _ := deposits.ProviderState(h.sys.Reader(), "evm_1"); st.DepositCursor != "c2" || st.DepositIndexes != 1 {
		t.Fatalf("provider state: %+v", st)
	}
}
