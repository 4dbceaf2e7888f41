// Package wal is the service's write-ahead log: a Pebble-backed
// implementation of hashicorp/raft's LogStore (the Raft log) and StableStore
// (the current term and the vote). Raft's safety rests on both surviving a
// crash exactly as acknowledged, so the package spends its effort on
// durability and on refusing to run on a damaged log. It also holds the
// state machine's store (StateStore, state.go), a second Pebble beside the
// log.
//
// # What it must never do
//
// It must never know about payments: entries are opaque bytes, and nothing
// here decodes Data or Extensions. It must never acknowledge a write before
// its fsync, never repair or skip a damaged record, and never serve after it
// has seen one: a node with a damaged log stops, and Raft recovers it from its
// peers or a snapshot.
//
// # Use
//
//	store, err := wal.Open(dir, wal.Options{Logger: logger})
//	logs, err := hraft.NewLogCache(512, store) // the caller adds the cache
//	r, err := hraft.NewRaft(cfg, fsm, logs, store, snapshots, transport)
//
// hraft.NewLogCache keeps recent entries in memory so that replication to
// followers does not read Pebble; this package does not cache.
//
// # Durability
//
// StoreLogs writes all its entries as one Pebble batch committed with one
// fsync (pebble.Sync): after a crash, either every entry of a call is in the
// log or none is. DeleteRange is one range deletion, and Set and SetUint64 one
// write, each with its own fsync. If a WAL write or fsync fails, Pebble has
// already made the batch visible in memory, so the store fails (see below)
// instead of serving data that may not be on disk.
//
// # Keys
//
//	log entry:    'l' | index (8 bytes, big-endian, so keys sort by index)
//	stable value: 's' | the caller's key bytes
//
// # Records
//
// Every value is one of our records. Integers are big-endian. The checksum is
// CRC-32C (Castagnoli) over every byte after it. The version byte comes first
// so that a future layout can be told apart; the constants of version 1 below
// are frozen and must never change meaning.
//
// Log record, version 1 (43 bytes plus Data plus Extensions):
//
//	offset  size  field
//	     0     1  version = 1
//	     1     4  CRC-32C of bytes 5 to the end
//	     5     1  kind = 'L' (0x4c)
//	     6     8  Index (must equal the index in the key)
//	    14     8  Term
//	    22     1  Type (hraft.LogType)
//	    23     8  AppendedAt, seconds since 1970 UTC, signed
//	    31     4  AppendedAt, nanoseconds within the second, < 1e9
//	    35     4  n = len(Data)
//	    39     4  m = len(Extensions)
//	    43     n  Data
//	  43+n     m  Extensions
//
// Stable record, version 1:
//
//	offset  size  field
//	     0     1  version = 1
//	     1     4  CRC-32C of bytes 5 to the end
//	     5     1  kind = 'S' (0x53)
//	     6     4  k = len(key)
//	    10     k  key (must equal the key bytes after 's')
//	  10+k     4  v = len(value)
//	  14+k     v  value (SetUint64: 8 bytes, big-endian)
//
// A record must be exactly as long as its fields say. AppendedAt keeps its
// instant to the nanosecond, including the zero time, and decodes in UTC (the
// location and the monotonic reading are not stored). An empty Data or
// Extensions decodes as nil.
//
// # Opening
//
// Open refuses, with an error wrapping ErrCorrupt, to run on a log it cannot
// vouch for:
//
//   - Before Pebble opens, it reads Pebble's WAL and MANIFEST files. Pebble's
//     replay stops silently at the first damaged record and drops everything
//     after it; Open refuses when a damaged record is followed by valid ones,
//     and accepts a torn tail (the last record cut short by a crash). See
//     walcheck.go for how, and for the limits.
//   - After Pebble opens, it reads every record: checksum, index in the key
//     equal to the index in the record, and indexes contiguous from the first
//     to the last. FirstIndex and LastIndex then come from memory.
//
// The store never has gaps: it tells hashicorp/raft so (IsMonotonic), which
// makes raft delete the whole log after installing a snapshot instead of
// leaving a gap. The LogStore contract still allows a gap, so StoreLogs
// accepts one, but logs a warning: the next Open refuses it.
//
// # Errors
//
// GetLog of a missing index returns hraft.ErrLogNotFound itself, unwrapped:
// raft compares it with ==. Get and GetUint64 of a missing key return an error
// whose Error() is exactly "not found": raft tells a missing key from a
// failure by comparing that string (raft.go, api.go), so any wrapping or
// rewording would make a fresh node fail to start. Corruption wraps
// ErrCorrupt.
//
// A store fails on corruption found after Open (a record failing its
// checksum in GetLog or Get, or Pebble reporting a damaged block) and on a
// failed WAL write or fsync. From then on every method except Close returns
// an error; only a restart, through Open's checks, brings the node back.
//
// Pebble's log messages go to Options.Logger: informational ones at debug
// level, errors at error level. Pebble calls Fatalf when it cannot go on, and
// would report a failed commit as a success if Fatalf returned; the store's
// Fatalf panics instead, and the store turns that panic into a failed store
// when it happens in a call of ours. In Pebble's background goroutines (a
// failed MANIFEST write, say) the panic ends the process, as Pebble intends.
//
// # Concurrency
//
// All methods are safe for concurrent use, as hashicorp/raft needs: it appends
// from its main goroutine, compacts from its snapshot goroutine and reads from
// one goroutine per follower. StoreLogs and DeleteRange are serialized with
// each other, so that the in-memory first and last index move in the order
// the log does; each of them holds the lock for its fsync. Reads and stable
// writes do not take that lock; concurrent fsyncs share one through Pebble's
// group commit. Close waits for calls in progress; calls after Close return
// an error.
//
// # The state store
//
// StateStore is where the replicated state machine keeps everything it
// applied, under keys its caller chooses (package ledger draws the layout
// and versions it), with the index of the last log entry applied. It is
// written one batch at a time, in log order, and has no write-ahead
// log of its own: the Raft log is the durable record. After a crash it
// comes back to its last flushed memtable — whole batches, the applied
// index with them — and the log is applied again from there. Sync
// flushes; the FSM calls it before a snapshot lets Raft delete the log.
//
// A dump (StateSnapshot.WriteDump, read by Restore) is how a follower
// receives a leader's whole store, history included: "PAYSTATE", a format
// version (1), the applied index, every key and value in order, and a
// CRC-32C; state.go draws it byte by byte.
//
// Restore writes a "restoring" marker first, deletes every key, writes the
// dump, flushes, and removes the marker; a store found marked restoring on
// open is incomplete and is restored again from the snapshot.
//
// Settings: a 32 MiB memtable, a 256 MiB block cache (Pebble reserves its
// memtables in the cache, so the cache must be well above twice the
// memtable), bloom filters for point reads, and level 0 allowed to grow to
// 16 tables over a 64 MiB base level before it is compacted; flushes and
// every level below 0 cut into 4 MiB tables. Every flush spans the whole
// key space: fewer compactions of level 0 halved the CPU they take, and
// small tables keep each one to a narrow key range, so that none holds a
// core for long (state.go has the measurements).
//
// # Pebble settings
//
// A 32 MiB memtable (Options.MemTableBytes) suits an append-mostly log whose
// prefix is deleted by range after each snapshot; a 16 MiB block cache; the
// newest format major version; Pebble's defaults otherwise. WAL recycling
// stays on: it saves a metadata update per fsync, and the WAL check is not
// fooled by a recycled file's stale tail (see walcheck.go).
package wal
