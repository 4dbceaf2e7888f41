package ledger

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"payments/wal"
)

// TestPipelinedApplyMatchesSequential applies the same log twice: entry by
// entry, each committed before the next (testState.Apply), and as the FSM
// does under load, where the entries after a flushed batch are applied
// while that batch is being committed, reading the state store as it was
// before it, and several entries are flushed together. Every result, the
// views and the state store must come out the same.
func TestPipelinedApplyMatchesSequential(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			g := &generator{rng: rand.New(rand.NewPCG(seed, 0)), currencies: []string{"GHS", "KES"}}
			var log [][]Command
			for len(log) < 600 {
				entry := make([]Command, 1+g.rng.IntN(6))
				for i := range entry {
					entry[i] = g.next()
				}
				log = append(log, entry)
			}

			seq := newTestState(t)
			var want [][]Result
			for _, entry := range log {
				want = append(want, seq.applyBatch(entry...))
			}

			p := newTestState(t)
			rng := rand.New(rand.NewPCG(seed, 1))
			var inflight *wal.StateBatch // flushed, not yet committed
			var inflightAt uint64
			land := func() {
				if inflight == nil {
					return
				}
				if err := p.store.Commit(inflight, inflightAt); err != nil {
					t.Fatal(err)
				}
				p.st.PublishFlushed()
				p.st.ReleaseFlushed()
				inflight = nil
			}
			for i, entry := range log {
				got := p.applyEntryAsOfStore(entry)
				if !reflect.DeepEqual(got, want[i]) {
					t.Fatalf("entry %d: results %+v, want %+v", i, got, want[i])
				}
				land()
				if rng.IntN(3) == 0 || i == len(log)-1 {
					inflight = p.store.NewBatch()
					p.st.Flush(inflight)
					inflightAt = uint64(i + 1)
				}
			}
			land()
			if err := p.Check(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(encodeSnapshot(t, p), encodeSnapshot(t, seq)) {
				t.Fatal("the pipelined state store differs from the sequential one")
			}
			for _, o := range g.orgs {
				if !reflect.DeepEqual(p.Accounts(o), seq.Accounts(o)) {
					t.Fatalf("%s: views of accounts %+v, want %+v", o, p.Accounts(o), seq.Accounts(o))
				}
			}
		})
	}
}

// applyEntryAsOfStore applies one log entry without committing it, reading
// the state store as it is now.
func (s *testState) applyEntryAsOfStore(cmds []Command) []Result {
	pr, err := s.store.NewPointReader()
	if err != nil {
		s.tb.Fatal(err)
	}
	defer pr.Close()
	restore := s.st.ReadThrough(KVOf(pr))
	defer restore()
	out := make([]Result, len(cmds))
	for i, c := range cmds {
		out[i] = s.st.Apply(c)
	}
	s.st.EndEntry()
	return out
}
