// Package wait is how tests wait for something to happen instead of
// sleeping: they poll a condition until it holds or a deadline passes.
// The actors' tests and the binary's end-to-end tests share it.
//
// Never: it does not stand in for time that must really pass (a node
// frozen for three seconds, a client's back-off); a test says that with a
// sleep.
package wait
