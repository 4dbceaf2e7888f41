package requestlog

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"
)

// clock is a settable time source for retention.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

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

func appendAll(t *testing.T, s *Store, at time.Time, org string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := s.Append(id, org, at, []byte(`{"id":"`+id+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
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
	c := &clock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	s := open(t, t.TempDir(), Options{Now: c.Now})
	appendAll(t, s, c.Now(), "org_a", "req_1", "req_2")
	appendAll(t, s, c.Now(), "org_b", "req_3")
	appendAll(t, s, c.Now(), "org_a", "req_4")

	if v, ok, err := s.Get("req_2", "org_a"); err != nil || !ok || string(v) != `{"id":"req_2"}` {
		t.Fatalf("Get req_2 = %q %v %v", v, ok, err)
	}
	for _, tc := range []struct{ name, id, org string }{
		{"another organization's", "req_3", "org_a"},
		{"absent", "req_9", "org_a"},
		{"empty id", "", "org_a"},
	} {
		if _, ok, err := s.Get(tc.id, tc.org); ok || err != nil {
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
	c := &clock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	s := open(t, t.TempDir(), Options{Now: c.Now, Retention: time.Hour})
	appendAll(t, s, c.Now(), "org_a", "req_old")
	c.advance(40 * time.Minute)
	appendAll(t, s, c.Now(), "org_a", "req_new")
	c.advance(30 * time.Minute) // req_old is 70 minutes old, req_new 30

	// Expired but not yet pruned: not returned.
	if _, ok, _ := s.Get("req_old", "org_a"); ok {
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
	if _, ok, _ := s.Get("req_new", "org_a"); !ok {
		t.Fatal("the record within retention is gone")
	}
	c.advance(time.Hour)
	if n, _ := s.Prune(); n != 1 || s.Bytes() != 0 {
		t.Fatalf("second prune removed %d, %d bytes left", n, s.Bytes())
	}
}

func TestRetentionBySize(t *testing.T) {
	c := &clock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	// One record is recordBytes(13+2+5+14 = value, 7, 5) = 93 bytes here;
	// ten fit in 1000.
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
	if _, ok, _ := s.Get("req_000", "org_a"); ok {
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

// Records of no organization are held to their own share: a flood of them
// pushes out their own oldest, never an organization's records.
func TestUnattributedShare(t *testing.T) {
	c := &clock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
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
	if _, ok, _ := s.Get("req_x00", ""); ok {
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
	c := &clock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	s := open(t, t.TempDir(), Options{Now: c.Now, Retention: time.Minute, PruneInterval: 10 * time.Millisecond})
	appendAll(t, s, c.Now(), "org_a", "req_1", "req_2")
	c.advance(2 * time.Minute)
	for deadline := time.Now().Add(5 * time.Second); s.Bytes() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still live after the retention passed", s.Bytes())
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
		if err := s.Append(tc.id, tc.org, time.Now(), nil); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

func TestClosed(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	s.Close()
	if _, _, err := s.Get("req_1", "org_a"); err != ErrClosed {
		t.Fatalf("Get after Close: %v", err)
	}
}
