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
//     sent, whichever comes first. Failed requests are not retried
//     against one server; against a cluster, see below.
//
// The server limits every API key to 100 requests in any one-second
// window. The workers rotate over all the workload's keys in turn, so each
// key carries requests/s ÷ keys; the default of 1000 keys (the most one
// organization may hold) keeps that under 70 up to 70,000 requests/s. The
// report warns when the average rate per key passes 70% of the limit the
// server announced.
//
// # A cluster
//
// Config.Addr (paybench -addr) may list every node of a cluster,
// comma-separated. Setup and the noisy neighbour use the first node; the
// load sends request n to node n mod the nodes, and behaves as a client of
// a cluster should while a node stops or restarts: an attempt whose
// connection is refused reached no node and goes to the next at once
// (Result.Failovers); one whose connection fails after the request was
// written, or that is answered 503 service_unavailable or outcome_unknown,
// is re-sent with the same body, so the same externalReference, to the
// next node after a short wait (Result.Retries), at most 64 sends and
// Config.RequestTimeout in all. A payout answered 200, the replay of one an
// earlier attempt created, is acknowledged (Result.Replays), not
// unexpected. Only what survives the retries counts as an error; the
// latency of a request runs from its first send to its last answer.
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
// away (against a cluster, the failovers, retries and replays that kept a
// request from failing are counted on a line of their own). A 429 means the keys were too few for the rate reached; a 5xx or a
// timeout is the server's.
//
// On a machine with few cores the generator and the server share them, so
// the figures are those of the pair; the generator's share is small
// (fasthttp, with requests and buffers reused) but not zero.
//
// # Soak mode
//
// A run of minutes shows what ten seconds hide: throughput that sags as
// state grows, a tail that lengthens at each snapshot, memory that only
// climbs. With Config.Window (paybench -window 5s) the measured phase is
// also reported as back-to-back windows of that length: for each, its
// start and end (seconds since the measured phase began), requests, req/s,
// p50, p99, p999 and max latency, errors (responses outside 2xx and
// transport errors), and the server's resident memory (VmRSS of
// /proc/<pid>/status) when the window closed. A request counts in the
// window in which its response arrived; the last window also takes the
// responses that arrive after the measured phase's end, and runs to the
// last of them (it is short when Duration is not a multiple of Window, or
// when RequestsMax ended the run early).
//
// paybench prints each window on stderr as it closes, then a table of them
// on stdout after the usual one, and a summary: the median window's req/s;
// the slowest window's req/s as a fraction of that median (1 for a flat
// run); the requests answered in more than a second; the failures; and the
// RSS growth per request after the first window, (RSS at the last window's
// end − RSS at the first window's end) ÷ the requests of the windows after
// the first, in bytes: near zero for a server whose memory has settled,
// steady and positive for one that keeps what it serves (whether that is
// state the ledger must hold or a leak is for the profile to say). The
// memory is read from a spawned server's process, or, against -addr, from
// the process named by -server-pid; without it the column shows "-". The
// -json report holds the windows ("windows") and the summary ("soak") of
// each result.
//
//	make soak                       # uniform for 3m, 5 s windows, snapshots every 20 s
//	make soak SOAK_DURATION=30m SOAK_SERVER_ARGS="--snapshot-threshold 100000"
//
// make soak writes bench/results/soak.json (ignored by git).
//
// # Noisy neighbour
//
// With Config.NoiseExports (paybench -noise-exports N) setup also creates
// one noisy organization with a long history: it funds it, creates
// Config.NoisePayouts payouts for it (-noise-payouts, 20,000 by default;
// two ledger rows each), and waits until none is pending. The transactions
// export answers at most 10,000 rows and refuses a longer range, so setup
// splits the history into from/to ranges it accepts, by halving any range
// it refuses. During the measured phase, and only then, N goroutines export
// the ranges in turn as CSV (GET /v1/transactions/export?format=csv), each
// one export at a time, with keys of the noisy organization paced under
// their rate limit; every export must be answered 200, and any other answer
// is counted as a failure and makes paybench exit 1. Meanwhile the workload
// runs on its own organizations and is measured as usual. The report adds a
// line of exports completed, their rate (and rows per second), their
// latency and their failures.
//
// Isolation is the difference between two runs of the same workload:
//
//	paybench -spawn bin/payments -workload uniform -noise-exports 0
//	paybench -spawn bin/payments -workload uniform -noise-exports 16
//
// If organizations were isolated, the second run's req/s and latencies
// would match the first's, less the CPU the exports take from a shared
// machine.
//
// # Concurrency
//
// Run may be called concurrently, and sequentially against one server:
// every run creates its own organizations and references, tagged with a
// random run id. A Histogram is not safe for concurrent use; the runner
// gives each worker its own and merges them at the end. In soak mode each
// worker also records into a window's stats of its own, behind a mutex of
// its own that only the window collector ever takes besides it, once per
// window; no lock is shared between workers. Every loop is bounded: the
// workers, the exporters and the collector by Duration (and RequestsMax),
// setup by SetupTimeout. Spawn's Server is stopped with Stop, once the runs
// that use it are done.
package bench
