package raft_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"payments/raft"
)

// Only the leader confirms its leadership; many concurrent confirmations
// all succeed; after a transfer the old leader no longer confirms, the new
// one does, and LeaderChange announced the change.
func TestConfirmLeaderAndTransfer(t *testing.T) {
	c := newCluster(t, 3)
	li, leader := c.leader()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i, n := range c.nodes {
		err := n.ConfirmLeader(ctx)
		if i == li && err != nil {
			t.Fatalf("the leader n%d did not confirm: %v", i+1, err)
		}
		if i != li && !errors.Is(err, raft.ErrNotConfirmed) {
			t.Fatalf("follower n%d: %v, want ErrNotConfirmed", i+1, err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- leader.ConfirmLeader(ctx)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent confirmation: %v", err)
		}
	}

	changed := leader.LeaderChange()
	if err := leader.TransferLeadership(); err != nil {
		t.Fatalf("transfer: %v", err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no LeaderChange after a transfer")
	}
	if err := leader.ConfirmLeader(ctx); !errors.Is(err, raft.ErrNotConfirmed) {
		t.Fatalf("the old leader after the transfer: %v, want ErrNotConfirmed", err)
	}
	ni, next := c.leader()
	if ni == li {
		t.Fatalf("n%d still leads after the transfer", li+1)
	}
	if err := next.ConfirmLeader(ctx); err != nil {
		t.Fatalf("the new leader n%d: %v", ni+1, err)
	}
}
