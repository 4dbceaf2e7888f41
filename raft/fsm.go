package raft

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	hraft "github.com/hashicorp/raft"

	"payments/ledger"
	"payments/wal"
)

// fsm feeds committed log entries to the ledger and commits what each
// batch of them changed to the state store, with the batch's last index.
// hashicorp/raft calls ApplyBatch, Snapshot and Restore from one goroutine;
// readers never come here: they read the state store through the Reader
// the fsm publishes.
type fsm struct {
	store   *wal.StateStore
	kv      stateKV
	state   *ledger.State // the applying goroutine's
	applied uint64        // the last index in the state store
	observe Observers     // the node's metrics

	openRecords atomic.Int64 // the ledger's records in memory, after the last batch

	reader atomic.Pointer[ledger.Reader]

	// visible is the last index readers see (applied and committed to
	// the state store); visibleChanges broadcasts each move (WaitApplied).
	visible        atomic.Uint64
	visibleChanges *broadcast

	members memberAddrs // members' HTTP addresses, from the log
}

var _ hraft.BatchingFSM = (*fsm)(nil)

// newFSM loads the ledger from the state store: the open records into
// memory, as of the store's applied index.
func newFSM(store *wal.StateStore) (*fsm, error) {
	f := &fsm{store: store, kv: stateKV{store}, visibleChanges: newBroadcast()}
	if err := f.load(); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *fsm) load() error {
	s, err := ledger.Load(f.kv)
	if err != nil {
		return fmt.Errorf("raft: load the ledger from the state store: %w", err)
	}
	f.state = s
	f.applied = f.store.Applied()
	f.setVisible(f.applied)
	if err := f.members.load(f.store); err != nil {
		return fmt.Errorf("raft: load member addresses: %w", err)
	}
	f.openRecords.Store(int64(s.OpenRecords()))
	r := ledger.NewReader(f.kv, s.Views())
	f.reader.Store(r)
	// Until the lookup filter holds every reference in the store, creates
	// read the store to prove theirs new; the fill runs beside them, and
	// is abandoned when a restore replaces the state or the store closes.
	go func() {
		_ = s.Views().FillLookupFilter(f.kv, func() bool { return f.reader.Load() != r })
	}()
	return nil
}

// Reader returns the readers' view of the applied state.
func (f *fsm) Reader() *ledger.Reader { return f.reader.Load() }

// ApplyBatch applies committed entries in log order, then commits their
// changes to the state store in one batch. Each command entry is a batch of
// ledger commands; its response is their results. Entries the state store
// has already (after a restart, the store may be ahead of the snapshot
// Raft starts from) are skipped. An entry that does not decode passed the
// log's checksum, so it was written that way: the node stops rather than
// skip it and diverge from its peers.
func (f *fsm) ApplyBatch(logs []*hraft.Log) []interface{} {
	responses := make([]interface{}, len(logs))
	last := logs[len(logs)-1].Index
	if last <= f.applied {
		return responses
	}
	// Apply's reads (a reference looked up, a record that closed before
	// this batch) go through one iterator for the whole batch.
	pr, err := f.store.NewPointReader()
	if err != nil {
		panic(fmt.Sprintf("raft: read the state store: %v", err))
	}
	restore := f.state.ReadThrough(pointKV{pr})
	var memberChanges map[string]string
	for i, l := range logs {
		if l.Index <= f.applied || l.Type != hraft.LogCommand {
			continue
		}
		if isMemberEntry(l.Data) {
			if memberChanges == nil {
				memberChanges = map[string]string{}
			}
			if err := stageMemberEntry(l.Data, memberChanges); err != nil {
				panic(fmt.Sprintf("raft: log entry %d: member addresses do not decode: %v", l.Index, err))
			}
			continue
		}
		cmds, err := ledger.DecodeBatch(l.Data)
		if err != nil {
			panic(fmt.Sprintf("raft: log entry %d does not decode: %v", l.Index, err))
		}
		results := make([]ledger.Result, len(cmds))
		for j, c := range cmds {
			results[j] = f.state.Apply(c)
		}
		f.state.EndEntry()
		responses[i] = results
	}
	restore()
	pr.Close()
	b := f.store.NewBatch()
	f.state.Flush(b)
	if err := f.members.write(b, memberChanges); err != nil {
		panic(fmt.Sprintf("raft: stage member addresses: %v", err))
	}
	if err := f.store.Commit(b, last); err != nil {
		panic(fmt.Sprintf("raft: commit the state of entries up to %d: %v", last, err))
	}
	f.state.Committed()
	if memberChanges != nil {
		f.members.publish(memberChanges)
	}
	f.applied = last
	f.openRecords.Store(int64(f.state.OpenRecords()))
	f.setVisible(last)
	return responses
}

// setVisible publishes that readers see every entry up to index.
func (f *fsm) setVisible(index uint64) {
	f.visible.Store(index)
	f.visibleChanges.notify()
}

// Apply applies one entry; hashicorp/raft uses ApplyBatch instead.
func (f *fsm) Apply(l *hraft.Log) interface{} {
	return f.ApplyBatch([]*hraft.Log{l})[0]
}

// Snapshot returns at once: the state store is the snapshot. Persist makes
// it durable up to (at least) this index, which is what lets Raft delete
// the log before it, and writes a small reference to it.
func (f *fsm) Snapshot() (hraft.FSMSnapshot, error) {
	return &fsmSnapshot{store: f.store, applied: f.applied, onPersist: f.observe.SnapshotPersist}, nil
}

// Restore replaces the state with a snapshot installed from the leader: a
// dump of its state store (see snapshotStore.Open). A reference to this
// node's own store is accepted when the store already has its index.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	br := bufio.NewReader(rc)
	head, err := br.Peek(len(refMagic))
	if err != nil {
		return fmt.Errorf("raft: read snapshot: %w", err)
	}
	if string(head) == refMagic {
		applied, err := readRef(br)
		if err != nil {
			return err
		}
		if applied > f.store.Applied() {
			return fmt.Errorf("raft: snapshot refers to a state store at %d, and this node's is at %d", applied, f.store.Applied())
		}
		return nil
	}
	// Readers that still hold the state being replaced must not trust its
	// lookup filter over the new store.
	f.state.Views().RetireLookupFilter()
	if _, err := f.store.Restore(br); err != nil {
		return fmt.Errorf("raft: restore the state store: %w", err)
	}
	return f.load()
}

// fsmSnapshot is a reference to the state store at an applied index.
type fsmSnapshot struct {
	store     *wal.StateStore
	applied   uint64
	onPersist func(time.Duration)
}

func (s *fsmSnapshot) Persist(sink hraft.SnapshotSink) error {
	if s.onPersist != nil {
		defer func(start time.Time) { s.onPersist(time.Since(start)) }(time.Now())
	}
	if err := s.store.Sync(); err != nil {
		sink.Cancel()
		return fmt.Errorf("raft: sync the state store: %w", err)
	}
	if _, err := sink.Write(encodeRef(s.applied)); err != nil {
		sink.Cancel()
		return fmt.Errorf("raft: write snapshot: %w", err)
	}
	return sink.Close()
}

func (s *fsmSnapshot) Release() {}

// A snapshot file is one of two things:
//
//   - a reference, written by Persist on this node: "PAYSREF" and a version
//     byte, then the applied index (8 bytes, big-endian) that the state
//     store had reached, durably, when it was taken;
//   - a state dump (package wal's format, "PAYSTATE…"), received from a
//     leader: the whole state store, history included.
//
// A reference is small and costs nothing to take; snapshotStore turns it
// into a dump when Raft opens it to send to a follower.
const (
	refMagic   = "PAYSREF"
	refVersion = 1
	refLen     = len(refMagic) + 1 + 8
)

func encodeRef(applied uint64) []byte {
	b := make([]byte, refLen)
	copy(b, refMagic)
	b[len(refMagic)] = refVersion
	binary.BigEndian.PutUint64(b[len(refMagic)+1:], applied)
	return b
}

func readRef(r io.Reader) (uint64, error) {
	var b [refLen]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, fmt.Errorf("raft: read snapshot reference: %w", err)
	}
	if string(b[:len(refMagic)]) != refMagic || b[len(refMagic)] != refVersion {
		return 0, errors.New("raft: not a snapshot reference of this version")
	}
	return binary.BigEndian.Uint64(b[len(refMagic)+1:]), nil
}

// snapshotStore is hashicorp's file snapshot store, but for Open: a
// reference to this node's state store is opened as a dump of it, so that
// a follower that needs a snapshot receives the whole state. Raft opens a
// snapshot only to send it or to restore it after receiving it (this node
// starts from its state store, not from a snapshot: see
// NoSnapshotRestoreOnStart in start).
type snapshotStore struct {
	*hraft.FileSnapshotStore
	state     *wal.StateStore
	dumpBytes *atomic.Int64 // the size of the last dump opened, for the metrics
}

func (s *snapshotStore) Open(id string) (*hraft.SnapshotMeta, io.ReadCloser, error) {
	meta, rc, err := s.FileSnapshotStore.Open(id)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReader(rc)
	head, _ := br.Peek(len(refMagic))
	if !bytes.Equal(head, []byte(refMagic)) {
		return meta, readCloser{br, rc}, nil
	}
	rc.Close()
	snap, err := s.state.NewSnapshot()
	if err != nil {
		return nil, nil, err
	}
	size, err := snap.DumpSize()
	if err != nil {
		snap.Close()
		return nil, nil, err
	}
	pr, pw := io.Pipe()
	go func() {
		defer snap.Close()
		_, err := snap.WriteDump(pw)
		pw.CloseWithError(err)
	}()
	s.dumpBytes.Store(size)
	m := *meta
	m.Size = size
	return &m, pr, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// stateKV is the state store as the ledger reads it.
type stateKV struct{ s *wal.StateStore }

func (kv stateKV) Get(key []byte, fn func([]byte)) (bool, error) {
	ok, err := kv.s.Get(key, fn)
	return ok, closedError(err)
}

func (kv stateKV) NewIter(lower, upper []byte) (ledger.Iterator, error) {
	it, err := kv.s.NewIter(lower, upper)
	if err != nil {
		return nil, closedError(err)
	}
	return it, nil
}

// closedError tells the ledger that the store is closed in its own terms.
func closedError(err error) error {
	if errors.Is(err, wal.ErrClosed) {
		return fmt.Errorf("%w: %w", ledger.ErrStoreClosed, err)
	}
	return err
}

// Snapshot pins a consistent view of the store.
func (kv stateKV) Snapshot() (ledger.KVReader, func(), error) {
	sn, err := kv.s.NewSnapshot()
	if err != nil {
		return nil, nil, closedError(err)
	}
	return snapshotKV{sn}, sn.Close, nil
}

// pointKV is the FSM's reader of one applied batch.
type pointKV struct{ r *wal.PointReader }

func (kv pointKV) Get(key []byte, fn func([]byte)) (bool, error) {
	ok, err := kv.r.Get(key, fn)
	return ok, closedError(err)
}

func (kv pointKV) NewIter(lower, upper []byte) (ledger.Iterator, error) {
	it, err := kv.r.NewIter(lower, upper)
	if err != nil {
		return nil, closedError(err)
	}
	return it, nil
}

// snapshotKV is a snapshot of the state store as the ledger reads it.
type snapshotKV struct{ s *wal.StateSnapshot }

func (kv snapshotKV) Get(key []byte, fn func([]byte)) (bool, error) { return kv.s.Get(key, fn) }

func (kv snapshotKV) NewIter(lower, upper []byte) (ledger.Iterator, error) {
	it, err := kv.s.NewIter(lower, upper)
	if err != nil {
		return nil, err
	}
	return it, nil
}
