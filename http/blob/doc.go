// Package blob is a content-addressed store of file bytes on a node's disk:
// each blob is a file named by the lower-case hex SHA-256 of its bytes,
// under <data-dir>/blobs/ab/abcdef….
//
// Why the disk and not Pebble or the ledger: the ledger is held in memory
// and snapshotted whole, so megabytes of uploads there would cost memory on
// every node and time in every snapshot; the Raft log would carry them
// again. The bytes therefore live beside the log, named by their digest, and
// the ledger's file record carries only the digest. Package http replicates
// a blob to a majority of nodes before the record is committed, and a node
// that lacks a blob fetches it from a peer and checks its digest; a name
// that is a digest makes both idempotent and self-verifying.
//
// Durability: Put writes a temporary file, fsyncs it, renames it into place
// and fsyncs the directory, so a blob that Put reported is on disk whole,
// and a crash leaves at worst a temporary file, removed by Open.
//
// A Store is safe for concurrent use: writers of the same blob race only to
// rename identical bytes onto the same name. It never deletes a blob.
package blob
