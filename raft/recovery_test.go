package raft

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/go-hclog"
	hraft "github.com/hashicorp/raft"

	"payments/actors/actorstest/testkit"
	"payments/ledger"
	"payments/wal"
)

var replaySeed = flag.Uint64("raft.seed", 0, "seed for the crash and replay test (0: several fixed seeds)")

// replayGen draws ledger commands as the property test in package ledger
// does, biased towards collisions (reused references, payouts past the
// balance, settling twice) so that replies and history depend on order.
type replayGen struct {
	rng     *rand.Rand
	at      int64
	n       int
	orgs    []string
	payouts []string
	colls   []string
	sent    []ledger.Command // earlier creates, to retry
}

var replayCurrencies = []string{"GHS", "KES"}

func (g *replayGen) id(prefix string) string {
	g.n++
	return fmt.Sprintf("%s%08d", prefix, g.n)
}

func (g *replayGen) org() string { return g.orgs[g.rng.IntN(len(g.orgs))] }

func (g *replayGen) next() ledger.Command {
	c := g.draw()
	switch c.(type) {
	case *ledger.CreatePayout, *ledger.FundBalance, *ledger.CreateCollection:
		g.sent = append(g.sent, c)
	}
	return c
}

func (g *replayGen) draw() ledger.Command {
	g.at += int64(g.rng.IntN(1000))
	if len(g.sent) > 0 && g.rng.IntN(12) == 0 { // a client's retry
		switch c := g.sent[g.rng.IntN(len(g.sent))].(type) {
		case *ledger.CreatePayout:
			again := *c
			again.At, again.ID = g.at, g.id("pay_")
			g.payouts = append(g.payouts, again.ID)
			return &again
		case *ledger.FundBalance:
			again := *c
			again.At = g.at
			return &again
		case *ledger.CreateCollection:
			again := *c
			again.At, again.ID = g.at, g.id("col_")
			g.colls = append(g.colls, again.ID)
			return &again
		}
	}
	if len(g.orgs) == 0 || g.rng.IntN(60) == 0 {
		id := g.id("org_")
		g.orgs = append(g.orgs, id)
		hash := sha256.Sum256([]byte(id))
		return &ledger.CreateOrganization{
			At: g.at, ID: id, Name: "Org " + id, Country: "GH", Timezone: "Africa/Accra", DefaultCurrency: "GHS",
			Key: ledger.CreateAPIKey{At: g.at, ID: g.id("key_"), OrgID: id, Name: "first", Hash: string(hash[:]), Scopes: ledger.ScopesMerchant},
		}
	}
	cur := replayCurrencies[g.rng.IntN(len(replayCurrencies))]
	ref := fmt.Sprintf("ref-%d", g.rng.IntN(60))
	switch r := g.rng.IntN(100); {
	case r < 20:
		return &ledger.FundBalance{At: g.at, OrgID: g.org(), Currency: cur, Amount: ledger.Minor(1 + g.rng.IntN(100_000)), ExternalReference: ref}
	case r < 55:
		amount := ledger.Minor(1 + g.rng.IntN(20_000))
		methodType := []ledger.MethodType{ledger.MethodMobileMoney, ledger.MethodBankTransfer}[g.rng.IntN(2)]
		id := g.id("pay_")
		g.payouts = append(g.payouts, id)
		return &ledger.CreatePayout{
			At: g.at, ID: id, OrgID: g.org(), ExternalReference: ref,
			Spec: ledger.PayoutSpec{
				Currency: cur, Amount: amount, AmountSide: ledger.SideTo, Method: "gh_mtn",
				AccountNumber: fmt.Sprintf("2335%d", g.rng.IntN(3)),
			},
			MethodType: methodType, Fee: testPayoutFees[methodType].Fee(amount), Reservation: uint64(g.n),
		}
	case r < 67 && len(g.payouts) > 0:
		return &ledger.MarkPayoutProcessing{At: g.at, ID: g.payouts[g.rng.IntN(len(g.payouts))], ProviderReference: "prv"}
	case r < 85 && len(g.payouts) > 0:
		return &ledger.SettlePayout{At: g.at, ID: g.payouts[g.rng.IntN(len(g.payouts))], Completed: g.rng.IntN(3) > 0, Message: "done"}
	case r < 93:
		amount := ledger.Minor(1 + g.rng.IntN(50_000))
		id := g.id("col_")
		g.colls = append(g.colls, id)
		return &ledger.CreateCollection{
			At: g.at, ID: id, OrgID: g.org(), ExternalReference: ref,
			Spec:       ledger.CollectionSpec{Currency: cur, Amount: amount, Method: "gh_mtn", PayerNumber: "23350"},
			MethodType: ledger.MethodMobileMoney, Fee: ledger.FeeSchedule{BasisPoints: 150}.Fee(amount),
		}
	case len(g.colls) > 0:
		return &ledger.SettleCollection{At: g.at, ID: g.colls[g.rng.IntN(len(g.colls))], Completed: g.rng.IntN(4) > 0}
	default:
		return &ledger.SettlePayout{At: g.at, ID: "pay_missing", Completed: true}
	}
}

// replayLog returns a Raft log of n entries: mostly batches of one to
// eight commands, now and then a configuration entry, which the FSM skips.
func replayLog(seed uint64, n int) []*hraft.Log {
	g := &replayGen{rng: rand.New(rand.NewPCG(seed, 1))}
	log := make([]*hraft.Log, n)
	for i := range log {
		l := &hraft.Log{Index: uint64(i + 1), Term: 1, Type: hraft.LogCommand}
		if i > 0 && g.rng.IntN(40) == 0 {
			l.Type, l.Data = hraft.LogConfiguration, []byte("not a ledger batch")
		} else {
			cmds := make([]ledger.Command, 1+g.rng.IntN(8))
			for j := range cmds {
				cmds[j] = g.next()
			}
			l.Data = ledger.EncodeBatch(nil, cmds)
		}
		log[i] = l
	}
	return log
}

// replayRef is a run that never crashed: each entry applied in a batch of
// its own, with a view of the state store kept at every index.
type replayRef struct {
	store   *wal.StateStore
	views   []*wal.StateSnapshot // by index; views[0] is the empty store
	results [][]ledger.Result    // by index
}

func runReference(t *testing.T, log []*hraft.Log) *replayRef {
	t.Helper()
	store, err := wal.OpenState("ref", wal.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	r := &replayRef{store: store, results: make([][]ledger.Result, len(log)+1)}
	t.Cleanup(func() {
		if t.Failed() {
			return // see applyBatch
		}
		for _, v := range r.views {
			v.Close()
		}
		store.Close()
	})
	f, err := newFSM(store)
	if err != nil {
		t.Fatal(err)
	}
	r.view(t)
	for _, l := range log {
		res := applyBatch(t, f, []*hraft.Log{l})
		if l.Type == hraft.LogCommand {
			r.results[l.Index] = res[0].([]ledger.Result)
		}
		r.view(t)
	}
	if err := ledger.Check(f.kv); err != nil {
		t.Fatalf("the reference run breaks the ledger's invariants: %v", err)
	}
	sum, at, err := store.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if at != uint64(len(log)) || sum != r.digestAt(t, at) {
		t.Fatal("test bug: digestAt disagrees with StateStore.Digest")
	}
	return r
}

func (r *replayRef) view(t *testing.T) {
	sn, err := r.store.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	if sn.Applied() != uint64(len(r.views)) {
		t.Fatalf("test bug: view at %d, want %d", sn.Applied(), len(r.views))
	}
	r.views = append(r.views, sn)
}

// digestAt is StateStore.Digest of the reference store at index.
func (r *replayRef) digestAt(t *testing.T, index uint64) [32]byte {
	t.Helper()
	it, err := r.views[index].NewIter([]byte{0x01}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	h := sha256.New()
	for ok := it.First(); ok; ok = it.Next() {
		h.Write(binary.AppendUvarint(nil, uint64(len(it.Key()))))
		h.Write(it.Key())
		h.Write(binary.AppendUvarint(nil, uint64(len(it.Value()))))
		h.Write(it.Value())
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// dumpAt is the dump a leader at index would send.
func (r *replayRef) dumpAt(t *testing.T, index uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := r.views[index].WriteDump(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// applyBatch is f.ApplyBatch, with its panic (the node would stop) turned
// into the test's failure, and then the wait for its commit to the state
// store that a node makes before it answers. A panic leaves the batch's
// reader open, so a failed test leaves its stores open too: their Close
// would wait for it.
func applyBatch(t *testing.T, f *fsm, logs []*hraft.Log) (res []interface{}) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("ApplyBatch of entries %d-%d: %v", logs[0].Index, logs[len(logs)-1].Index, r)
		}
	}()
	res = f.ApplyBatch(logs)
	f.waitIdle()
	return res
}

// snapshotFile is a snapshot Raft holds: a reference Persist wrote, or a
// dump received from a leader.
type snapshotFile struct {
	index uint64
	data  []byte
}

// memSink is a SnapshotSink that keeps what Persist writes.
type memSink struct {
	bytes.Buffer
	closed, cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }
func (s *memSink) Close() error  { s.closed = true; return nil }

// replayNode is the FSM of one node over a state store on a crashable file
// system, with what its snapshot store durably holds.
type replayNode struct {
	t       *testing.T
	rng     *rand.Rand // what happens when: the same for a seed on every run
	loss    *rand.Rand // what a crash clone keeps, which also depends on timing
	ref     *replayRef
	log     []*hraft.Log
	fs      *vfs.MemFS
	store   *wal.StateStore
	f       *fsm
	snaps   []snapshotFile // durable, oldest first
	crashes int
	ahead   int // crashes after which the store was ahead of the latest snapshot
}

// replayMemTableBytes is small, so that memtables also flush on their own
// between the snapshots' Syncs (the "after a flush" crashes make sure of
// one such flush a run).
const replayMemTableBytes = 64 << 10

func (n *replayNode) open(fs *vfs.MemFS) *wal.StateStore {
	n.t.Helper()
	store, err := wal.OpenState("state", wal.Options{FS: fs, MemTableBytes: replayMemTableBytes})
	if err != nil {
		n.t.Fatalf("open the state store: %v", err)
	}
	n.t.Cleanup(func() {
		if !n.t.Failed() { // see applyBatch
			store.Close()
		}
	})
	return store
}

// lastSnapshot is the index of the latest durable snapshot: where Raft
// starts applying the log after a restart.
func (n *replayNode) lastSnapshot() uint64 {
	if len(n.snaps) == 0 {
		return 0
	}
	return n.snaps[len(n.snaps)-1].index
}

// apply applies log entries [from, to] in batches of random length, as
// Raft hands them to the FSM, and checks every fresh reply against the
// reference run's.
func (n *replayNode) apply(from, to uint64) {
	n.t.Helper()
	for from <= to {
		end := min(to, from+uint64(n.rng.IntN(6)))
		batch := n.log[from-1 : end]
		before := n.f.applied
		res := applyBatch(n.t, n.f, batch)
		for i, l := range batch {
			switch {
			case l.Index <= before || l.Type != hraft.LogCommand:
				if res[i] != nil {
					n.t.Fatalf("entry %d, applied already or not a command, has a reply: %v", l.Index, res[i])
				}
			case !reflect.DeepEqual(res[i], n.ref.results[l.Index]):
				n.t.Fatalf("entry %d's reply after %d crashes differs from the run that never crashed:\n got %+v\nwant %+v",
					l.Index, n.crashes, res[i], n.ref.results[l.Index])
			}
		}
		if want := max(before, end); n.f.applied != want || n.store.Applied() != want {
			n.t.Fatalf("after entries to %d: fsm at %d, store at %d; want %d", end, n.f.applied, n.store.Applied(), want)
		}
		from = end + 1
	}
}

// assertAt checks that the store holds the reference state at its index.
func (n *replayNode) assertAt(store *wal.StateStore, what string) {
	n.t.Helper()
	sum, at, err := store.Digest()
	if err != nil {
		n.t.Fatal(err)
	}
	if sum != n.ref.digestAt(n.t, at) {
		n.t.Fatalf("%s: the state at index %d differs from that of the run that never crashed", what, at)
	}
}

// snapshot takes a snapshot as Raft does: Snapshot on the FSM goroutine,
// Persist beside it. The crash, if any, falls before Persist, while it
// runs, or after it returned.
func (n *replayNode) snapshot(crash int) {
	n.t.Helper()
	s, err := n.f.Snapshot()
	if err != nil {
		n.t.Fatal(err)
	}
	index := s.(*fsmSnapshot).applied
	sink := &memSink{}
	switch crash {
	case 0: // no crash
	case 1: // before Persist: its Sync has not begun
		n.crash("between Snapshot and its Persist", index)
		return
	case 2: // while Persist syncs: the reference is not written yet
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Persist(sink); err != nil {
				n.t.Error(err)
			}
		}()
		clone := n.fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: n.loss.IntN(101), RNG: n.loss})
		wg.Wait()
		n.recover(clone, "while Persist synced", index)
		return
	}
	if err := s.Persist(sink); err != nil {
		n.t.Fatal(err)
	}
	if !sink.closed || sink.cancelled {
		n.t.Fatal("Persist did not close its sink")
	}
	n.snaps = append(n.snaps, snapshotFile{index: index, data: bytes.Clone(sink.Bytes())})
	if crash == 3 {
		n.crash("after Persist", index)
	}
}

// crash takes a crash clone now and recovers from it.
func (n *replayNode) crash(what string, upTo uint64) {
	n.t.Helper()
	n.recover(n.fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: n.loss.IntN(101), RNG: n.loss}), what, upTo)
}

// recover restarts the node on a crash clone as Node.start does —
// recoverState with the snapshots that were durable, newFSM — and applies
// the log again from the latest snapshot to upTo, the index the node had
// applied when it crashed.
func (n *replayNode) recover(clone *vfs.MemFS, what string, upTo uint64) {
	n.t.Helper()
	n.crashes++
	what = fmt.Sprintf("crash %d (%s, at %d)", n.crashes, what, upTo)
	n.store.Close()
	n.fs = clone
	n.store = n.open(clone)

	files := n.snapshotStore()
	node := &Node{state: n.store, logger: slog.New(slog.DiscardHandler)}
	if err := node.recoverState(files); err != nil {
		n.t.Fatalf("%s: recoverState: %v", what, err)
	}
	if restoring, err := n.store.Restoring(); err != nil || restoring {
		n.t.Fatalf("%s: restoring = %v, %v after recoverState", what, restoring, err)
	}
	at := n.store.Applied()
	if at < n.lastSnapshot() || at > upTo {
		n.t.Fatalf("%s: the store came back at %d, outside [latest snapshot %d, applied %d]", what, at, n.lastSnapshot(), upTo)
	}
	if at > n.lastSnapshot() {
		n.ahead++ // the store flushed past the snapshot: replay skips entries
	}
	n.assertAt(n.store, what)
	f, err := newFSM(n.store)
	if err != nil {
		n.t.Fatalf("%s: %v", what, err)
	}
	n.f = f
	n.apply(n.lastSnapshot()+1, upTo)
	n.assertAt(n.store, what+", replayed")
}

// snapshotStore writes the durable snapshots to a file snapshot store, as
// the node's data directory holds them.
func (n *replayNode) snapshotStore() *hraft.FileSnapshotStore {
	n.t.Helper()
	files, err := hraft.NewFileSnapshotStoreWithLogger(n.t.TempDir(), 2, hclog.NewNullLogger())
	if err != nil {
		n.t.Fatal(err)
	}
	for _, s := range n.snaps[max(0, len(n.snaps)-2):] {
		sink, err := files.Create(1, s.index, 1, hraft.Configuration{}, 1, nil)
		if err != nil {
			n.t.Fatal(err)
		}
		if _, err := sink.Write(s.data); err != nil {
			n.t.Fatal(err)
		}
		if err := sink.Close(); err != nil {
			n.t.Fatal(err)
		}
	}
	return files
}

// install receives a snapshot from a leader at index: the dump is durable
// in the snapshot store before the FSM restores it, as in hashicorp's
// installSnapshot. With crashAt > 0 the node crashes while Restore reads
// piece crashAt of the dump.
func (n *replayNode) install(index uint64, crashAt int) {
	n.t.Helper()
	dump := n.ref.dumpAt(n.t, index)
	n.snaps = append(n.snaps, snapshotFile{index: index, data: dump})
	r := &crashingReader{r: bytes.NewReader(dump), fs: n.fs, at: crashAt, rng: n.loss}
	if err := n.f.Restore(io.NopCloser(r)); err != nil {
		n.t.Fatal(err)
	}
	if n.f.applied != index || n.store.Applied() != index {
		n.t.Fatalf("after restoring a dump at %d: fsm at %d, store at %d", index, n.f.applied, n.store.Applied())
	}
	n.assertAt(n.store, "after a restore")
	if crashAt > 0 {
		if r.crashed == nil {
			n.t.Fatalf("test bug: Restore never read piece %d", crashAt)
		}
		n.recover(r.crashed, fmt.Sprintf("during a restore, piece %d", crashAt), index)
	}
}

// crashingReader hands Restore its dump in small pieces and takes a crash
// clone of fs when Restore asks for piece number at.
type crashingReader struct {
	r       io.Reader
	fs      *vfs.MemFS
	rng     *rand.Rand
	at, n   int
	crashed *vfs.MemFS
}

func (c *crashingReader) Read(p []byte) (int, error) {
	c.n++
	if c.n == c.at {
		c.crashed = c.fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: c.rng.IntN(101), RNG: c.rng})
	}
	return c.r.Read(p[:min(len(p), 4<<10)])
}

// TestCrashAndReplay drives the FSM through a generated log, crashing its
// state store's file system at random points — between batches, between a
// snapshot and its Persist, while Persist syncs, after it, while a received
// snapshot is restored — and restarting as a node does: recoverState, then
// the log again from the latest snapshot. The state must always come back
// to what a run that never crashed had at the same index, every reply must
// be the same, and the ledger's invariants must hold.
func TestCrashAndReplay(t *testing.T) {
	t.Parallel()
	seeds := []uint64{1, 2, 3}
	if *replaySeed != 0 {
		seeds = []uint64{*replaySeed}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			t.Parallel()
			defer func() {
				if t.Failed() {
					t.Logf("reproduce with: go test ./raft -run 'TestCrashAndReplay/seed=%d$' (or -raft.seed=%d)", seed, seed)
				}
			}()
			runCrashAndReplay(t, seed, 300)
		})
	}
}

func runCrashAndReplay(t *testing.T, seed uint64, entries int) {
	log := replayLog(seed, entries)
	ref := runReference(t, log)
	n := &replayNode{
		t: t, rng: rand.New(rand.NewPCG(seed, 2)), loss: rand.New(rand.NewPCG(seed, 3)),
		ref: ref, log: log, fs: vfs.NewCrashableMem(),
	}
	n.store = n.open(n.fs)
	f, err := newFSM(n.store)
	if err != nil {
		t.Fatal(err)
	}
	n.f = f
	last := uint64(entries)
	installed := 0
	crashKinds := []string{"between batches", "after a flush", "between Snapshot and its Persist", "while Persist synced", "after Persist"}
	crashed := 0
	kinds := map[string]int{}
	for n.f.applied < last {
		// Once or twice a run the node lags and receives a leader's dump
		// from further on, as a follower whose log the leader truncated.
		if installed < 2 && n.f.applied > last/4*uint64(installed+1) && n.rng.IntN(10) == 0 {
			index := min(last, n.f.applied+1+uint64(n.rng.IntN(40)))
			crashAt := 0
			if installed == 0 || n.rng.IntN(2) == 0 {
				// Piece 1 is read before Restore changes the store, the
				// later ones after it marked the store restoring.
				crashAt = 1 + n.rng.IntN(4)
				kinds["during a restore"]++
			}
			n.install(index, crashAt)
			installed++
			continue
		}
		end := min(last, n.f.applied+1+uint64(n.rng.IntN(6)))
		n.apply(n.f.applied+1, end)
		switch r := n.rng.IntN(100); {
		case r < 8:
			n.snapshot(0)
		case r < 20:
			// The rng picks when; the kinds take turns, so that a run
			// crashes at each.
			kind := crashKinds[crashed%len(crashKinds)]
			crashed++
			kinds[kind]++
			switch kind {
			case "between batches":
				n.crash(kind, n.f.applied)
			case "after a flush":
				// A memtable flushed on its own, no snapshot: the store
				// is ahead of the latest snapshot, and the replay after
				// the crash starts behind the store's index.
				if err := n.store.Sync(); err != nil {
					t.Fatal(err)
				}
				n.apply(n.f.applied+1, min(last, n.f.applied+1+uint64(n.rng.IntN(6))))
				n.crash(kind, n.f.applied)
			case "between Snapshot and its Persist":
				n.snapshot(1)
			case "while Persist synced":
				n.snapshot(2)
			case "after Persist":
				n.snapshot(3)
			}
		}
	}
	n.assertAt(n.store, "at the end")
	if sum, _, _ := n.store.Digest(); sum != ref.digestAt(t, last) {
		t.Fatal("the final state differs from the run that never crashed")
	}
	if err := ledger.Check(n.f.kv); err != nil {
		t.Fatalf("after %d crashes: %v", n.crashes, err)
	}
	// A last restart, from the store as it is, to the end of the log.
	n.crash("at the end", last)
	if err := ledger.Check(n.f.kv); err != nil {
		t.Fatalf("after the last restart: %v", err)
	}
	t.Logf("%d crashes, %d with the store ahead of the snapshot: %v", n.crashes, n.ahead, kinds)
	if crashed < len(crashKinds) || n.ahead == 0 || kinds["during a restore"] == 0 {
		t.Errorf("only %d crashes (%v): the run proves less than it claims", n.crashes, kinds)
	}
}

// TestRecoverState covers each way Node.recoverState finds a state store
// and its snapshots.
func TestRecoverState(t *testing.T) {
	t.Parallel()
	log := replayLog(7, 60)
	ref := runReference(t, log)
	dump := ref.dumpAt(t, 40)
	for _, tt := range []struct {
		name      string
		applied   uint64 // the store's index; 0 for an empty store
		restoring bool   // a restore of dump was cut short
		snaps     []snapshotFile
		want      uint64 // the store's index after; 0 with wantErr
		wantErr   string
	}{
		{name: "a new node", want: 0},
		{name: "at its own snapshot", applied: 30, snaps: []snapshotFile{{30, encodeRef(30)}}, want: 30},
		{name: "past its own snapshot", applied: 50, snaps: []snapshotFile{{30, encodeRef(30)}}, want: 50},
		{name: "its own snapshot, past entries it never applied", applied: 30, snaps: []snapshotFile{{32, encodeRef(30)}}, want: 30},
		{name: "a received snapshot, past entries it never applied", applied: 40, snaps: []snapshotFile{{42, dump}}, want: 40},
		{name: "a restore cut short, then its own snapshot", restoring: true, applied: 20, snaps: []snapshotFile{{30, encodeRef(30)}},
			wantErr: "this node's own"},
		{name: "behind its own snapshot", applied: 20, snaps: []snapshotFile{{30, encodeRef(30)}},
			wantErr: "behind the snapshot at 30 that this node took"},
		{name: "behind a received snapshot", applied: 20, snaps: []snapshotFile{{10, encodeRef(10)}, {40, dump}}, want: 40},
		{name: "empty, a received snapshot", snaps: []snapshotFile{{40, dump}}, want: 40},
		{name: "past a received snapshot", applied: 50, snaps: []snapshotFile{{40, dump}}, want: 50},
		{name: "a restore cut short", restoring: true, applied: 20, snaps: []snapshotFile{{10, encodeRef(10)}, {40, dump}}, want: 40},
		{name: "a restore cut short, no snapshot left", restoring: true, applied: 20,
			wantErr: "no snapshot is left"},
		{name: "a snapshot of an unknown format", applied: 20, snaps: []snapshotFile{{40, []byte("PAYSTORE1…")}},
			wantErr: "format this version does not read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := vfs.NewCrashableMem()
			store, err := wal.OpenState("state", wal.Options{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { store.Close() }()
			if tt.applied > 0 {
				if _, err := store.Restore(bytes.NewReader(ref.dumpAt(t, tt.applied))); err != nil {
					t.Fatal(err)
				}
			}
			if tt.restoring {
				// Half a dump: the restore stops with the marker set.
				if _, err := store.Restore(bytes.NewReader(dump[:len(dump)/2])); err == nil {
					t.Fatal("test bug: half a dump restored")
				}
			}
			n := &replayNode{t: t, snaps: tt.snaps}
			node := &Node{state: store, logger: slog.New(slog.DiscardHandler)}
			err = node.recoverState(n.snapshotStore())
			if testkit.WantErr(t, err, tt.wantErr) {
				return
			}
			if restoring, err := store.Restoring(); err != nil || restoring {
				t.Fatalf("restoring = %v, %v", restoring, err)
			}
			if store.Applied() != tt.want {
				t.Fatalf("store at %d after recoverState, want %d", store.Applied(), tt.want)
			}
			sum, _, err := store.Digest()
			if err != nil {
				t.Fatal(err)
			}
			if sum != ref.digestAt(t, tt.want) {
				t.Fatal("state after recoverState differs from the reference at its index")
			}
			// It is durable: a crash now comes back to the same.
			store.Close()
			store, err = wal.OpenState("state", wal.Options{FS: fs.CrashClone(vfs.CrashCloneCfg{})})
			if err != nil {
				t.Fatal(err)
			}
			if store.Applied() != tt.want {
				t.Fatalf("after a crash: store at %d, want %d", store.Applied(), tt.want)
			}
		})
	}
}

// testPayoutFees are the catalogue's payout fee schedules (rails), by
// method type.
var testPayoutFees = map[ledger.MethodType]ledger.FeeSchedule{
	ledger.MethodMobileMoney: {BasisPoints: 100}, ledger.MethodBankTransfer: {BasisPoints: 50},
}
