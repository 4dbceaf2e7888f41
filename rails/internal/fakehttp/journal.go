package fakehttp

import "sync"

// Journal is what a fake provider records for its tests to read: the
// requests it received, the faults queued for its next requests, the money
// it moved and the callbacks it sent. R is the fake's request record, F
// its fault, M a movement, C a callback.
//
// It is guarded by the fake's own lock (Init), which also guards the rest
// of the fake's state: Record, NextFault and Moved are called by the fake's
// handlers holding it; the read methods and FailNext take it.
type Journal[R, F, M, C any] struct {
	mu        *sync.Mutex
	requests  []*R // the latest RequestLogMax
	faults    map[string][]F
	movements []M
	callbacks []C
	inFlight  sync.WaitGroup // callbacks being sent
}

// Init sets the lock that guards the journal.
func (j *Journal[R, F, M, C]) Init(mu *sync.Mutex) {
	j.mu = mu
	j.faults = map[string][]F{}
}

// Record logs a request; the caller holds the lock.
func (j *Journal[R, F, M, C]) Record(r *R) { j.requests = Record(j.requests, r) }

// NextFault takes the fault queued for the next request of op, if any;
// the caller holds the lock.
func (j *Journal[R, F, M, C]) NextFault(op string) *F { return NextFault(j.faults, op) }

// Moved records money that moved and returns how many movements there are
// now; the caller holds the lock.
func (j *Journal[R, F, M, C]) Moved(m M) int {
	j.movements = append(j.movements, m)
	return len(j.movements)
}

// Send runs deliver in the background (one callback, once) and records
// what it returns.
func (j *Journal[R, F, M, C]) Send(deliver func() C) {
	j.inFlight.Add(1)
	go func() {
		defer j.inFlight.Done()
		c := deliver()
		j.mu.Lock()
		j.callbacks = append(j.callbacks, c)
		j.mu.Unlock()
	}()
}

// Wait waits for the callbacks in flight.
func (j *Journal[R, F, M, C]) Wait() { j.inFlight.Wait() }

// FailNext makes the next request of op misbehave as f; several queue up.
func (j *Journal[R, F, M, C]) FailNext(op string, f F) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.faults[op] = append(j.faults[op], f)
}

// Requests returns every request received so far (the latest
// RequestLogMax), in order.
func (j *Journal[R, F, M, C]) Requests() []R {
	j.mu.Lock()
	defer j.mu.Unlock()
	return Copies(j.requests)
}

// Count returns how many of the requests op names, as opOf reads a
// request's operation.
func (j *Journal[R, F, M, C]) Count(op string, opOf func(*R) string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for _, r := range j.requests {
		if opOf(r) == op {
			n++
		}
	}
	return n
}

// Movements returns the money that moved, in order.
func (j *Journal[R, F, M, C]) Movements() []M {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]M(nil), j.movements...)
}

// Callbacks waits for the callbacks in flight and returns those sent.
func (j *Journal[R, F, M, C]) Callbacks() []C {
	j.Wait()
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]C(nil), j.callbacks...)
}
