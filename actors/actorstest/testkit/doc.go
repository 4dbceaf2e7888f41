// Package testkit holds the small stand-ins that tests of every layer
// share: a clock a test moves by hand, DNS answered from a map, a buffer
// that goroutines write while a test reads it, and the check of a
// committed file against what the code makes now (rewritten with -update).
//
// Never: it imports nothing but the standard library, so that a test of
// any package (the WAL's, Raft's, the front end's) may use it.
package testkit
