// Package requestlog is a node's request log: Pebble instances of its own
// under the data directory that keep one record per API request this node
// served, for GET /v1/requests. It is never replicated and never in the
// Raft log: each node keeps what it served, and the request id says which
// node that is and where its record sits (package http draws the ids and
// fetches a record from its node).
//
// Like package wal, it knows nothing of payments: a record is a position,
// an id, an organization, a time and opaque bytes (package http encodes
// them, redacted, before they get here).
//
// # Layout
//
// Three Pebble instances:
//
//	records/   'b' | first seq (8 bytes, big-endian) → a batch's block
//	loose/     'r' | seq (8 bytes, big-endian)       → one record
//	index/     'x' | batch (8 bytes, big-endian)     → the batch's entry
//
// seq is a record's position, drawn by NextSeq when the request arrives
// (positions start at the time in microseconds and count one per request,
// so they grow with time and across restarts), and the caller names the
// record by it: package http puts it in the request id, so a lookup by id
// is one seek. The caller appends a batch's records in position order
// (package http holds each record back a moment for that), and Commit
// writes them as one block: per record its seq, its length (uvarint) and
// the record. A record whose position is not above every one already in
// a block (its request began before and ended after another's), or that
// belongs to no organization (pruned on its own, below), goes to loose
// instead. Each Commit then writes one entry to index listing, per
// organization, the positions of its records in the batch, newest first,
// and the organization's previous batch; an organization's records are
// found by following that chain from its newest batch, which Open reads
// from the index (a few per cent of the records' bytes).
//
// Why blocks and three instances: a key per batch keeps the memtable's
// work per record to a copy, and keys that only grow make flushed files
// that never overlap older ones, so Pebble moves them down the levels
// without rewriting them, and pruning, oldest first, is a range deletion
// that drops whole files. An index of random ids, or keys of two kinds
// interleaved in one instance, overlaps every older file, and each
// compaction then rewrites the log; that was the request log's main cost.
// Records are stored uncompressed: compressing them costs more CPU than
// the disk it saves.
//
// A record:
//
//	offset  size  field
//	     0     1  version = 2
//	     1     4  CRC-32C of bytes 5 to the end
//	     5     8  time, unix nanoseconds, signed
//	    13     1  n = len(id)
//	    14     n  id
//	  14+n     1  m = len(organization)
//	  15+n     m  organization
//	  15+n+m   …  the caller's bytes
//
// An entry's encoding is in entry.go. A log of the first format (one
// Pebble directly in the directory, with an index of ids) is moved aside to
// the directory's name + ".v1" when Open finds one, and a new log starts.
//
// # Retention
//
// Records are kept for Options.Retention (default 720h) and while the log
// holds at most Options.MaxBytes (default 1 GiB) of records and entries;
// the oldest batches go first, whole. Records of no organization (the
// empty one: failed authentications with unknown keys, which anyone can
// make) have a share of their own, Options.UnattributedMaxBytes (a tenth
// of MaxBytes by default), and beyond it their oldest go, so that they
// cannot push organizations' records out. A background goroutine prunes
// every PruneInterval, and at once when a commit takes the log past a
// bound; a log over a bound is pruned down to the bound less a sixteenth,
// so that a full log is pruned once per sixteenth written rather than
// after every commit (each pruning leaves range tombstones that every
// iterator pays for until they are flushed). A record past its retention
// but not yet pruned is not returned.
// MaxBytes bounds the live records' bytes; Pebble's files may hold more
// until compactions reclaim what was deleted.
//
// # Durability
//
// Writes are not synced: a crash loses the records of the last moments
// (Pebble's WAL is written, not fsynced). A crash between a batch's
// records and its entry leaves records no listing shows (found by id
// still); one between pruning's deletions leaves entries whose records are
// gone, which reads skip. A request log is evidence, not state; the
// ledger's durability does not depend on it.
//
// # Concurrency
//
// Append and Commit are called from one goroutine (the recorder); NextSeq,
// Get, Scan and Prune are safe for concurrent use with them and with each
// other.
package requestlog
