package raft

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	hraft "github.com/hashicorp/raft"

	"payments/ledger"
	"payments/wal"
)

// fsm feeds committed log entries to the ledger and commits what they
// changed to the state store, with the index of the last entry, one batch
// at a time. hashicorp/raft calls ApplyBatch, Snapshot and Restore from one
// goroutine; readers never come here: they read the state store through
// the Reader the fsm publishes.
//
// The state store commits beside Apply: while a batch commits, the next
// entries are applied, and they are flushed together once it is done, so
// a loaded node commits fewer, larger batches (a record changed in several
// of them is written once) and applying never waits for Pebble. Raft
// answers an entry's future when ApplyBatch returns, which may be before
// its batch is committed: whoever answers a client from it waits for
// waitCommitted first (Node.Append's Pending, a new leader's Barrier).
type fsm struct {
	store   *wal.StateStore
	kv      stateKV
	observe Observers // the node's metrics

	openRecords atomic.Int64 // the ledger's records in memory, after the last commit

	reader atomic.Pointer[ledger.Reader]

	// visible is the last index readers see (applied and committed to
	// the state store); visibleChanges broadcasts each move (WaitApplied,
	// waitCommitted). handed is the last index handed to ApplyBatch.
	visible        atomic.Uint64
	visibleChanges *broadcast
	handed         atomic.Uint64

	members memberAddrs // members' HTTP addresses, from the log

	// mu guards the ledger and what follows. ApplyBatch holds it while it
	// applies; the committer while it flushes, between commits.
	mu    sync.Mutex
	idle  sync.Cond // signalled when no commit is in flight
	state *ledger.State
	// applied is the last index applied to the ledger, flushed the last
	// one written into a batch for the store (committed, or committing).
	applied, flushed uint64
	unflushed        int               // commands applied since the last flush
	committing       bool              // a committer is at work: it flushes what is applied when its commit is done
	stopped          bool              // the state store closed under a commit: the node is shutting down
	memberChanges    map[string]string // applied, not yet flushed
}

var _ hraft.BatchingFSM = (*fsm)(nil)

// unflushedMax bounds the commands applied while a commit is in flight:
// past it, ApplyBatch waits for the commit and flushes them itself.
const unflushedMax = 32768

// newFSM loads the ledger from the state store: the open records into
// memory, as of the store's applied index.
func newFSM(store *wal.StateStore) (*fsm, error) {
	f := &fsm{store: store, kv: newStateKV(store), visibleChanges: newBroadcast()}
	f.idle.L = &f.mu
	if err := f.load(); err != nil {
		return nil, err
	}
	return f, nil
}

// load (re)builds the ledger from the state store; no commit may be in
// flight.
func (f *fsm) load() error {
	s, err := ledger.Load(f.kv)
	if err != nil {
		return fmt.Errorf("raft: load the ledger from the state store: %w", err)
	}
	f.state = s
	f.applied = f.store.Applied()
	f.flushed, f.unflushed, f.memberChanges = f.applied, 0, nil
	f.handed.Store(f.applied)
	if err := f.members.load(f.store); err != nil {
		return fmt.Errorf("raft: load member addresses: %w", err)
	}
	f.openRecords.Store(int64(s.OpenRecords()))
	r := ledger.NewReader(f.kv, s.Views())
	f.reader.Store(r)
	// Only now is the index visible: a request waiting for it (a key this
	// node did not know, on a node restoring a snapshot) reads the Reader
	// the moment it is, and the one it replaces is the old state's.
	f.setVisible(f.applied)
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

// ApplyBatch applies committed entries in log order and hands their
// changes to the state store: flushed at once into a batch that a
// committer commits, or, while a commit is in flight, gathered for the
// next one. Each command entry is a batch of ledger commands; its response
// is their results, which readers see once waitCommitted(its index)
// returns. Entries the state store has already (after a restart, the
// store may be ahead of the snapshot Raft starts from) are skipped. An
// entry that does not decode passed the log's checksum, so it was written
// that way: the node stops rather than skip it and diverge from its peers.
func (f *fsm) ApplyBatch(logs []*hraft.Log) []interface{} {
	responses := make([]interface{}, len(logs))
	last := logs[len(logs)-1].Index
	f.mu.Lock()
	defer f.mu.Unlock()
	if last <= f.applied {
		return responses
	}
	// Apply's reads (a reference looked up, a record that closed before
	// this batch) go through one iterator for the whole batch. It sees the
	// store as committed so far: the rows of a batch still committing are
	// in memory until it is done (ledger.State.ReleaseFlushed).
	pr, err := f.store.NewPointReader()
	if err != nil {
		panic(fmt.Sprintf("raft: read the state store: %v", err))
	}
	restore := f.state.ReadThrough(readerKV{pr})
	for i, l := range logs {
		if l.Index <= f.applied || l.Type != hraft.LogCommand {
			continue
		}
		if isMemberEntry(l.Data) {
			if f.memberChanges == nil {
				f.memberChanges = map[string]string{}
			}
			if err := stageMemberEntry(l.Data, f.memberChanges); err != nil {
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
		f.unflushed += len(cmds)
		responses[i] = results
	}
	restore()
	pr.Close()
	f.applied = last
	f.handed.Store(last)
	for f.committing && f.unflushed >= unflushedMax {
		f.idle.Wait()
	}
	if !f.committing && !f.stopped {
		f.committing = true
		go f.commitLoop(f.flush())
	}
	return responses
}

// commitJob is a flushed batch on its way to the state store.
type commitJob struct {
	batch   *wal.StateBatch
	last    uint64            // the index of its last entry
	members map[string]string // member addresses it writes
}

// flush writes what was applied since the last flush into a batch. The
// caller holds mu, and the batch flushed before is released.
func (f *fsm) flush() commitJob {
	b := f.store.NewBatch()
	f.state.Flush(b)
	if err := f.members.write(b, f.memberChanges); err != nil {
		panic(fmt.Sprintf("raft: stage member addresses: %v", err))
	}
	job := commitJob{batch: b, last: f.applied, members: f.memberChanges}
	f.flushed, f.unflushed, f.memberChanges = f.applied, 0, nil
	return job
}

// commitLoop commits job, lets readers see it, and goes on with whatever
// was applied meanwhile, until nothing is left; one runs at a time.
func (f *fsm) commitLoop(job commitJob) {
	for {
		if err := f.store.Commit(job.batch, job.last); err != nil {
			if errors.Is(err, wal.ErrClosed) {
				// The node is shutting down: what this batch held is in
				// the log, and nobody was told it was done.
				f.mu.Lock()
				f.committing, f.stopped = false, true
				f.idle.Broadcast()
				f.mu.Unlock()
				return
			}
			panic(fmt.Sprintf("raft: commit the state of entries up to %d: %v", job.last, err))
		}
		// The views move on with the store before the entries are
		// announced; both happen beside Apply, which never touches them.
		f.state.PublishFlushed()
		if job.members != nil {
			f.members.publish(job.members)
		}
		f.setVisible(job.last)
		f.mu.Lock()
		f.state.ReleaseFlushed()
		f.openRecords.Store(int64(f.state.OpenRecords()))
		if f.applied == f.flushed {
			f.committing = false
			f.idle.Broadcast()
			f.mu.Unlock()
			return
		}
		job = f.flush()
		f.idle.Broadcast() // an ApplyBatch waiting for room may go on
		f.mu.Unlock()
	}
}

// quiesce waits until every entry applied is committed to the state store
// and no commit is in flight. The caller holds mu.
func (f *fsm) quiesce() {
	for f.committing {
		f.idle.Wait()
	}
}

// waitIdle is quiesce for a caller that does not hold mu.
func (f *fsm) waitIdle() {
	f.mu.Lock()
	f.quiesce()
	f.mu.Unlock()
}

// waitCommitted waits until readers see every entry up to index that Raft
// has handed to ApplyBatch (an entry past those, a barrier say, is waited
// for as far as the entries before it), or until done is closed, and
// reports which. A caller whose entry Raft has answered knows it was
// handed over.
func (f *fsm) waitCommitted(index uint64, done <-chan struct{}) bool {
	target := min(index, f.handed.Load())
	for {
		changed := f.visibleChanges.wait()
		if f.visible.Load() >= target {
			return true
		}
		select {
		case <-changed:
		case <-done:
			return false
		}
	}
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

// Snapshot returns once the state store holds every entry applied (at
// most one commit away): the state store is the snapshot. Persist makes
// it durable up to (at least) this index, which is what lets Raft delete
// the log before it, and writes a small reference to it.
func (f *fsm) Snapshot() (hraft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.quiesce()
	if f.stopped {
		return nil, fmt.Errorf("raft: snapshot: %w", wal.ErrClosed)
	}
	return &fsmSnapshot{store: f.store, applied: f.store.Applied(), onPersist: f.observe.SnapshotPersist}, nil
}

// Restore replaces the state with a snapshot installed from the leader: a
// dump of its state store (see snapshotStore.Open). A reference to this
// node's own store is accepted when the store already has its index.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.quiesce()
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

// walReader is what the state store and a point reader of it share.
type walReader interface {
	Get(key []byte, fn func([]byte)) (bool, error)
	NewIter(lower, upper []byte) (*wal.StateIter, error)
}

// readerKV is a reader of the state store as the ledger reads it: the FSM's
// reader of one applied batch, or the store itself (stateKV).
type readerKV struct{ r walReader }

func (kv readerKV) Get(key []byte, fn func([]byte)) (bool, error) {
	ok, err := kv.r.Get(key, fn)
	return ok, closedError(err)
}

func (kv readerKV) NewIter(lower, upper []byte) (ledger.Iterator, error) {
	it, err := kv.r.NewIter(lower, upper)
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

// stateKV is the state store as the ledger reads it.
type stateKV struct {
	readerKV
	s *wal.StateStore
}

func newStateKV(s *wal.StateStore) stateKV { return stateKV{readerKV{s}, s} }

// Snapshot pins a consistent view of the store.
func (kv stateKV) Snapshot() (ledger.KVReader, func(), error) {
	sn, err := kv.s.NewSnapshot()
	if err != nil {
		return nil, nil, closedError(err)
	}
	return ledger.KVOf(sn), sn.Close, nil
}
