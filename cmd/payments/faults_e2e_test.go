package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	nethttp "net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Every definite answer is true, under faults. Three processes take
// payouts from three organizations — one of them with a balance that keeps
// running out and being topped up — from clients that retry each payout
// with its reference on the next node until they get a definite answer
// (any 2xx, or a 4xx other than 429), while the leader is killed, frozen
// and stopped, followers are killed and wiped, the quorum is lost and the
// whole cluster killed. Afterwards:
//   - every 4xx answer to a payout is for a payout that does not exist (a
//     422 insufficient_funds for one that exists is a double payment
//     waiting to happen);
//   - no valid key is ever answered 401;
//   - every 503 carries Retry-After;
//   - a payout sent once (its first attempt answered) is answered 201,
//     never 200;
//   - every 2xx payout exists with the id it was answered with;
//   - the three replicas hold the same state at the same index and keep
//     the ledger's invariants.
func TestDefiniteAnswersUnderFaults(t *testing.T) {
	endToEnd(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PAYMENTS_FAULTS_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	faultsFor := 40 * time.Second
	if s := os.Getenv("PAYMENTS_FAULTS_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		faultsFor = d
	}
	t.Logf("seed %d (PAYMENTS_FAULTS_SEED replays its fault schedule), faults for %v", seed, faultsFor)
	rng := rand.New(rand.NewPCG(seed, seed))

	// Snapshots every few hundred entries, few entries kept behind them: a
	// wiped follower catches up from a snapshot, not from the log. A
	// stopped node drains for 5 s at most, so that its whole stop (handover,
	// drain, actors and Raft) fits stop's 20 s under this load.
	procs := startCluster(t, 3, "--sandbox-settlement", "50ms", "--snapshot-threshold", "256",
		"--snapshot-interval", "1s", "--trailing-logs", "64", "--drain-timeout", "5s")
	fl := &faultLoad{procs: procs, t: t}
	for i := range procs {
		fl.addrs = append(fl.addrs, procs[i].addr)
	}

	// Three organizations, each with its own key.
	orgs := []*faultOrg{{name: "rich-a", fund: "1000000.00", amount: "3.00"},
		{name: "rich-b", fund: "1000000.00", amount: "4.00"},
		{name: "scarce", fund: "40.00", amount: "7.00", topUp: "25.00"}}
	for _, o := range orgs {
		var created struct {
			Key struct {
				Secret string `json:"secret"`
			} `json:"key"`
		}
		if st, err := call(procs[0].addr, "POST", "/v1/organizations", map[string]any{"name": o.name, "defaultCurrency": "GHS"}, &created); err != nil || st != 201 {
			t.Fatalf("create organization %s: %d %v", o.name, st, err)
		}
		o.key = created.Key.Secret
		if st, code := fl.definite(o, "/v1/simulations/fund-balance", map[string]any{
			"amount": o.fund, "currency": "GHS", "externalReference": o.name + "-seed"}, rng.IntN(3), nil); st != 201 {
			t.Fatalf("fund %s: %d %s", o.name, st, code)
		}
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, o := range orgs {
		for w := 0; w < 2; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fl.payouts(o, fmt.Sprintf("%s-w%d", o.name, w), (i+w)%3, stop)
			}()
		}
		if o.topUp != "" {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fl.topUps(o, stop)
			}()
		}
	}

	// The faults, one every few seconds, each kind in turn in a seeded order.
	kinds := []string{"kill-leader", "freeze-leader", "stop-leader", "kill-follower", "wipe-follower",
		"wipe-follower-leader-frozen", "lose-quorum", "kill-all"}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	ends := time.Now().Add(faultsFor)
	for i := 0; time.Now().Before(ends); i++ {
		time.Sleep(time.Duration(1500+rng.IntN(1500)) * time.Millisecond)
		kind := kinds[i%len(kinds)]
		fl.inject(kind, rng)
		fl.allReady(30 * time.Second)
	}
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	fl.allReady(30 * time.Second)

	// The audit: each definite answer against what the cluster holds.
	fl.mu.Lock()
	t.Logf("faults %v; payouts answered %v; %d attempts retried; %d references given up",
		fl.faults, fl.statuses, fl.retries.Load(), fl.givenUp)
	for _, v := range fl.violations {
		t.Error(v)
	}
	answers, statuses := fl.answers, fl.statuses
	fl.mu.Unlock()
	checked := 0
	for _, a := range answers {
		var got struct {
			Payout payoutView `json:"payout"`
		}
		st, code := fl.definite(a.org, "/v1/payouts/by-reference/"+url.PathEscape(a.ref), nil, 0, &got)
		checked++
		switch {
		case a.status/100 == 2 && (st != 200 || got.Payout.ID != a.id):
			t.Errorf("payout %s was answered %d %s; by reference now: %d %s %s", a.ref, a.status, a.id, st, code, got.Payout.ID)
		case a.status/100 == 4 && st != 404:
			t.Errorf("payout %s was answered %d %s, a definite refusal, yet it exists: by reference %d %s %s; attempts: %s",
				a.ref, a.status, a.code, st, got.Payout.ID, got.Payout.CreatedAt, strings.Join(a.trail, "; "))
		}
	}
	t.Logf("%d definite answers checked against the cluster", checked)
	if statuses[201] == 0 || statuses[422] == 0 {
		t.Errorf("the run did not exercise both acceptance and refusal: %v", statuses)
	}
	checkReplicasAgree(t, procs)
}

type faultOrg struct {
	name   string
	key    string
	fund   string
	amount string // each payout's
	topUp  string // funded again this much, often ("" never)
}

type faultAnswer struct {
	org    *faultOrg
	ref    string
	status int
	code   string
	id     string
	trail  []string // each attempt: when, where, what came back
}

// faultLoad is the clients and the fault injector of
// TestDefiniteAnswersUnderFaults.
type faultLoad struct {
	t     *testing.T
	procs []*proc
	addrs []string

	retries atomic.Int64

	mu         sync.Mutex
	answers    []faultAnswer
	statuses   map[int]int
	faults     map[string]int
	givenUp    int
	violations []string
}

var faultClient = &nethttp.Client{Timeout: 1500 * time.Millisecond, Transport: &nethttp.Transport{MaxIdleConnsPerHost: 16}}

func (fl *faultLoad) violate(format string, args ...any) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if len(fl.violations) < 50 {
		fl.violations = append(fl.violations, fmt.Sprintf(format, args...))
	}
}

// definite sends a request as org, from node first on, to the next node
// after each attempt without a definite answer, for up to 20 s. It returns
// the definite status and error code, or 0.
func (fl *faultLoad) definite(o *faultOrg, path string, body any, first int, out any) (int, string) {
	st, code, _, _ := fl.attempts(o, path, body, first, out)
	return st, code
}

// attempts is definite, also reporting how many attempts got no definite
// answer before the one that did, and each attempt's node, time and answer.
func (fl *faultLoad) attempts(o *faultOrg, path string, body any, first int, out any) (status int, code string, failed int, trail []string) {
	method := "GET"
	var raw []byte
	if body != nil {
		method = "POST"
		raw, _ = json.Marshal(body)
	}
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		if i > 0 {
			fl.retries.Add(1)
			time.Sleep(time.Duration(20+10*min(i, 10)) * time.Millisecond)
		}
		addr := fl.addrs[(first+i)%len(fl.addrs)]
		req, _ := nethttp.NewRequest(method, "http://"+addr+path, bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+o.key)
		if raw != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		sent := time.Now()
		resp, err := faultClient.Do(req)
		note := func(what string) {
			trail = append(trail, fmt.Sprintf("%s %s→%s", sent.Format("15:04:05.000"), addr, what))
		}
		if err != nil {
			note(err.Error())
			failed++
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			failed++
			continue
		}
		var e struct {
			Error string `json:"error"`
		}
		json.Unmarshal(b, &e)
		note(fmt.Sprintf("%d %s", resp.StatusCode, e.Error))
		switch st := resp.StatusCode; {
		case st == 503:
			if resp.Header.Get("Retry-After") == "" {
				fl.violate("%s %s via %s: 503 %s without Retry-After", method, path, addr, e.Error)
			}
			failed++
		case st == 429:
			failed++
		case st == 401:
			fl.violate("%s %s via %s: 401 for a valid key of %s: %s", method, path, addr, o.name, b)
			failed++
		case st >= 500:
			fl.violate("%s %s via %s: %d %s", method, path, addr, st, b)
			failed++
		default:
			if out != nil && st/100 == 2 {
				json.Unmarshal(b, out)
			}
			return st, e.Error, failed, trail
		}
	}
	return 0, "", failed, trail
}

// payouts sends payouts as o, each with a fresh reference, until stop.
func (fl *faultLoad) payouts(o *faultOrg, prefix string, first int, stop <-chan struct{}) {
	for i := 0; i < 100_000; i++ {
		select {
		case <-stop:
			return
		default:
		}
		ref := fmt.Sprintf("%s-%d", prefix, i)
		var got struct {
			Payout payoutView `json:"payout"`
		}
		st, code, failed, trail := fl.attempts(o, "/v1/payouts", mtnPayout(o.amount, ref), (first+i)%3, &got)
		fl.mu.Lock()
		if fl.statuses == nil {
			fl.statuses = map[int]int{}
		}
		fl.statuses[st]++
		if st == 0 {
			fl.givenUp++
		} else {
			fl.answers = append(fl.answers, faultAnswer{org: o, ref: ref, status: st, code: code, id: got.Payout.ID, trail: trail})
		}
		fl.mu.Unlock()
		if st == 200 && failed == 0 {
			fl.violate("payout %s was sent once and answered 200 (a replay) instead of 201: %s", ref, strings.Join(trail, "; "))
		}
	}
}

// topUps funds o's balance again every few hundred milliseconds.
func (fl *faultLoad) topUps(o *faultOrg, stop <-chan struct{}) {
	for i := 0; i < 100_000; i++ {
		select {
		case <-stop:
			return
		case <-time.After(300 * time.Millisecond):
		}
		fl.definite(o, "/v1/simulations/fund-balance", map[string]any{
			"amount": o.topUp, "currency": "GHS", "externalReference": fmt.Sprintf("%s-top-%d", o.name, i)}, i%3, nil)
	}
}

// leader is the index of the node the others report as leader, or -1.
func (fl *faultLoad) leader() int {
	for i := range fl.procs {
		var h struct {
			Leader string `json:"leader"`
		}
		hc := &nethttp.Client{Timeout: 300 * time.Millisecond}
		if st, _ := callWith(hc, "", nil, fl.procs[i].addr, "GET", "/readyz", nil, &h); st == 200 && len(h.Leader) == 2 {
			if l := int(h.Leader[1] - '1'); l >= 0 && l < len(fl.procs) {
				return l
			}
		}
	}
	return -1
}

func (fl *faultLoad) restart(p *proc) {
	if err := p.launch(); err != nil {
		fl.t.Errorf("restart %s: %v", p.addr, err)
	}
}

// inject runs one fault of kind and undoes it.
func (fl *faultLoad) inject(kind string, rng *rand.Rand) {
	fl.mu.Lock()
	if fl.faults == nil {
		fl.faults = map[string]int{}
	}
	fl.faults[kind]++
	fl.mu.Unlock()
	l := fl.leader()
	if l < 0 {
		l = rng.IntN(3)
	}
	leader, follower := fl.procs[l], fl.procs[(l+1+rng.IntN(2))%3]
	fl.t.Logf("%s: fault %s (leader n%d)", time.Now().Format("15:04:05.000"), kind, l+1)
	switch kind {
	case "kill-leader":
		leader.kill()
		time.Sleep(time.Second)
		fl.restart(leader)
	case "freeze-leader":
		leader.cmd.Process.Signal(syscall.SIGSTOP)
		time.Sleep(3 * time.Second)
		leader.cmd.Process.Signal(syscall.SIGCONT)
	case "stop-leader":
		if err := leader.stop(); err != nil {
			fl.t.Errorf("SIGTERM n%d: %v", l+1, err)
		}
		fl.restart(leader)
	case "kill-follower":
		follower.kill()
		time.Sleep(time.Second)
		fl.restart(follower)
	case "wipe-follower":
		follower.kill()
		follower.dataDir = fl.t.TempDir()
		follower.args = withoutFlag(follower.args, "--bootstrap")
		fl.restart(follower)
	case "wipe-follower-leader-frozen":
		// The wiped node comes back while it can hear from no leader: it
		// must not judge keys from its empty state.
		follower.kill()
		follower.dataDir = fl.t.TempDir()
		follower.args = withoutFlag(follower.args, "--bootstrap")
		leader.cmd.Process.Signal(syscall.SIGSTOP)
		fl.restart(follower)
		time.Sleep(2500 * time.Millisecond)
		leader.cmd.Process.Signal(syscall.SIGCONT)
	case "lose-quorum":
		leader.kill()
		follower.kill()
		time.Sleep(1500 * time.Millisecond)
		fl.restart(leader)
		fl.restart(follower)
	case "kill-all":
		for _, p := range fl.procs {
			p.kill()
		}
		for _, p := range fl.procs {
			fl.restart(p)
		}
	}
}

// allReady waits until every node answers /readyz 200.
func (fl *faultLoad) allReady(wait time.Duration) {
	deadline := time.Now().Add(wait)
	for _, p := range fl.procs {
		for {
			st, _ := callWith(&nethttp.Client{Timeout: time.Second}, "", nil, p.addr, "GET", "/readyz", nil, nil)
			if st == 200 {
				break
			}
			if time.Now().After(deadline) {
				fl.t.Errorf("%s is not ready %v after the last fault\n%s", p.addr, wait, lastLines(p.stderr.String(), 20))
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
