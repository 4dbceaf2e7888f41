package actors

import (
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// Stats are the actors' gauges and counters at one moment, for the node's
// metrics; they are plain atomics kept as the actors work, read without
// stopping anything.
type Stats struct {
	// ActorsAlive counts the processes protoactor has registered: every
	// actor (account, order, quote, webhook endpoint, the routers and
	// drivers) and the futures of requests waiting for replies.
	ActorsAlive int
	// MessagesPosted and MessagesReceived count the messages through the
	// mailboxes of the service's actors; their difference is the depth of
	// all mailboxes together. protoactor does not expose one mailbox's
	// length, and a message left in the mailbox of an actor that stopped
	// stays counted as posted.
	MessagesPosted, MessagesReceived uint64

	// DriverQueued are rail instructions waiting for a worker,
	// DriverRunning those a worker is driving, and DriverWaiting those
	// waiting for an outcome that is not due yet, on the leader.
	DriverQueued, DriverRunning, DriverWaiting int64
	// ParkedTransitions counts the rail transitions the ledger refused
	// (parked with backoff).
	ParkedTransitions uint64

	// WebhookSucceeded and WebhookFailed count the delivery attempts whose
	// outcome was recorded, by outcome (a 2xx answer, or anything else).
	WebhookSucceeded, WebhookFailed uint64
	// WebhookUnrecorded counts attempts whose outcome did not commit (the
	// log refused it, or leadership ended): they are made again.
	WebhookUnrecorded uint64
	// WebhookPending is the number of pending deliveries, and
	// WebhookOldestPending the age of the oldest, as of the leader's last
	// scan of them (every few seconds; zero on a follower).
	WebhookPending       int64
	WebhookOldestPending time.Duration
}

// Stats returns the actors' statistics.
func (s *System) Stats() Stats {
	d := s.deps
	st := Stats{
		MessagesReceived:  d.mailboxes.received.Load(), // before posted: depth is never negative
		MessagesPosted:    d.mailboxes.posted.Load(),
		DriverQueued:      d.driverQueued.Load(),
		DriverRunning:     d.driverRunning.Load(),
		DriverWaiting:     d.driverWaiting.Load(),
		ParkedTransitions: d.parked.Load(),
		WebhookSucceeded:  d.webhooks.succeeded.Load(),
		WebhookFailed:     d.webhooks.failed.Load(),
		WebhookUnrecorded: d.webhooks.unrecorded.Load(),
		WebhookPending:    d.webhooks.pending.Load(),
	}
	if oldest := d.webhooks.oldestCreatedMs.Load(); oldest > 0 && st.WebhookPending > 0 {
		st.WebhookOldestPending = max(0, d.now().Sub(time.UnixMilli(oldest)))
	}
	for _, shard := range s.actors.ProcessRegistry.LocalPIDs.LocalPIDs {
		st.ActorsAlive += shard.Count()
	}
	return st
}

// props is actor.PropsFromProducer with the mailbox counters: every actor
// of the service is spawned through it.
func (d *deps) props(producer actor.Producer, opts ...actor.PropsOption) *actor.Props {
	return actor.PropsFromProducer(producer, append(opts, actor.WithMailbox(actor.Unbounded(&d.mailboxes)))...)
}

// mailboxCounter counts the messages into and out of the mailboxes it is
// installed in (a protoactor mailbox middleware).
type mailboxCounter struct{ posted, received atomic.Uint64 }

func (m *mailboxCounter) MailboxStarted()     {}
func (m *mailboxCounter) MessagePosted(any)   { m.posted.Add(1) }
func (m *mailboxCounter) MessageReceived(any) { m.received.Add(1) }
func (m *mailboxCounter) MailboxEmpty()       {}

// webhookCounters are the delivery engine's statistics.
type webhookCounters struct {
	succeeded, failed, unrecorded atomic.Uint64
	pending                       atomic.Int64
	oldestCreatedMs               atomic.Int64 // unix ms; 0 when none is pending
}
