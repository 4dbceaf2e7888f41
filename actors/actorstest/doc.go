// Package actorstest starts the actors on a real single-node Raft cluster
// for the tests of actors and of the packages built on it (actors/app), so
// that each test harness does not open, elect and tear down its own copy.
//
// Never: it is imported by tests only, and it creates no organization or
// key of its own; what a harness sets up on the running system stays in
// that harness.
package actorstest
