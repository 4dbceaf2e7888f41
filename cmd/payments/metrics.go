package main

import (
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"payments/actors"
	"payments/http/metrics"
	"payments/raft"
)

// raftObservers are the histograms the node reports its write path and
// snapshots into (nil observers without a registry).
func raftObservers(reg *metrics.Registry) raft.Observers {
	if reg == nil {
		return raft.Observers{}
	}
	appendTime := reg.Durations("wal_append_duration_seconds",
		"Time to write one batch of Raft log entries to the log, its fsync included.", nil)
	appended := prometheus.NewCounter(prometheus.CounterOpts{Namespace: metrics.Namespace,
		Name: "wal_appended_entries_total", Help: "Raft log entries written to the log."})
	reg.Register(appended)
	commitTime := reg.Durations("raft_commit_duration_seconds",
		"Time from proposing a log entry (a batch of commands) to its being applied, or failing.", nil)
	persistTime := reg.Durations("raft_snapshot_duration_seconds",
		"Time to make a snapshot durable (a sync of the state store: a snapshot here is a reference to it).", nil)
	return raft.Observers{
		LogAppend: func(elapsed time.Duration, entries int) {
			appendTime.Observe(elapsed)
			appended.Add(float64(entries))
		},
		Commit:          commitTime.Observe,
		SnapshotPersist: persistTime.Observe,
	}
}

// registerNodeMetrics registers what the node, its actors and its disk
// report, read at each scrape.
func registerNodeMetrics(reg *metrics.Registry, node *raft.Node, sys *actors.System, nodeID string) {
	reg.Register(&nodeCollector{node: node, sys: sys, nodeID: nodeID})
	reg.Nanoseconds("wal_fsync_duration_seconds",
		"Fsyncs of the Raft log store's write-ahead file (one per appended batch, and one per term or vote change), as Pebble measures them.",
		node.LogFsyncLatency(), metrics.FsyncBuckets)
}

// nodeCollector reads the node's and the actors' statistics once per
// scrape and reports them as gauges and counters.
type nodeCollector struct {
	node   *raft.Node
	sys    *actors.System
	nodeID string
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(metrics.Namespace, "", name), help, labels, nil)
}

var (
	descInfo          = desc("node_info", "Always 1: this node's id and version.", "node_id", "version")
	descRaftState     = desc("raft_state", "1 for the node's Raft state, 0 for the others.", "state")
	descRaftLeader    = desc("raft_is_leader", "1 when this node leads and has applied every earlier entry (it takes writes).")
	descLeaderKnown   = desc("raft_leader_known", "1 when this node knows a leader.")
	descTerm          = desc("raft_term", "The current Raft term; it rises with every election.")
	descLastLogIndex  = desc("raft_last_log_index", "The last index in this node's log.")
	descCommitIndex   = desc("raft_commit_index", "The highest log index this node knows to be committed.")
	descAppliedIndex  = desc("raft_applied_index", "The highest log index handed to the state machine.")
	descStateIndex    = desc("raft_state_store_index", "The log index the state store (what reads see) is at.")
	descLastContact   = desc("raft_last_contact_seconds", "Seconds since a follower last heard from the leader (0 on the leader, -1 if never).")
	descDumpBytes     = desc("raft_snapshot_dump_bytes", "Size of the last state dump sent to a follower that needed a snapshot (0 before any).")
	descOpenRecords   = desc("ledger_open_records", "Records held in memory by the ledger (the hot state: open records).")
	descLogDisk       = desc("wal_disk_bytes", "Size of the Raft log's files.")
	descStateDisk     = desc("state_store_disk_bytes", "Size of the state store's files: the history and the open records' durable copy.")
	descDiskFree      = desc("data_dir_free_bytes", "Bytes free to this process on the data directory's filesystem.")
	descDiskSize      = desc("data_dir_filesystem_bytes", "Size of the data directory's filesystem.")
	descActors        = desc("actors_alive", "Actor processes registered with protoactor (actors and request futures).")
	descPosted        = desc("actor_messages_posted_total", "Messages posted to the service's actors' mailboxes.")
	descReceived      = desc("actor_messages_received_total", "Messages taken from the service's actors' mailboxes.")
	descMailboxDepth  = desc("actor_mailbox_depth", "Messages waiting in all the service's actors' mailboxes together (posted minus received).")
	descDriverQueued  = desc("rail_driver_queued", "Rail instructions waiting for a driver worker (leader only).")
	descDriverRunning = desc("rail_driver_running", "Rail instructions a driver worker is driving (leader only).")
	descDriverWaiting = desc("rail_driver_waiting", "Rail instructions waiting off the workers for an outcome not due yet (leader only).")
	descParked        = desc("rail_parked_transitions_total", "Rail transitions the ledger refused, parked and retried with backoff.")
	descWebhookTries  = desc("webhook_attempts_total", "Webhook delivery attempts by outcome: succeeded (2xx), failed (anything else), unrecorded (the outcome did not commit; it is made again).", "outcome")
	descWebhookQueue  = desc("webhook_pending_deliveries", "Pending webhook deliveries, as of the leader's last scan (every 5s; 0 on followers).")
	descWebhookAge    = desc("webhook_oldest_pending_age_seconds", "Age of the oldest pending webhook delivery, as of the leader's last scan (0 when none).")
)

func (c *nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descInfo, descRaftState, descRaftLeader, descLeaderKnown, descTerm,
		descLastLogIndex, descCommitIndex, descAppliedIndex, descStateIndex, descLastContact, descDumpBytes,
		descOpenRecords, descLogDisk, descStateDisk, descDiskFree, descDiskSize, descActors, descPosted,
		descReceived, descMailboxDepth, descDriverQueued, descDriverRunning, descDriverWaiting, descParked, descWebhookTries,
		descWebhookQueue, descWebhookAge} {
		ch <- d
	}
}

func (c *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge(descInfo, 1, c.nodeID, version)

	rs := c.node.Stats()
	for _, state := range []string{"Follower", "Candidate", "Leader", "Shutdown"} {
		gauge(descRaftState, boolFloat(rs.State == state), state)
	}
	gauge(descRaftLeader, boolFloat(rs.Leader))
	gauge(descLeaderKnown, boolFloat(rs.LeaderKnown))
	gauge(descTerm, float64(rs.Term))
	gauge(descLastLogIndex, float64(rs.LastLogIndex))
	gauge(descCommitIndex, float64(rs.CommitIndex))
	gauge(descAppliedIndex, float64(rs.AppliedIndex))
	gauge(descStateIndex, float64(rs.StateIndex))
	lastContact := rs.LastContactAgo.Seconds()
	if rs.LastContactNever {
		lastContact = -1
	}
	gauge(descLastContact, lastContact)
	gauge(descDumpBytes, float64(rs.SnapshotDumpBytes))
	gauge(descOpenRecords, float64(rs.OpenRecords))
	gauge(descLogDisk, float64(c.node.LogDiskBytes()))
	gauge(descStateDisk, float64(c.node.StateDiskBytes()))
	var fs syscall.Statfs_t
	if syscall.Statfs(c.node.DataDir(), &fs) == nil {
		gauge(descDiskFree, float64(fs.Bavail)*float64(fs.Bsize))
		gauge(descDiskSize, float64(fs.Blocks)*float64(fs.Bsize))
	}

	as := c.sys.Stats()
	gauge(descActors, float64(as.ActorsAlive))
	counter(descPosted, float64(as.MessagesPosted))
	counter(descReceived, float64(as.MessagesReceived))
	gauge(descMailboxDepth, float64(max(0, int64(as.MessagesPosted-as.MessagesReceived))))
	gauge(descDriverQueued, float64(as.DriverQueued))
	gauge(descDriverRunning, float64(as.DriverRunning))
	gauge(descDriverWaiting, float64(as.DriverWaiting))
	counter(descParked, float64(as.ParkedTransitions))
	counter(descWebhookTries, float64(as.WebhookSucceeded), "succeeded")
	counter(descWebhookTries, float64(as.WebhookFailed), "failed")
	counter(descWebhookTries, float64(as.WebhookUnrecorded), "unrecorded")
	gauge(descWebhookQueue, float64(as.WebhookPending))
	gauge(descWebhookAge, as.WebhookOldestPending.Seconds())
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
