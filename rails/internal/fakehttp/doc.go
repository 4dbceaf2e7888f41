// Package fakehttp is what the fake providers (momofake, mpesafake) share
// around their own APIs: a bounded log of the requests they received,
// one-shot faults queued per operation, dropping a connection unanswered,
// JSON answers and random tokens.
//
// It holds no state: each fake keeps its log and faults under its own lock
// and passes them in, so these functions are as safe for concurrent use as
// the caller's locking makes them.
//
// Never: it does not decide what a provider answers (codes, bodies, fault
// messages stay in each fake, in that provider's words).
package fakehttp
