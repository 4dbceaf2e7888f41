package actors

import (
	"slices"
	"sync"

	"payments/ledger"
)

// Proposer turns the commands of many actors into few log entries. One
// goroutine takes every command waiting in the intake queue, encodes them as
// one batch and appends it; while the log is busy writing the previous batch
// (one fsync), the next one grows. This is the group commit of the write
// path: under load one fsync covers hundreds of payouts.
//
// A second goroutine waits for batches in the order they were appended and
// hands each command's result to its callback, so results reach each actor
// in log order.
type Proposer struct {
	log     Replicator
	intake  chan proposal
	applied chan appendedBatch
	stop    chan struct{}
	wg      sync.WaitGroup

	scratch []byte // batchLoop's encoding buffer, reused
}

// Limits of the proposer's queues.
const (
	proposerIntakeMax   = 65536 // commands waiting to be batched
	proposerBatchMax    = 2048  // commands in one log entry
	proposerBatchBytes  = 4 << 20
	proposerInFlightMax = 64 // batches appended, not yet applied
)

type proposal struct {
	cmd  ledger.Command
	done func(ledger.Result, error)
}

type appendedBatch struct {
	pending Pending
	dones   []func(ledger.Result, error)
}

// NewProposer starts a proposer appending to log.
func NewProposer(log Replicator) *Proposer {
	p := &Proposer{
		log:     log,
		intake:  make(chan proposal, proposerIntakeMax),
		applied: make(chan appendedBatch, proposerInFlightMax),
		stop:    make(chan struct{}),
	}
	p.wg.Add(2)
	go p.batchLoop()
	go p.completeLoop()
	return p
}

// Propose queues cmd; done is called exactly once with its result, on the
// proposer's goroutine, so it must not block. It returns ErrOverloaded
// without calling done when the intake is full.
func (p *Proposer) Propose(cmd ledger.Command, done func(ledger.Result, error)) error {
	select {
	case p.intake <- proposal{cmd, done}:
		return nil
	default:
		return ErrOverloaded
	}
}

// ProposeWait proposes cmd and waits for its result.
func (p *Proposer) ProposeWait(cmd ledger.Command) (ledger.Result, error) {
	type answer struct {
		res ledger.Result
		err error
	}
	ch := make(chan answer, 1)
	if err := p.Propose(cmd, func(r ledger.Result, err error) { ch <- answer{r, err} }); err != nil {
		return ledger.Result{}, err
	}
	a := <-ch
	return a.res, a.err
}

// Stop stops the proposer. Commands still queued get ErrNotLeader.
func (p *Proposer) Stop() {
	close(p.stop)
	p.wg.Wait()
}

func (p *Proposer) batchLoop() {
	defer p.wg.Done()
	defer close(p.applied)
	cmds := make([]ledger.Command, 0, proposerBatchMax)
	for {
		var first proposal
		select {
		case first = <-p.intake:
		case <-p.stop:
			p.drainIntake()
			return
		}
		cmds = cmds[:0]
		dones := make([]func(ledger.Result, error), 0, 16)
		cmds = append(cmds, first.cmd)
		dones = append(dones, first.done)
	gather:
		for len(cmds) < proposerBatchMax {
			select {
			case next := <-p.intake:
				cmds = append(cmds, next.cmd)
				dones = append(dones, next.done)
			default:
				break gather
			}
		}
		p.append(cmds, dones)
	}
}

// append encodes cmds as one entry and appends it, splitting a batch whose
// entry would be too large (commands with large metadata) into halves.
//
// The entry is encoded into a reused buffer and handed over as an exact
// copy: Raft keeps recent entries in memory (raft's log cache), and an
// entry allocated at an estimate held a third more than it used.
func (p *Proposer) append(cmds []ledger.Command, dones []func(ledger.Result, error)) {
	p.scratch = ledger.EncodeBatch(p.scratch[:0], cmds)
	if len(p.scratch) > proposerBatchBytes && len(cmds) > 1 {
		half := len(cmds) / 2
		p.append(cmds[:half], dones[:half])
		p.append(cmds[half:], dones[half:])
		return
	}
	entry := slices.Clone(p.scratch)
	if cap(p.scratch) > proposerBatchBytes {
		p.scratch = nil // one oversized batch does not pin its buffer
	}
	p.applied <- appendedBatch{pending: p.log.Append(entry), dones: dones}
}

func (p *Proposer) drainIntake() {
	for {
		select {
		case prop := <-p.intake:
			prop.done(ledger.Result{}, ErrNotLeader)
		default:
			return
		}
	}
}

func (p *Proposer) completeLoop() {
	defer p.wg.Done()
	for b := range p.applied {
		results, err := b.pending.Wait()
		if err == nil && len(results) != len(b.dones) {
			// The FSM answered for a different batch: a bug. Nothing
			// can be said of these commands.
			err = ErrOutcomeUnknown
		}
		for i, done := range b.dones {
			if err != nil {
				done(ledger.Result{}, err)
			} else {
				done(results[i], nil)
			}
		}
	}
}
