// Package rounds shares one run of a function among the callers that arrive
// while the previous run is in flight: under load, one leader-confirmation
// round (package raft) or one read-index fetch from the leader (http/core)
// serves many requests.
//
// A caller joins the next run, never one already started: a run that began
// before the caller arrived may have read state older than what was
// committed when the caller did.
package rounds

import (
	"context"
	"sync"
)

// Rounds runs a function in rounds shared by the callers that join them.
// The zero value is ready to use.
type Rounds[T any] struct {
	mu      sync.Mutex
	next    *round[T] // the round callers join; nil when none waits
	running bool
}

type round[T any] struct {
	done  chan struct{}
	value T
	err   error
}

// Do joins the next round of run and waits for its result, or for ctx.
// Every caller of one Rounds must pass the same run.
func (s *Rounds[T]) Do(ctx context.Context, run func() (T, error)) (T, error) {
	r := s.join(run)
	select {
	case <-r.done:
		return r.value, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

func (s *Rounds[T]) join(run func() (T, error)) *round[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next == nil {
		s.next = &round[T]{done: make(chan struct{})}
	}
	r := s.next
	if !s.running {
		s.running = true
		go s.loop(run)
	}
	return r
}

// loop runs rounds while callers wait for one.
func (s *Rounds[T]) loop(run func() (T, error)) {
	for {
		s.mu.Lock()
		r := s.next
		s.next = nil
		if r == nil {
			s.running = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		r.value, r.err = run()
		close(r.done)
	}
}
