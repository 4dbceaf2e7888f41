// Package fakehttp is what the fake providers (momofake, mpesafake) share
// around their own APIs: the Core of their state (a bounded log of the
// requests they received, one-shot faults queued per operation, the money
// that moved, callbacks delivered in the background), payouts Held for a
// test, the plain helpers for answering (reading a bounded body, dropping
// a connection unanswered, JSON answers, random tokens) and what their
// standalone commands share: a loopback listener, the shell lines they
// print, serving until a signal.
//
// A Core and a Held live under their fake's lock, as their docs say; the
// plain helpers hold no state.
//
// Never: it does not decide what a provider answers (codes, bodies, fault
// messages stay in each fake, in that provider's words).
package fakehttp
