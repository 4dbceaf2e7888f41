package requestlog

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"payments/actors/actorstest/testkit"
)

func open(t *testing.T, dir string, opts Options) *Store {
	t.Helper()
	if opts.PruneInterval == 0 {
		opts.PruneInterval = time.Hour // tests prune by hand
	}
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// seqOf is the position each test record was appended at, by store and
// id, as package http keeps it in the request id.
var seqOf sync.Map

type storeID struct {
	s  *Store
	id string
}

func appendAll(t *testing.T, s *Store, at time.Time, org string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		seq := s.NextSeq()
		if err := s.Append(seq, id, org, at, []byte(`{"id":"`+id+`"}`)); err != nil {
			t.Fatal(err)
		}
		seqOf.Store(storeID{s, id}, seq)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
}

// get reads a record by its id, at the position it was appended at (0,
// which is no position, for one never appended).
func get(s *Store, id, org string) ([]byte, bool, error) {
	seq, _ := seqOf.Load(storeID{s, id})
	n, _ := seq.(uint64)
	return s.Get(n, id, org)
}

func scanIDs(t *testing.T, s *Store, org string, before uint64, limit int) ([]string, uint64) {
	t.Helper()
	var ids []string
	var last uint64
	err := s.Scan(org, before, func(pos uint64, at time.Time, value []byte) bool {
		ids = append(ids, string(value[len(`{"id":"`):len(value)-2]))
		last = pos
		return len(ids) < limit
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids, last
}

func TestGetAndScanNewestFirst(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	s := open(t, t.TempDir(), Options{Now: c.Now})
	appendAll(t, s, c.Now(), "org_a", "req_1", "req_2")
	appendAll(t, s, c.Now(), "org_b", "req_3")
	appendAll(t, s, c.Now(), "org_a", "req_4")

	if v, ok, err := get(s, "req_2", "org_a"); err != nil || !ok || string(v) != `{"id":"req_2"}` {
		t.Fatalf("Get req_2 = %q %v %v", v, ok, err)
	}
	for _, tc := range []struct{ name, id, org string }{
		{"another organization's", "req_3", "org_a"},
		{"absent", "req_9", "org_a"},
		{"empty id", "", "org_a"},
	} {
		if _, ok, err := get(s, tc.id, tc.org); ok || err != nil {
			t.Errorf("%s: found (%v)", tc.name, err)
		}
	}

	ids, _ := scanIDs(t, s, "org_a", math.MaxUint64, 10)
	if fmt.Sprint(ids) != "[req_4 req_2 req_1]" {
		t.Fatalf("org_a newest first: %v", ids)
	}
	// Paging: the position of the last record seen continues the scan.
	first, pos := scanIDs(t, s, "org_a", math.MaxUint64, 2)
	rest, _ := scanIDs(t, s, "org_a", pos, 10)
	if fmt.Sprint(first, rest) != "[req_4 req_2] [req_1]" {
		t.Fatalf("pages %v %v", first, rest)
	}
	if ids, _ := scanIDs(t, s, "org_b", math.MaxUint64, 10); fmt.Sprint(ids) != "[req_3]" {
		t.Fatalf("org_b: %v", ids)
	}
}

func TestRetentionByAge(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	s := open(t, t.TempDir(), Options{Now: c.Now, Retention: time.Hour})
	appendAll(t, s, c.Now(), "org_a", "req_old")
	c.Advance(40 * time.Minute)
	appendAll(t, s, c.Now(), "org_a", "req_new")
	c.Advance(30 * time.Minute) // req_old is 70 minutes old, req_new 30

	// Expired but not yet pruned: not returned.
	if _, ok, _ := get(s, "req_old", "org_a"); ok {
		t.Fatal("an expired record is returned")
	}
	if ids, _ := scanIDs(t, s, "org_a", math.MaxUint64, 10); fmt.Sprint(ids) != "[req_new]" {
		t.Fatalf("scan: %v", ids)
	}
	before := s.Bytes()
	if n, err := s.Prune(); err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1", n, err)
	}
	if s.Bytes() >= before || s.Bytes() <= 0 {
		t.Fatalf("live bytes %d after pruning from %d", s.Bytes(), before)
	}
	if _, ok, _ := get(s, "req_new", "org_a"); !ok {
		t.Fatal("the record within retention is gone")
	}
	c.Advance(time.Hour)
	if n, _ := s.Prune(); n != 1 || s.Bytes() != 0 {
		t.Fatalf("second prune removed %d, %d bytes left", n, s.Bytes())
	}
}

func TestRetentionBySize(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	// One record (52 bytes) and its batch's entry (about 50) count about
	// 100 bytes here; about ten fit in 1000.
	s := open(t, dir, Options{Now: c.Now, MaxBytes: 1000})
	for i := range 25 {
		appendAll(t, s, c.Now(), "org_a", fmt.Sprintf("req_%03d", i))
	}
	// Commit signalled the pruner; prune by hand so the test does not wait.
	if _, err := s.Prune(); err != nil {
		t.Fatal(err)
	}
	if s.Bytes() > 1000 {
		t.Fatalf("%d live bytes over a 1000-byte bound", s.Bytes())
	}
	ids, _ := scanIDs(t, s, "org_a", math.MaxUint64, 100)
	if len(ids) == 0 || ids[0] != "req_024" || ids[len(ids)-1] == "req_000" {
		t.Fatalf("kept %v: want the newest, the oldest gone", ids)
	}
	if _, ok, _ := get(s, "req_000", "org_a"); ok {
		t.Fatal("the oldest record survived the size bound")
	}
	kept := s.Bytes()

	// The count and the sequence survive a restart: new records sort first.
	s.Close()
	s = open(t, dir, Options{Now: c.Now, MaxBytes: 1000})
	if s.Bytes() != kept {
		t.Fatalf("reopened with %d live bytes, want %d", s.Bytes(), kept)
	}
	appendAll(t, s, c.Now(), "org_a", "req_after")
	if ids, _ := scanIDs(t, s, "org_a", math.MaxUint64, 1); fmt.Sprint(ids) != "[req_after]" {
		t.Fatalf("after reopening, newest is %v", ids)
	}
}

// A log pruned for its size goes down to its low water (the bound less a
// sixteenth), and the commits after that prune nothing until the bound is
// passed again: a full log is pruned in steps, not after every commit.
func TestSizePruningLeavesSlack(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	const bound = 3200 // about 32 one-record batches; low water 3000
	s := open(t, t.TempDir(), Options{Now: c.Now, MaxBytes: bound})
	i := 0
	for ; s.Bytes() <= bound; i++ {
		appendAll(t, s, c.Now(), "org_a", fmt.Sprintf("req_%03d", i))
	}
	const low = bound - bound/16
	// The commit that passed the bound has already woken the background
	// pruning, which may get there first: either prunes the oldest batches.
	if n, err := s.Prune(); err != nil || s.Bytes() > low {
		t.Fatalf("pruned %d (%v): %d live bytes, want at most %d", n, err, s.Bytes(), low)
	}
	if ids, _ := scanIDs(t, s, "org_a", math.MaxUint64, i); slices.Contains(ids, "req_000") {
		t.Fatalf("a log over its bound still holds its oldest record: %v", ids)
	}
	added := 0
	for ; s.Bytes()+120 <= bound; added++ { // one more batch stays within the bound
		appendAll(t, s, c.Now(), "org_a", fmt.Sprintf("req_%03d", i))
		i++
		if n, err := s.Prune(); err != nil || n != 0 {
			t.Fatalf("a log within its bound (%d bytes) pruned %d records (%v)", s.Bytes(), n, err)
		}
	}
	if added == 0 {
		t.Fatal("no room left under the bound after pruning")
	}
}

// Records of no organization are held to their own share: a flood of them
// pushes out their own oldest, never an organization's records.
func TestUnattributedShare(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	s := open(t, dir, Options{Now: c.Now, MaxBytes: 100_000, UnattributedMaxBytes: 500})
	appendAll(t, s, c.Now(), "org_a", "req_a1", "req_a2")
	for i := range 30 {
		appendAll(t, s, c.Now(), "", fmt.Sprintf("req_x%02d", i))
	}
	if _, err := s.Prune(); err != nil {
		t.Fatal(err)
	}
	if s.UnattributedBytes() > 500 || s.UnattributedBytes() <= 0 {
		t.Fatalf("%d bytes of no organization over a 500-byte share", s.UnattributedBytes())
	}
	if ids, _ := scanIDs(t, s, "org_a", math.MaxUint64, 10); fmt.Sprint(ids) != "[req_a2 req_a1]" {
		t.Fatalf("the organization's records: %v", ids)
	}
	kept, _ := scanIDs(t, s, "", math.MaxUint64, 100)
	if len(kept) == 0 || kept[0] != "req_x29" || kept[len(kept)-1] == "req_x00" {
		t.Fatalf("kept %v of no organization: want the newest", kept)
	}
	if _, ok, _ := get(s, "req_x00", ""); ok {
		t.Fatal("the oldest record of no organization survived")
	}
	live, un := s.Bytes(), s.UnattributedBytes()
	s.Close()
	s = open(t, dir, Options{Now: c.Now, MaxBytes: 100_000, UnattributedMaxBytes: 500})
	if s.Bytes() != live || s.UnattributedBytes() != un {
		t.Fatalf("reopened with %d/%d bytes, want %d/%d", s.Bytes(), s.UnattributedBytes(), live, un)
	}
}

func TestBackgroundPruning(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	s := open(t, t.TempDir(), Options{Now: c.Now, Retention: time.Minute, PruneInterval: 10 * time.Millisecond})
	appendAll(t, s, c.Now(), "org_a", "req_1", "req_2")
	c.Advance(2 * time.Minute)
	// The pruner runs on its own ticker (PruneInterval, real time).
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.After(5 * time.Second); s.Bytes() != 0; {
		select {
		case <-deadline:
			t.Fatalf("%d bytes still live after the retention passed", s.Bytes())
		case <-tick.C:
		}
	}
}

func TestAppendRefusesUnstorableFields(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	long := string(make([]byte, 256))
	for _, tc := range []struct{ name, id, org string }{
		{"empty id", "", "org_a"},
		{"long id", "req_" + long, "org_a"},
		{"zero byte in the organization", "req_1", "org\x00a"},
	} {
		if err := s.Append(s.NextSeq(), tc.id, tc.org, time.Now(), nil); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if err := s.Append(0, "req_1", "org_a", time.Now(), nil); err == nil {
		t.Error("position 0: accepted")
	}
}

// Positions drawn after a restart are above every stored one, even one
// drawn ahead of the clock, so no two records share a position.
func TestNextSeqAfterReopen(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	ahead := uint64(time.Now().Add(time.Hour).UnixMicro())
	if err := s.Append(ahead, "req_ahead", "org_a", time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, dir, Options{})
	if n := s.NextSeq(); n <= ahead {
		t.Fatalf("NextSeq after reopening = %d, not above the stored %d", n, ahead)
	}
	if v, ok, err := s.Get(ahead, "req_ahead", "org_a"); err != nil || !ok || len(v) != 0 {
		t.Fatalf("Get = %q %v %v", v, ok, err)
	}
}

// A log of the first format (one Pebble directly in the directory) is set
// aside whole, and a new log starts beside it.
func TestOldFormatSetAside(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "requestlog")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "CURRENT"), []byte("MANIFEST-000001\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, Options{})
	if _, err := os.Stat(filepath.Join(dir+".v1", "CURRENT")); err != nil {
		t.Fatalf("the old log was not set aside: %v", err)
	}
	appendAll(t, s, time.Now(), "org_a", "req_1")
	if _, ok, err := get(s, "req_1", "org_a"); !ok || err != nil {
		t.Fatalf("the new log: %v %v", ok, err)
	}
}

func TestClosed(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	s.Close()
	if _, _, err := get(s, "req_1", "org_a"); err != ErrClosed {
		t.Fatalf("Get after Close: %v", err)
	}
}

// Against a model: records of several organizations in batches of random
// sizes, with positions drawn out of order as requests finish out of
// order, pruned by size now and then. Every organization's scan, whole or
// in pages, and after reopening, returns exactly its records that are
// still live, newest batch first, newest first within a batch.
func TestScanAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	opts := Options{MaxBytes: 40_000}
	s := open(t, dir, opts)
	orgs := []string{"", "org_a", "org_b", "org_c"}
	type rec struct {
		id    string
		batch int
		seq   uint64
	}
	var model []rec // in append order
	batch := 0
	for round := range 60 {
		batch++
		n := 1 + rng.IntN(12)
		seqs := make([]uint64, n)
		for i := range seqs {
			seqs[i] = s.NextSeq()
		}
		rng.Shuffle(n, func(i, j int) { seqs[i], seqs[j] = seqs[j], seqs[i] })
		for i, seq := range seqs {
			id := fmt.Sprintf("req_%d_%d", round, i)
			org := orgs[rng.IntN(len(orgs))]
			if err := s.Append(seq, id, org, time.Now(), []byte(id)); err != nil {
				t.Fatal(err)
			}
			model = append(model, rec{id: org + "/" + id, batch: batch, seq: seq})
		}
		if err := s.Commit(); err != nil {
			t.Fatal(err)
		}
		if round%10 == 9 {
			if _, err := s.Prune(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if s.Bytes() > opts.MaxBytes+2000 {
		t.Fatalf("%d live bytes over a %d bound", s.Bytes(), opts.MaxBytes)
	}
	check := func(s *Store) {
		t.Helper()
		for _, org := range orgs {
			var got []string
			err := s.Scan(org, math.MaxUint64, func(pos uint64, at time.Time, value []byte) bool {
				got = append(got, org+"/"+string(value))
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			// What is kept is the newest part, in scan order.
			var order []rec
			for _, r := range model {
				if strings.HasPrefix(r.id, org+"/") {
					order = append(order, r)
				}
			}
			slices.SortStableFunc(order, func(a, b rec) int {
				if a.batch != b.batch {
					return b.batch - a.batch
				}
				return cmp.Compare(b.seq, a.seq)
			})
			if len(got) == 0 || len(got) > len(order) {
				t.Fatalf("%q: scanned %d of %d", org, len(got), len(order))
			}
			for i := range got {
				if got[i] != order[i].id {
					t.Fatalf("%q: record %d is %s, want %s", org, i, got[i], order[i].id)
				}
			}
			// The same in pages of three.
			var paged []string
			before := uint64(math.MaxUint64)
			for {
				var page []string
				var last uint64
				if err := s.Scan(org, before, func(pos uint64, at time.Time, value []byte) bool {
					page = append(page, org+"/"+string(value))
					last = pos
					return len(page) < 3
				}); err != nil {
					t.Fatal(err)
				}
				paged = append(paged, page...)
				if len(page) < 3 {
					break
				}
				before = last
			}
			if !slices.Equal(paged, got) {
				t.Fatalf("%q: pages %v, whole %v", org, paged, got)
			}
		}
	}
	check(s)
	live := s.Bytes()
	s.Close()
	s = open(t, dir, opts)
	if s.Bytes() != live {
		t.Fatalf("reopened with %d live bytes, want %d", s.Bytes(), live)
	}
	check(s)
}

// A record whose position is below one already written (its request began
// before and ended after another's) goes to the loose log, not into a
// block: it is read by id and by scan like any other, survives a
// reopening, and is pruned with its batch.
func TestLateRecords(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	s := open(t, dir, Options{Now: c.Now, Retention: time.Hour})
	early, later := s.NextSeq(), s.NextSeq()
	for _, r := range []struct {
		seq uint64
		id  string
	}{{later, "req_later"}, {early, "req_early"}} {
		if err := s.Append(r.seq, r.id, "org_a", c.Now(), []byte(r.id)); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if _, closer, err := s.loose.Get(recordKey(early)); err != nil {
		t.Fatalf("the late record is not in the loose log: %v", err)
	} else {
		closer.Close()
	}
	check := func(s *Store) {
		t.Helper()
		for _, r := range []struct {
			seq uint64
			id  string
		}{{later, "req_later"}, {early, "req_early"}} {
			if v, ok, err := s.Get(r.seq, r.id, "org_a"); err != nil || !ok || string(v) != r.id {
				t.Fatalf("Get %s = %q %v %v", r.id, v, ok, err)
			}
		}
		var got []string
		if err := s.Scan("org_a", math.MaxUint64, func(pos uint64, at time.Time, value []byte) bool {
			got = append(got, string(value))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != "[req_early req_later]" {
			t.Fatalf("scan: %v (newest batch first)", got)
		}
	}
	check(s)
	s.Close()
	s = open(t, dir, Options{Now: c.Now, Retention: time.Hour})
	check(s)
	if n := s.NextSeq(); n <= later {
		t.Fatalf("NextSeq after reopening = %d, not above %d", n, later)
	}
	c.Advance(2 * time.Hour)
	if n, err := s.Prune(); err != nil || n != 2 || s.Bytes() != 0 {
		t.Fatalf("Prune = %d, %v; %d bytes left", n, err, s.Bytes())
	}
	for _, seq := range []uint64{early, later} {
		if _, closer, found, err := s.read(seq); err != nil || found {
			if closer != nil {
				closer.Close()
			}
			t.Fatalf("a pruned record is left (%v)", err)
		}
	}
}
