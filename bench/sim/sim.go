package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"payments/actors"
	"payments/actors/app"
	"payments/ledger"
	"payments/ledger/webhooks"
)

// Options configures one run.
type Options struct {
	Seed int64
	// Faults is how long faults are injected while the clients run; then
	// the network heals, crashed nodes restart and the auditor checks.
	Faults  time.Duration
	Clients int
	// Dir holds the nodes' snapshot directories and, on a failure, the
	// linearizability visualisation.
	Dir  string
	Logf func(format string, args ...any)
}

// Report is what a run did and found.
type Report struct {
	Seed     int64
	Faults   map[string]int // injected, by kind
	Requests map[string]int // client writes, by outcome
	Unknowns int            // attempts answered outcome_unknown or cut by a crash
	// UnknownCauses counts those attempts by the error's text.
	UnknownCauses map[string]int
	Reads         int
	// LateCopies counts attempts held in transit and delivered after
	// their client retried; CatchingUp, keys a node could not yet judge
	// (it answered "catching up", not 401).
	LateCopies, CatchingUp int
	Webhooks               int    // delivery attempts the receiver saw
	Dropped                uint64 // Raft messages the network lost
	// Simulated is how far the fake clock moved in the Elapsed real time
	// of the run (the audit included).
	Simulated, Elapsed time.Duration
	Violations         []string
	// Visual is porcupine's visualisation of a history that is not
	// linearizable ("" otherwise).
	Visual string
}

func (r *Report) violate(format string, args ...any) {
	r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
}

func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: faults %v, requests %v, unknown attempts %d, late copies %d, keys not yet judged %d, reads %d, webhook attempts %d, raft messages dropped %d, simulated %v in %v",
		r.Seed, sorted(r.Faults), sorted(r.Requests), r.Unknowns, r.LateCopies, r.CatchingUp, r.Reads, r.Webhooks, r.Dropped,
		r.Simulated.Round(time.Millisecond), r.Elapsed.Round(time.Millisecond))
	if len(r.UnknownCauses) > 0 {
		fmt.Fprintf(&b, "\n  unknown outcomes by cause: %s", sorted(r.UnknownCauses))
	}
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "\n  violation: %s", v)
	}
	if r.Visual != "" {
		fmt.Fprintf(&b, "\n  linearizability visualisation: %s", r.Visual)
	}
	return b.String()
}

func sorted(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// Run runs the cluster under seeded faults and clients, then audits it.
// The seed fixes the fault schedule and every client's choices; the
// interleaving is the Go scheduler's and hashicorp's timers', so a seed
// replays the same run, not the same bytes.
func Run(opts Options) (*Report, error) {
	if opts.Clients <= 0 {
		opts.Clients = 4
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	rep := &Report{Seed: opts.Seed, Faults: map[string]int{}, Requests: map[string]int{}}
	seed := uint64(opts.Seed)
	net := newNetwork(seed)
	// The fake clock runs from before the nodes start until the audit
	// ends, on its own seeded stream (the fault schedule's draws stay
	// what they were).
	began := time.Now()
	clock := newSimClock(began)
	paceCtx, stopPace := context.WithCancel(context.Background())
	paced := make(chan struct{})
	go func() {
		defer close(paced)
		clock.pace(paceCtx, rand.New(rand.NewPCG(seed, 11)))
	}()
	defer func() {
		stopPace()
		<-paced
	}()
	c, err := newCluster(opts.Dir, net, clock, opts.Seed)
	if err != nil {
		return nil, err
	}
	defer c.close()
	recv, err := startReceiver(seed)
	if err != nil {
		return nil, err
	}
	defer recv.close()
	cl := &clients{c: c, start: time.Now(), recv: recv, causes: map[string]int{}}
	if err := setup(cl); err != nil {
		return nil, err
	}

	ctx, stopClients := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 0; i < opts.Clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cl.run(ctx, i+1, rand.New(rand.NewPCG(seed, uint64(i+1))))
		}(i)
	}
	sched := &scheduler{c: c, rng: rand.New(rand.NewPCG(seed, 0)), counts: rep.Faults, logf: opts.Logf, violate: rep.violate}
	recv.setFailRate(0.2)
	cl.late.Store(true)
	schedErr := sched.run(opts.Faults)
	cl.late.Store(false)
	stopClients()
	recv.setFailRate(0)
	healErr := sched.healAll()
	wg.Wait()
	cl.lateWG.Wait() // every attempt held in transit has landed
	rep.LateCopies = int(cl.lateCopies.Load())
	rep.CatchingUp = int(cl.catchingUp.Load())
	for _, b := range cl.badAnswers {
		rep.violate("wrong definite answer: %s", b)
	}
	if err := errors.Join(schedErr, healErr); err != nil {
		rep.violate("a node failed to restart: %v", err)
		return rep, nil
	}

	for _, r := range cl.requests {
		key := r.kind + "_" + r.outcome.String()
		if r.outcome == refused {
			key += "_" + string(r.code)
		}
		rep.Requests[key]++
	}
	rep.Unknowns = cl.unknowns
	net.mu.Lock()
	rep.Dropped = net.dropped
	net.mu.Unlock()
	rep.UnknownCauses = cl.causes
	audit(cl, rep, opts)
	if n := clock.jumps.Load(); n > 0 {
		rep.Faults["clock_jump"] = int(n)
	}
	rep.Simulated, rep.Elapsed = clock.Now().Sub(began), time.Since(began)
	return rep, nil
}

// setup creates the organizations and funds the other organization, with
// the clients' retries.
func setup(cl *clients) error {
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for _, org := range append(slices.Clone(hotOrgs), otherOrg, scarceOrg) {
		cmd := &ledger.CreateOrganization{
			At: cl.stamp(), ID: org, Name: org, Country: "GH", DefaultCurrency: currency,
			Key: ledger.CreateAPIKey{At: cl.stamp(), ID: "key_" + org[4:], OrgID: org, Hash: actors.HashKey(secretOf(org)), Scopes: ledger.ScopesMerchant},
		}
		kept, _ := cl.onLeader(ctx, deadline, "", func(sys *actors.System) (bool, error) {
			pctx, cancel := context.WithTimeout(ctx, commitTimeout)
			defer cancel()
			r := sys.Propose(pctx, cmd)
			if r.Err == nil && r.Result.Err != nil && r.Result.Err.Code != ledger.CodeConflict {
				return false, r.Result.Err
			}
			return r.Err == nil, r.Err
		})
		if !kept {
			return fmt.Errorf("setup: could not create %s", org)
		}
	}
	kept, _ := cl.onLeader(ctx, deadline, "", func(sys *actors.System) (bool, error) {
		// After an unknown outcome the endpoint may exist: a second one
		// would receive every event twice.
		if eps := webhooks.ListEndpoints(sys.Reader(), otherOrg, 0, 1); len(eps.Items) > 0 {
			return true, nil
		}
		r := cl.c.appOf(sys).CreateWebhookEndpoint(app.Caller{OrgID: otherOrg}, app.NewWebhookEndpoint{URL: cl.recv.url, Events: []string{"*"}})
		if r.Err == nil && r.Result.Err != nil {
			return false, r.Result.Err
		}
		return r.Err == nil, r.Err
	})
	if !kept {
		return fmt.Errorf("setup: could not create the webhook endpoint")
	}
	if r := cl.fund(ctx, otherOrg, "setup", 1_000_000); r.outcome != acked {
		return fmt.Errorf("setup: funding %s: %s %s", otherOrg, r.outcome, r.code)
	}
	return nil
}
