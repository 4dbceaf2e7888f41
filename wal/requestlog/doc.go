// Package requestlog is a node's request log: a Pebble instance of its own
// under the data directory that keeps one record per API request this node
// served, for GET /v1/requests. It is never replicated and never in the
// Raft log: each node keeps what it served, and the request id says which
// node that is (package http draws the ids and fetches a record from its
// node).
//
// Like package wal, it knows nothing of payments: a record is an id, an
// organization, a time and opaque bytes (package http encodes them,
// redacted, before they get here).
//
// # Retention
//
// Records are kept for Options.Retention (default 720h) and while the log
// holds at most Options.MaxBytes (default 1 GiB) of keys and values; the
// oldest go first. Records of no organization (the empty one: failed
// authentications with unknown keys, which anyone can make) have a share of
// their own, Options.UnattributedMaxBytes (a tenth of MaxBytes by default),
// and beyond it their oldest go, so that they cannot push organizations'
// records out. A background goroutine prunes every PruneInterval, and at
// once when a commit takes the log past a bound. A record past its
// retention but not yet pruned is not returned. MaxBytes bounds the live
// records' bytes; Pebble's files may hold more until compactions reclaim
// what was deleted.
//
// # Durability
//
// Writes are not synced: a crash loses the records of the last moments
// (Pebble's WAL is written, not fsynced). A request log is evidence, not
// state; the ledger's durability does not depend on it.
//
// # Keys
//
//	record:        'r' | seq (8 bytes, big-endian)  → record value
//	by org:        'o' | organization | 0x00 | seq  → empty
//	live bytes:    'm' "bytes"                      → int64 all, int64 of no organization, big-endian
//	by id:         'i' | request id                 → seq (version 1 records only)
//
// seq is drawn by NextSeq when the request arrives, before it is answered,
// and the caller names the record by it (package http puts it in the
// request id), so a lookup by id is one read and the log needs no by-id
// index: an index of random ids would make every compaction rewrite it
// whole. The keys grow with seq, so Pebble's flushes rarely overlap
// older files, and pruning, oldest first, deletes ranges. The record
// value, version 2 (version 1 differs only in having a by-id entry):
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
// # Concurrency
//
// Append and Commit are called from one goroutine (the recorder); NextSeq,
// Get, Scan and Prune are safe for concurrent use with them and with each
// other.
package requestlog
