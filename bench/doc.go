// Package bench is the load generator of the payments service: named
// workloads, a closed-loop runner that measures them, and the report it
// prints. The command paybench (bench/cmd/paybench) is its front end:
//
//	go build -o bin/payments ./cmd/payments
//	go run ./bench/cmd/paybench -spawn ./bin/payments -duration 10s
//
// bench talks to the service over HTTP only, like any client; the service
// must never import it. It only ever targets loopback: Run and the command
// refuse an address outside 127.0.0.0/8 that is not "localhost".
//
// # A run
//
// Each run of a workload has three phases.
//
//  1. Setup, not measured: organizations are created with the bootstrap
//     key, their GHS balances funded generously, and each given keys until
//     the workload has Config.Keys of them (keys create keys, so they grow
//     geometrically and none nears its rate limit). Calls go out in
//     parallel, at most 32 at a time, and the whole setup is bounded by
//     Config.SetupTimeout. A 429 during setup is retried a bounded number
//     of times; any other unexpected status fails the run.
//  2. Warm-up (Config.Warmup), not recorded: the load runs so that
//     connections, caches and the server's heap settle.
//  3. The measured phase: Config.Connections workers, each with one
//     keep-alive connection, each sending one request and waiting for its
//     response before sending the next (a closed loop), until
//     Config.Duration has passed or Config.RequestsMax requests have been
//     sent, whichever comes first. Failed requests are not retried.
//
// The server limits every API key to 100 requests in any one-second
// window. The workers rotate over all the workload's keys in turn, so each
// key carries requests/s ÷ keys; the default of 1000 keys (the most one
// organization may hold) keeps that under 70 up to 70,000 requests/s. The
// report warns when the average rate per key passes 70% of the limit the
// server announced.
//
// # Workloads
//
//   - uniform: new payouts (fresh externalReference each) spread over 64
//     organizations, each with its own balance. It measures the throughput
//     and latency of the write path — validation, Raft commit, ledger apply
//     — when writes do not contend for one account. Expects 201.
//   - hot_account: new payouts that all debit one organization's balance,
//     sent with that organization's keys. It measures how the service
//     serialises writes to a single account; compare it with uniform.
//     Expects 201.
//   - replay: setup creates a pool of payouts (1024 by default, over 64
//     organizations); the load re-sends them, same reference and same body,
//     so every request is an idempotent retry. It measures the replay path,
//     which answers from state without writing anything. Expects 200 (with
//     idempotent-replayed: true).
//
// # Reading the numbers
//
// requests counts the requests sent in the measured phase: those answered,
// whatever their status, and those that failed without an answer
// (transport errors: timeouts, refused or closed connections). req/s is
// requests divided by the measured phase's elapsed time, which runs until
// the last of its responses arrives.
//
// Latency is taken in the client, per request, from just before the
// request is written to when the whole response has been read, over every
// answered request whatever its status; transport errors are counted but
// have no latency. p50, p99 and p999 are nearest-rank quantiles read from a
// log-linear Histogram whose buckets are at most 1/128 of their value wide,
// so a quantile is within 0.4% of the exact one; min and max are exact.
// A closed loop measures service time under a fixed concurrency, not the
// latency an open stream of arrivals would see: when the server stalls, the
// workers stall with it and send fewer requests (coordinated omission), so
// p999 and max are the figures to watch for stalls, and throughput is
// what Connections requests in flight can get.
//
// statuses counts responses by status code. Any status other than the
// workload's expected one is printed on a line of its own, with the
// transport errors, and the command exits 1; nothing is hidden or retried
// away. A 429 means the keys were too few for the rate reached; a 5xx or a
// timeout is the server's.
//
// On a machine with few cores the generator and the server share them, so
// the figures are those of the pair; the generator's share is small
// (fasthttp, with requests and buffers reused) but not zero.
//
// # Concurrency
//
// Run may be called concurrently, and sequentially against one server:
// every run creates its own organizations and references, tagged with a
// random run id. A Histogram is not safe for concurrent use; the runner
// gives each worker its own and merges them at the end. Spawn's Server is
// stopped with Stop, once the runs that use it are done.
package bench
