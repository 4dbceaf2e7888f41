package raft_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	hraft "github.com/hashicorp/raft"

	"payments/actors"
	"payments/actors/actorstest/wait"
	"payments/ledger"
	"payments/raft"
	"payments/wal"
)

// pollInterval is how often the tests check a condition they wait for.
const pollInterval = 5 * time.Millisecond

// fastTiming makes elections on loopback take tens of milliseconds.
func fastTiming(c raft.Config) raft.Config {
	c.HeartbeatTimeout = 100 * time.Millisecond
	c.ElectionTimeout = 100 * time.Millisecond
	c.LeaderLeaseTimeout = 100 * time.Millisecond
	return c
}

// listeners binds n loopback ports for Raft transports; they stay bound, so
// parallel test runs cannot take them.
func listeners(t *testing.T, n int) []net.Listener {
	t.Helper()
	var lns []net.Listener
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
	}
	return lns
}

type cluster struct {
	t     *testing.T
	cfgs  []raft.Config
	nodes []*raft.Node // nil when stopped
}

func newCluster(t *testing.T, n int) *cluster {
	t.Helper()
	lns := listeners(t, n)
	var peers []raft.Peer
	for i, ln := range lns {
		peers = append(peers, raft.Peer{ID: fmt.Sprintf("n%d", i+1), RaftAddr: ln.Addr().String()})
	}
	c := &cluster{t: t}
	for i := range lns {
		c.cfgs = append(c.cfgs, fastTiming(raft.Config{
			ID: peers[i].ID, DataDir: t.TempDir(), RaftAddr: peers[i].RaftAddr, Listener: lns[i], Peers: peers,
			Bootstrap:         true,
			SnapshotThreshold: 64, TrailingLogs: 32,
		}))
	}
	c.nodes = make([]*raft.Node, n)
	for i := range c.cfgs {
		c.start(i)
	}
	t.Cleanup(func() {
		for i := range c.nodes {
			c.stop(i)
		}
	})
	return c
}

func (c *cluster) start(i int) {
	c.t.Helper()
	n, err := raft.Open(c.cfgs[i])
	c.cfgs[i].Listener = nil // closed with the node; a restart binds RaftAddr again
	if err != nil {
		c.t.Fatalf("start %s: %v", c.cfgs[i].ID, err)
	}
	c.nodes[i] = n
}

func (c *cluster) stop(i int) {
	if c.nodes[i] != nil {
		c.nodes[i].Close()
		c.nodes[i] = nil
	}
}

// leader waits for a node that leads and has caught up.
func (c *cluster) leader() (int, *raft.Node) {
	c.t.Helper()
	if i, n := c.awaitLeader(); n != nil {
		return i, n
	}
	c.t.Fatal("no leader within 15s")
	return -1, nil
}

// awaitLeader waits up to 15 s for a node to lead; nil when none does. It
// does not stop the test, so writer goroutines may call it.
func (c *cluster) awaitLeader() (int, *raft.Node) {
	i, n := -1, (*raft.Node)(nil)
	wait.Until(15*time.Second, pollInterval, func() bool {
		for j, m := range c.nodes {
			if m != nil && m.IsLeader() {
				i, n = j, m
				return true
			}
		}
		return false
	})
	return i, n
}

// apply commits one batch through node n and returns its results.
func apply(n *raft.Node, cmds ...ledger.Command) ([]ledger.Result, error) {
	return n.Append(ledger.EncodeBatch(nil, cmds)).Wait()
}

// stateBytes is the digest of the node's state store: equal digests at
// the same applied index, equal state.
func stateBytes(t *testing.T, n *raft.Node) []byte {
	t.Helper()
	sum, _, err := n.StateDigest()
	if err != nil {
		t.Fatal(err)
	}
	return sum[:]
}

// waitApplied waits until every running node has applied index.
func (c *cluster) waitApplied(index uint64) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, n := range c.nodes {
		if n != nil {
			if err := n.WaitApplied(ctx, index); err != nil {
				c.t.Fatalf("nodes did not apply index %d: %v", index, err)
			}
		}
	}
}

func org(id string) *ledger.CreateOrganization {
	return &ledger.CreateOrganization{
		At: 1, ID: id, Name: id,
		Key: ledger.CreateAPIKey{At: 1, ID: "key_" + id[4:], OrgID: id, Hash: actors.HashKey("sk_test_" + id), Scopes: ledger.ScopesMerchant},
	}
}

func payout(id, ref string, amount ledger.Minor) *ledger.CreatePayout {
	return &ledger.CreatePayout{
		At: 2, ID: id, OrgID: "org_a", ExternalReference: ref,
		Spec:       ledger.PayoutSpec{Currency: "GHS", Amount: amount, AmountSide: ledger.SideTo, Method: "gh_mtn", AccountNumber: "233241234567"},
		MethodType: ledger.MethodMobileMoney, Fee: ledger.FeeSchedule{BasisPoints: 100}.Fee(amount),
	}
}

// Writes through the leader are applied identically on all three nodes;
// killing the leader elects a new one that serves every acknowledged write,
// and the old leader, back, catches up to the same state.
func TestThreeNodeCluster(t *testing.T) {
	c := newCluster(t, 3)
	li, l := c.leader()
	if _, err := apply(l, org("org_a"), &ledger.FundBalance{At: 1, OrgID: "org_a", Currency: "GHS", Amount: 100_000_000, ExternalReference: "seed"}); err != nil {
		t.Fatal(err)
	}

	// Concurrent writers through the leader; remember what was acknowledged.
	// With retry, a write refused because leadership moved (a starved
	// machine can miss a heartbeat) is sent again, same reference, through
	// the leader of the moment: it is applied once whichever attempt lands.
	var mu sync.Mutex
	acked := map[string]string{} // reference → payout id
	write := func(n *raft.Node, from, to int, retry bool) {
		writeConcurrently(from, to, func(i int) {
			ref := fmt.Sprintf("ref-%d", i)
			id := fmt.Sprintf("pay_ghs_%020d", i)
			res, err := apply(n, payout(id, ref, ledger.Minor(100+i)))
			for try := 0; err != nil && retry && try < 5; try++ {
				if _, leader := c.awaitLeader(); leader != nil {
					res, err = apply(leader, payout(id, ref, ledger.Minor(100+i)))
				}
			}
			if err != nil {
				return // not acknowledged: the outcome is the log's to decide
			}
			if res[0].Err != nil {
				t.Errorf("payout %s: %v", ref, res[0].Err)
				return
			}
			mu.Lock()
			acked[ref] = res[0].Payout.ID
			mu.Unlock()
		})
	}
	write(l, 0, 400, true)
	if len(acked) != 400 {
		t.Fatalf("%d of 400 writes acknowledged", len(acked))
	}
	li, l = c.leader()
	c.waitApplied(l.AppliedIndex())
	want := stateBytes(t, l)
	for i, n := range c.nodes {
		if got := stateBytes(t, n); !bytes.Equal(got, want) {
			t.Fatalf("node %d's state differs from the leader's", i+1)
		}
	}

	// Kill the leader while writes are in flight.
	done := make(chan struct{})
	go func() {
		defer close(done)
		write(l, 400, 800, false)
	}()
	before := l.AppliedIndex()
	wait.For(t, 10*time.Second, pollInterval, "writes in flight", func() bool { return l.AppliedIndex() > before })
	c.stop(li)
	<-done

	ni, nl := c.leader()
	if ni == li {
		t.Fatal("the stopped node is still the leader")
	}
	{
		s := nl.Reader()
		for ref, id := range acked {
			p, ok := s.PayoutByReference("org_a", ref)
			if !ok || p.ID != id {
				t.Errorf("acknowledged payout %s (%s) missing on the new leader", ref, id)
			}
		}
		if err := s.Check(); err != nil {
			t.Error(err)
		}
	}
	// The new leader takes writes.
	if _, err := apply(nl, payout("pay_ghs_after_failover_00", "after", 500)); err != nil {
		t.Fatalf("write after failover: %v", err)
	}

	// The old leader comes back and converges.
	c.start(li)
	c.waitApplied(nl.AppliedIndex())
	want = stateBytes(t, nl)
	for i, n := range c.nodes {
		if got := stateBytes(t, n); !bytes.Equal(got, want) {
			t.Fatalf("node %d's state differs from the new leader's after rejoining", i+1)
		}
	}
}

// A follower refuses writes: nothing it could acknowledge would be durable.
func TestFollowerRefusesWrites(t *testing.T) {
	c := newCluster(t, 3)
	li, _ := c.leader()
	f := c.nodes[(li+1)%3]
	_, err := apply(f, org("org_b"))
	if !errors.Is(err, actors.ErrNotLeader) {
		t.Fatalf("write on a follower: %v, want ErrNotLeader", err)
	}
}

// A restart recovers the state from the latest snapshot plus the log after
// it; the log behind the snapshot is truncated.
func TestRestartFromSnapshotAndLog(t *testing.T) {
	dir := t.TempDir()
	cfg := fastTiming(raft.Config{DataDir: dir, SnapshotThreshold: 16, TrailingLogs: 4})
	n := openLeader(t, cfg)
	if _, err := apply(n, org("org_a"), &ledger.FundBalance{At: 1, OrgID: "org_a", Currency: "GHS", Amount: 10_000_000, ExternalReference: "seed"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if _, err := apply(n, payout(fmt.Sprintf("pay_ghs_%020d", i), fmt.Sprintf("r%d", i), 1000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Snapshot(); err != nil {
		t.Fatal(err)
	}
	for i := 100; i < 130; i++ { // a tail after the snapshot
		if _, err := apply(n, payout(fmt.Sprintf("pay_ghs_%020d", i), fmt.Sprintf("r%d", i), 1000)); err != nil {
			t.Fatal(err)
		}
	}
	before := stateBytes(t, n)
	first, _ := n.LogBounds()
	if first <= 1 {
		t.Fatalf("log not truncated behind the snapshot: first index %d", first)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "snapshots", "*", "state.bin"))
	if len(snaps) == 0 {
		t.Fatal("no snapshot on disk")
	}

	n = openLeader(t, cfg)
	defer n.Close()
	if after := stateBytes(t, n); !bytes.Equal(after, before) {
		t.Fatal("state after restart differs")
	}

	// The lookup filter fills from the store beside the node's work; once
	// on, references from before the restart are still found through it.
	wait.For(t, 10*time.Second, pollInterval, "the lookup filter turns on", func() bool { return n.Reader().LookupFilterOn() })
	for _, i := range []int{0, 99, 129} {
		ref := fmt.Sprintf("r%d", i)
		if p, ok := n.Reader().PayoutByReference("org_a", ref); !ok || p.ID != fmt.Sprintf("pay_ghs_%020d", i) {
			t.Fatalf("%s after restart: %s, %v", ref, p.ID, ok)
		}
		res, err := apply(n, payout("pay_ghs_again", ref, 1000))
		if err != nil || res[0].Err != nil || !res[0].Replayed {
			t.Fatalf("%s sent again after restart: %+v, %v", ref, res, err)
		}
	}
	if _, ok := n.Reader().PayoutByReference("org_a", "r-new"); ok {
		t.Fatal("a reference never used found")
	}
}

func waitLeader(t *testing.T, n *raft.Node) {
	t.Helper()
	wait.For(t, 10*time.Second, pollInterval, "a leader", n.IsLeader)
}

// openLeader opens a single node on cfg and waits until it leads; the
// caller closes it.
func openLeader(t *testing.T, cfg raft.Config) *raft.Node {
	t.Helper()
	n, err := raft.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitLeader(t, n)
	return n
}

// Snapshots taken while writes go on (the threshold is tiny) never stall or
// corrupt the state: after a restart from the last snapshot and the log, the
// state is the same bytes.
func TestSnapshotsUnderLoad(t *testing.T) {
	dir := t.TempDir()
	cfg := fastTiming(raft.Config{DataDir: dir, SnapshotThreshold: 8, TrailingLogs: 4, SnapshotInterval: 20 * time.Millisecond})
	n := openLeader(t, cfg)
	if _, err := apply(n, org("org_a"), &ledger.FundBalance{At: 1, OrgID: "org_a", Currency: "GHS", Amount: 100_000_000, ExternalReference: "seed"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 150; i++ {
				id := fmt.Sprintf("pay_ghs_%010d%010d", w, i)
				res, err := apply(n, payout(id, id, ledger.Minor(100+i)))
				if err != nil || res[0].Err != nil {
					t.Errorf("payout: %v %v", err, res)
					return
				}
				// Move some along, as the rail driver would.
				if i%3 == 0 {
					apply(n, &ledger.SettlePayout{At: 3, ID: id, Completed: i%2 == 0})
				}
				// Readers run alongside.
				n.Reader().Payouts("org_a", ledger.PayoutFilter{}, ledger.CursorStart, 10)
			}
		}(w)
	}
	snapshots := make(chan struct{})
	go func() {
		defer close(snapshots)
		for i := 0; i < 20; i++ {
			n.Snapshot() // errors when nothing is new; that is fine
			// The next one once more entries applied (or 20 ms passed).
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			n.WaitApplied(ctx, n.AppliedIndex()+1)
			cancel()
		}
	}()
	wg.Wait()
	<-snapshots
	before := stateBytes(t, n)
	{
		s := n.Reader()
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n = openLeader(t, cfg)
	defer n.Close()
	if after := stateBytes(t, n); !bytes.Equal(after, before) {
		t.Fatal("state after restart differs from before")
	}
}

// submit applies cmd through whichever node leads, until an attempt is
// acknowledged: after an attempt whose outcome is unknown (leadership lost
// under load), the retry's replay or conflict is that attempt's success.
// Safe for concurrent use (it never calls FailNow).
func (c *cluster) submit(cmd ledger.Command) {
	unknown := false
	acked := wait.Until(20*time.Second, pollInterval, func() bool {
		var l *raft.Node
		for _, n := range c.nodes {
			if n != nil && n.IsLeader() {
				l = n
			}
		}
		if l == nil {
			return false
		}
		res, err := apply(l, cmd)
		if err != nil {
			unknown = unknown || errors.Is(err, actors.ErrOutcomeUnknown)
			return false
		}
		if e := res[0].Err; e != nil && !(unknown && e.Code == ledger.CodeConflict) {
			c.t.Errorf("%T %+v: %v", cmd, cmd, e)
		}
		return true
	})
	if !acked {
		c.t.Errorf("%T %+v: not acknowledged within 20s", cmd, cmd)
	}
}

// writePayouts makes payouts from to to, eight writers at a time, each
// with a history as the rail driver writes it: every third completes,
// every fifth fails, every seventh stays processing. It returns the final
// status of each payout id.
func (c *cluster) writePayouts(from, to int) map[string]ledger.PayoutStatus {
	var mu sync.Mutex
	status := map[string]ledger.PayoutStatus{}
	writeConcurrently(from, to, func(i int) {
		id := fmt.Sprintf("pay_ghs_%020d", i)
		steps := []ledger.Command{payout(id, fmt.Sprintf("ref-%d", i), ledger.Minor(100+i))}
		want := ledger.PayoutPending
		switch {
		case i%3 == 0:
			steps = append(steps, &ledger.MarkPayoutProcessing{At: 3, ID: id, ProviderReference: "prv-" + id},
				&ledger.SettlePayout{At: 4, ID: id, Completed: true, Message: "paid"})
			want = ledger.PayoutCompleted
		case i%5 == 0:
			steps = append(steps, &ledger.SettlePayout{At: 4, ID: id, Message: "declined"})
			want = ledger.PayoutFailed
		case i%7 == 0:
			steps = append(steps, &ledger.MarkPayoutProcessing{At: 3, ID: id, ProviderReference: "prv-" + id})
			want = ledger.PayoutProcessing
		}
		for _, cmd := range steps { // one log entry each
			c.submit(cmd)
		}
		mu.Lock()
		status[id] = want
		mu.Unlock()
	})
	return status
}

// writeConcurrently calls write for each i from from to to, eight writers
// at a time (writer w takes from+w, from+w+8, …), and returns once all
// have.
func writeConcurrently(from, to int, write func(i int)) {
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := from + w; i < to; i += 8 {
				write(i)
			}
		}()
	}
	wg.Wait()
}

// assertSameState waits until every running node has applied the same
// index and compares their state stores there, then checks the ledger's
// invariants on each.
func (c *cluster) assertSameState(what string) {
	c.t.Helper()
	var sums [][32]byte
	var ats []uint64
	same := wait.Until(20*time.Second, pollInterval, func() bool {
		sums, ats = sums[:0], ats[:0]
		for _, n := range c.nodes {
			if n == nil {
				continue
			}
			sum, at, err := n.StateDigest()
			if err != nil {
				c.t.Fatal(err)
			}
			sums, ats = append(sums, sum), append(ats, at)
		}
		for i := range ats {
			if ats[i] != ats[0] {
				return false
			}
		}
		return true
	})
	if !same {
		c.t.Fatalf("%s: the nodes did not reach the same index: %v", what, ats)
	}
	for i := range sums {
		if sums[i] != sums[0] {
			c.t.Fatalf("%s: at index %d the nodes' states differ", what, ats[0])
		}
	}
	for i, n := range c.nodes {
		if n == nil {
			continue
		}
		if err := n.CheckState(); err != nil {
			c.t.Fatalf("%s: node %d: %v", what, i+1, err)
		}
	}
}

// snapshotAll takes a snapshot on every running node, so that every log,
// whichever node leads, is truncated behind it.
func (c *cluster) snapshotAll() {
	c.t.Helper()
	for _, n := range c.nodes {
		if n == nil {
			continue
		}
		if err := n.Snapshot(); err != nil {
			c.t.Fatalf("snapshot on %s: %v", n.ID(), err)
		}
		if first, _ := n.LogBounds(); first <= 2 {
			c.t.Fatalf("%s's log was not truncated behind its snapshot: first index %d", n.ID(), first)
		}
	}
}

// assertPayouts reads every payout in want on n.
func assertPayouts(t *testing.T, n *raft.Node, want map[string]ledger.PayoutStatus) {
	t.Helper()
	r := n.Reader()
	for id, status := range want {
		p, ok := r.Payout(id)
		if !ok || p.Status != status {
			t.Fatalf("node %s: payout %s = %v (found %v), want %v", n.ID(), id, p.Status, ok, status)
		}
		if byRef, ok := r.PayoutByReference("org_a", p.ExternalReference); !ok || byRef.ID != id {
			t.Fatalf("node %s: payout by reference %s = %q (found %v), want %s", n.ID(), p.ExternalReference, byRef.ID, ok, id)
		}
		if status == ledger.PayoutCompleted && (p.CompletedAt != 4 || p.ProviderReference != "prv-"+id) {
			t.Fatalf("node %s: completed payout %s lost its history: %+v", n.ID(), id, p)
		}
	}
}

// latestSnapshot returns the latest snapshot in a node's data directory,
// its metadata and its bytes.
func latestSnapshot(t *testing.T, dataDir string) (*hraft.SnapshotMeta, []byte) {
	t.Helper()
	files, err := hraft.NewFileSnapshotStoreWithLogger(dataDir, 2, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	list, err := files.List()
	if err != nil || len(list) == 0 {
		t.Fatalf("snapshots in %s: %v, %v", dataDir, list, err)
	}
	_, rc, err := files.Open(list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return list[0], data
}

// A follower whose data directory is wiped comes back empty and catches up
// from the leader's snapshot — a dump of its state store, closed payouts
// and their history included, since the log behind it is gone. Killed
// while it restores such a snapshot, it restores it again when it restarts
// and catches up to the same state.
func TestFollowerRecoversFromSnapshot(t *testing.T) {
	c := newCluster(t, 3)
	c.submit(org("org_a"))
	c.submit(&ledger.FundBalance{At: 1, OrgID: "org_a", Currency: "GHS", Amount: 100_000_000, ExternalReference: "seed"})
	payouts := c.writePayouts(0, 240)
	c.assertSameState("before the wipe")
	c.snapshotAll()

	// Wipe a follower; the cluster goes on without it.
	li, _ := c.leader()
	fi := (li + 1) % 3
	c.stop(fi)
	if err := os.RemoveAll(c.cfgs[fi].DataDir); err != nil {
		t.Fatal(err)
	}
	for id, s := range c.writePayouts(240, 300) {
		payouts[id] = s
	}
	c.snapshotAll()
	c.start(fi)
	f := c.nodes[fi]
	c.assertSameState("after the wiped follower caught up")
	assertPayouts(t, f, payouts)
	// It received a leader's state, not the log from the start.
	meta, dump := latestSnapshot(t, c.cfgs[fi].DataDir)
	if !bytes.HasPrefix(dump, []byte("PAYSTATE")) {
		t.Fatalf("the wiped follower's snapshot %s starts %q, not a state dump", meta.ID, dump[:min(len(dump), 8)])
	}

	// Kill it in the middle of restoring that snapshot: its state store
	// is left half-written and marked restoring, as a crash would leave it.
	c.stop(fi)
	state, err := wal.OpenState(filepath.Join(c.cfgs[fi].DataDir, "state"), wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := state.Restore(bytes.NewReader(dump[:len(dump)/2])); err == nil {
		t.Fatal("half a dump restored")
	}
	if restoring, err := state.Restoring(); err != nil || !restoring {
		t.Fatalf("after half a restore: restoring = %v, %v", restoring, err)
	}
	if err := state.Close(); err != nil {
		t.Fatal(err)
	}
	for id, s := range c.writePayouts(300, 340) { // log it must apply after the snapshot
		payouts[id] = s
	}
	c.start(fi)
	f = c.nodes[fi]
	c.assertSameState("after the follower killed while restoring restarted")
	assertPayouts(t, f, payouts)
}

// After an election with nothing written since, the followers are ready:
// the new leader's no-op and barrier never reach the state machine, so a
// follower's state store stays behind the commit index, and readiness must
// not wait for the next write.
func TestIdleFollowersReadyAfterElection(t *testing.T) {
	c := newCluster(t, 3)
	li, l := c.leader()
	if _, err := apply(l, org("org_a")); err != nil {
		t.Fatal(err)
	}
	c.stop(li)
	c.leader()
	ready := 0
	if !wait.Until(10*time.Second, pollInterval, func() bool {
		ready = 0
		for _, n := range c.nodes {
			if n != nil && n.Ready() {
				ready++
			}
		}
		return ready == 2
	}) {
		t.Fatalf("%d of 2 nodes ready after the election", ready)
	}
}
