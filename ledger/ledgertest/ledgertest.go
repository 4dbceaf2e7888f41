// Package ledgertest runs the ledger as the FSM does, for the tests of the
// ledger's feature packages (ledger/feature.go): the state machine over a
// real state store (Pebble, on an in-memory file system), each command
// applied as a log entry of its own and committed, and a Reader over what
// is committed. The kernel's own tests have the same harness inside
// package ledger (harness_test.go), where they can reach its internals.
package ledgertest

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"

	"payments/ledger"
	"payments/ledger/ledgertest/harness"
	"payments/wal"
)

// State is the ledger as a node runs it. It embeds the Reader, so tests
// read as the API does.
type State struct {
	*ledger.Reader
	tb    testing.TB
	st    *ledger.State
	store *wal.StateStore
	kv    ledger.KVReader
	index uint64 // the last "log index" committed
}

// New returns an empty ledger.
func New(tb testing.TB) *State {
	tb.Helper()
	store := harness.OpenStore(tb)
	s := &State{tb: tb, store: store, kv: ledger.KVOf(store)}
	s.st = ledger.NewState(s.kv)
	s.open()
	return s
}

// open sets the Reader up and turns the lookup filter on, as the FSM does
// after a load.
func (s *State) open() {
	s.Reader = ledger.NewReader(s.kv, s.st.Views())
	if err := s.st.Views().FillLookupFilter(s.kv, func() bool { return false }); err != nil {
		s.tb.Fatal(err)
	}
}

// Apply applies one command, as a log entry of its own, and commits it.
func (s *State) Apply(cmd ledger.Command) ledger.Result {
	s.tb.Helper()
	r := s.st.Apply(cmd)
	s.st.EndEntry()
	s.commit()
	return r
}

// commit writes what the entry applied to the state store as the next log
// index, and tells the state machine it is committed.
func (s *State) commit() {
	s.tb.Helper()
	harness.Commit(s.tb, s.store, &s.index, s.st)
}

// Org creates organization id with an API key, at leader time 1.
func (s *State) Org(id string) {
	s.tb.Helper()
	hash := sha256.Sum256([]byte(id))
	res := s.Apply(&ledger.CreateOrganization{At: 1, ID: id, Name: id,
		Key: ledger.CreateAPIKey{At: 1, ID: "key_" + id, OrgID: id, Hash: string(hash[:])}})
	if res.Err != nil {
		s.tb.Fatal(res.Err)
	}
}

// TwoOrgs is a ledger with organizations org_a and org_b (Org): one to
// act in, one whose records must stay out of its reach.
func TwoOrgs(tb testing.TB) *State {
	tb.Helper()
	s := New(tb)
	s.Org("org_a")
	s.Org("org_b")
	return s
}

// EventTypesSince returns the types of the events recorded after event
// seq, in order: what the commands applied since emitted.
func (s *State) EventTypesSince(seq uint64) []string {
	var types []string
	for ; seq < s.EventCount(); seq++ {
		ev, _ := s.EventAt(seq + 1)
		types = append(types, ev.Type)
	}
	return types
}

// ExpiryDue reports whether a Tick at leader time at would expire
// anything (State.ExpiryDue).
func (s *State) ExpiryDue(at int64) bool { return s.st.ExpiryDue(at) }

// Check verifies the ledger's invariants over what is committed.
func (s *State) Check() error { return ledger.Check(s.kv) }

// Dump returns the state store's contents, but for its applied index: two
// states that hold the same dump hold the same ledger (a refused command
// leaves it as it was).
func (s *State) Dump() []byte {
	s.tb.Helper()
	return harness.Dump(s.tb, s.store)
}

// Restored returns the ledger a follower runs once it installs s's
// snapshot, loaded from a copy of the state store; it fails the test unless
// that copy dumps byte for byte as s does.
func (s *State) Restored() *State {
	s.tb.Helper()
	dump := s.Dump()
	store := harness.OpenStore(s.tb)
	if _, err := store.Restore(bytes.NewReader(dump)); err != nil {
		s.tb.Fatal(err)
	}
	r := &State{tb: s.tb, store: store, kv: ledger.KVOf(store), index: store.Applied()}
	st, err := ledger.Load(r.kv)
	if err != nil {
		s.tb.Fatal(err)
	}
	r.st = st
	r.open()
	if !bytes.Equal(r.Dump(), dump) {
		s.tb.Fatal("restored state dumps differently")
	}
	return r
}

// RoundTrip fails the test unless cmds survive the log's codec: decoded as
// they were, and encoded again to the same bytes.
func RoundTrip(tb testing.TB, cmds ...ledger.Command) {
	tb.Helper()
	enc := ledger.EncodeBatch(nil, cmds)
	dec, err := ledger.DecodeBatch(enc)
	if err != nil {
		tb.Fatal(err)
	}
	if len(dec) != len(cmds) {
		tb.Fatalf("%d commands decoded as %d", len(cmds), len(dec))
	}
	for i := range cmds {
		if fmt.Sprintf("%+v", cmds[i]) != fmt.Sprintf("%+v", dec[i]) {
			tb.Fatalf("command %d: %+v decoded as %+v", i, cmds[i], dec[i])
		}
	}
	if !bytes.Equal(ledger.EncodeBatch(nil, dec), enc) {
		tb.Fatal("re-encoding changed the batch")
	}
}

// Ledger is the state machine itself, for what a feature's tests ask of
// it beyond the Reader (its part of the State, ExpiryDue).
func (s *State) Ledger() *ledger.State { return s.st }

// ApplyBatch applies commands as one log entry and commits it: a command
// finds what those before it in the entry wrote, not yet in the state
// store.
func (s *State) ApplyBatch(cmds ...ledger.Command) []ledger.Result {
	s.tb.Helper()
	out := harness.ApplyBatch(s.tb, s.store, s.st, cmds)
	s.commit()
	return out
}

// RestartCold returns the ledger a restarted node runs from s's state
// store (Restored), and a Reader over the same store loaded again without
// the lookup filter, as a node is until its fill ends: there the state
// store answers alone.
func (s *State) RestartCold() (*State, *ledger.Reader) {
	s.tb.Helper()
	r := s.Restored()
	cold, err := ledger.Load(r.kv)
	if err != nil {
		s.tb.Fatal(err)
	}
	return r, ledger.NewReader(r.kv, cold.Views())
}

// MustApply applies cmd and stops the test if the ledger refuses it.
func MustApply(tb testing.TB, s *State, cmd ledger.Command) ledger.Result {
	tb.Helper()
	r := s.Apply(cmd)
	if r.Err != nil {
		tb.Fatalf("%T: %v", cmd, r.Err)
	}
	return r
}

// ApplyRejected applies cmd, wants the error want, and checks that nothing
// changed: the state store's bytes are the same.
func ApplyRejected(tb testing.TB, s *State, cmd ledger.Command, want error) {
	tb.Helper()
	before := s.Dump()
	r := s.Apply(cmd)
	if !errors.Is(r.Err, want) {
		tb.Fatalf("%T %+v: got %v, want %v", cmd, cmd, r.Err, want)
	}
	if !bytes.Equal(s.Dump(), before) {
		tb.Fatalf("%T %+v: a rejected command changed the state", cmd, cmd)
	}
}

// OrgA is a ledger with one organization, org_a named A, with its key
// key_a.
func OrgA(tb testing.TB) *State {
	tb.Helper()
	hash := sha256.Sum256([]byte("k"))
	return New(tb).With(&ledger.CreateOrganization{At: 1, ID: "org_a", Name: "A",
		Key: ledger.CreateAPIKey{At: 1, ID: "key_a", OrgID: "org_a", Hash: string(hash[:])}})
}

// With applies cmds, each as a log entry of its own, and returns s: a
// fixture built on another. It stops the test if the ledger refuses one or
// its invariants no longer hold after it (MustApplyChecked).
func (s *State) With(cmds ...ledger.Command) *State {
	s.tb.Helper()
	for _, cmd := range cmds {
		MustApplyChecked(s.tb, s, cmd)
	}
	return s
}

// Edit is one way to spoil a good command C, and the error the ledger
// refuses the spoiled command with.
type Edit[C any] struct {
	Name string
	Edit func(c *C)
	Want error
}

// RefuseEdits applies good as each of edits spoils it, in a subtest of its
// own: the ledger must refuse it with the edit's error and change nothing
// (ApplyRejected), and its invariants must still hold.
func RefuseEdits[C any, P interface {
	*C
	ledger.Command
}](t *testing.T, s *State, good *C, edits []Edit[C]) {
	t.Helper()
	for _, e := range edits {
		t.Run(e.Name, func(t *testing.T) {
			c := *good
			e.Edit(&c)
			ApplyRejected(t, s, P(&c), e.Want)
			if err := s.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// RailFixture is a ledger with an organization org_a holding 1,000.00 GHS,
// a pending payout pay_1 (100.00 + 1.00 fee) and a pending collection
// col_1 (50.00): what a rail's commands (instructions, feeds) act on.
func RailFixture(tb testing.TB) *State {
	tb.Helper()
	return OrgA(tb).With(
		&ledger.FundBalance{At: 2, OrgID: "org_a", Currency: "GHS", Amount: 100_000, ExternalReference: "f1"},
		&ledger.CreatePayout{At: 3, ID: "pay_1", OrgID: "org_a", ExternalReference: "p1", MethodType: ledger.MethodMobileMoney, Fee: 100,
			Spec: ledger.PayoutSpec{Currency: "GHS", Amount: 10_000, AmountSide: ledger.SideTo, Method: "gh_mtn", AccountNumber: "233241234567"}},
		&ledger.CreateCollection{At: 3, ID: "col_1", OrgID: "org_a", ExternalReference: "c1", MethodType: ledger.MethodMobileMoney,
			Spec: ledger.CollectionSpec{Currency: "GHS", Amount: 5_000, Method: "gh_mtn", PayerNumber: "233241234567"}})
}

// MustApplyChecked is MustApply that also stops the test if the ledger's
// invariants no longer hold after cmd.
func MustApplyChecked(tb testing.TB, s *State, cmd ledger.Command) ledger.Result {
	tb.Helper()
	r := MustApply(tb, s, cmd)
	if err := s.Check(); err != nil {
		tb.Fatalf("%T: %v", cmd, err)
	}
	return r
}

// WalkOpen reads every record of an open list (a feature's reader over
// ledger.ReadOpen) from r through page, limit records a page: small pages
// walk the cursor.
func WalkOpen[V any](r *ledger.Reader, page func(r *ledger.Reader, after ledger.OpenCursor, limit int) ([]V, ledger.OpenCursor, bool), limit int) []V {
	var all []V
	var cur ledger.OpenCursor
	for {
		items, next, last := page(r, cur, limit)
		all = append(all, items...)
		if last {
			return all
		}
		cur = next
	}
}

// Layout is bytes written out by hand, field by field in the codec's
// encodings, for the tests that hold a frozen layout to them.
type Layout []byte

// CommandEntry starts a log entry of one command of kind k, as every build
// has written it (the batch's version byte, the count, the kind); the
// command's fields follow.
func CommandEntry(k ledger.Kind) Layout {
	b := ledger.EncodeBatch(nil, nil)[:1]
	b = binary.AppendUvarint(b, 1)
	return append(b, uint8(k))
}

// Str appends a string: its length, then its bytes.
func (l Layout) Str(s string) Layout {
	return append(binary.AppendUvarint(l, uint64(len(s))), s...)
}

// Varint appends a signed varint (times, amounts).
func (l Layout) Varint(v int64) Layout { return binary.AppendVarint(l, v) }

// Byte appends one byte (a status, a kind).
func (l Layout) Byte(b uint8) Layout { return append(l, b) }

// ApplyAnswered applies cmd, which is answered without a change (a replay,
// a refusal): it stops the test if cmd emitted an event or changed the
// state store's bytes. The caller checks the answer.
func ApplyAnswered(tb testing.TB, s *State, cmd ledger.Command) ledger.Result {
	tb.Helper()
	before, events := s.Dump(), s.EventCount()
	r := s.Apply(cmd)
	if s.EventCount() != events {
		tb.Fatalf("%T: an answered command emitted an event", cmd)
	}
	if !bytes.Equal(s.Dump(), before) {
		tb.Fatalf("%T: an answered command changed the state", cmd)
	}
	return r
}

// ApplyChecked applies cmd and returns its result and the types of the
// events it emitted; it stops the test if the ledger's invariants no
// longer hold, refused or not.
func ApplyChecked(tb testing.TB, s *State, cmd ledger.Command) (ledger.Result, []string) {
	tb.Helper()
	before := s.EventCount()
	r := s.Apply(cmd)
	if err := s.Check(); err != nil {
		tb.Fatalf("%T: invariant broken: %v", cmd, err)
	}
	return r, s.EventTypesSince(before)
}

// MustEmit is ApplyChecked of a command that must succeed and emit exactly
// events, in order.
func MustEmit(tb testing.TB, s *State, cmd ledger.Command, events ...string) ledger.Result {
	tb.Helper()
	r, got := ApplyChecked(tb, s, cmd)
	if r.Err != nil {
		tb.Fatalf("%T: %v", cmd, r.Err)
	}
	if !slices.Equal(got, events) {
		tb.Fatalf("%T: events %v, want %v", cmd, got, events)
	}
	return r
}

// ApplyEntries applies each of entries as a log entry of its own and
// commits them all at once, as the FSM does a batch of entries: the same
// log must leave the same state store however it is batched.
func (s *State) ApplyEntries(entries ...[]ledger.Command) [][]ledger.Result {
	s.tb.Helper()
	out := harness.ApplyEntries(s.st, entries)
	s.commit()
	return out
}

// Fixture is a ledger and the test it drives it for, command by command,
// checking the ledger's invariants after every one: the fixtures of tests
// that take records through their lives.
type Fixture struct {
	T testing.TB
	S *State
}

// Apply applies cmd and returns its result and the types of the events it
// emitted (ApplyChecked).
func (f *Fixture) Apply(cmd ledger.Command) (ledger.Result, []string) {
	f.T.Helper()
	return ApplyChecked(f.T, f.S, cmd)
}

// Must applies cmd, which must succeed and emit exactly events (MustEmit).
func (f *Fixture) Must(cmd ledger.Command, events ...string) ledger.Result {
	f.T.Helper()
	return MustEmit(f.T, f.S, cmd, events...)
}

// Refuse applies cmd, which must fail with want and change nothing at all
// (ApplyRejected).
func (f *Fixture) Refuse(cmd ledger.Command, want error) {
	f.T.Helper()
	ApplyRejected(f.T, f.S, cmd, want)
}
