package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"
)

// A Workload is a named kind of load: what setup prepares on the server,
// and which request each turn of the load loop sends.
type Workload struct {
	Name     string
	Measures string // one sentence: what the numbers of this workload show
	// Expect is the status every request of the measured phase should get;
	// anything else is counted as unexpected.
	Expect int

	prepare func(ctx context.Context, s *setup, cfg *Config, runID string) (source, error)
}

// A source writes the requests of one run of a workload. fill is called
// concurrently by every worker, each with its own req and body buffer; turn
// is unique within the run and increases by one per request across all
// workers, so requests spread evenly over the source's keys.
type source interface {
	// fill sets the Authorization header and the body of req for request
	// turn. It may build the body in buf (which it returns, grown) and hand
	// it to req without copying: buf is not touched again until req is sent.
	fill(req *fasthttp.Request, turn uint64, buf []byte) []byte
	// keyCount returns how many keys the requests rotate over.
	keyCount() int
}

// Uniform spreads payouts over many organizations, each request with a
// fresh reference.
var Uniform = &Workload{
	Name:     "uniform",
	Measures: "payout creation when debits spread over many balances: the throughput of the write path (validation, Raft commit, ledger apply) without contention on one account",
	Expect:   fasthttp.StatusCreated,
	prepare:  prepareUniform,
}

// HotAccount sends every payout against one organization's balance.
var HotAccount = &Workload{
	Name:     "hot_account",
	Measures: "payout creation when every debit hits one balance: how the service serialises writes to a single account",
	Expect:   fasthttp.StatusCreated,
	prepare:  prepareHotAccount,
}

// Replay re-sends payouts that already exist, with the same reference and
// body.
var Replay = &Workload{
	Name:     "replay",
	Measures: "idempotent retries of payouts that already exist: the replay path, which answers 200 from state without creating anything",
	Expect:   fasthttp.StatusOK,
	prepare:  prepareReplay,
}

// Workloads returns every workload, in the order the CLI runs them.
func Workloads() []*Workload { return []*Workload{Uniform, HotAccount, Replay} }

// Lookup returns the workload called name.
func Lookup(name string) (*Workload, bool) {
	for _, w := range Workloads() {
		if w.Name == name {
			return w, true
		}
	}
	return nil, false
}

// ParseWorkloads reads a comma-separated list of workload names.
func ParseWorkloads(list string) ([]*Workload, error) {
	var out []*Workload
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		w, ok := Lookup(name)
		if !ok {
			var names []string
			for _, w := range Workloads() {
				names = append(names, w.Name)
			}
			return nil, fmt.Errorf("unknown workload %q (have %s)", name, strings.Join(names, ", "))
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no workload named")
	}
	return out, nil
}

// Balances. One payout debits at most payoutAmountMax plus its fee, so a
// balance of fundingAmount covers more than RequestsMax payouts.
const (
	fundingAmount    = "1000000000.00" // GHS credited to each organization
	hotFundingAmount = "1000000000.00"
)

// payoutAmounts are the amounts payouts cycle through: within gh_mtn's
// limits, and none ending in .01 or .03, which the sandbox turns into
// failures and timeouts.
var payoutAmounts = []string{"10.00", "12.50", "25.00", "7.25", "40.00", "15.75", "9.90", "33.30"}

// apiKey is a key as the load loop uses it.
type apiKey struct {
	auth []byte // the whole Authorization header value: "Bearer sk_test_…"
	org  int    // index of its organization in the source
}

// interleave lists the keys of orgs so that consecutive keys belong to
// different organizations: key 0 of every organization, then key 1, …
func interleave(orgs []*org) []apiKey {
	var keys []apiKey
	for k := 0; ; k++ {
		added := false
		for i, o := range orgs {
			if k < len(o.keys) {
				keys = append(keys, apiKey{auth: []byte("Bearer " + o.keys[k]), org: i})
				added = true
			}
		}
		if !added {
			return keys
		}
	}
}

// payoutSource sends new payouts: each turn a fresh reference, the key
// after the previous one.
type payoutSource struct {
	keys   []apiKey
	prefix string // of every reference: unique to the run
}

func (p *payoutSource) fill(req *fasthttp.Request, turn uint64, buf []byte) []byte {
	k := &p.keys[turn%uint64(len(p.keys))]
	req.Header.SetBytesV("Authorization", k.auth)
	buf = appendPayout(buf, payoutAmounts[turn%uint64(len(payoutAmounts))], p.prefix, turn)
	req.SetBodyRaw(buf)
	return buf
}

func (p *payoutSource) keyCount() int { return len(p.keys) }

// appendPayout appends the JSON body of a gh_mtn payout of amount with the
// reference prefix+n.
func appendPayout(buf []byte, amount, prefix string, n uint64) []byte {
	buf = append(buf, `{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":"`...)
	buf = append(buf, amount...)
	buf = append(buf, `"},"externalReference":"`...)
	buf = append(buf, prefix...)
	buf = strconv.AppendUint(buf, n, 10)
	buf = append(buf, `"}`...)
	return buf
}

func prepareUniform(ctx context.Context, s *setup, cfg *Config, runID string) (source, error) {
	orgs, err := s.createOrgs(ctx, cfg.Key, runID, cfg.Orgs, keysPerOrg(cfg.Keys, cfg.Orgs), fundingAmount)
	if err != nil {
		return nil, err
	}
	return &payoutSource{keys: interleave(orgs), prefix: "bench-" + runID + "-u-"}, nil
}

func prepareHotAccount(ctx context.Context, s *setup, cfg *Config, runID string) (source, error) {
	orgs, err := s.createOrgs(ctx, cfg.Key, runID, 1, hotAccountKeys(cfg), hotFundingAmount)
	if err != nil {
		return nil, err
	}
	return &payoutSource{keys: interleave(orgs), prefix: "bench-" + runID + "-h-"}, nil
}

// replaySource re-sends the payouts setup created: the turn picks a key,
// and the key's organization picks one of its payouts.
type replaySource struct {
	keys   []apiKey
	bodies [][][]byte // per organization, the bodies of its payouts; read only
}

func (p *replaySource) fill(req *fasthttp.Request, turn uint64, buf []byte) []byte {
	n := uint64(len(p.keys))
	k := &p.keys[turn%n]
	req.Header.SetBytesV("Authorization", k.auth)
	pool := p.bodies[k.org]
	req.SetBodyRaw(pool[(turn/n)%uint64(len(pool))])
	return buf
}

func (p *replaySource) keyCount() int { return len(p.keys) }

func prepareReplay(ctx context.Context, s *setup, cfg *Config, runID string) (source, error) {
	orgCount := min(cfg.Orgs, cfg.ReplayReferences)
	orgs, err := s.createOrgs(ctx, cfg.Key, runID, orgCount, keysPerOrg(cfg.Keys, orgCount), fundingAmount)
	if err != nil {
		return nil, err
	}
	// Reference i belongs to organization i mod orgCount.
	bodies := make([][][]byte, orgCount)
	for i := range cfg.ReplayReferences {
		o := i % orgCount
		body := appendPayout(nil, payoutAmounts[i%len(payoutAmounts)], "bench-"+runID+"-r-", uint64(i))
		bodies[o] = append(bodies[o], body)
	}
	err = parallel(ctx, orgCount, func(ctx context.Context, o int) error {
		return parallel(ctx, len(bodies[o]), func(ctx context.Context, i int) error {
			key := orgs[o].keys[i%len(orgs[o].keys)]
			return s.post(ctx, key, "/v1/payouts", bodies[o][i], fasthttp.StatusCreated, nil)
		})
	})
	if err != nil {
		return nil, fmt.Errorf("create the payouts to replay: %w", err)
	}
	return &replaySource{keys: interleave(orgs), bodies: bodies}, nil
}
