package raft

import (
	"fmt"
	"io"
	"sync"

	hraft "github.com/hashicorp/raft"

	"payments/actors"
	"payments/ledger"
)

// fsm feeds committed log entries to the ledger. hashicorp/raft calls
// ApplyBatch, Snapshot and Restore from one goroutine; readers come in
// through Read from any goroutine, under the read lock.
type fsm struct {
	mu    sync.RWMutex
	state *ledger.State
}

var (
	_ hraft.BatchingFSM  = (*fsm)(nil)
	_ actors.StateReader = (*fsm)(nil)
)

func newFSM() *fsm { return &fsm{state: ledger.NewState()} }

// RLockState locks the state for reading and returns it.
func (f *fsm) RLockState() *ledger.State {
	f.mu.RLock()
	return f.state
}

// RUnlockState releases RLockState.
func (f *fsm) RUnlockState() { f.mu.RUnlock() }

// Read calls fn with the state under the read lock.
func (f *fsm) Read(fn func(*ledger.State)) {
	defer f.RUnlockState()
	fn(f.RLockState())
}

// ApplyBatch applies committed entries in log order. Each command entry is
// a batch of ledger commands; its response is their results. An entry that
// does not decode passed the log's checksum, so it was written that way: the
// node stops rather than skip it and diverge from its peers.
func (f *fsm) ApplyBatch(logs []*hraft.Log) []interface{} {
	decoded := make([][]ledger.Command, len(logs))
	for i, l := range logs {
		if l.Type != hraft.LogCommand {
			continue
		}
		cmds, err := ledger.DecodeBatch(l.Data)
		if err != nil {
			panic(fmt.Sprintf("raft: log entry %d does not decode: %v", l.Index, err))
		}
		decoded[i] = cmds
	}
	responses := make([]interface{}, len(logs))
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, cmds := range decoded {
		if cmds == nil {
			continue
		}
		results := make([]ledger.Result, len(cmds))
		for j, c := range cmds {
			results[j] = f.state.Apply(c)
		}
		responses[i] = results
	}
	return responses
}

// WriteState encodes the applied state in the snapshot format, under the
// read lock: equal bytes, equal state.
func (f *fsm) WriteState(w io.Writer) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	_, err := f.state.View().WriteTo(w)
	return err
}

// Apply applies one entry; hashicorp/raft uses ApplyBatch instead.
func (f *fsm) Apply(l *hraft.Log) interface{} {
	return f.ApplyBatch([]*hraft.Log{l})[0]
}

// Snapshot freezes the state in O(1); Persist writes it while Apply goes on.
func (f *fsm) Snapshot() (hraft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &fsmSnapshot{fsm: f, state: f.state, view: f.state.Freeze()}, nil
}

// Restore replaces the state with a snapshot's.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	s, err := ledger.Restore(rc)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.state = s
	f.mu.Unlock()
	return nil
}

type fsmSnapshot struct {
	fsm   *fsm
	state *ledger.State // the state that was frozen (Restore may replace it)
	view  *ledger.Snapshot
	once  sync.Once
}

func (s *fsmSnapshot) Persist(sink hraft.SnapshotSink) error {
	if _, err := s.view.WriteTo(sink); err != nil {
		sink.Cancel()
		return fmt.Errorf("raft: write snapshot: %w", err)
	}
	return sink.Close()
}

// Release thaws the state: the overlays written during the snapshot are
// folded back. Raft calls it whether or not Persist ran.
func (s *fsmSnapshot) Release() {
	s.once.Do(func() {
		s.fsm.mu.Lock()
		s.state.Thaw()
		s.fsm.mu.Unlock()
	})
}
