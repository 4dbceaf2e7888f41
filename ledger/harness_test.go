package ledger

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"payments/ledger/ledgertest/harness"
	"payments/wal"
)

// testState is the ledger as the FSM runs it, for tests: the state machine
// over a real state store (Pebble, on an in-memory file system), each
// command applied and committed on its own (applyBatch commits several
// together), and a Reader over what is committed. It embeds the Reader, so
// tests read as the API does.
type testState struct {
	*Reader
	tb    fataler
	st    *State
	store *wal.StateStore
	kv    KVReader
	index uint64 // the last "log index" committed
}

// fataler is what the harness needs of a testing.TB.
type fataler = harness.Fataler

// panicker is a fataler for states made outside a test's reach (Restore).
type panicker struct{}

func (panicker) Helper()           {}
func (panicker) Fatal(args ...any) { panic(fmt.Sprint(args...)) }

// createOrgA creates organization org_a, with its key key_a.
func createOrgA() *CreateOrganization {
	hash := sha256.Sum256([]byte("k"))
	return &CreateOrganization{At: 1, ID: "org_a", Name: "A", Key: CreateAPIKey{At: 1, ID: "key_a", OrgID: "org_a", Hash: string(hash[:])}}
}

// newOrgTestState returns a ledger with organization org_a (createOrgA).
func newOrgTestState(tb testing.TB) *testState {
	s := newTestState(tb)
	s.Apply(createOrgA())
	return s
}

// newTestState returns an empty ledger.
func newTestState(tb testing.TB) *testState {
	store := harness.OpenStore(tb)
	s := &testState{tb: tb, store: store, kv: KVOf(store)}
	s.st = NewState(s.kv)
	s.Reader = NewReader(s.kv, s.st.Views())
	s.fillLookupFilter()
	return s
}

// fillLookupFilter turns the lookup filter on, as the FSM does after a
// load, so that tests read through it.
func (s *testState) fillLookupFilter() {
	if err := s.st.Views().FillLookupFilter(s.kv, func() bool { return false }); err != nil {
		s.tb.Fatal(err)
	}
}

// loadTestState returns the ledger loaded from store, as a restarted node
// does.
func loadTestState(tb fataler, store *wal.StateStore) (*testState, error) {
	s := &testState{tb: tb, store: store, kv: KVOf(store), index: store.Applied()}
	st, err := Load(s.kv)
	if err != nil {
		return nil, err
	}
	s.st = st
	s.Reader = NewReader(s.kv, st.Views())
	s.fillLookupFilter()
	return s, nil
}

// Apply applies one command, as a log entry of its own, and commits it.
func (s *testState) Apply(cmd Command) Result {
	r := s.st.Apply(cmd)
	s.st.EndEntry()
	s.commit()
	return r
}

// applyChecked applies cmd, failing t if it is refused or if the state
// then breaks an invariant (Check).
func applyChecked(t *testing.T, s *testState, cmd Command) Result {
	t.Helper()
	r := s.Apply(cmd)
	if r.Err != nil {
		t.Fatalf("%T: %v", cmd, r.Err)
	}
	if err := s.Check(); err != nil {
		t.Fatalf("after %T: %v", cmd, err)
	}
	return r
}

// decodeCanonical decodes fuzzed bytes as a batch of commands and fails t
// unless what decoded encodes back to exactly b: a batch has one encoding.
// It reports false for bytes that are no batch.
func decodeCanonical(t *testing.T, b []byte) ([]Command, bool) {
	t.Helper()
	cmds, err := DecodeBatch(b)
	if err != nil {
		return nil, false
	}
	if !bytes.Equal(EncodeBatch(nil, cmds), b) {
		t.Fatal("decoded batch re-encodes differently")
	}
	return cmds, true
}

// restartCold loads s's state store as a restarted node does, and again
// without the lookup filter (as a node is until its fill ends), so that
// the state store answers alone: it returns the restarted state and a
// reader over the cold one.
func restartCold(t *testing.T, s *testState) (*testState, *Reader) {
	t.Helper()
	restarted, err := loadTestState(t, s.store)
	if err != nil {
		t.Fatal(err)
	}
	cold, err := Load(restarted.kv)
	if err != nil {
		t.Fatal(err)
	}
	return restarted, NewReader(restarted.kv, cold.Views())
}

// applyBatch applies commands as one log entry and commits it.
func (s *testState) applyBatch(cmds ...Command) []Result {
	out := harness.ApplyBatch(s.tb, s.store, s.st, cmds)
	s.commit()
	return out
}

// applyEntries applies commands entry by entry, the whole lot committed
// together: one applied batch of the FSM.
func (s *testState) applyEntries(entries ...[]Command) [][]Result {
	out := harness.ApplyEntries(s.st, entries)
	s.commit()
	return out
}

func (s *testState) commit() {
	s.tb.Helper()
	harness.Commit(s.tb, s.store, &s.index, s.st)
}

// Check verifies the ledger's invariants over what is committed.
func (s *testState) Check() error { return Check(s.kv) }

// ExpiryDue is State.ExpiryDue.
func (s *testState) ExpiryDue(at int64) bool { return s.st.ExpiryDue(at) }

// entryCount is how many entries the journal has.
func (s *testState) entryCount() uint64 { return s.st.journal.seq }

// encodeSnapshot returns the whole committed state store as bytes (the
// dump a node sends a follower, with its applied index zeroed): two states
// are the same exactly when these are.
func encodeSnapshot(tb testing.TB, s *testState) []byte {
	tb.Helper()
	return harness.Dump(tb, s.store)
}

// Restore returns a ledger loaded from a copy of the state store that
// encodeSnapshot encoded: what a follower that installs it runs.
func Restore(r io.Reader) (*testState, error) {
	store, err := wal.OpenState("/state", wal.Options{FS: vfs.NewMem()})
	if err != nil {
		return nil, err
	}
	if _, err := store.Restore(r); err != nil {
		store.Close()
		return nil, err
	}
	return loadTestState(panicker{}, store)
}

// restoreSame restores s from its snapshot, as a follower would, and fails
// the test unless the restored state encodes byte for byte as s does: the
// round trip every feature's test makes of its records and indexes.
func restoreSame(tb testing.TB, s *testState) *testState {
	tb.Helper()
	enc := encodeSnapshot(tb, s)
	r, err := Restore(bytes.NewReader(enc))
	if err != nil {
		tb.Fatal(err)
	}
	if !bytes.Equal(encodeSnapshot(tb, r), enc) {
		tb.Fatal("restored state encodes differently")
	}
	return r
}

// openPayouts returns every open payout.
func (s *testState) openPayouts() []Payout { return walkOpen(s.OpenPayouts) }

func mustApply(t *testing.T, s *testState, cmd Command) Result {
	t.Helper()
	r := s.Apply(cmd)
	if r.Err != nil {
		t.Fatalf("%T: %v", cmd, r.Err)
	}
	return r
}

func walkOpen[V any](page func(OpenCursor, int) ([]V, OpenCursor, bool)) []V {
	var all []V
	var cur OpenCursor
	for {
		items, next, done := page(cur, 7) // small pages, to walk several
		all = append(all, items...)
		if done {
			return all
		}
		cur = next
	}
}

// newTestStateOn returns an empty ledger on a state store in dir, on disk.
func newTestStateOn(tb testing.TB, dir string) *testState {
	store, err := wal.OpenState(dir, wal.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	s := &testState{tb: tb, store: store, kv: KVOf(store)}
	s.st = NewState(s.kv)
	s.Reader = NewReader(s.kv, s.st.Views())
	s.fillLookupFilter()
	return s
}

// processCPU is the process's CPU time so far, user and system, in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// checkCommandsRoundTrip encodes cmds as one log entry and decodes it: the
// same commands come back, and they encode to the same bytes again.
func checkCommandsRoundTrip(t *testing.T, cmds []Command) {
	t.Helper()
	enc := EncodeBatch(nil, cmds)
	dec, err := DecodeBatch(enc)
	if err != nil {
		t.Fatal(err)
	}
	if len(dec) != len(cmds) {
		t.Fatalf("%d commands decoded as %d", len(cmds), len(dec))
	}
	for i := range cmds {
		if showCommand(cmds[i]) != showCommand(dec[i]) {
			t.Fatalf("command %d: %s decoded as %s", i, showCommand(cmds[i]), showCommand(dec[i]))
		}
	}
	if !bytes.Equal(EncodeBatch(nil, dec), enc) {
		t.Fatal("re-encoding changed the batch")
	}
}

// showCommand is a command as a round trip compares it: its fields, and a
// Decided's operation's rather than the pointer to it.
func showCommand(c Command) string {
	if d, ok := c.(*Decided); ok {
		return fmt.Sprintf("decided %q %+v", d.Attempt, d.Op)
	}
	return fmt.Sprintf("%+v", c)
}

// The fee schedules of the default catalogue (rails/catalogue.json), for
// tests that price as the operations do.
var testPayoutFees = map[MethodType]FeeSchedule{
	MethodMobileMoney: {BasisPoints: 100}, MethodBankTransfer: {BasisPoints: 50}, MethodCrypto: {BasisPoints: 20},
}

func payoutFee(t MethodType, amount Minor) Minor { return testPayoutFees[t].Fee(amount) }

func splitPayoutDebit(t MethodType, total Minor) (principal, fee Minor) {
	return testPayoutFees[t].Split(total)
}

// collectionFee is a mobile money collection's fee.
func collectionFee(amount Minor) Minor { return FeeSchedule{BasisPoints: 150}.Fee(amount) }
